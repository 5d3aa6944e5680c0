"""The fit behind the prefill chunks' attention curve (presets/engines-EVIDENCE.md, "Prefill
attention at its own efficiency"): the share of the BF16 peak a causal context-attention kernel
reaches over a prompt of ``kv`` tokens,

    share = e × kv / (kv + kv½),

its FLOPs (causal: 2 × heads × head_dim × kv² per sequence, Q·Kᵀ and A·V over half the square)
over its measured latency. aiconfigurator (PyPI ``aiconfigurator-core``; a source of facts, not
a dependency) times vLLM's FlashAttention-3 and SGLang's context attention on an H100 per batch,
prompt length, heads and KV heads; BF16, head_dim 128, no sliding window, prompts of 256 tokens
or more are fitted (shorter ones are a few microseconds of work, launch-bound). ``(e, kv½)`` is
chosen on a grid by the median |log error|, which the tool prints with each prompt length's
median share.

    pip download --no-deps -d /tmp/aic aiconfigurator-core
    python -m tools.fit_prefill_attention /tmp/aic/aiconfigurator_core-*.whl
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from tools.aic import tables

TABLES = {
    ("vllm 0.24", "h100"): "h100_sxm/attention/vllm/0.24.0/context_attention_perf.parquet",
    ("sglang 0.5.14", "h100"): "h100_sxm/attention/sglang/0.5.14/context_attention_perf.parquet",
}
BF16_PEAK = 989e12  # H100 SXM dense BF16 [FLOP/s] (presets/hardware.yaml)


def shares(df: pd.DataFrame) -> pd.DataFrame:
    """The BF16, head_dim-128, full-attention rows of ≥ 256 tokens with their share of peak."""
    d = df[
        (df.attn_dtype == "bfloat16")
        & (df.kv_cache_dtype == "bfloat16")
        & (df.head_dim == 128)
        & (df.window_size == 0)
        & (df.isl >= 256)
    ].copy()
    flops = 2.0 * d.num_heads * d.head_dim * d.isl.astype(float) ** 2 * d.batch_size
    d["share"] = flops / (d.latency * 1e-3) / BF16_PEAK
    return d[d.share > 0]


def fit(d: pd.DataFrame) -> tuple[float, float, float]:
    """``(e, kv½, median |log error|)`` of share = e × kv / (kv + kv½) on a grid."""
    kv, y = d.isl.to_numpy(float), np.log(d.share.to_numpy())
    best = None
    for half in np.arange(100.0, 4001.0, 50.0):
        shape = kv / (kv + half)
        e = float(np.exp(np.median(y - np.log(shape))))
        err = float(np.median(np.abs(y - np.log(e * shape))))
        if best is None or err < best[2]:
            best = (e, float(half), err)
    return best


def main(wheel: str) -> None:
    for (engine, gpu), df in tables(wheel, TABLES):
        d = shares(df)
        e, half, err = fit(d)
        print(
            f"{engine} {gpu}: {len(d)} points; e {e:.3f}, kv½ {half:.0f} tokens, "
            f"median |log error| {err:.3f}"
        )
        med = d.groupby("isl").share.median()
        print("  median share by prompt:", ", ".join(f"{int(k)}: {v:.2f}" for k, v in med.items()))


if __name__ == "__main__":
    main(sys.argv[1])
