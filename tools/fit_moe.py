"""The fit behind the mixture-of-experts figures (presets/engines-EVIDENCE.md, "Mixture-of-experts
layers"): ``latency = a + b × touched experts + touched expert bytes / (eff × HBM)`` per layer.

aiconfigurator (PyPI ``aiconfigurator-core``; a source of facts, not a dependency) times one
fused-MoE layer per kernel, dtype and shape. This fits the three terms by relative least squares
over decode-sized steps (1-64 tokens, balanced routing, no expert parallelism) and prints them per
dtype and kernel with the median and 90th-percentile relative error.

    pip download --no-deps -d /tmp/aic aiconfigurator-core
    python -m tools.fit_moe /tmp/aic/aiconfigurator_core-*.whl
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from tools.aic import BW, tables

TABLES = {
    ("vllm 0.24", "h100"): "h100_sxm/moe/vllm/0.24.0/moe_perf.parquet",
    ("vllm 0.24", "h200"): "h200_sxm/moe/vllm/0.24.0/moe_perf.parquet",
}
#: bytes per expert weight as the explorer counts them (model/units.py: int4 and fp4 0.5)
BYTES = {"bfloat16": 2.0, "fp8": 1.0, "fp8_block": 1.0, "int4_wo": 0.5, "w4a16_mxfp4": 0.5}


def touched(tokens, experts, topk):
    """Distinct experts a step touches under uniform routing (model.roofline.experts_touched)."""
    return experts * (1.0 - (1.0 - topk / experts) ** tokens)


def fit(q: pd.DataFrame, bw: float) -> dict:
    """a [µs], b [µs per touched expert] and the bandwidth share, by relative least squares."""
    n = touched(q.num_tokens, q.num_experts, q.topk)
    expert_bytes = 3.0 * q.hidden_size * q.inter_size / q.moe_tp_size * q.dtype_bytes
    y = q.latency.to_numpy() * 1e3  # ms -> µs
    x = np.column_stack([np.ones(len(q)), n, n * expert_bytes / bw * 1e6])
    w = 1.0 / y  # relative error
    coef, *_ = np.linalg.lstsq(x * w[:, None], y * w, rcond=None)
    err = np.abs(x @ coef - y) / y
    return {
        "points": len(q),
        "fixed_us": round(coef[0], 1),
        "per_expert_us": round(coef[1], 3),
        "bw_share": round(1.0 / coef[2], 3) if coef[2] > 0 else float("inf"),
        "median_err": f"{np.median(err):.0%}",
        "p90_err": f"{np.quantile(err, 0.9):.0%}",
    }


def main(wheel: str) -> None:
    for (engine, gpu), d in tables(wheel, TABLES):
        d = d[(d.num_tokens <= 64) & (d.moe_ep_size == 1)]
        d = d[d.distribution.astype(str).str.contains("balanced|uniform", case=False)]
        d = d[d.moe_dtype.isin(BYTES)].assign(dtype_bytes=d.moe_dtype.map(BYTES))
        rows = [
            {"dtype": dtype, "kernel": kernel, **fit(q, BW[gpu])}
            for (dtype, kernel), q in d.groupby(["moe_dtype", "kernel_source"])
        ]
        print(f"{engine} on the {gpu}")
        print(pd.DataFrame(rows).to_string(index=False))
        print()


if __name__ == "__main__":
    main(sys.argv[1])
