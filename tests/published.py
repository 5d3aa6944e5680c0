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

from model.errors import ScenarioError
from model.evaluate import evaluate
from model.overrides import resolve
from model.presets import hardware_presets, model_presets

TABLE = Path(__file__).parent / "data" / "published_measurements.csv"

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
    if row.get("engine") in ("vllm", "sglang"):
        version = row.get("engine_version", "")
        v0 = bool(re.match(r"^(V0|0\.[2-6]\.)", version))
        pairs.append(("engine", "vllm-v0" if row["engine"] == "vllm" and v0 else row["engine"]))
    v0_engine = ("engine", "vllm-v0") in pairs
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


def predict(row: dict, figures: dict) -> float | None:
    q = row["quantity"]
    if q in FIGURE:
        section, key = FIGURE[q]
        return figures[section][key]
    knobs = figures["engine"]["knobs"]
    if q == "compile_s":
        return knobs["compile_s"]
    if q == "compile_cached_s":
        return knobs["compile_cached_s"]
    if q == "wake_s":
        level = 2 if "sleep_level=2" in row.get("extra", "") else 1
        return figures["cold_start"][f"wake_level{level}_s"]
    return None


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
        figures = evaluate(s)
        pred = predict(row, figures)
        if pred is None:
            continue
        measured = float(row["value"])
        out.append(
            {
                "id": row["id"],
                "quantity": row["quantity"],
                "measured": measured,
                "predicted": float(pred),
                "error": abs(float(pred) - measured) / measured,
                "source": row["source"],
            }
        )
    return out


def median_error(records: list[dict], quantity: str | None = None) -> float:
    errs = [r["error"] for r in records if quantity is None or r["quantity"] == quantity]
    return median(errs)


if __name__ == "__main__":  # python -m tests.published: the table behind the README's figure
    recs = compare()
    for r in recs:
        print(
            f"{r['id']:>4} {r['quantity']:<17} measured {r['measured']:>10.4g} "
            f"predicted {r['predicted']:>10.4g}  error {r['error']:6.1%}"
        )
    print(f"rows compared: {len(recs)}; median error {median_error(recs):.1%}; ")
    steps = [r for r in recs if r["quantity"] == "t_step_ms"]
    print(f"decode steps: {len(steps)} rows, median error {median_error(recs, 't_step_ms'):.1%}")
