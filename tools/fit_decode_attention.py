"""The fit of the decode attention kernel's cost (presets/engines-EVIDENCE.md, "Session of
2026-12-07: tried against the held-out gap, nothing kept"): one layer's decode attention over
``n`` sequences of ``ctx`` tokens,

    latency = t₀ + n × (a + b × KV heads) + KV bytes / (e × bandwidth),

KV bytes = n × ctx × KV heads × head_dim × 2 (K and V) × 2 (BF16). aiconfigurator (PyPI
``aiconfigurator-core``; a source of facts, not a dependency) times vLLM's FlashAttention-3 and
SGLang's FlashAttention-3 decode on an H100 per batch (1-2,048), context (2-131,072), heads
and KV heads; BF16 KV, head_dim 128, no sliding window are fitted, by least squares on the
relative error. The tool prints the four numbers, the median and p90 |log error| of the fit
and, over the calls of more than 40 µs, of the KV read alone at the profiles'
``bw_efficiency`` 0.80 (what the model charges a decode's attention today).

The fit was measured against the published tables and not adopted: see the EVIDENCE section.

    pip download --no-deps -d /tmp/aic aiconfigurator-core
    python -m tools.fit_decode_attention /tmp/aic/aiconfigurator_core-*.whl
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from tools.aic import BW, tables

TABLES = {
    ("vllm 0.24", "h100"): "h100_sxm/attention/vllm/0.24.0/generation_attention_perf.parquet",
    ("sglang 0.5.14", "h100"): "h100_sxm/attention/sglang/0.5.14/generation_attention_perf.parquet",
}
#: the decode kernel each engine runs on an H100 (vLLM's and SGLang's Hopper defaults)
KERNEL = {"vllm 0.24": "vllm_flash_attn_fa3", "sglang 0.5.14": "fa3"}
PROFILE_BW_EFFICIENCY = 0.80  # presets/engines.yaml, vllm and sglang bw_efficiency


def points(df: pd.DataFrame, kernel: str) -> pd.DataFrame:
    """The BF16-KV, head_dim-128, full-attention rows of one kernel with their KV bytes."""
    d = df[
        (df.kernel_source == kernel)
        & (df.kv_cache_dtype == "bfloat16")
        & (df.head_dim == 128)
        & (df.window_size == 0)
    ].copy()
    ctx = (d.isl + d.step).astype(float)
    d["kv_bytes"] = d.batch_size * ctx * d.num_key_value_heads * d.head_dim * 2 * 2.0
    d["t_s"] = d.latency * 1e-3
    return d


def fit(d: pd.DataFrame, bw: float) -> dict:
    """``t₀``, ``a``, ``b`` [µs], ``e`` and the median / p90 |log error| of the fit and of
    the KV read alone at :data:`PROFILE_BW_EFFICIENCY`."""
    t = d.t_s.to_numpy()
    n = d.batch_size.to_numpy(float)
    kvh = d.num_key_value_heads.to_numpy(float)
    x = np.stack([np.ones_like(n), n, n * kvh, d.kv_bytes.to_numpy() / bw], axis=1)
    w = 1.0 / t  # least squares on the relative error
    coef, *_ = np.linalg.lstsq(x * w[:, None], np.ones_like(t), rcond=None)
    err = np.abs(np.log(x @ coef / t))
    # the KV read alone is no estimate where the kernel's fixed time dominates: both are
    # compared where a call takes over 40 µs (its fixed ~10 µs under a third)
    big = t > 40e-6
    alone = np.abs(np.log(d.kv_bytes.to_numpy()[big] / (bw * PROFILE_BW_EFFICIENCY) / t[big]))
    return {
        "points": len(t),
        "t0_us": coef[0] * 1e6,
        "a_us": coef[1] * 1e6,
        "b_us": coef[2] * 1e6,
        "e": 1.0 / coef[3],
        "median_log_error": float(np.median(err)),
        "p90_log_error": float(np.percentile(err, 90)),
        "big_points": int(big.sum()),
        "big_median_log_error": float(np.median(err[big])),
        "kv_alone_median_log_error": float(np.median(alone)),
        "kv_alone_p90_log_error": float(np.percentile(alone, 90)),
    }


def main(wheel: str) -> None:
    for (engine, gpu), df in tables(wheel, TABLES):
        f = fit(points(df, KERNEL[engine]), BW[gpu])
        print(
            f"{engine} {gpu}: {f['points']} points; t0 {f['t0_us']:.2f} us, per sequence "
            f"{f['a_us']:.4f} + {f['b_us']:.4f} x KV heads us, KV at e {f['e']:.3f}; median "
            f"|log error| {f['median_log_error']:.3f} (p90 {f['p90_log_error']:.3f}); over the "
            f"{f['big_points']} calls of > 40 us, the fit {f['big_median_log_error']:.3f} and "
            f"the KV read alone at {PROFILE_BW_EFFICIENCY} {f['kv_alone_median_log_error']:.3f} "
            f"(p90 {f['kv_alone_p90_log_error']:.3f})"
        )


if __name__ == "__main__":
    main(sys.argv[1])
