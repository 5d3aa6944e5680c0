"""GPU memory: weights, KV cache, graph memory and the largest batch that fits (SPEC 4.1)."""

from __future__ import annotations

import numpy as np

from model import engines, launch, roofline, speculative
from model.scenario import Scenario
from model.units import BYTES_PER_PARAM, GB, GIB


def kv_shards(gpus, kv_heads):
    """GPUs the KV cache is split over: tensor parallelism splits KV heads, and replicates
    them once ``gpus`` exceeds ``kv_heads`` (so at most ``kv_heads`` shards).

    References
    ----------
    .. [1] Megatron-style tensor parallelism as used by vLLM (KV heads replicated when
       tp > num_key_value_heads).
    """
    return max(1, min(int(gpus), int(kv_heads)))


def kv_bytes_per_token(s: Scenario) -> float:
    """KV-cache bytes per token of the scenario's model [B]: heads × head_dim (K and V), or the
    latent with multi-head latent attention (SPEC 4.0; DeepSeek-V3)."""
    m, kv_b = s.model, BYTES_PER_PARAM[s.kv_dtype]
    if m.kv_lora_rank:
        return roofline.kv_bytes_per_token_mla(
            m.layers, m.kv_lora_rank, m.qk_rope_head_dim or 0, kv_b
        )
    return float(roofline.kv_bytes_per_token(m.layers, m.kv_heads, m.head_dim, kv_b))


def attended_tokens(s: Scenario, context_tokens) -> np.ndarray:
    """KV tokens a new token of a sequence at ``context_tokens`` attends to, averaged over the
    scenario's model's layers (:func:`roofline.attended_tokens`): the whole context, less what
    sliding-window layers skip. Times :func:`kv_bytes_per_token` it is the KV a decode step
    reads per sequence; what a sequence holds in the cache is :func:`held_tokens`."""
    m = s.model
    return roofline.attended_tokens(
        context_tokens, m.sliding_window, m.sliding_window_layers, m.layers
    )


def window_held_tokens(s: Scenario) -> float | None:
    """Tokens of KV a sliding-window layer keeps per sequence at most [tokens]:
    ``window − 1 + max_num_batched_tokens`` (the window behind the newest token, plus a prefill
    chunk in flight), or None for a model without a window.

    References
    ----------
    .. [1] vLLM V1's hybrid KV-cache manager (``SlidingWindowManager`` frees the blocks that fall
       out of the window; ``SlidingWindowSpec.max_memory_usage_bytes``: ``min(sliding_window − 1
       + max_num_batched_tokens, max_model_len)`` tokens). Checked against a published log:
       gpt-oss-120b, TP4, 2,640,144 tokens of KV cache, 2048-token chunks, "Maximum concurrency
       for 16,384 tokens per request: 284.25x" = 2 × 2,640,144 / (16,384 + 2,192)
       (presets/engines-EVIDENCE.md, "Revision 2026.12.2").
    """
    m = s.model
    if not m.sliding_window or not m.sliding_window_layers:
        return None
    return float(m.sliding_window - 1 + s.max_num_batched_tokens)


def held_tokens(s: Scenario, context_tokens) -> np.ndarray:
    """KV tokens a sequence at ``context_tokens`` holds in the cache, averaged over the layers
    [tokens]: the whole context on full-attention layers, at most :func:`window_held_tokens` on
    sliding-window layers (their blocks beyond it are freed). Times :func:`kv_bytes_per_token`
    it is the cache a sequence takes; ``context_tokens`` for a model without a window.
    ``kv_cache_tokens`` stays the cache's size over every layer, as vLLM states it."""
    m = s.model
    held = window_held_tokens(s)
    return roofline.attended_tokens(
        context_tokens, held, m.sliding_window_layers if held else None, m.layers
    )


def chunk_kv_tokens(s: Scenario, tokens, start) -> np.ndarray:
    """KV tokens a prefill chunk reads and writes for the scenario's model
    (:func:`roofline.chunk_kv_tokens`)."""
    m = s.model
    return roofline.chunk_kv_tokens(
        tokens, start, m.sliding_window, m.sliding_window_layers, m.layers
    )


def causal_attended(s: Scenario, tokens, start) -> np.ndarray:
    """Σ over a prefill chunk's tokens of the KV tokens each attends to, for the scenario's
    model (:func:`roofline.causal_attended`)."""
    m = s.model
    return roofline.causal_attended(
        tokens, start, m.sliding_window, m.sliding_window_layers, m.layers
    )


def kv_shards_of(s: Scenario) -> int:
    """GPUs the scenario's KV cache is split over (an MLA latent is replicated on every rank)."""
    return 1 if s.model.kv_lora_rank else kv_shards(s.gpus, s.model.kv_heads)


def engine_reserve_bytes(s: Scenario) -> float:
    """HBM per GPU the engine keeps beside weights, graphs and KV cache [B]: memory outside
    PyTorch (CUDA context, NCCL and all-reduce buffers) and the activation peak of its
    profiling run: the sampler's logits (max_num_seqs × vocab, fp32 copies) and, where the
    profile says so (vLLM V0), the activations of the profiled max_num_batched_tokens.

    References
    ----------
    .. [1] ``presets/engines.yaml`` (vllm: non_torch_gib, sampler_bytes_per_seq_vocab), fitted
       on https://github.com/llm-d/llm-d-benchmark/blob/main/config_explorer/empirical-vllm-memory-results.md
    """
    fig = s.engine_figures
    non_torch = fig.non_torch_gib + (fig.non_torch_gib_multi_gpu if s.gpus > 1 else 0.0)
    seqs = (
        fig.max_num_seqs_small_gpu
        if engines.small_gpu(fig, s.hardware.memory_gb, s.hardware.id)
        else fig.max_num_seqs
    )
    # V0's profiling run pushes max_num_batched_tokens tokens through the model at once: its
    # activations (≈ 27 B per hidden element per token for Llama-3-8B) stay in the peak
    activations = (
        fig.profile_activation_bytes_per_token_per_hidden
        * s.max_num_batched_tokens
        * s.model.hidden
    )
    return non_torch * GIB + seqs * s.model.vocab * fig.sampler_bytes_per_seq_vocab + activations


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


def weights_on_gpu(s: Scenario, weights: float) -> float:
    """One GPU's share of ``weights`` bytes of the model [B]: ``weights / gpus`` (tensor
    parallel); with data-parallel ranks on a mixture of experts, each rank's GPUs hold the
    shared part (attention, shared experts, embeddings) and the routed experts are spread over
    all ``gpus × data_parallel`` GPUs (:func:`model.decode.moe_ranks`'s rule, restated here as
    this module cannot import that one).

    References
    ----------
    .. [1] vLLM docs, "Data Parallel Deployment": attention weights are replicated across the
       data-parallel ranks; the expert layers form one group of size DP × TP.
    """
    m = s.model
    if not m.experts or s.data_parallel == 1:
        return weights / s.gpus
    routed = roofline.expert_params_read(
        float("inf"), m.params_b * 1e9, m.active * 1e9, m.experts, m.experts_per_token
    )
    share = float(routed) / (m.params_b * 1e9)  # the routed experts' share of the weights
    return weights * (1 - share) / s.gpus + weights * share / (s.gpus * s.data_parallel)


def drafter_kv_bytes_per_token(s: Scenario) -> float:
    """KV-cache bytes per token a speculative drafter keeps beside the target's [B]: its own
    layers' (:func:`kv_bytes_per_token` of :func:`model.speculative.drafter_scenario`); 0
    for the n-gram proposer and without speculation.

    References
    ----------
    .. [1] vLLM's EAGLE and draft-model proposers allocate KV-cache blocks for the drafter's
       layers in the same pool as the target's (specdecode-bench: EAGLE adds under 10 % per
       token; Qwen3-0.6B drafting Qwen3-8B, 1.77× per token).
    """
    d = speculative.drafter_scenario(s)
    return 0.0 if d is None else float(kv_bytes_per_token(d))


def memory_figures(s: Scenario, batch=None) -> dict:
    """Weights, KV and graph memory and the largest batch that fits (SPEC 4.1 ``memory``).

    GPU memory is what the device reports: an "80 GB" H100 holds 80 GiB (SPEC 4.0), so the
    capacity is ``memory_gb`` GiB; the other sizes stay decimal GB, and ``*_gib`` keys say GiB.
    """
    hw = s.hardware
    batch = s.batch if batch is None else batch
    # a speculative drafter's weights and its KV per token come out of the same HBM
    # (model.speculative): the cache holds the target's and the drafter's KV of every token
    drafter = speculative.drafter_weights_bytes(s)
    target = s.weights_bytes
    kv_tok = kv_bytes_per_token(s) + drafter_kv_bytes_per_token(s)
    shards = kv_shards_of(s)
    graphs = launch.graphs_captured(s.cuda_graphs, s.capture_sizes)
    graph_mem = float(launch.graph_memory(graphs, s.graph_mb_per_graph * 1e6))
    capacity = hw.memory_gb * GIB
    reserve = engine_reserve_bytes(s)
    weights_per_gpu = weights_on_gpu(s, target) + drafter / s.gpus
    usable = usable_bytes_per_gpu(capacity, s.gpu_memory_utilization, weights_per_gpu, graph_mem)
    kv_budget = float(usable) - reserve
    ctx = max(s.context_tokens, 1)
    # sliding-window layers hold at most their window (+ a chunk) of each sequence's KV
    fit = int(max_batch(kv_budget, kv_tok * float(held_tokens(s, ctx)) / shards))
    cache_tokens = int(max(kv_budget, 0.0) * shards // kv_tok)
    return {
        "weights_gb": target / GB,
        # weights_gb, when set, fixes the size whatever the dtype: say so beside the figures
        "weights_gb_set": s.weights_gb is not None,
        # what ``auto`` weighs: the dtype's bytes, and BF16 for what the checkpoint keeps
        "weights_dtype_gb": (
            s.model_copy(update={"weights_gb": None}).weights_bytes
            if s.weights_gb is not None
            else target
        )
        / GB,
        # the target's shard and the drafter's (speculative decoding), per GPU
        "weights_per_gpu_gb": weights_per_gpu / GB,
        "drafter_weights_gb": drafter / GB,
        "weights_per_gpu_gib": weights_per_gpu / GIB,
        "kv_bytes_per_token": float(kv_tok),
        "kv_gb": batch * s.context_tokens * kv_tok / GB,
        "kv_per_gpu_gb": batch * s.context_tokens * kv_tok / shards / GB,
        "graph_memory_gb": graph_mem / GB,
        "graph_memory_gib": graph_mem / GIB,
        "engine_reserve_gb": reserve / GB,
        "hbm_per_gpu_gib": hw.memory_gb,
        "hbm_per_gpu_gb": capacity / GB,
        "usable_per_gpu_gb": capacity * s.gpu_memory_utilization / GB,
        "kv_budget_per_gpu_gb": kv_budget / GB,
        "kv_cache_gib_per_gpu": max(kv_budget, 0.0) / GIB,
        "kv_cache_tokens": cache_tokens,
        "weights_fit": bool(
            weights_per_gpu + graph_mem + reserve <= capacity * s.gpu_memory_utilization
        ),
        "max_batch": fit,
        # every data-parallel rank holds its own batch (issue 42 §3): the replica's sequences
        "max_batch_replica": fit * s.data_parallel,
        "batch_fits": bool(batch <= fit),
    }
