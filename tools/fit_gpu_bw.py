"""The fit behind ``gpu_bw_share`` (presets/engines-EVIDENCE.md, "Bandwidth share per GPU"): how
much of its datasheet bandwidth each GPU's decode GEMMs reach, relative to the H100 SXM the
profiles' ``bw_efficiency`` was derived on.

aiconfigurator (PyPI ``aiconfigurator-core``; a source of facts, not a dependency) times one GEMM
per engine, GPU, dtype and shape. At one token (m = 1) a GEMM streams its weights; over the BF16
shapes of at least 16 MB, bytes-weighted, ``share = Σ bytes / Σ latency / datasheet bandwidth``.
The ratio to the H100's share, from the same engine's table, is the profile's factor for that GPU.

    pip download --no-deps -d /tmp/aic aiconfigurator-core
    python -m tools.fit_gpu_bw /tmp/aic/aiconfigurator_core-*.whl
"""

from __future__ import annotations

import sys

import pandas as pd

from model.presets import hardware_presets
from tools.aic import tables

#: aiconfigurator's system folder → the explorer's hardware preset
GPUS = {
    "h100_sxm": "h100-sxm",
    "h200_sxm": "h200",
    "b200_sxm": "b200",
    "gb200": "gb200",
    "a100_sxm": "a100-80gb",
    "l40s": "l40s",
    "rtx_pro_6000_server": "rtx-pro-6000",
}
#: engine → the table version per system (A100's vLLM table is older than the others)
VERSIONS = {
    "vllm": {"a100_sxm": "0.14.0", "*": "0.24.0"},
    "sglang": {"a100_sxm": "0.5.10", "*": "0.5.14"},
}
MIN_BYTES = 16e6


def share(d: pd.DataFrame, bandwidth: float) -> tuple[float, int]:
    """Bytes-weighted share of ``bandwidth`` [B/s] the BF16 m = 1 GEMMs reach, and their count."""
    q = d[(d.m == 1) & (d.gemm_dtype == "bfloat16")]
    nbytes = q.n * q.k * 2.0
    q, nbytes = q[nbytes >= MIN_BYTES], nbytes[nbytes >= MIN_BYTES]
    return float(nbytes.sum() / (q.latency.sum() * 1e-3) / bandwidth), len(q)


def main(wheel: str) -> None:
    hw = hardware_presets()
    for engine, versions in VERSIONS.items():
        paths = {
            (engine, g): f"{g}/gemm/{engine}/{versions.get(g, versions['*'])}/gemm_perf.parquet"
            for g in GPUS
        }
        got = {
            g: share(d, hw[GPUS[g]].hbm_bandwidth_tb_s * 1e12) for (_, g), d in tables(wheel, paths)
        }
        ref = got["h100_sxm"][0]
        print(f"{engine}: BF16 GEMMs at m = 1, >= 16 MB, share of datasheet bandwidth")
        for g, (s, n) in got.items():
            print(f"  {GPUS[g]:14} {s:.3f} ({n} shapes)  vs H100 {s / ref:.3f}")
        print()


if __name__ == "__main__":
    main(sys.argv[1])
