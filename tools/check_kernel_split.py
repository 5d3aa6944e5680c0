"""Whole-step or per-kernel roofline? (presets/engines-EVIDENCE.md, "Revision 2026.12.8").

A decode step built from aiconfigurator's measured vLLM kernels on an H100 (PyPI
``aiconfigurator-core``; a source of facts, not a dependency): per layer the four BF16 GEMMs of a
grouped-query-attention transformer (QKV, output projection, gate and up, down) at ``m`` = batch
from ``h100_sxm/gemm/vllm/0.24.0/gemm_perf.parquet`` and the FlashAttention-3 decode attention
of the batch at its context from ``h100_sxm/attention/vllm/0.24.0/generation_attention_perf.
parquet``, summed over the layers. Against it, the step of :func:`model.roofline.gpu_time` at
the vLLM profile's efficiencies (0.80 of HBM bandwidth, 0.60 of the BF16 peak): the whole step at
one roof, and the GEMMs and attention each at their own. Two shapes whose every GEMM is in the
table's grid (hidden 4096, 32 heads, 8 KV heads, FFN 12288, 32 layers; hidden 5120, 40 heads,
8 KV heads, FFN 16384, 40 layers). Norms, activations and the output head are left out of both.

    pip download --no-deps -d /tmp/aic aiconfigurator-core
    python -m tools.check_kernel_split /tmp/aic/aiconfigurator_core-*.whl
"""

from __future__ import annotations

import sys
from statistics import median

import numpy as np

from model import engines, roofline
from model.presets import hardware_presets
from tools.aic import tables

SHAPES = {  # hidden, heads, kv heads, head dim, FFN, layers
    "4096/32/8, FFN 12288, 32 layers": (4096, 32, 8, 128, 12288, 32),
    "5120/40/8, FFN 16384, 40 layers": (5120, 40, 8, 128, 16384, 40),
}
BATCHES = (1, 8, 32, 64, 128, 256, 512, 1024)
CONTEXTS = (128, 512, 2048)


def main(wheel: str) -> None:
    h100 = hardware_presets()["h100-sxm"]
    bw, peak = h100.hbm_bandwidth_tb_s * 1e12, h100.peak_tflops["bf16"] * 1e12
    vllm = engines.engine_profiles()["vllm"].figures()  # the efficiencies the step is run at
    eta_bw, eta_flops = vllm.bw_efficiency, vllm.flops_efficiency
    paths = {
        "gemm": "h100_sxm/gemm/vllm/0.24.0/gemm_perf.parquet",
        "attn": "h100_sxm/attention/vllm/0.24.0/generation_attention_perf.parquet",
    }
    got = dict(tables(wheel, paths))
    g = got["gemm"]
    g = g[g.gemm_dtype.astype(str) == "bfloat16"]
    gemm = {
        (int(m), int(n), int(k)): float(t) * 1e-3
        for m, n, k, t in zip(g.m, g.n, g.k, g.latency, strict=True)
    }
    a = got["attn"]
    a = a[
        (a.kv_cache_dtype == "bfloat16")
        & (a.window_size == 0)
        & (a.kernel_source == "vllm_flash_attn_fa3")
    ]
    attn = {
        (int(b), int(h), int(kv), int(d), int(s) + 1): float(t) * 1e-3
        for b, h, kv, d, s, t in zip(
            a.batch_size,
            a.num_heads,
            a.num_key_value_heads,
            a.head_dim,
            a.step,
            a.latency,
            strict=True,
        )
    }
    ratios: dict[str, list] = {"whole step": [], "per kernel": []}
    for name, (hid, heads, kvh, hd, ffn, layers) in SHAPES.items():
        print(f"{name}: measured kernels / modelled step")
        qkv = (heads + 2 * kvh) * hd
        mats = [(qkv, hid), (hid, heads * hd), (ffn, hid), (ffn, hid), (hid, ffn)]
        params = layers * sum(n * k for n, k in mats)
        for ctx in CONTEXTS:
            for b in BATCHES:
                gk = [gemm.get((b, n, k)) for n, k in mats]
                at = attn.get((b, heads, kvh, hd, ctx))
                if at is None or None in gk:
                    continue
                measured = layers * (sum(gk) + at)
                w_bytes = params * 2.0
                kv_bytes = b * ctx * layers * 2 * kvh * hd * 2.0
                t_mem = roofline.memory_time(w_bytes + kv_bytes, bw, eta_bw)
                t_mem_attn = roofline.memory_time(kv_bytes, bw, eta_bw)
                flops = roofline.step_flops(b, params, layers, heads, hd, ctx)
                t_cmp = roofline.compute_time(flops, peak, eta_flops)
                attn_flops = roofline.step_flops(b, 0.0, layers, heads, hd, ctx)
                t_cmp_attn = roofline.compute_time(attn_flops, peak, eta_flops)
                whole = float(roofline.gpu_time(t_mem, t_cmp))
                split = float(roofline.gpu_time(t_mem, t_cmp, t_mem_attn, t_cmp_attn, True))
                ratios["whole step"].append((b, measured / whole))
                ratios["per kernel"].append((b, measured / split))
                print(
                    f"  context {ctx:5d} batch {b:5d}: measured {measured * 1e3:7.2f} ms, "
                    f"whole step {measured / whole:5.2f}x, per kernel {measured / split:5.2f}x"
                )
    for label, rows in ratios.items():
        small = [r for b, r in rows if b < 128]
        large = [r for b, r in rows if b >= 128]
        err = [abs(np.log(r)) for _, r in rows]
        print(
            f"{label}: measured / modelled, median {median(small):.2f} at batch < 128, "
            f"{median(large):.2f} at batch >= 128; median |log error| {median(err):.3f} "
            f"over {len(rows)} steps"
        )


if __name__ == "__main__":
    main(sys.argv[1])
