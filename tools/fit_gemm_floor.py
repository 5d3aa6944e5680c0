"""The fixed time of a one-token GEMM (presets/engines-EVIDENCE.md, "Revision 2026.12.3"):
``latency = f0 + bytes / (eff × HBM)`` by relative least squares over aiconfigurator's one-token
BF16/FP16 GEMMs (PyPI ``aiconfigurator-core``; a source of facts, not a dependency), per GPU.

    pip download --no-deps -d /tmp/aic aiconfigurator-core
    python -m tools.fit_gemm_floor /tmp/aic/aiconfigurator_core-*.whl
"""

from __future__ import annotations

import sys

import numpy as np

from tools.aic import tables

#: GPU -> (GEMM table under the wheel's data folder, datasheet HBM bandwidth [B/s])
TABLES = {
    "h100": ("h100_sxm/gemm/vllm/0.24.0/gemm_perf.parquet", 3.35e12),
    "h200": ("h200_sxm/gemm/vllm/0.24.0/gemm_perf.parquet", 4.8e12),
    "a100": ("a100_sxm/gemm/vllm/0.14.0/gemm_perf.parquet", 2.039e12),
    "b200": ("b200_sxm/gemm/vllm/0.24.0/gemm_perf.parquet", 8.0e12),
}


def main(wheel: str) -> None:
    paths = {gpu: path for gpu, (path, _) in TABLES.items()}
    for gpu, d in tables(wheel, paths):
        bw = TABLES[gpu][1]
        d = d[(d.m == 1) & d.gemm_dtype.astype(str).str.contains("float16|bfloat16")]
        y = d.latency.to_numpy() * 1e3  # ms -> µs
        x = np.column_stack([np.ones(len(d)), d.n * d.k * 2.0 / bw * 1e6])
        w = 1.0 / y
        coef, *_ = np.linalg.lstsq(x * w[:, None], y * w, rcond=None)
        err = np.median(np.abs(x @ coef - y) / y)
        print(
            f"{gpu}: {len(d)} GEMMs, f0 {coef[0]:.1f} µs, eff {1 / coef[1]:.3f}, median error {err:.0%}"
        )


if __name__ == "__main__":
    main(sys.argv[1])
