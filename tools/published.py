"""Run the published measurements (tests/data/published_measurements.csv) through the core.

Each row's facts (GPU, count, model, dtype, batch, context, prompt and output tokens, and the
known keys of its ``extra`` column) are set; everything else stays at the defaults, as a user
of ``whatif eval --set … --json`` would leave it. ``compare()`` returns one record per row the
explorer can predict: the quantity, measured and predicted values and the relative error.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from statistics import median

from model import engines
from model.accuracy import DECODE_FAMILIES, SERVING_METRICS
from model.errors import ScenarioError
from model.evaluate import evaluate
from model.overrides import resolve
from model.presets import hardware_presets, model_presets
from model.request import batch_e2e_s
from tools import published_serving
from tools.published_serving import prefix_cached_tokens, serving_metric

TABLE = Path(__file__).parent.parent / "tests" / "data" / "published_measurements.csv"

#: quantity → (section, key) of ``whatif eval --json``
FIGURE = {
    "t_step_ms": ("decode", "t_step_ms"),
    "kv_cache_gib": ("memory", "kv_cache_gib_per_gpu"),
    "kv_cache_tokens": ("memory", "kv_cache_tokens"),
    "weights_gib": ("memory", "weights_per_gpu_gib"),
    "weights_load_s": ("cold_start", "weights_s"),
    "capture_s": ("launch", "capture_s"),
    "graph_memory_gib": ("memory", "graph_memory_gib"),
    "ttft_ms": ("request", "ttft_ms"),
    "latency_s": ("request", "e2e_s"),
}
#: quantity → the JSON key of its range (SPEC 4.3), for the start-up figures that carry one
RANGE = {
    "weights_load_s": ("cold_start", "weights_s_range"),
    "capture_s": ("launch", "capture_s_range"),
    "graph_memory_gib": ("launch", "graph_memory_gb_range"),
    "compile_s": ("cold_start", "compile_s_range"),
}
#: the figure categories of the accuracy panel ("How far off can this be?")
CATEGORY = {
    "t_step_ms": "decode step",
    "latency_s": "decode step",
    "ttft_ms": "time to first token",
    "kv_cache_gib": "memory",
    "kv_cache_tokens": "memory",
    "weights_gib": "memory",
    "graph_memory_gib": "memory",
    "weights_load_s": "start-up",
    "capture_s": "start-up",
    "compile_s": "start-up",
    "compile_cached_s": "start-up",
    "wake_s": "sleep wake",
}
#: keys of the ``extra`` column that are scenario facts, and the scenario key each sets
EXTRA_KEYS = {
    "gpu_memory_utilization": "gpu_memory_utilization",
    "sleep_level": "sleep_level",
    "storage": "storage",
    "kv_cache_dtype": "kv_dtype",
}
LOADERS = ("runai_streamer", "safetensors", "tensorizer")


def rows() -> list[dict]:
    with TABLE.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def facts(row: dict) -> list[tuple[str, str]] | None:
    """The row's facts as scenario pairs, or None when the explorer has no preset for them."""
    if row["gpu"] not in hardware_presets() or row["model"] not in model_presets():
        return None
    pairs = [("hardware", row["gpu"]), ("model", row["model"])]
    for key in (
        "gpus",
        "weights_dtype",
        "batch",
        "context_tokens",
        "prompt_tokens",
        "output_tokens",
    ):
        if row.get(key):
            pairs.append((key, row[key]))
    # a sweep run in rising prompt length on one server with prefix caching: the cache held
    # the shorter prompt that this one extends, so the prefill computed only the rest
    cached = prefix_cached_tokens(row.get("extra", ""))
    if cached and row.get("prompt_tokens"):
        uncached = int(row["prompt_tokens"]) - cached
        pairs = [(k, str(uncached) if k == "prompt_tokens" else v) for k, v in pairs]
    version = row.get("engine_version", "")
    found = re.search(r"\d+\.\d+(?:\.\d+)?", version)  # "V0 0.6.4", "V1 ~0.9.2", "0.24.0"
    release = found.group(0) if found else None
    if row.get("engine") == "sglang":
        pairs.append(("engine", engines.banded("sglang", release)))  # sglang@0.4 for 0.4.x
    elif row.get("engine") == "vllm":
        # the profile and release band a log of that release runs on (the Measurements
        # page's choice, model.engines.engine_for_log)
        kind = version[:2] if version[:2] in ("V0", "V1") else None
        pairs.append(("engine", engines.engine_for_log(release, kind) or "vllm"))
    v0_engine = any(k == "engine" and v.startswith("vllm-v0") for k, v in pairs)
    for item in row.get("extra", "").split():
        key, _, value = item.partition("=")
        if key == "max_model_len" and v0_engine and value.isdigit() and int(value) <= 32768:
            # V0 runs chunked prefill only above 32K; below, its profiling run (and every
            # step's token budget) is max(max_model_len, 2048) tokens (vllm 0.6 arg_utils)
            pairs.append(("max_num_batched_tokens", str(max(int(value), 2048))))
        elif key == "enforce_eager" and value.lower() == "true":
            pairs.append(("cuda_graphs", "none"))
        elif key == "load_format" and value in LOADERS:
            pairs.append(("loader", value))
        elif key in EXTRA_KEYS:
            pairs.append((EXTRA_KEYS[key], value))
    return pairs


def predict(row: dict, figures: dict, s=None) -> float | None:
    q = row["quantity"]
    if q == "latency_s" and s is not None and int(row.get("batch") or 1) > 1:
        # the offline latency benchmark hands the engine the whole batch at once: its prompts
        # are prefilled together before the batch decodes (model.request.batch_e2e_s)
        return batch_e2e_s(s, int(row["batch"]))
    if q in FIGURE:
        section, key = FIGURE[q]
        return figures[section][key]
    knobs = figures["engine"]["knobs"]
    if q == "compile_s":
        # an engine that compiles nothing by default (V0, SGLang) ran with a flag to compile:
        # not a configuration the defaults describe
        return knobs["compile_s"] or None
    if q == "compile_cached_s":
        return knobs["compile_cached_s"]
    if q == "wake_s":
        level = 2 if "sleep_level=2" in row.get("extra", "") else 1
        return figures["cold_start"][f"wake_level{level}_s"]
    return None


def predict_range(row: dict, figures: dict) -> list[float] | None:
    """The row's figure's range (SPEC 4.3) in the row's unit, where the figure has one."""
    q = row["quantity"]
    if q not in RANGE:
        return None
    section, key = RANGE[q]
    lo, hi = figures[section][key]
    if q == "graph_memory_gib":  # the range is in GB
        lo, hi = lo * 1e9 / 2**30, hi * 1e9 / 2**30
    if q == "compile_s" and figures["cold_start"]["compile_s"] == 0:
        return None  # the engine compiles nothing by default; the row's compile is not its own
    return [float(lo), float(hi)]


def family(row: dict) -> str | None:
    """The decode family of a decode-step row (:data:`DECODE_FAMILIES`), else None."""
    if CATEGORY.get(row["quantity"]) != "decode step":
        return None
    if row["gpu"] == "mi300x":
        return DECODE_FAMILIES[2]
    moe = model_presets()[row["model"]].experts
    return DECODE_FAMILIES[1] if moe else DECODE_FAMILIES[0]


def compare() -> list[dict]:
    out = []
    for row in rows():
        pairs = facts(row)
        if pairs is None:
            continue
        try:
            s, _ = resolve(pairs, strict=True)
        except ScenarioError:
            continue
        figures = evaluate(s, economics_section=False)
        pred = predict(row, figures, s)
        if pred is None:
            continue
        measured = float(row["value"])
        span = predict_range(row, figures)
        out.append(
            {
                "id": row["id"],
                "quantity": row["quantity"],
                "category": CATEGORY.get(row["quantity"], row["quantity"]),
                "family": family(row),
                "split": row.get("split") or "seen",
                "measured": measured,
                "predicted": float(pred),
                "error": abs(float(pred) - measured) / measured,
                "range": span,
                "in_range": None if span is None else span[0] <= measured <= span[1],
                # held out, but its error was in view when a later profile number was chosen
                "in_view": "in_view_of=" in row.get("extra", ""),
                "source": row["source"],
            }
        )
    return out


def accuracy(records: list[dict] | None = None) -> dict:
    """The accuracy panel's figures: per category, for the rows a profile number was fitted on
    or chosen with in view (``in_sample``: split ``fit`` or ``seen``) and for the rows added
    after the profiles were fixed (``held_out``), the number of measurements, the median and
    worst relative error and, for ranged start-up figures, the share inside their range; for
    held-out rows whose errors were in view when a later profile number was chosen
    (``in_view_of=`` in ``extra``), their count and the median of the other, blind, rows; the
    Serving table's concurrency-1 / light-load / saturation figures beside them."""

    records = compare() if records is None else records
    out: dict = {"categories": {}}

    def stats(recs: list[dict]) -> dict:
        if not recs:
            return {"n": 0}
        errs = sorted(r["error"] for r in recs)
        ranged = [r for r in recs if r["in_range"] is not None]
        got = {
            "n": len(recs),
            "median_pct": round(100 * median(errs), 1),
            "worst_pct": round(100 * errs[-1], 1),
            "fitted": sum(r["split"] == "fit" for r in recs),
        }
        if ranged:
            got["ranged"] = len(ranged)
            got["in_range_pct"] = round(100 * sum(r["in_range"] for r in ranged) / len(ranged), 1)
        seen = [r for r in recs if r.get("in_view")]
        if seen:  # held-out rows a later choice saw: the median of the others is the blind one
            got["in_view"] = len(seen)
            blind = sorted(r["error"] for r in recs if not r.get("in_view"))
            got["blind_median_pct"] = round(100 * median(blind), 1) if blind else None
        return got

    groups = [(cat, "category") for cat in dict.fromkeys(CATEGORY.values())]
    groups[1:1] = [(fam, "family") for fam in DECODE_FAMILIES]  # right after "decode step"
    for cat, field in groups:
        recs = [r for r in records if r.get(field) == cat]
        out["categories"][cat] = {
            "in_sample": stats([r for r in recs if r["split"] != "held_out"]),
            "held_out": stats([r for r in recs if r["split"] == "held_out"]),
        }
    serving = [r for r in published_serving.compare() if "metric" in r]
    # the serving figures by load class, then again by kind of figure (each falls in one of each)
    groups = [(f"serving, {c}", "class", c) for c in published_serving.LOAD_CLASSES]
    groups += [(kind, "kind", kind) for kind in SERVING_METRICS]
    for cat, field, value in groups:
        split = {}
        for held, name in ((False, "in_sample"), (True, "held_out")):
            recs = [
                {"error": abs(r["error"]), "split": "fit", "in_range": None}
                for r in serving
                if r["held_out"] == held
                and (r["class"] if field == "class" else serving_metric(r["metric"])) == value
            ]
            split[name] = stats(recs)
            if held:
                split[name]["fitted"] = 0
        out["categories"][cat] = split
    every = (
        [r for r in records if r["split"] != "held_out"],
        [r for r in records if r["split"] == "held_out"],
    )
    out["overall"] = {"in_sample": stats(every[0]), "held_out": stats(every[1])}
    return out


def median_error(records: list[dict], quantity: str | None = None) -> float:
    errs = [r["error"] for r in records if quantity is None or r["quantity"] == quantity]
    return median(errs)


ACCURACY_FILE = Path(__file__).parent.parent / "presets" / "accuracy.json"
ACCURACY_PAGE = Path(__file__).parent.parent / "docs" / "accuracy.md"

_PAGE_HEAD = """# How far off it can be

Median and worst relative error of the model's figures against published measurements, per
kind of figure. Written from `presets/accuracy.json` (the file the app's "How far off can this
be?" panel reads) by `python -m tools.published --write`: do not edit by hand; a test fails when
this page, the file and the measurements disagree. In-sample rows are those a profile number was
fitted on or chosen beside; held-out rows were used by nothing, and are the ones to trust. The
method, the sources and the worst rows: [scenarios.md](scenarios.md) (decode, memory, start-up)
and [serving.md](serving.md) (serving under load). Back to the [README](../README.md).

| figures | in-sample: n (fitted on) | median | worst | held out: n | median | worst | start-up inside range (in-sample / held out) |
|---|---|---|---|---|---|---|---|
"""


def _pct(value) -> str:
    return "—" if value is None else f"{value:g} %"


def accuracy_page(recorded: dict) -> str:
    """``docs/accuracy.md`` from the recorded summary (``presets/accuracy.json``)."""
    rows = []
    for cat in sorted(recorded["categories"]):
        ins, held = (
            recorded["categories"][cat]["in_sample"],
            recorded["categories"][cat]["held_out"],
        )
        ranged = (
            f"{_pct(ins.get('in_range_pct'))} / {_pct(held.get('in_range_pct'))}"
            if "in_range_pct" in ins or "in_range_pct" in held
            else "—"
        )
        rows.append(
            f"| {cat} | {ins['n']} ({ins.get('fitted', 0)}) "
            f"| {_pct(ins.get('median_pct')) if ins['n'] else '—'} "
            f"| {_pct(ins.get('worst_pct')) if ins['n'] else '—'} | {held['n']} "
            f"| {_pct(held.get('median_pct')) if held['n'] else '—'} "
            f"| {_pct(held.get('worst_pct')) if held['n'] else '—'} | {ranged} |"
        )
    return _PAGE_HEAD + "\n".join(rows) + "\n"


def write_accuracy() -> dict:
    """Record :func:`accuracy` in ``presets/accuracy.json``, the file the app's panel reads, and
    ``docs/accuracy.md`` from it (``tests/test_accuracy.py`` fails when either is out of
    date)."""
    import json

    got = accuracy()
    body = {
        "note": "written by python -m tools.published --write; do not edit by hand",
        "engine_versions": {k: p.version for k, p in engines.engine_profiles().items()},
        **got,
    }
    ACCURACY_FILE.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n")
    ACCURACY_PAGE.write_text(accuracy_page(json.loads(ACCURACY_FILE.read_text())))
    return body


if __name__ == "__main__":  # python -m tools.published: the table behind the README's figure
    import sys

    if "--write" in sys.argv:
        write_accuracy()
        print(f"wrote {ACCURACY_FILE} and {ACCURACY_PAGE}")
    recs = compare()
    for r in recs:
        print(
            f"{r['id']:>4} {r['quantity']:<17} measured {r['measured']:>10.4g} "
            f"predicted {r['predicted']:>10.4g}  error {r['error']:6.1%}"
        )
    print(f"rows compared: {len(recs)}; median error {median_error(recs):.1%}; ")
    steps = [r for r in recs if r["quantity"] == "t_step_ms"]
    print(f"decode steps: {len(steps)} rows, median error {median_error(recs, 't_step_ms'):.1%}")
    acc = accuracy(recs)
    for cat, split in acc["categories"].items():
        cells = []
        for name in ("in_sample", "held_out"):
            st = split[name]
            cells.append(
                f"{name} n={st['n']}"
                + (f" median {st['median_pct']}% worst {st['worst_pct']}%" if st["n"] else "")
                + (f" in range {st['in_range_pct']}%" if "in_range_pct" in st else "")
            )
        print(f"{cat:<28} " + " | ".join(cells))
