"""The fixed time of a one-token GEMM (presets/engines-EVIDENCE.md, "Revision 2026.12.3"):
``latency = f0 + bytes / (eff × HBM)`` by relative least squares over aiconfigurator's one-token
BF16/FP16 GEMMs (PyPI ``aiconfigurator-core``; a source of facts, not a dependency), per GPU,
on the tables and hardware presets of ``tools.fit_gpu_bw``.

    pip download --no-deps -d /tmp/aic aiconfigurator-core
    python -m tools.fit_gemm_floor /tmp/aic/aiconfigurator_core-*.whl
"""

from __future__ import annotations

import sys

import numpy as np

from model.presets import hardware_presets
from tools.aic import tables
from tools.fit_gpu_bw import GPUS, VERSIONS

SYSTEMS = ("h100_sxm", "h200_sxm", "a100_sxm", "b200_sxm")


def main(wheel: str) -> None:
    hw = hardware_presets()
    versions = VERSIONS["vllm"]
    paths = {
        g: f"{g}/gemm/vllm/{versions.get(g, versions['*'])}/gemm_perf.parquet" for g in SYSTEMS
    }
    for g, d in tables(wheel, paths):
        bw = hw[GPUS[g]].hbm_bandwidth_tb_s * 1e12
        d = d[(d.m == 1) & d.gemm_dtype.astype(str).str.contains("float16|bfloat16")]
        y = d.latency.to_numpy() * 1e3  # ms -> µs
        x = np.column_stack([np.ones(len(d)), d.n * d.k * 2.0 / bw * 1e6])
        w = 1.0 / y
        coef, *_ = np.linalg.lstsq(x * w[:, None], y * w, rcond=None)
        err = np.median(np.abs(x @ coef - y) / y)
        print(
            f"{g}: {len(d)} GEMMs, f0 {coef[0]:.1f} µs, eff {1 / coef[1]:.3f}, median error {err:.0%}"
        )


if __name__ == "__main__":
    main(sys.argv[1])
