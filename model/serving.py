"""Serving under load (SPEC 4.6): one replica's run of the clients, the largest rate a replica
holds within the SLO, the replicas and GPUs a rate needs, the Pareto front, the sections of
``whatif eval`` and the Serving lens's one call.

The simulator it runs is four modules: :mod:`model.workload` (``vllm bench serve``'s clients
and the capacity search's runs), :mod:`model.stepmodel` (what one engine step takes),
:mod:`model.scheduler` (one continuous-batching replica, step by step) and
:mod:`model.runfigures` (a run's figures and timeline); :mod:`model.disagg` runs a replica as a
prefill pool and a decode pool. The capacity search, its sweep and the Pareto front keep
their own bounded memo per scenario (what they read, :func:`model.workload.search_key`); the
app's worker caches the lens results, and nothing outside :mod:`model` fills a cache here.

The simulator's names are re-exported here (``serving.simulate``, ``serving.Workload``…), where
the rest of the code base and the tests have always found them.
"""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np

from model import disagg
from model.layouts import layout_name
from model.runfigures import (  # noqa: F401 - re-exported: the simulator's names, as ever
    METRICS,
    _streamed,
    _weighted_percentiles,
    figures,
    saturated,
    slo_check,
    slo_figures,
    timeline,
)
from model.scenario import Scenario
from model.scheduler import (  # noqa: F401 - re-exported: the simulator's names, as ever
    BLOCK_TOKENS,
    DoesNotFit,
    Sim,
    _kv_weights,
    _KvWeights,
    _Req,
    _steps_that_fit,
    check_fits,
    frontend_fifo,
    kv_blocks,
    prefix_plan,
    simulate,
)
from model.stepmodel import (  # noqa: F401 - re-exported: the simulator's names, as ever
    MAX_TABLE_TOKENS,
    StepModel,
    chunk_attention,
)
from model.workload import (  # noqa: F401 - re-exported: the simulator's names, as ever
    _NOT_READ,
    CAPACITY_REQUESTS,
    Workload,
    arrivals,
    search_key,
    workload,
)

SERVING_KEYS = (
    "request_rate",
    "max_concurrency",
    "burstiness",
    "num_requests",
    "lengths",
    "range_ratio",
    "prefix_caching",
    "async_scheduling",
    "shared_prefix_tokens",
    "prefix_groups",
    "api_server_count",
    "api_us_per_token",
    "frontend_us_per_token",
    "frontend_queued_ms",
    "seed",
    "max_num_seqs",
    "ttft_slo_ms",
    "tpot_slo_ms",
    "slo_attainment",
)


def run(s: Scenario, wl: Workload | None = None, sm: StepModel | None = None) -> dict:
    """One serving run of the scenario's clients (or ``wl``): ``figures``, the raw ``sim``."""
    wl = wl or workload(s)
    longest = int((wl.prompt_tokens + wl.output_tokens).max()) if len(wl.arrival_s) else 0
    fits(s, longest)
    sim = serve(s, wl, sm)
    return {"figures": figures(sim, s), "sim": sim}


def fits(s: Scenario, longest_tokens: int | None = None) -> None:
    """:func:`check_fits` for the scenario as served: one engine, or with ``disaggregated``
    each of its prefill and decode instances (:func:`model.disagg.fits`)."""
    if s.disaggregated:
        disagg.fits(s, longest_tokens)
    else:
        check_fits(s, longest_tokens)


def serve(s: Scenario, wl: Workload, sm=None) -> dict:
    """Serve ``wl`` on one replica of ``s``: :func:`simulate` for one engine, or with
    ``disaggregated`` the prefill and decode pools (:func:`model.disagg.simulate`; ``sm`` then
    its step models)."""
    if s.disaggregated:
        return disagg.simulate(s, wl, sm)
    return simulate(s, wl, sm)


def step_model(s: Scenario):
    """The step physics :func:`serve` reuses across runs of ``s``."""
    if s.disaggregated:
        return disagg.step_models(s)
    return StepModel(s, int(s.max_num_batched_tokens))


def is_serving_key(key: str) -> bool:
    """A key that makes ``whatif eval`` add the ``serving`` and ``capacity`` sections."""
    return key in SERVING_KEYS


# ------------------------------------------------------------------------------- capacity

SWEEP_FRACTIONS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0, 1.1)
SWEEP_FIGURES = (
    "request_throughput",
    "output_throughput",
    "mean_ttft_ms",
    "median_ttft_ms",
    "p90_ttft_ms",
    "p99_ttft_ms",
    "mean_tpot_ms",
    "median_tpot_ms",
    "p90_tpot_ms",
    "p99_tpot_ms",
    "p99_itl_ms",
    "mean_e2el_ms",
    "slo_met_share",
    "goodput",
    "mean_batch",
    "saturated",
)


class _Runner:
    """Runs of one scenario at many rates on one set of draws (common random numbers: every
    rate sees the same arrival pattern on a scaled time axis and the same lengths, so the
    figures move with the rate alone)."""

    def __init__(self, s: Scenario, n: int):
        self.s = s
        self.n = n
        base = workload(self.s, rate=1.0, num_requests=n, max_concurrency=None)
        self.unit = base.arrival_s
        self.prompt, self.output = base.prompt_tokens, base.output_tokens
        fits(self.s, int((self.prompt + self.output).max()))
        self.sm = step_model(self.s)

    def _sim(self, rate, max_concurrency=None) -> dict:
        arr = np.zeros(self.n) if rate == "inf" else self.unit / float(rate)
        return serve(self.s, Workload(arr, self.prompt, self.output, max_concurrency), self.sm)

    def at(self, rate, max_concurrency=None, slo_inputs: list | None = None) -> dict:
        """The run's figures at ``rate`` (:func:`figures`)."""
        return figures(self._sim(rate, max_concurrency), self.s, slo_inputs)

    def check(self, rate) -> dict:
        """What the search reads of the run at ``rate`` (:func:`model.runfigures.slo_check`)."""
        return slo_check(self._sim(rate), self.s)


def _meets(f: dict, s: Scenario) -> bool:
    return f["slo_met_share"] >= s.slo_attainment and not f["saturated"]


_MAX_RATE: OrderedDict[str, dict] = OrderedDict()
_MAX_RATE_SIZE = 256


def max_rate(s: Scenario) -> dict:
    """The capacity search of :func:`capacity`, memoised per scenario (the Serving lens, the
    Scale to zero lens and ``whatif eval`` all ask for it): ``max_request_rate``,
    ``saturation_request_rate``, ``requests`` per run and what the search read of the
    ``light_load`` run (at 1 % of the saturation throughput; :func:`model.runfigures.slo_check`)."""
    key = search_key(s)
    hit = _MAX_RATE.get(key)
    if hit is not None:
        _MAX_RATE.move_to_end(key)
        return hit
    n = int(min(s.num_requests, CAPACITY_REQUESTS))
    runner = _Runner(s, n)
    hi = float(runner.check("inf")["request_throughput"])
    lo = 0.01 * hi
    f_lo = runner.check(lo)
    if not _meets(f_lo, s):
        best = 0.0
    elif _meets(runner.check(hi), s):
        best = hi
    else:
        a, b = lo, hi
        for _ in range(9):  # 2⁻⁹ of the saturation throughput
            mid = 0.5 * (a + b)
            if _meets(runner.check(mid), s):
                a = mid
            else:
                b = mid
        best = a
    out = {
        "max_request_rate": best,
        "saturation_request_rate": hi,
        "requests": n,
        "light_load": f_lo,
    }
    _MAX_RATE[key] = out
    while len(_MAX_RATE) > _MAX_RATE_SIZE:
        _MAX_RATE.popitem(last=False)
    return out


def meets_at(s: Scenario, rate: float) -> bool:
    """Whether one replica of ``s`` holds the SLO at ``rate`` [req/s], judged on the runs the
    capacity search (:func:`max_rate`) judges on: the same requests, draws and test. One run
    instead of the search's dozen; the plan (:mod:`model.plan`) uses it to rule out a replica
    count before it searches."""
    key = f"{search_key(s)}|{float(rate)!r}"
    hit = _MEETS.get(key)
    if hit is None:
        runner = _Runner(s, int(min(s.num_requests, CAPACITY_REQUESTS)))
        hit = _meets(runner.check(float(rate)), s)
        _remember(_MEETS, key, hit)
    else:
        _MEETS.move_to_end(key)
    return hit


_MEETS: OrderedDict[str, bool] = OrderedDict()


#: the ``search`` a caller passes to :func:`replica` when it could not run the capacity search
#: (the app's workers: past their time or memory budget): one request's figures stand in
NOT_RUN = "not_run"


def request_stand_in(s: Scenario, basis: str) -> dict:
    """A replica sized by one request's figures (:func:`model.request.request_figures`), in
    :func:`replica`'s form, ``basis`` saying why no search stands behind it."""
    from model.request import request_figures

    req = request_figures(s)
    return {
        "capacity_per_s": float(req["requests_per_s"]),
        "basis": basis,
        "ttft_s": req["ttft_ms"] / 1000.0,
        "tpot_s": req["tpot_ms"] / 1000.0,
    }


def replica(s: Scenario, search: dict | str | None = None) -> dict | None:
    """What the Scale to zero lens takes from this one (SPEC 4.6, "Economics uses it"): a
    replica's capacity (``capacity_per_s``: ``max_request_rate``; where even light load misses
    the SLO, the saturation throughput, ``basis`` saying which) and a request's TTFT and TPOT
    at light load [s]; None when the scenario cannot serve.

    ``search``: the capacity search (:func:`max_rate`) when the caller has it (the app runs it
    in a worker process and passes it here, so nothing in this module is filled from outside),
    :data:`NOT_RUN` when the caller could not run it, None to run it here."""
    if search == NOT_RUN or (search is None and SERVER_BUDGET and search_over_budget(s)):
        # a shared server does not run a search past its budget in a page's thread: one
        # request's figures stand in, and the page says why
        return request_stand_in(s, "budget")
    if search is None:
        try:
            search = max_rate(s)
        except DoesNotFit:
            return None
    light = search["light_load"]
    within = search["max_request_rate"] > 0
    return {
        "capacity_per_s": search["max_request_rate"]
        if within
        else search["saturation_request_rate"],
        "basis": "slo" if within else "saturation",
        "ttft_s": light["mean_ttft_ms"] / 1000.0,
        "tpot_s": (light["mean_tpot_ms"] or 0.0) / 1000.0,
    }


def replica_summary(s: Scenario, search: dict | str | None = None) -> dict:
    """A replica's capacity for the landing page, from :func:`replica` (the search when it is
    at hand, else one request's figures; ``basis`` says which): ``capacity_per_s``, the
    ``replicas_needed`` at the scenario's rate, and light-load ``ttft_ms`` and ``tpot_ms``;
    ``fits`` False when the scenario cannot serve. ``search`` as :func:`replica`'s."""
    rep = replica(s, search)
    if rep is None:
        return {"fits": False}
    return {
        "fits": True,
        "basis": rep["basis"],
        "capacity_per_s": rep["capacity_per_s"],
        "replicas_needed": _replicas(s.request_rate, rep["capacity_per_s"]),
        "ttft_ms": rep["ttft_s"] * 1e3,
        "tpot_ms": rep["tpot_s"] * 1e3,
    }


def _replicas(rate, per_replica: float) -> int | None:
    """⌈rate / per_replica⌉ replicas (at least one); None for ``inf`` or no capacity."""
    if rate == "inf" or per_replica <= 0:
        return None
    return max(1, math.ceil(float(rate) / per_replica - 1e-9))


def peak_hour_rate(s: Scenario) -> float:
    """The busiest hour of the scenario's traffic profile, scaled [req/s] (SPEC 4.4)."""
    from model.traffic import hourly_rate_per_s, traffic_profiles  # presets, read on use

    return float(np.max(hourly_rate_per_s(traffic_profiles()[s.traffic], s.rate_scale)))


def capacity(s: Scenario, peak_rate: float | None = None) -> dict:
    """The ``capacity`` section (SPEC 4.6): the largest arrival rate one replica holds within
    the SLO, the replicas and GPUs the scenario's rate (or ``peak_rate``) needs, and the sweep
    of rate against latency and throughput with the knee marked.

    ``max_request_rate``: bisection between 1 % of the saturation throughput (a run of all
    requests at once) and that throughput, on runs of :data:`CAPACITY_REQUESTS` requests with
    the scenario's burstiness (1 = Poisson), lengths and seed; a rate passes when at least
    ``slo_attainment`` of its requests meet both ``ttft_slo_ms`` and ``tpot_slo_ms`` and the
    run is not saturated. Zero when even light load misses the SLO (one request alone is too
    slow). ``knee_request_rate``: the first rate of the sweep whose p99 TTFT is over twice the
    lightest load's, where queueing starts to dominate.

    References
    ----------
    .. [1] SPEC 4.6 "Capacity"; NVIDIA NIM / aiconfigurator's "minimum GPUs for a rate and an
       SLO"; MLPerf Inference's server scenario (the largest Poisson rate meeting a latency
       percentile).
    """
    search = max_rate(s)
    best, hi, n = search["max_request_rate"], search["saturation_request_rate"], search["requests"]
    # the sweep's rates are fractions of the saturation throughput, which no SLO moves: a
    # change of rate or SLO reuses its runs, and only their SLO figures are counted again
    key = _slo_free_key(s)
    kept = _SWEEPS.get(key)
    if kept is None:
        runner = _Runner(s, n)
        kept = ({k: [] for k in ("request_rate", *SWEEP_FIGURES)}, [])
        for frac in SWEEP_FRACTIONS:
            rate = frac * hi
            f = runner.at(rate, slo_inputs=kept[1])
            kept[0]["request_rate"].append(rate)
            for k in SWEEP_FIGURES:
                kept[0][k].append(f[k])
        _remember(_SWEEPS, key, kept, _SWEEPS_SIZE)
    else:
        _SWEEPS.move_to_end(key)
    sweep = dict(kept[0])
    slo = [slo_figures(*run, s) for run in kept[1]]
    for k in ("slo_met_share", "goodput"):
        sweep[k] = [f[k] for f in slo]
    p99 = np.array([np.nan if v is None else v for v in sweep["p99_ttft_ms"]], dtype=float)
    over = np.nonzero(p99 > 2 * p99[0])[0]
    knee = float(sweep["request_rate"][over[0]]) if len(over) else None
    target = peak_rate if peak_rate is not None else s.request_rate
    replicas = _replicas(target, best)
    peak = peak_hour_rate(s)
    peak_replicas = _replicas(peak, best)
    return {
        "max_request_rate": best,
        "saturation_request_rate": hi,
        "replicas_needed": replicas,
        "gpus_needed": None if replicas is None else replicas * s.replica_gpus,
        "gpus_per_replica": s.replica_gpus,
        "for_request_rate": None if target == "inf" else float(target),
        "knee_request_rate": knee,
        "peak_hour": {
            "traffic": s.traffic,
            "request_rate": peak,
            "replicas_needed": peak_replicas,
            "gpus_needed": None if peak_replicas is None else peak_replicas * s.replica_gpus,
        },
        "slo": {
            "ttft_slo_ms": s.ttft_slo_ms,
            "tpot_slo_ms": s.tpot_slo_ms,
            "slo_attainment": s.slo_attainment,
        },
        "light_load_slo_met_share": search["light_load"]["slo_met_share"],
        "requests_per_run": n,
        "sweep": {k: np.array(v, dtype=float) for k, v in sweep.items()},
    }


# ------------------------------------------------------------------------------- Pareto

PARETO_TP = (1, 2, 4, 8)
PARETO_DTYPES = ("bf16", "fp8", "int4")
PARETO_SEQS = (8, 32, 128, 512)


def pareto_layouts(s: Scenario) -> list[tuple[int, int, bool]]:
    """The (tensor parallel, data parallel, expert parallel) layouts the Pareto sweep tries:
    TP 1-8, and for a mixture of experts the same GPU counts as data-parallel ranks of one GPU
    with the experts spread whole over them (vLLM's ``-dp N --enable-expert-parallel``, SGLang's
    DP attention with EP; issue 42, section 3)."""
    out = [(tp, 1, False) for tp in PARETO_TP]
    if s.model.experts:
        out += [(1, n, True) for n in PARETO_TP if 1 < n <= s.model.experts]
    return out


def pareto(s: Scenario) -> list[dict]:
    """Output tok/s per GPU against tok/s per user over the configurations a user would try:
    tensor-parallel degree, weights dtype and ``max_num_seqs`` (SPEC 4.6), for a mixture of
    experts data-parallel ranks with expert parallelism (:func:`pareto_layouts`), and
    disaggregated prefill and decode pools in the scenario's dtype
    (:func:`model.disagg.pareto_points`, ``disaggregated`` True).

    Each point is a closed-loop run at concurrency ``max_num_seqs`` (every slot busy, as a
    saturating benchmark at that concurrency): per GPU = ``output_throughput`` / GPUs; per user
    = 1000 / ``mean_tpot_ms``. Configurations whose weights do not fit are left out;
    ``front`` marks the points no other point beats on both axes.

    References
    ----------
    .. [1] NVIDIA, "LLM Inference Benchmarking: Fundamental Concepts" (throughput per GPU
       against interactivity per user); aiconfigurator's Pareto front of the same axes.
    """
    key = _slo_free_key(s)
    if key in _PARETOS:  # a change of rate or SLO does not move the front
        _PARETOS.move_to_end(key)
        return [dict(p) for p in _PARETOS[key]]
    agg = disagg.aggregated(s)  # the one-engine points; the disaggregated ones below
    points = []
    for tp, dp, ep in pareto_layouts(s):
        for dtype in PARETO_DTYPES:
            for seqs in PARETO_SEQS:
                try:
                    v = agg.with_dtype(
                        dtype, gpus=tp, data_parallel=dp, expert_parallel=ep, max_num_seqs=seqs
                    )
                    # every rank at its max_num_seqs: the rank simulated sees n / dp requests
                    n = int(min(max(3 * seqs, 48), 600)) * dp
                    runner = _Runner(v, n)
                except (DoesNotFit, ValueError):
                    continue
                f = runner.at("inf", max_concurrency=seqs * dp)
                if not f["mean_tpot_ms"]:
                    continue
                points.append(
                    {
                        "gpus": tp * dp,
                        "tp": tp,
                        "data_parallel": dp,
                        "expert_parallel": ep,
                        "layout": layout_name(tp, dp, ep),
                        "weights_dtype": dtype,
                        "max_num_seqs": seqs,
                        "disaggregated": False,
                        "tokens_per_s_per_gpu": f["output_throughput"] / (tp * dp),
                        "tokens_per_s_per_user": 1000.0 / f["mean_tpot_ms"],
                        "mean_ttft_ms": f["mean_ttft_ms"],
                        "mean_tpot_ms": f["mean_tpot_ms"],
                        "request_throughput": f["request_throughput"],
                    }
                )
    points += disagg.pareto_points(s, PARETO_TP, PARETO_SEQS)
    for p in points:
        p["front"] = not any(
            q["tokens_per_s_per_gpu"] >= p["tokens_per_s_per_gpu"]
            and q["tokens_per_s_per_user"] >= p["tokens_per_s_per_user"]
            and (
                q["tokens_per_s_per_gpu"] > p["tokens_per_s_per_gpu"]
                or q["tokens_per_s_per_user"] > p["tokens_per_s_per_user"]
            )
            for q in points
        )
    _remember(_PARETOS, key, [dict(p) for p in points])
    return points


#: the sweeps of :func:`capacity` and the fronts of :func:`pareto`, per scenario without the
#: keys they do not read (:func:`_slo_free_key`: the Serving page's reaction to a rate or SLO
#: change, issue 39's speed budget). A sweep keeps its runs' requests' TTFT and TPOT (13 runs
#: of at most 1,000 requests, about 0.2 MB), so fewer of them are kept.
_SWEEPS: OrderedDict[str, tuple] = OrderedDict()
_SWEEPS_SIZE = 32
_PARETOS: OrderedDict[str, list] = OrderedDict()
_SLO_KEYS = frozenset({"ttft_slo_ms", "tpot_slo_ms", "slo_attainment"})


def _slo_free_key(s: Scenario) -> str:
    """What the sweep and the Pareto front read: the scenario without the keys a run does not
    read (:data:`model.workload._NOT_READ`, the rate among them) and the SLOs."""
    return s.raw.model_dump_json(exclude=set(_NOT_READ) | _SLO_KEYS)


def _remember(cache: OrderedDict, key: str, value, size: int = _MAX_RATE_SIZE) -> None:
    cache[key] = value
    while len(cache) > size:
        cache.popitem(last=False)


def pareto_best(points: list[dict], tokens_per_s_per_user: float) -> dict | None:
    """Of :func:`pareto`'s points at least ``tokens_per_s_per_user`` fast (the TPOT SLO's
    speed, 1000 / ``tpot_slo_ms``), the one with the most tok/s per GPU; None when none is."""
    fast = [p for p in points if p["tokens_per_s_per_user"] >= tokens_per_s_per_user]
    return max(fast, key=lambda p: p["tokens_per_s_per_gpu"]) if fast else None


# ------------------------------------------------------------------------------- sections


def trace_workload(s: Scenario, trace) -> Workload:
    """An uploaded trace's arrivals (scaled by ``rate_scale``) and lengths (the scenario's
    where the trace has none), sent open-loop as recorded."""
    n = len(trace.arrival_s)
    if n > s.num_requests:
        n = int(s.num_requests)  # the first num_requests requests of the trace
    arr = np.asarray(trace.arrival_s[:n], dtype=float) / s.rate_scale
    inp = trace.input_tokens[:n] if trace.input_tokens is not None else None
    out = trace.output_tokens[:n] if trace.output_tokens is not None else None
    prompt = np.full(n, s.prompt_tokens) if inp is None else np.maximum(inp, 1)
    output = np.full(n, s.output_tokens) if out is None else np.maximum(out, 1)
    group = getattr(trace, "prefix_group", None)
    shared = getattr(trace, "prefix_tokens", None)
    return Workload(
        arr,
        prompt.astype(np.int64),
        output.astype(np.int64),
        prefix_group=None if group is None else np.asarray(group[:n], dtype=np.int64),
        prefix_tokens=None if shared is None else np.asarray(shared[:n], dtype=np.int64),
    )


def sections(s: Scenario, trace=None) -> dict:
    """The ``serving`` and ``capacity`` sections of ``whatif eval --json`` (SPEC 4.6): one run
    of the scenario's clients (or of ``trace``), and the capacity search."""
    wl = trace_workload(s, trace) if trace is not None else None
    one = run(s, wl)
    cap = capacity(s)
    cap["sweep"] = {k: [None if v != v else float(v) for v in a] for k, a in cap["sweep"].items()}
    serving = {"fits": True, **one["figures"]}
    serving["source"] = "trace" if trace is not None else "clients"
    out = {"serving": serving, "capacity": {"fits": True, **cap}}
    if s.disaggregated:
        out["disaggregation"] = disaggregation_section(s)
    return out


def disaggregation_section(s: Scenario) -> dict:
    """The ``disaggregation`` section of ``whatif eval --json`` (issue 42 §2): the pools as
    set, each pool's rate per instance, the best xPyD split and the GPUs aggregated and
    disaggregated serving need against the rate (:func:`model.disagg.comparison`)."""
    cmp = disagg.comparison(s, max_rate)
    curve = cmp.pop("curve")
    keep = np.unique(np.linspace(0, len(curve["request_rate"]) - 1, 40).astype(int))
    cmp["curve"] = {
        k: [None if v != v else float(v) for v in np.asarray(a)[keep]] for k, a in curve.items()
    }
    return cmp


#: what one Serving lens run may simulate on a shared server (issue 40): requests in the run,
#: and engine steps over the run, the capacity search and the Pareto sweep together. Past
#: them the page refuses the run and names the CLI command that runs it on one's own machine.
SERVER_MAX_REQUESTS = 100_000
SERVER_MAX_STEPS = 3_000_000
#: and the simulator's work (:func:`predicted_work`): about 5 s of one core on the machine it
#: was measured on, the largest accepted run's budget in time
SERVER_MAX_WORK = 6_000_000
#: set by the app (ui.serving_worker): the budget applies; the CLI runs whatever it is asked
SERVER_BUDGET = False
#: the runs a lens run adds to the scenario's own: the capacity search's and the Pareto
#: sweep's, in units of a run of the search's requests (measured: 12-30 search runs, and the
#: sweep's 36 configurations at up to 600 requests)
_LENS_RUNS = 40


def _predicted_parts(s: Scenario, search_only: bool) -> tuple[float, float, float]:
    """(prefill chunk steps, decode steps, requests) the lens would simulate; see
    :func:`predicted_steps`."""
    prompt, output = float(s.prompt_tokens), float(max(s.output_tokens, 1))
    budget = float(max(int(s.max_num_batched_tokens), 1))
    try:
        held_tokens = kv_blocks(s) * BLOCK_TOKENS
    except DoesNotFit:
        return 0.0, 0.0, 0.0  # the run is refused at once, saying why
    if held_tokens < prompt + output:
        return 0.0, 0.0, 0.0  # not one request fits: refused at once as well
    together = max(1.0, min(float(s.max_num_seqs), budget, held_tokens / (prompt + output)))
    chunks = math.ceil(prompt / budget)
    # the search and the sweep run near saturation: as many sequences as fit share a step
    searched = _LENS_RUNS * float(min(s.num_requests, CAPACITY_REQUESTS))
    if s.disaggregated:  # two engines a run (measured: a lens 1.4× the same one aggregated)
        searched *= 1.5
    chunk_steps, decode_steps, requests = searched * chunks, searched * output / together, searched
    if not search_only:
        # the run itself shares a decode step among the requests in flight, which Little's
        # law puts at the rate times one request's time alone (more under load, when the
        # steps are fewer): a light rate runs each request's decode nearly alone
        from model.request import request_figures

        alone_s = float(request_figures(s)["e2e_s"])
        rate = math.inf if s.request_rate == "inf" else float(s.request_rate)
        flight = min(together, max(1.0, rate * alone_s))
        if s.max_concurrency is not None:
            flight = min(flight, float(s.max_concurrency))
        n = float(s.num_requests)
        chunk_steps += n * chunks
        decode_steps += n * output / max(flight, 1.0)
        requests += n
    return chunk_steps, decode_steps, requests


def predicted(s: Scenario, search_only: bool = False) -> tuple[float, float]:
    """(:func:`predicted_steps`, :func:`predicted_work`) of ``s`` from one estimate."""
    chunk_steps, decode_steps, requests = _predicted_parts(s, search_only)
    work = decode_steps + CHUNK_STEP_WORK * chunk_steps + REQUEST_WORK * requests
    return chunk_steps + decode_steps, work


def predicted_steps(s: Scenario, search_only: bool = False) -> float:
    """Engine steps the Serving lens would simulate for ``s``, from its size alone, before it
    starts: every request's prefill takes ``ceil(prompt / max_num_batched_tokens)`` steps, and
    its decode ``output`` steps shared by the sequences in flight: for the search and sweep
    runs (:data:`_LENS_RUNS` runs of at most :data:`CAPACITY_REQUESTS` requests, near
    saturation) as many as the KV cache and ``max_num_seqs`` hold, for the run itself the rate
    times one request's time alone (Little's law; :func:`model.request.request_figures`),
    capped by ``max_concurrency``. The run's memory grows with it (issue 40)."""
    return predicted(s, search_only)[0]


#: what the simulator spends, in decode steps' worth: a prefill chunk step (an explicit step
#: with a prompt's chunk) costs about six, each request about nine (measured on this project's
#: 2-core machine over eight scenarios from 0.9 to 6.2 s: 0.8 µs a decode step, 4.7 µs a chunk
#: step, 7 µs a request; the fit is within a factor of 1.5)
CHUNK_STEP_WORK, REQUEST_WORK = 6.0, 9.0


def predicted_work(s: Scenario, search_only: bool = False) -> float:
    """The simulator's work for the Serving lens on ``s`` in decode steps' worth
    (:data:`CHUNK_STEP_WORK`, :data:`REQUEST_WORK`): what its time grows with."""
    return predicted(s, search_only)[1]


def search_over_budget(s: Scenario) -> bool:
    """The capacity search and sweep alone (what Scale to zero, Home and Compare need) would
    pass :data:`SERVER_MAX_STEPS` or :data:`SERVER_MAX_WORK`."""
    steps, work = predicted(s, search_only=True)
    return steps > SERVER_MAX_STEPS or work > SERVER_MAX_WORK


def server_refusal(s: Scenario) -> str | None:
    """Why the shared server will not run the Serving lens for ``s`` (too many requests, or
    more engine steps than :data:`SERVER_MAX_STEPS`), in one sentence with the CLI command that
    runs it anyway; None when it fits the budget."""
    if s.num_requests > SERVER_MAX_REQUESTS:
        return (
            f"{s.num_requests:,} requests is more than this shared server simulates for one "
            f"page (at most {SERVER_MAX_REQUESTS:,}); run it on your own machine: {_cli(s)}"
        )
    steps, work = predicted(s)
    if steps > SERVER_MAX_STEPS or work > SERVER_MAX_WORK:
        return (
            f"this run would simulate about {steps:,.0f} engine steps (prefill chunks of "
            f"max_num_batched_tokens={int(s.max_num_batched_tokens):,} tokens, decode steps "
            f"shared by the requests in flight, the capacity search and the Pareto sweep "
            f"included; {work:,.0f} decode steps' worth of work, a chunk step counting "
            f"{CHUNK_STEP_WORK:g} and a request {REQUEST_WORK:g}), more than the "
            f"{SERVER_MAX_STEPS:,} steps or {SERVER_MAX_WORK:,} steps' worth this shared server "
            f"runs for one page; lower num_requests or output_tokens, raise max_num_batched_tokens or "
            f"request_rate, or run it on your own machine: {_cli(s)}"
        )
    return None


def _cli(s: Scenario) -> str:
    """The ``whatif eval`` command line of ``s`` (its link's keys as ``--set``)."""
    from model import codecs  # the scenario's own keys

    args = " ".join(f"--set {k}={v}" for k, v in codecs.to_params(s))
    return f"whatif eval {args} --json"


def serving_lens(s: Scenario) -> dict:
    """The Serving lens's one core call: the scenario's run (figures and timeline) and the
    capacity search with its sweep; when the scenario cannot serve, ``fits`` False and the
    reason instead of figures. The Pareto front is a view of its own (:func:`pareto_view`),
    computed when its tab or the report asks for it: it is most of what a change of lengths
    or of a prefix key costs the page otherwise (issue 39's speed budget)."""
    try:
        one = run(s)
        cap = capacity(s)
    except DoesNotFit as exc:
        return {"fits": False, "reason": str(exc), "figures": {}}
    sweep_ = cap.pop("sweep")
    return {
        "fits": True,
        "reason": None,
        "figures": {"serving": one["figures"], "capacity": cap},
        "search": max_rate(s),
        "timeline": timeline(one["sim"]),
        "sweep": sweep_,
    }


def pareto_view(s: Scenario) -> dict:
    """The Serving page's Pareto front (:func:`pareto`) as a view: ``points``, or only a
    ``reason`` when the scenario cannot serve."""
    try:
        return {"points": pareto(s)}
    except DoesNotFit as exc:
        return {"reason": str(exc)}


def pareto_key(s: Scenario) -> str:
    """What the Pareto front reads (neither the rate nor the SLOs): its cache key."""
    return _slo_free_key(s)


def disagg_view(s: Scenario) -> dict:
    """The Serving page's Disaggregation view (:func:`model.disagg.comparison`), run apart from
    :func:`serving_lens` (only while the view is open); ``reason`` instead when a pool's
    instance cannot hold the model or its requests."""
    try:
        return disagg.comparison(s, max_rate)
    except DoesNotFit as exc:
        return {"reason": str(exc)}


#: the Serving page's views computed apart from the lens, only while shown, by name: the
#: worker runs them (ui.serving_worker.view); a bare call (a test, a script) calls them here
VIEWS = {"disagg": disagg_view, "pareto": pareto_view}


# ------------------------------------------------------------------------------- measured runs

_MEASURED = (
    ("median_ttft_ms", "TTFT p50"),
    ("p99_ttft_ms", "TTFT p99"),
    ("median_tpot_ms", "TPOT p50"),
    ("p99_tpot_ms", "TPOT p99"),
)


def _finite_number(v) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        return None
    return float(v)


def _serving_runs(datasets):
    """Each run of the imported serving benchmarks: (data set, the run's own row, the row
    with the data set's conditions and figures under it)."""
    for ds in datasets:
        if ds.kind != "serving":
            continue
        for row in ds.rows or [dict(ds.conditions) | dict(ds.figures)]:
            yield ds, row, {**ds.conditions, **ds.figures, **row}


_GPU_FACTORS = (
    ("tensor_parallel_size", "tp"),
    ("pipeline_parallel_size", "pp"),
    ("data_parallel_size", "dp"),
)


def benchmark_pareto_points(datasets, replica_gpus: int) -> list[dict]:
    """Imported serving runs (a ``vllm bench sweep``'s, or any serve results) as points of the
    Pareto chart, as vLLM's ``vllm bench sweep plot_pareto`` places them: output tok/s per user
    = ``output_throughput`` / the run's ``max_concurrency`` (else its observed
    ``max_concurrent_requests``), output tok/s per GPU = ``output_throughput`` / TP × PP × DP
    from the run's keys (``tensor_parallel_size`` or ``tp``…, a missing factor 1), or, where
    the run states none, the scenario's ``replica_gpus`` (the label says which). A run without
    a user count is left out, as plot_pareto leaves it.

    References
    ----------
    .. [1] vLLM ``vllm/benchmarks/sweep/plot_pareto.py`` (0.12-0.34): ``_first_present``,
       ``_infer_gpu_count``; docs/research/issue-43-bench-formats.md, section 2.8.
    """
    out = []
    for ds, row, r in _serving_runs(datasets):
        thr = _finite_number(r.get("output_throughput"))
        users = _finite_number(r.get("max_concurrency")) or _finite_number(
            r.get("max_concurrent_requests")
        )
        if thr is None or thr <= 0 or users is None or users <= 0:
            continue
        # the run's own keys only: a sweep's runs differ in them, and a data set's
        # conditions gather every run's
        own = row if ds.rows else r
        factors = [
            _finite_number(own.get(long)) or _finite_number(own.get(short))
            for long, short in _GPU_FACTORS
        ]
        stated = [f for f in factors if f]
        gpus = math.prod(stated) if stated else replica_gpus
        whose = "its" if stated else "the scenario's"
        out.append(
            {
                "tokens_per_s_per_user": thr / users,
                "tokens_per_s_per_gpu": thr / gpus,
                "label": f"{ds.name}: {thr:,.0f} output tok/s, {users:g} users, "
                f"{gpus:g} GPUs ({whose})",
            }
        )
    return out


def benchmark_points(datasets) -> list[dict]:
    """Imported serving benchmarks (``vllm bench serve``, GenAI-Perf, … as
    :mod:`model.readers` reads them) as points on the Serving lens's latency-against-rate
    chart: one per run and figure, at the run's offered ``request_rate``; a run at ``inf`` or
    at a stated concurrency only is placed at the rate it served (``request_throughput``),
    and says so in its label."""
    out = []
    for ds, _row, r in _serving_runs(datasets):
        rate = _finite_number(r.get("request_rate"))
        served = _finite_number(r.get("request_throughput"))
        where = "offered"
        if rate is None:
            rate, where = served, "served"
        if rate is None or rate <= 0:
            continue
        conc = r.get("max_concurrency")
        load = f"{rate:.3g} req/s {where}" + (f", concurrency {conc}" if conc else "")
        for key, name in _MEASURED:
            v = _finite_number(r.get(key))
            if v is not None and v > 0:
                out.append(
                    {
                        "request_rate": rate,
                        "value": v,
                        "figure": key,
                        "label": f"{ds.name}: {name} ({load})",
                    }
                )
    return out
