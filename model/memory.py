"""GPU memory: weights, KV cache, graph memory and the largest batch that fits (SPEC 4.1)."""

from __future__ import annotations

import numpy as np

from model import launch, roofline
from model.scenario import Scenario
from model.units import BYTES_PER_PARAM, GB


def kv_shards(gpus, kv_heads):
    """GPUs the KV cache is split over: tensor parallelism splits KV heads, and replicates
    them once ``gpus`` exceeds ``kv_heads`` (so at most ``kv_heads`` shards).

    References
    ----------
    .. [1] Megatron-style tensor parallelism as used by vLLM (KV heads replicated when
       tp > num_key_value_heads).
    """
    return max(1, min(int(gpus), int(kv_heads)))


def usable_bytes_per_gpu(memory, utilization, weights_per_gpu, graph_memory):
    """HBM per GPU left for the KV cache [B]: ``memory × utilization − weights − graphs``.

    Parameters
    ----------
    memory : float
        GPU memory. [B]
    utilization : float
        Fraction the server may use (vLLM's gpu_memory_utilization, 0.9). [0–1]
    weights_per_gpu, graph_memory : numeric
        Weights shard and captured-graph pool per GPU. [B]

    References
    ----------
    .. [1] Seed: *The roofline flips*, "Quantisation: it helps for capacity" (weights free VRAM
       for KV); vLLM's memory profiling (graph pool taken from the KV cache).
    """
    return memory * utilization - np.asarray(weights_per_gpu, float) - graph_memory


def max_batch(usable_per_gpu, kv_bytes_per_seq_per_gpu):
    """Largest batch whose KV cache fits: ``floor(usable / KV per sequence)``, 0 if none.

    References
    ----------
    .. [1] SPEC 4.1: max_batch is what fits in HBM for the given context after weights and
       graph memory.
    """
    usable = np.asarray(usable_per_gpu, float)
    return np.where(usable > 0, np.floor(usable / kv_bytes_per_seq_per_gpu), 0).astype(int)


def memory_figures(s: Scenario, batch=None) -> dict:
    """Weights, KV and graph memory and the largest batch that fits (SPEC 4.1 ``memory``)."""
    s = s.effective()
    m, hw = s.model, s.hardware
    batch = s.batch if batch is None else batch
    weights = s.weights_bytes
    kv_tok = roofline.kv_bytes_per_token(
        m.layers, m.kv_heads, m.head_dim, BYTES_PER_PARAM[s.kv_dtype]
    )
    shards = kv_shards(s.gpus, m.kv_heads)
    graphs = launch.graphs_captured(s.cuda_graphs, s.capture_sizes)
    graph_mem = float(launch.graph_memory(graphs, s.graph_mb_per_graph * 1e6))
    usable = usable_bytes_per_gpu(
        hw.memory_gb * GB, s.gpu_memory_utilization, weights / s.gpus, graph_mem
    )
    ctx = max(s.context_tokens, 1)
    fit = int(max_batch(usable, kv_tok * ctx / shards))
    weights_per_gpu = weights / s.gpus
    return {
        "weights_gb": weights / GB,
        # weights_gb, when set, fixes the size whatever the dtype: say so beside the figures
        "weights_gb_set": s.weights_gb is not None,
        "weights_dtype_gb": m.params_b * 1e9 * BYTES_PER_PARAM[s.weights_dtype] / GB,
        "weights_per_gpu_gb": weights_per_gpu / GB,
        "kv_bytes_per_token": float(kv_tok),
        "kv_gb": batch * s.context_tokens * kv_tok / GB,
        "kv_per_gpu_gb": batch * s.context_tokens * kv_tok / shards / GB,
        "graph_memory_gb": graph_mem / GB,
        "hbm_per_gpu_gb": hw.memory_gb,
        "usable_per_gpu_gb": hw.memory_gb * s.gpu_memory_utilization,
        "kv_budget_per_gpu_gb": float(usable) / GB,
        "weights_fit": bool(
            weights_per_gpu + graph_mem <= hw.memory_gb * GB * s.gpu_memory_utilization
        ),
        "max_batch": fit,
        "batch_fits": bool(batch <= fit),
    }
