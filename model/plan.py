"""Which GPU and how many (issue 43, section 1): for every hardware preset, the cheapest
configuration that holds the scenario's SLO at its request rate.

The search is a list of independent runs, each a scenario link (:class:`Run`): the scenario
with another ``hardware``, tensor-parallel degree (``gpus``) and ``weights_dtype``, everything
else as the user set it (lengths, SLO, engine knobs, the levers). A run's answer is the
Serving lens's capacity search (:func:`model.serving.max_rate`: the largest rate one replica
holds within the SLO), so it shares that lens's cache; the replicas a rate needs are
⌈rate / that⌉ and the plan's cost is replicas × GPUs per replica × the GPU's price.

Before any run is simulated, analytic bounds prune it:

- it cannot fit (the weights, or one request's KV, past the GPU memory): the reason;
- one request alone misses the SLO (its TTFT or TPOT, :func:`model.request.request_figures`);
- its cost cannot beat the cheapest configuration already found on that hardware: a replica
  serves at most ``max_b b / t_step(b)`` output tokens per second (the decode step of
  :func:`model.decode.sweep` at the prompt's context, every batch up to what the KV cache and
  ``max_num_seqs`` hold; prefill, queueing and the API server only lower it), so the replicas
  are at least ⌈rate × output tokens / that⌉.

Runs are taken cheapest bound first on each hardware, so the first that meets the SLO is
usually the answer and the rest are pruned. ``search`` is any function from a scenario to
:func:`model.serving.max_rate`'s result: the app passes its worker pool's, a cluster scheduler
could take :func:`runs`' links and run ``whatif eval --json`` on each.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from model import codecs
from model.errors import ScenarioError
from model.layouts import layout_name
from model.overrides import resolve
from model.presets import hardware_presets
from model.scenario import Scenario

TENSOR_PARALLEL = (1, 2, 4, 8)
#: keys a run replaces (and the scenario's price, which is its own hardware's); the named
#: scenario the link starts from stays, as every other key does
_RUN_KEYS = (
    "hardware",
    "gpus",
    "weights_dtype",
    "gpu_hour_usd",
    "data_parallel",
    "expert_parallel",
)


@dataclass
class Run:
    """One configuration to size: its scenario and the analytic figures that rank it."""

    hardware: str
    tensor_parallel: int
    weights_dtype: str
    data_parallel: int = 1
    expert_parallel: bool = False
    #: the levers this run sets otherwise than the scenario (key → value), e.g. speculative
    levers: tuple[tuple[str, str], ...] = ()
    s: Scenario | None = None
    reason: str | None = None  #: why it cannot serve within the SLO (analytic), or None
    rate_bound: float = math.inf  #: most requests/s one replica could serve [req/s]
    cost_bound: float = math.inf  #: least $/hour it could cost at the rate [USD/h]
    lone_ms: tuple[float, float] = (math.inf, math.inf)  #: one request's TTFT, TPOT [ms]
    search: dict | None = field(default=None, repr=False)

    @property
    def query(self) -> str:
        """The run's scenario as a link query (what a scheduler would hand to a worker)."""
        return codecs.to_query(self.s) if self.s is not None else ""


def mean_output_tokens(s: Scenario) -> float:
    """The mean output tokens of the scenario's lengths [tokens]."""
    if s.lengths in ("fixed", "random"):
        return float(s.output_tokens)
    from model.lengths import length_sets

    d = length_sets()[s.lengths]
    return float(s.output_tokens if d.scale == "means" else d.mean_output_tokens)


#: the least rate a plan sizes for [req/s]: one request in about 11.6 days (a lower rate
#: needs one replica of the cheapest GPU that fits, and its cost per token has no meaning)
MIN_RATE = 1e-6


def _planned(rate: float, key: str) -> float:
    if not rate >= MIN_RATE:
        raise ScenarioError(
            key,
            f"{rate:.3g} req/s is too little to plan for; a plan needs at least {MIN_RATE:g} "
            "requests per second",
        )
    return float(rate)


def trace_rate(trace, rate_scale: float = 1.0) -> float:
    """The rate a request trace asks of the plan [req/s]: its busiest hour's (the most
    requests in any 3600 s window, per second), or its mean rate when it spans less than an
    hour; the time axis scaled by ``rate_scale`` as the Scale to zero lens replays it."""
    t = trace.scaled(rate_scale)
    summary = t.summary()
    if t.span_s >= 3600.0:
        rate = summary["peak_rate_per_hour"] / 3600.0
    else:
        rate = summary["mean_rate_per_s"] or 0.0
    if not rate > 0:
        raise ScenarioError(
            "trace", f"{trace.name}: its requests span no time; a plan needs a rate above 0"
        )
    return _planned(rate, "trace")


def target_rate(s: Scenario, peak: bool = False) -> float:
    """The rate the plan serves [req/s]: the scenario's ``request_rate``, or its traffic
    profile's busiest hour with ``peak``. Raises ScenarioError for ``inf``."""
    if peak:
        from model.serving import peak_hour_rate

        rate = peak_hour_rate(s)
        if not rate > 0:
            raise ScenarioError("traffic", "its busiest hour has no requests; nothing to plan")
        return _planned(rate, "rate_scale")
    if s.request_rate == "inf":
        raise ScenarioError(
            "request_rate",
            "a plan needs a finite rate: a number of requests per second above 0 (inf sends "
            "them all at once, which no number of replicas serves within an SLO)",
        )
    return _planned(float(s.request_rate), "request_rate")


def layouts(s: Scenario) -> list[tuple[int, int, bool]]:
    """(tensor parallel, data parallel, expert parallel) of the runs: the scenario's own
    layout, TP 1-8, and for a mixture of experts 2-8 data-parallel ranks of one GPU with the
    experts spread whole over them (:func:`model.serving.pareto_layouts`, the Pareto front's;
    issue 42 §3). A disaggregated scenario keeps one engine per pool (no DP)."""
    from model.serving import pareto_layouts

    own = (s.gpus, s.data_parallel, bool(s.expert_parallel))
    if s.disaggregated:
        return list(dict.fromkeys([own, *((tp, 1, False) for tp in TENSOR_PARALLEL)]))
    return list(dict.fromkeys([own, *pareto_layouts(s)]))


def levers(s: Scenario) -> list[tuple[tuple[str, str], ...]]:
    """The lever settings a run tries besides the scenario's own (``()``), one lever turned
    at a time:

    - speculative decoding: off where the scenario speculates; the model's own MTP module
      where it has one (DeepSeek-V3/R1) and the scenario does not speculate. Other methods
      need a drafter trained for the model, which a plan cannot assume;
    - disaggregation: one engine where the scenario disaggregates; 1P1D (each pool on the
      run's tensor-parallel GPUs) where it does not."""
    out: list[tuple[tuple[str, str], ...]] = [()]
    if s.speculative != "none":
        out.append((("speculative", "none"),))
    elif s.model.mtp_params_b:
        out.append((("speculative", "mtp"),))
    out.append((("disaggregated", "false" if s.disaggregated else "true"),))
    return out


def lever_name(s: Scenario) -> str:
    """The levers a plan's scenario has on, as a row names them: ``MTP``, ``P/D 1P1D``."""
    parts = []
    if s.speculative != "none":
        parts.append(s.speculative.upper() if s.speculative != "ngram" else "n-gram")
    if s.disaggregated:
        parts.append(f"P/D {s.prefill_instances}P{s.decode_instances}D")
    return " · ".join(parts)


def runs(s: Scenario, hardware: Iterable[str] | None = None) -> list[Run]:
    """Every configuration the plan considers: each hardware preset × layout (:func:`layouts`)
    × weights dtype (the scenario's, the checkpoint's, and FP8 where the GPU has FP8 tensor
    cores) × lever setting (:func:`levers`; disaggregation only with one engine per pool),
    each resolved from the scenario's link with those keys replaced (a combination the
    scenario's validation refuses keeps its reason)."""
    pairs = [(k, v) for k, v in codecs.to_params(s) if k.split(".")[0] not in _RUN_KEYS]
    checkpoint = s.model.checkpoint_dtype or "bf16"
    out: list[Run] = []
    presets = hardware_presets()
    for hw in hardware or presets:
        spec = presets[hw]
        dtypes = list(dict.fromkeys([s.weights_dtype, checkpoint]))
        if "fp8" in spec.peak_tflops and "fp8" not in dtypes and checkpoint != "fp4":
            dtypes.append("fp8")
        for tp, dp, ep in layouts(s):
            for dt in dtypes:
                for lever in levers(s):
                    if dp > 1 and ("disaggregated", "true") in lever:
                        continue  # one engine per pool: no data-parallel ranks
                    run = Run(hw, tp, dt, dp, ep, lever)
                    keys = [("hardware", hw), ("gpus", str(tp)), ("weights_dtype", dt)]
                    keys += [("data_parallel", str(dp)), ("expert_parallel", str(ep).lower())]
                    try:
                        run.s = resolve([*pairs, *keys, *lever], strict=True)[0]
                    except ScenarioError as exc:
                        run.reason = exc.message
                    out.append(run)
    return out


def bound(run: Run, rate: float, price: float) -> Run:
    """Fill ``run``'s analytic figures (:data:`Run.reason` when it cannot serve within the
    SLO). See the module's docstring for the bounds and why they hold."""
    from model import decode
    from model.memory import memory_figures
    from model.request import request_figures
    from model.scheduler import DoesNotFit, check_fits

    if run.reason is not None or run.s is None:
        return run
    s = run.s
    try:
        check_fits(s)
    except DoesNotFit as exc:
        run.reason = str(exc)
        return run
    req = request_figures(s)
    run.lone_ms = (float(req["ttft_ms"]), float(req["tpot_ms"]))
    if run.lone_ms[1] > s.tpot_slo_ms:
        run.reason = (
            f"TPOT of one request alone is {run.lone_ms[1]:.1f} ms, over the "
            f"{s.tpot_slo_ms:g} ms SLO"
        )
        return run
    if run.lone_ms[0] > s.ttft_slo_ms:
        run.reason = (
            f"TTFT of one request alone is {run.lone_ms[0]:.0f} ms, over the "
            f"{s.ttft_slo_ms:g} ms SLO"
        )
        return run
    unique = max(s.prompt_tokens - s.shared_prefix_tokens, 1) if s.prefix_caching_on else None
    at = s.model_copy(update={"context_tokens": unique or s.prompt_tokens})
    most = int(memory_figures(at)["max_batch"])
    most = max(min(most, s.max_num_seqs, s.max_concurrency or most), 1)
    batch = np.unique(np.geomspace(1, most, num=24).astype(int))
    step = decode.sweep(s.model_copy(update={"context_tokens": s.prompt_tokens}), batch)
    tokens_per_s = float(np.max(step["tokens_per_s"]))
    run.rate_bound = tokens_per_s / mean_output_tokens(s)
    replicas = max(1, math.ceil(rate / run.rate_bound - 1e-9))
    run.cost_bound = replicas * s.replica_gpus * price
    return run


def prices(overrides: dict[str, float] | None = None, s: Scenario | None = None) -> dict:
    """USD per GPU-hour of every hardware preset: the preset's, the scenario's own
    ``gpu_hour_usd`` for its hardware, then ``overrides`` (hardware id → price)."""
    out = {k: float(v.gpu_hour_usd) for k, v in hardware_presets().items()}
    if s is not None and s.gpu_hour_usd is not None:
        out[s.hardware.id] = float(s.gpu_hour_usd)
    for hw, usd in (overrides or {}).items():
        if hw not in out:
            raise ScenarioError(
                "price", f"unknown hardware id {hw[:60]!r}; known ids: {', '.join(sorted(out))}"
            )
        if not (math.isfinite(usd) and 0 < usd <= 1000):
            raise ScenarioError(
                "price", f"{hw}: {usd!r} is not accepted; a price per GPU-hour above 0, ≤ 1000"
            )
        out[hw] = float(usd)
    return out


def _plan_row(run: Run, rate: float, price: float, link_to: str) -> dict:
    s = run.s
    per = float(run.search["max_request_rate"])
    replicas = max(1, math.ceil(rate / per - 1e-9))
    gpus = replicas * s.replica_gpus
    usd_h = gpus * price
    out_tok_s = rate * mean_output_tokens(s)
    return {
        "hardware": run.hardware,
        "hardware_name": s.hardware.name,
        "gpus": s.replica_gpus,
        "tensor_parallel": s.gpus,
        "data_parallel": s.data_parallel,
        "expert_parallel": bool(s.expert_parallel),
        "layout": layout_name(s.gpus, s.data_parallel, bool(s.expert_parallel)),
        "speculative": s.speculative,
        "disaggregated": bool(s.disaggregated),
        "levers": lever_name(s),
        "replicas": replicas,
        "gpus_total": gpus,
        "weights_dtype": s.weights_dtype,
        "max_num_seqs": s.max_num_seqs,
        "usd_per_gpu_hour": price,
        "usd_per_hour": usd_h,
        "usd_per_million_output_tokens": usd_h / (out_tok_s * 3600) * 1e6,
        "output_tokens_per_s_per_gpu": out_tok_s / gpus,
        "max_request_rate_per_replica": per,
        "link": codecs.to_url(s, link_to),
    }


#: a run whose one-run checks failed this many times is searched outright
CHECKS_PER_RUN = 3


def _replicas(rate: float, per_replica: float) -> int:
    return max(1, math.ceil(rate / per_replica - 1e-9))


def hardware_plan(
    s: Scenario,
    hw: str,
    rate: float,
    price: float,
    *,
    search: Callable[[Scenario], dict | None] | None = None,
    meets: Callable[[Scenario, float], bool] | None = None,
    link_to: str = "",
) -> dict:
    """The cheapest configuration of ``s`` on the hardware preset ``hw`` that holds the SLO at
    ``rate`` (a plan row), or its reason and closest configuration (an ``unfit`` row, with
    ``reason``). Each is independent of the other presets' (a cluster scheduler could run one
    per machine).

    Runs are taken cheapest first by their cost so far: the analytic bound, then what one run
    at ``rate`` / R showed (a replica count R that misses the SLO rules out every smaller one,
    so the run costs at least R + 1 replicas). A run that holds the SLO at its bound's replica
    count, or has failed :data:`CHECKS_PER_RUN` checks, is searched in full (``search``:
    :func:`model.serving.max_rate`, the Serving lens's own, so its link shows the same
    replicas); the first run whose searched cost is the cheapest left is the answer."""
    from model import serving

    search = search or serving.max_rate
    meets = meets or serving.meets_at
    group = [bound(r, rate, price) for r in runs(s, [hw])]
    stats = {"runs": len(group), "checks": 0, "searches": 0}
    if serving.SERVER_BUDGET:  # a shared server: nothing past its budget runs, not one check
        for r in group:
            if r.reason is None and serving.search_over_budget(r.s):
                r.reason = (
                    "its capacity search is past this shared server's budget; run `whatif "
                    "plan` on your own machine"
                )
    live = [r for r in group if r.reason is None]
    replicas = {id(r): _replicas(rate, r.rate_bound) for r in live}
    tries = {id(r): 0 for r in live}
    exact: dict[int, bool] = {}
    pending = list(live)
    while pending:
        pending.sort(key=lambda r: (replicas[id(r)] * r.s.replica_gpus, r.tensor_parallel))
        r = pending[0]
        key = id(r)
        if exact.get(key):
            row = _plan_row(r, rate, price, link_to)
            row.update(stats)
            return row
        if tries[key] < CHECKS_PER_RUN and not exact.get(key):
            stats["checks"] += 1
            if not meets(r.s, rate / replicas[key]):
                tries[key] += 1
                replicas[key] += 1
                continue
        stats["searches"] += 1
        r.search = search(r.s)
        per = 0.0 if r.search is None else float(r.search.get("max_request_rate") or 0.0)
        if per <= 0:
            r.reason = "misses the SLO at every rate (its capacity search)"
            pending.pop(0)
            continue
        replicas[key] = _replicas(rate, per)
        exact[key] = True
    row = _unfit_row(hw, group, s)
    row.update(stats)
    return row


def plan(
    s: Scenario,
    *,
    peak: bool = False,
    price_overrides: dict[str, float] | None = None,
    hardware: Iterable[str] | None = None,
    mapper: Callable | None = None,
    link_to: str = "",
) -> dict:
    """The plan (``whatif plan --json``): ``plans`` cheapest first, one per hardware preset
    that can hold the SLO at the rate; ``unfit``: every other preset with its reason and its
    closest configuration. ``mapper(function, jobs)`` runs :func:`hardware_plan` on each
    job (default: one after another here; the CLI passes a process pool's ``map``)."""
    rate = target_rate(s, peak)
    todo = jobs(s, rate, prices(price_overrides, s), hardware, link_to)
    return assemble(s, rate, (mapper or map)(plan_job, todo))


def jobs(
    s: Scenario,
    rate: float,
    usd: dict[str, float],
    hardware: Iterable[str] | None = None,
    link_to: str = "",
) -> list[tuple[str, str, float, float, str]]:
    """The plan's jobs, one per hardware preset (all of them, or ``hardware``), as the plain
    values :func:`plan_job` takes: the scenario's link query, the preset, the rate, its price
    (``usd``, :func:`prices`) and the address the rows' links open (``link_to``: the Serving
    page's, which the edges make from its declaration; empty, a bare ``?query``)."""
    query = codecs.to_query(s)
    return [(query, hw, rate, usd[hw], link_to) for hw in (hardware or hardware_presets())]


def plan_job(job: tuple[str, str, float, float, str]) -> dict:
    """One job of the plan, as plain values (a link query, a hardware id, the rate, the
    price, the links' address): what a worker process or a cluster's job receives."""
    from urllib.parse import parse_qsl

    query, hw, rate, price, link_to = job
    s = resolve(parse_qsl(query, keep_blank_values=True), strict=True)[0]
    return hardware_plan(s, hw, rate, price, link_to=link_to)


def assemble(s: Scenario, rate: float, rows: Iterable[dict]) -> dict:
    """The plan's JSON from its hardware rows (plans cheapest first, then the unfit)."""
    rows = list(rows)
    plans = sorted(
        (r for r in rows if "reason" not in r),
        key=lambda p: (p["usd_per_hour"], p["gpus_total"], p["hardware"]),
    )
    return {
        "request_rate": rate,
        "slo": {
            "ttft_slo_ms": s.ttft_slo_ms,
            "tpot_slo_ms": s.tpot_slo_ms,
            "slo_attainment": s.slo_attainment,
        },
        "plans": plans,
        "unfit": [r for r in rows if "reason" in r],
        "runs": sum(r.get("runs", 0) for r in rows),
        "checks": sum(r.get("checks", 0) for r in rows),
        "searches": sum(r.get("searches", 0) for r in rows),
    }


def _unfit_row(hw: str, group: list[Run], s: Scenario) -> dict:
    """A preset with no plan: the reason of its closest configuration (the one whose lone
    request comes nearest the SLO; else the first reason)."""
    name = hardware_presets()[hw].name
    timed = [r for r in group if math.isfinite(r.lone_ms[1])]
    if timed:
        close = min(
            timed,
            key=lambda r: max(r.lone_ms[0] / s.ttft_slo_ms, r.lone_ms[1] / s.tpot_slo_ms),
        )
        return {
            "hardware": hw,
            "hardware_name": name,
            "reason": close.reason or "misses the SLO",
            "closest": {
                "layout": layout_name(
                    close.tensor_parallel, close.data_parallel, close.expert_parallel
                ),
                "tensor_parallel": close.tensor_parallel,
                "weights_dtype": close.weights_dtype,
                "ttft_ms": close.lone_ms[0],
                "tpot_ms": close.lone_ms[1],
            },
        }
    # nothing ran: the reason of the layout with the most GPUs per replica (tensor parallel
    # before data-parallel ranks), the one that came nearest to fitting
    refused = [r for r in group if r.reason]
    widest = max(
        refused,
        key=lambda r: (r.tensor_parallel * r.data_parallel, not r.expert_parallel),
        default=None,
    )
    return {
        "hardware": hw,
        "hardware_name": name,
        "reason": widest.reason if widest else "cannot serve",
        "closest": None,
    }


def as_text(out: dict) -> str:
    """``whatif plan`` without ``--json``: one line per preset, cheapest first."""
    slo = out["slo"]
    lines = [
        f"plan for {out['request_rate']:g} req/s within TTFT {slo['ttft_slo_ms']:g} ms, TPOT "
        f"{slo['tpot_slo_ms']:g} ms for {slo['slo_attainment']:.0%} of requests "
        f"({out['searches']} capacity searches, {out['checks']} one-run checks, "
        f"{out['runs']} configurations)",
        "",
        f"{'hardware':<14} {'layout':<10} {'dtype':<6} {'replicas':>8} {'GPUs':>5} {'$/h':>8} "
        f"{'$/M out':>8} {'tok/s/GPU':>10}",
    ]
    for p in out["plans"]:
        lines.append(
            f"{p['hardware']:<14} {(p['layout'] + ' ' + p['levers']).strip():<10} "
            f"{p['weights_dtype']:<6} "
            f"{p['replicas']:>8} {p['gpus_total']:>5} {p['usd_per_hour']:>8.2f} "
            f"{p['usd_per_million_output_tokens']:>8.3f} {p['output_tokens_per_s_per_gpu']:>10.1f}"
        )
    for p in out["plans"][:1]:
        lines += ["", f"cheapest: {p['link']}"]
    if out["unfit"]:
        lines += ["", "no plan:"]
        lines += [f"  {u['hardware']}: {u['reason']}" for u in out["unfit"]]
    return "\n".join(lines)
