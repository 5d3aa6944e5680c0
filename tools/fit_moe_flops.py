"""The fit behind the routed experts' compute curve (presets/engines-EVIDENCE.md, "Mixture of
experts at large batch"): the share of peak a fused-MoE layer reaches with many tokens,

    share = e × x / (x + x½) × n / (n + n½),

``x`` the tokens each expert multiplies (tokens × top-k / experts), ``n`` the per-GPU expert
width (intermediate size / TP), ``share`` the layer's FLOPs (6 × hidden × n × top-k × tokens)
over its measured latency and the dtype's dense peak (FP8 experts on the FP8 peak, the rest on
BF16's: INT4 and MXFP4 weights are multiplied in 16-bit on Hopper).

aiconfigurator (PyPI ``aiconfigurator-core``; a source of facts, not a dependency) times one
fused-MoE layer per kernel, dtype and shape. The shape ``(x½, n½)`` is chosen once on a grid over
vLLM's H100 and H200 tables pooled (balanced routing, no expert parallelism, ≥ 64 tokens per
expert, where the kernel is compute-bound); ``e`` is then the median per engine, GPU and dtype.
It prints each with the median |log error|.

    pip download --no-deps -d /tmp/aic aiconfigurator-core
    python -m tools.fit_moe_flops /tmp/aic/aiconfigurator_core-*.whl
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from tools.aic import tables

TABLES = {
    ("vllm 0.24", "h100"): "h100_sxm/moe/vllm/0.24.0/moe_perf.parquet",
    ("vllm 0.24", "h200"): "h200_sxm/moe/vllm/0.24.0/moe_perf.parquet",
    ("sglang 0.5.14", "h100"): "h100_sxm/moe/sglang/0.5.14/moe_perf.parquet",
    ("sglang 0.5.14", "h200"): "h200_sxm/moe/sglang/0.5.14/moe_perf.parquet",
}
BF16_PEAK = 989e12  # H100 / H200 SXM dense BF16 [FLOP/s] (presets/hardware.yaml)
DTYPES = ("bfloat16", "fp8_block", "int4_wo", "w4a16_mxfp4")


def frame(wheel: str) -> pd.DataFrame:
    parts = []
    for (engine, gpu), q in tables(wheel, TABLES):
        q = q[(q.distribution == "balanced") & (q.moe_ep_size == 1) & q.moe_dtype.isin(DTYPES)]
        q = q.assign(engine=engine, gpu=gpu)
        parts.append(q)
    q = pd.concat(parts)
    q = q.assign(
        x=q.num_tokens * q.topk / q.num_experts,
        n=q.inter_size / q.moe_tp_size,
        peak=BF16_PEAK * np.where(q.moe_dtype == "fp8_block", 2.0, 1.0),
    )
    flops = 6.0 * q.hidden_size * q.n * q.topk * q.num_tokens
    return q.assign(share=flops / (q.latency * 1e-3) / q.peak)[q.x >= 64]


def shape(q: pd.DataFrame) -> tuple[float, float]:
    """(x½, n½) minimising the median |log error| over vLLM's tables, one e per dtype."""
    v = q[q.engine.str.startswith("vllm")]
    best = None
    for xh in (32, 48, 64, 96, 128, 160, 192):
        for nh in (64, 128, 192, 256, 384, 512):
            r = np.log(v.share / (v.x / (v.x + xh) * v.n / (v.n + nh)))
            err = (r - r.groupby(v.moe_dtype).transform("median")).abs().median()
            if best is None or err < best[0]:
                best = (err, xh, nh)
    return best[1], best[2]


def main(wheel: str) -> None:
    q = frame(wheel)
    xh, nh = shape(q)
    print(f"shape: x½ = {xh} tokens per expert, n½ = {nh} (vLLM H100 + H200 pooled)")
    for (engine, gpu, dtype), g in q.groupby(["engine", "gpu", "moe_dtype"]):
        r = np.log(g.share / (g.x / (g.x + xh) * g.n / (g.n + nh)))
        e = float(np.exp(r.median()))
        err = float((r - r.median()).abs().median())
        print(
            f"{engine:<14} {gpu:<5} {dtype:<12} e = {e:.3f}  median |log error| {err:.2f}  ({len(g)})"
        )


if __name__ == "__main__":
    main(sys.argv[1])
