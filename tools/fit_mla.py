"""The fit behind ``mla_us_per_layer`` (presets/engines-EVIDENCE.md, "Multi-head latent attention").

aiconfigurator (PyPI ``aiconfigurator-core``; a source of facts, not a dependency) ships CUDA-graph
timings of DeepSeek-V3's whole MLA attention module. From each decode point (batch 1-64, context
1-8 K) this subtracts what the explorer already counts for that layer, its weights at the
profile's bandwidth share and its latent KV at the HBM rate, and prints the median of what is
left per engine, GPU, GEMM dtype and head count.

    pip download --no-deps -d /tmp/aic aiconfigurator-core
    python -m tools.fit_mla /tmp/aic/aiconfigurator_core-*.whl
"""

from __future__ import annotations

import sys

import pandas as pd

from tools.aic import BW, tables

TABLES = {
    ("vllm 0.24", "h200"): "h200_sxm/mla/vllm/0.24.0/mla_generation_module_perf.parquet",
    ("vllm 0.24", "h100"): "h100_sxm/mla/vllm/0.24.0/mla_generation_module_perf.parquet",
    ("sglang 0.5.10", "h200"): "h200_sxm/mla/sglang/0.5.10/wideep_generation_mla_perf.parquet",
}
EFF = {"fp8_block": (1, 0.55), "bfloat16": (2, 0.80)}  # bytes per param, bandwidth share
# DeepSeek-V3 config.json
HIDDEN, Q_LORA, KV_LORA, ROPE, NOPE, V_DIM = 7168, 1536, 512, 64, 128, 128


def weights_params(heads: int) -> int:
    """One MLA layer's weights on one GPU at ``heads`` heads: the replicated down-projections
    (q_a, kv_a) and the per-head up-projections and output projection."""
    replicated = HIDDEN * Q_LORA + HIDDEN * (KV_LORA + ROPE)
    per_head = Q_LORA * (NOPE + ROPE) + KV_LORA * (NOPE + V_DIM) + V_DIM * HIDDEN
    return replicated + heads * per_head


def fixed_us(d: pd.DataFrame, gpu: str) -> pd.DataFrame:
    ctx = d["step"] if d["step"].max() > 0 else d["isl"]
    d = d.assign(ctx=ctx)
    d = d[(d.batch_size <= 64) & (d.ctx >= 1024) & (d.ctx <= 8192)]
    rows = []
    for (gemm, heads, kernel), q in d.groupby(["gemm_type", "num_heads", "kernel_source"]):
        if gemm not in EFF:
            continue
        bpp, eff = EFF[gemm]
        kv_b = (q.kv_cache_dtype == "fp8").map({True: 1, False: 2})
        kv = q.batch_size * q.ctx * (KV_LORA + ROPE) * kv_b
        counted_us = (weights_params(heads) * bpp / (BW[gpu] * eff) + kv / BW[gpu]) * 1e6
        left = q.latency * 1e3 - counted_us
        rows.append(
            {"gemm": gemm, "kernel": kernel, "heads": heads, "points": len(q),
             "median_us": round(left.median()), "p25_us": round(left.quantile(0.25)),
             "p75_us": round(left.quantile(0.75))}
        )  # fmt: skip
    return pd.DataFrame(rows)


def main(wheel: str) -> None:
    for (engine, gpu), d in tables(wheel, TABLES):
        print(f"{engine} on {gpu}:")
        print(fixed_us(d, gpu).to_string(index=False))


if __name__ == "__main__":
    main(sys.argv[1])
