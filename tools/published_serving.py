"""Run the published serving benchmarks (tests/data/published_serving.csv) through the
Serving lens and compare, metric by metric (SPEC 4.6 "Fidelity").

Each run's facts (GPU, GPUs per replica, model, dtype, prompt and output tokens, request rate,
max concurrency, requests) are set; everything else is left at the defaults, as a user of
``whatif eval --set … --json`` would leave it. A run without a stated rate is a closed loop at
its concurrency (``request_rate=inf``, as ``vllm bench serve --max-concurrency`` is run).

Runs are split by source: the sources in :data:`HELD_OUT` are never used to fit anything (the
engine profile's ``frontend_ms`` is derived from the concurrency-1 runs of the other sources,
:func:`derive_frontend_ms`), and their errors are reported apart.

Load classes: ``concurrency 1`` (max_concurrency 1); ``saturation`` (rate inf without a
concurrency limit, or a concurrency of 64 or more); ``light load`` (the rest).

``python -m tools.published_serving`` prints the table and the median errors;
``python -m tools.published_serving --run PATTERN ['{"key": value}']`` prints the runs whose id
contains ``PATTERN``, figure by figure, with scenario keys set on top of each run's
(:func:`run_report`).
"""

from __future__ import annotations

import csv
import re
from collections import OrderedDict
from pathlib import Path
from statistics import median

from model import serving
from model.accuracy import SERVING_METRICS
from model.overrides import resolve

TABLE = Path(__file__).parent.parent / "tests" / "data" / "published_serving.csv"


def prefix_cached_tokens(text: str) -> int:
    """``prefix_cached_tokens=N`` in a row's text (``extra`` here, ``notes`` in the serving
    table): prompt tokens the server's prefix cache already held, since a sweep run in rising
    prompt length on one server sends random-dataset prompts of one seed that extend each other;
    0 when the row does not say so."""
    found = re.search(r"prefix_cached_tokens=(\d+)", text)
    return int(found.group(1)) if found else 0


#: the most requests a run is simulated with: every run of the table (6,000 at most) is
#: simulated whole, since a flood's TTFT is its queue and the queue is the run's length (a
#: 3,000-request flood cut to 1,000 waits a third as long); the bound only keeps a
#: mistyped count from a long simulation
MAX_SIMULATED_REQUESTS = 10_000

HELD_OUT = ("nim180", "mushfiq", "inferencex1061", "tt356")
#: runs kept in the table but not compared, by run-id prefix, with the reason: what they
#: measured is not what the Serving lens models
NOT_COMPARABLE = {
    "css-": (
        "prefix-cache reuse: three same-seed repeats on one server (vllm bench serve --seed 0, "
        "vLLM 0.19's prefix caching on, KV pool never above 10 %), so repeats 2-3 re-send "
        "prompts still cached; the 2048x128 TP1 run's input throughput (14.5k tok/s, ~65 % of "
        "the A100's FP16 peak averaged over the run) cannot be prefilled in the 56 % of the "
        "time its GPU was busy"
    ),
}


def runs() -> OrderedDict:
    out: OrderedDict = OrderedDict()
    with TABLE.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            out.setdefault(row["notes"].split(";")[0].split()[0].removeprefix("run="), []).append(
                row
            )
    return out


def held_out(run_id: str, row: dict | None = None) -> bool:
    """A run no number was chosen with: its ``split`` column says ``held_out`` (rows added
    from 2026-12-05, split by ``tools/split_serving_rows.py`` before any figure was computed),
    or, for the older rows without one, its source is in :data:`HELD_OUT`."""
    split = ((row or {}).get("split") or "").strip()
    if split:
        return split == "held_out"
    return run_id.startswith(HELD_OUT)


def engine_of(row: dict) -> str | None:
    """The engine profile a run names (``engine`` column, banded by its release), or None
    for the older rows, which were compared at the default profile."""
    from model import engines

    ident = (row.get("engine") or "").strip().lower()
    if not ident:
        return None
    release = (row.get("engine_version") or "").strip() or None
    return engines.banded(ident, release)


def server_settings(text: str) -> list[tuple[str, str]]:
    """``set:key=value`` in a row's notes: a server flag the run states that the Serving lens
    has a public key for (``--max-num-seqs 32`` -> ``set:max_num_seqs=32``,
    ``--no-enable-prefix-caching`` -> ``set:prefix_caching=false``), so the run is simulated
    as it was served; the keys are validated like any ``--set``."""
    return re.findall(r"\bset:([a-z_]+)=([^\s;,()]+)", text)


def lengths_of(row: dict) -> list[tuple[str, str]]:
    """``lengths=random`` with the run's range ratio where the random dataset drew lengths
    around the stated ones; otherwise the fixed (or mean) lengths."""
    ratio = (row.get("range_ratio") or "").strip()
    if (row.get("dataset") or "").strip() == "random" and ratio and float(ratio) > 0:
        return [("lengths", "random"), ("range_ratio", ratio)]
    if (row.get("dataset") or "").strip() == "sharegpt":
        return [("lengths", "sharegpt")]
    return []


def load_class(row: dict) -> str:
    conc = row["max_concurrency"].strip()
    if conc == "1":
        return "concurrency 1"
    rate = row["request_rate"].strip()
    if (rate == "inf" and not conc) or (conc and int(conc) >= 64):
        return "saturation"
    return "light load"


def generated_mean(row: dict) -> float:
    """Output tokens per request the server generated: the printout's ``Total generated
    tokens`` over the requests where the notes carry it (``total_generated=``), else the
    stated output length. Without ``--ignore-eos`` a model stops before ``max_tokens``
    (GPUStack's gpt-oss-20b random 4000/200 runs generated 104.6 per request), and the
    benchmark's throughput counts what was generated, so the run simulates that."""
    found = re.search(r"total_generated=([0-9]+)", row.get("notes") or "")
    n = (row.get("num_requests") or "").strip()
    if found and n and float(n) > 0:
        return int(found.group(1)) / float(n)
    return float(row["output_tokens"])


def chat_template_tokens(row: dict) -> int:
    """Tokens the model's chat template adds to each prompt of a run through a chat endpoint
    (``endpoint`` ``chat``; the model preset's ``chat_template_tokens``, 0 where it states
    none): the server prefills them, while ``vllm bench serve`` prints the prompt without them
    (its random dataset counts the tokens it drew, its ShareGPT dataset the raw message)."""
    if (row.get("endpoint") or "").strip() != "chat":
        return 0
    from model.presets import model_presets

    preset = model_presets().get(row["model"])
    return int(preset.chat_template_tokens or 0) if preset else 0


def prefilled_tokens(row: dict) -> int:
    """The prompt the server prefilled for a row: the printed one, less a prefix cache's hits
    the notes state, plus the chat template's tokens through a chat endpoint."""
    return (
        round(float(row["prompt_tokens"]))
        - prefix_cached_tokens(row.get("notes") or "")
        + chat_template_tokens(row)
    )


def scenario_of(row: dict, **extra):
    conc = row["max_concurrency"].strip()
    rate = row["request_rate"].strip() or "inf"
    n = row["num_requests"].strip()
    n = str(round(float(n))) if n else n
    n = int(n) if n else max(4 * int(conc or 1), 50)
    pairs = [
        ("hardware", row["gpu"]),
        ("model", row["model"]),
        ("gpus", row["gpus"]),
        ("weights_dtype", row["weights_dtype"]),
        ("prompt_tokens", str(prefilled_tokens(row))),
        ("output_tokens", str(max(round(generated_mean(row)), 1))),
        ("request_rate", rate),
        ("max_concurrency", conc or "none"),
        ("num_requests", str(min(max(n, 8), MAX_SIMULATED_REQUESTS))),
        *([("engine", engine_of(row))] if engine_of(row) else []),
        *lengths_of(row),
        *server_settings(row.get("notes") or ""),
        *[(k, str(v)) for k, v in extra.items()],
    ]
    return resolve(pairs, strict=True)[0]


def compare(**extra) -> list[dict]:
    """One record per (run, metric): measured, modelled, relative error, class, split."""
    out = []
    for run_id, rows in runs().items():
        reason = next((r for k, r in NOT_COMPARABLE.items() if run_id.startswith(k)), None)
        if reason:
            out.append({"run": run_id, "skipped": f"not comparable: {reason}"})
            continue
        try:
            s = scenario_of(rows[0], **extra)
            fig = serving.run(s)["figures"]
        except (serving.DoesNotFit, ValueError) as exc:
            out.append({"run": run_id, "skipped": str(exc)[:120]})
            continue
        out.extend(records(run_id, rows, fig))
    return out


def as_benchmark_counts(fig: dict, row: dict) -> dict:
    """The model's figures with ``total_token_throughput`` counted as the benchmark counts it.

    ``vllm bench serve`` and SGLang's ``bench_serving`` divide the prompt tokens *they* drew
    or tokenised (``Total input tokens``: the random dataset's lengths, the ShareGPT message
    without the chat template) plus the generated tokens by the run's duration. The model is
    run with the prompt the server prefills (:func:`prefilled_tokens`), so its input rate is scaled
    by printed / prefilled prompt tokens; the other figures are unchanged.

    References
    ----------
    .. [1] vLLM ``vllm/benchmarks/serve.py`` (``calculate_metrics``: ``total_input`` sums
       ``input_requests[i].prompt_len``, the dataset's own count; ``total_token_throughput =
       (total_input + sum(actual_output_lens)) / dur_s``); SGLang
       ``python/sglang/bench_serving.py`` (``total_throughput``, the same sum).
    """
    total, output = fig.get("total_token_throughput"), fig.get("output_throughput")
    if total is None or output is None:
        return fig
    printed, prefilled = float(row["prompt_tokens"]), prefilled_tokens(row)
    if prefilled <= 0 or prefilled == printed:
        return fig
    return {**fig, "total_token_throughput": output + (total - output) * printed / prefilled}


def records(run_id: str, rows: list[dict], fig: dict) -> list[dict]:
    """One record per figure of a run that the model gives: measured, modelled, relative
    error, load class and split (what :func:`compare` and :func:`run_report` both read);
    totals counted as the benchmark counts them (:func:`as_benchmark_counts`)."""
    out = []
    fig = as_benchmark_counts(fig, rows[0])
    for row in rows:
        got = fig.get(row["metric"])
        if got is None:
            continue
        value = float(row["value"])
        out.append(
            {
                "run": run_id,
                "metric": row["metric"],
                "measured": value,
                "modelled": float(got),
                "error": (float(got) - value) / value,
                "class": load_class(row),
                "held_out": held_out(run_id, row),
            }
        )
    return out


def streams(throughput_tok_s: float, itl_s: float) -> float:
    """Sequences streaming at once, by Little's law: output tokens per second × the gap
    between one sequence's tokens (the median ITL) [sequences]. Applied alike to a run's
    measured and modelled figures, it shows whether a server and the model spread the same
    throughput over as many streams (docs/serving.md, "Streams at once, by Little's law")."""
    return float(throughput_tok_s) * float(itl_s)


def run_report(pattern: str, **extra) -> list[str]:
    """Lines for the runs whose id contains ``pattern``: each figure measured, modelled and
    their error, then the streams both imply (:func:`streams`) and the model's mean running
    batch over its decode steps. ``extra`` sets scenario keys on every run (a probe, never a
    choice: the table's split rules how numbers are chosen)."""
    out = []
    for run_id, rows in runs().items():
        if pattern not in run_id:
            continue
        s = scenario_of(rows[0], **extra)
        res = serving.run(s)
        fig, sim = res["figures"], res["sim"]
        out.append(f"{run_id} ({'held out' if held_out(run_id, rows[0]) else 'fit'})")
        meas = {}
        for r in records(run_id, rows, fig):
            meas[r["metric"]] = r["measured"]
            out.append(
                f"  {r['metric']:<24} measured {r['measured']:>10.4g}  "
                f"modelled {r['modelled']:>10.4g}  {r['error']:+7.0%}"
            )
        pair = ("output_throughput", "median_itl_ms")
        if all(k in meas for k in pair):
            m = streams(meas[pair[0]], meas[pair[1]] / 1e3)
            g = streams(fig[pair[0]], fig[pair[1]] / 1e3)
            busy = sim["step_itl_tokens"] > 0
            mean_batch = float(sim["step_batch"][busy].mean()) if busy.any() else 0.0
            out.append(
                f"  streams (throughput × median ITL): measured {m:.0f}, modelled {g:.0f}; "
                f"the model's mean batch over its decode steps {mean_batch:.0f}"
            )
    return out


def derive_frontend_ms() -> float:
    """The front-end time that makes the fitting runs' concurrency-1 mean TTFT right: the
    median of measured − modelled (modelled with no front-end time), at least 0 [ms]."""
    gaps = [
        r["measured"] - r["modelled"]
        for r in compare(frontend_ms=0)
        if "metric" in r
        and r["metric"] == "mean_ttft_ms"
        and r["class"] == "concurrency 1"
        and not r["held_out"]
    ]
    return max(0.0, median(gaps)) if gaps else 0.0


def serving_metric(metric: str) -> str:
    """The kind of figure a ``vllm bench serve`` result name is
    (:data:`model.accuracy.SERVING_METRICS`): TTFT, TPOT and ITL, throughput (requests,
    output or total tokens per second, and the peak output tokens in one second) or end-to-end
    latency."""
    ttft, tpot, throughput, e2e = SERVING_METRICS
    if metric.endswith("_ttft_ms"):
        return ttft
    if metric.endswith(("_tpot_ms", "_itl_ms")):
        return tpot
    if metric.endswith("_throughput") or metric == "max_output_tokens_per_s":
        return throughput
    if metric.endswith("_e2el_ms"):
        return e2e
    raise ValueError(f"{metric!r} is not a serving figure this table compares")


def medians(records: list[dict], groups: list) -> dict:
    """Median |error| and figure count of each ``(name, belongs)`` group, for the fitting runs
    and the held-out runs apart (keys ``"fitting · name"``, ``"held out · name"``)."""
    figures = [r for r in records if "metric" in r]
    out = {}
    for split in (False, True):
        for name, belongs in groups:
            errs = [abs(r["error"]) for r in figures if r["held_out"] == split and belongs(r)]
            key = f"{'held out' if split else 'fitting'} · {name}"
            out[key] = (median(errs), len(errs)) if errs else (None, 0)
    return out


LOAD_CLASSES = ("concurrency 1", "light load", "saturation")


def summary(records: list[dict]) -> dict:
    """Median |error| per load class and per kind of figure (:func:`serving_metric`), for the
    fitting runs and the held-out runs apart."""
    groups = [(cls, lambda r, c=cls: r["class"] == c) for cls in LOAD_CLASSES]
    groups += [
        (kind.removeprefix("serving: "), lambda r, k=kind: serving_metric(r["metric"]) == k)
        for kind in SERVING_METRICS
    ]
    return medians(records, groups)


def source_family(run_id: str) -> str:
    """GPUStack's performance-lab pages, which hold most of the table, or the other sources:
    the split that shows whether a figure holds beyond the one lab that dominates the table."""
    return "GPUStack" if run_id.startswith("gpustack-") else "other sources"


def by_source(records: list[dict]) -> dict:
    """Median |error| and figure count per (split, source family, load class)."""
    groups = [
        (
            f"{fam} · {cls}",
            lambda r, f=fam, c=cls: source_family(r["run"]) == f and c in ("all", r["class"]),
        )
        for fam in ("GPUStack", "other sources")
        for cls in ("all", *LOAD_CLASSES)
    ]
    return medians(records, groups)


def worst(records: list[dict], n: int = 10, held: bool = True) -> list[dict]:
    """The ``n`` figures furthest off (by |error|) of one split, worst first."""
    rows = [r for r in records if "metric" in r and r["held_out"] == held]
    return sorted(rows, key=lambda r: -abs(r["error"]))[:n]


if __name__ == "__main__":
    import sys

    if "--derive" in sys.argv:
        print(f"frontend_ms = {derive_frontend_ms():.1f}")
        raise SystemExit(0)
    if "--run" in sys.argv:
        import json

        at = sys.argv.index("--run")
        if at + 1 >= len(sys.argv):
            raise SystemExit("--run needs a run-id pattern, e.g. --run qwen3-14b-h100")
        try:
            keys = json.loads(sys.argv[at + 2]) if at + 2 < len(sys.argv) else {}
            if not isinstance(keys, dict):
                raise ValueError("the keys must be a JSON object, e.g. '{\"frontend_ms\": 20}'")
            lines = run_report(sys.argv[at + 1], **keys)
        except ValueError as exc:  # a JSON error is a ValueError too
            raise SystemExit(f"--run: {exc}") from None
        print("\n".join(lines) if lines else f"no run id contains {sys.argv[at + 1]!r}")
        raise SystemExit(0)
    recs = compare()
    for r in recs:
        if "skipped" in r:
            print(f"{r['run']:<48} skipped: {r['skipped']}")
        else:
            print(
                f"{r['run']:<48} {r['metric']:<22} {r['measured']:>10.4g} {r['modelled']:>10.4g} "
                f"{r['error']:+7.0%} {r['class']}{' (held out)' if r['held_out'] else ''}"
            )
    for held in (False, True):
        print(f"worst figures, {'held out' if held else 'fitting'}:")
        for r in worst(recs, 10, held):
            print(
                f"  {r['run']:<60} {r['metric']:<22} {r['measured']:>10.4g} "
                f"{r['modelled']:>10.4g} {r['error']:+7.0%} {r['class']}"
            )

    def show(found: dict, width: int, indent: str = "") -> None:
        for key, (err, n) in found.items():
            shown = "—" if err is None else f"{err:.0%}"
            print(f"{indent}{key:<{width}} median |error| {shown} ({n} figures)")

    show(summary(recs), 32)
    print("by source:")
    show(by_source(recs), 46, "  ")
