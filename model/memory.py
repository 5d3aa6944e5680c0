"""GPU memory: weights, KV cache, graph memory and the largest batch that fits (SPEC 4.1)."""

from __future__ import annotations

import numpy as np


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
