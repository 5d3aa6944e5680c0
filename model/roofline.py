"""Roofline and decode step: bytes, FLOPs, arithmetic intensity, step time (SPEC 4.1).

Every function takes floats or numpy arrays and broadcasts, so a batch sweep is one call.
Units are SI base units: bytes, FLOP, seconds, B/s, FLOP/s.
"""

from __future__ import annotations

import numpy as np


def weights_bytes(params, bytes_per_param):
    """Bytes of the weights: ``W = params × bpp``.

    Parameters
    ----------
    params : numeric
        Parameters. [count]
    bytes_per_param : numeric
        1 for fp8/int8, 2 for bf16/fp16, 0.5 for int4, 4 for fp32. [B]

    References
    ----------
    .. [1] Seed: *The roofline flips*, "The maths that matter: a 3B on a 4090" (3B BF16 → 6 GB).
    """
    return np.asarray(params, dtype=float) * bytes_per_param


def experts_touched(batch, experts, experts_per_token):
    """Distinct experts a batch touches: ``E × (1 − (1 − k/E)^B)``.

    Parameters
    ----------
    batch : numeric
        Tokens in the step. [count]
    experts : int
        Experts per MoE layer, E. [count]
    experts_per_token : int
        Experts routed per token, k. [count]

    Notes
    -----
    Uniform independent routing: each expert is missed by one token with probability 1 − k/E.

    References
    ----------
    .. [1] SPEC 4.1, mixture-of-experts models; seed *The roofline flips*, "Architecture:
       fine-grained MoE changes which bytes you move".
    """
    b = np.asarray(batch, dtype=float)
    return experts * (1.0 - (1.0 - experts_per_token / experts) ** b)


def params_read(batch, params, active_params, experts=None, experts_per_token=None):
    """Parameters read from HBM per decode step.

    Dense models read all ``params``. A mixture-of-experts model reads its shared part plus the
    experts the batch touches: from about ``active_params`` at batch 1 toward ``params``.

    Parameters
    ----------
    batch : numeric
        Sequences in the step. [count]
    params, active_params : float
        Total and per-token active parameters. [count]
    experts, experts_per_token : int or None
        E and k of the MoE layers; None for a dense model.

    Notes
    -----
    per_expert = (params − active) / (E − k); shared = active − k × per_expert;
    read = shared + experts_touched(B) × per_expert.

    References
    ----------
    .. [1] SPEC 4.1 (MoE weights read per step depend on the batch).
    """
    b = np.asarray(batch, dtype=float)
    if not experts or not experts_per_token or experts <= experts_per_token:
        return np.broadcast_to(np.asarray(float(params)), b.shape).astype(float)
    per_expert = (params - active_params) / (experts - experts_per_token)
    shared = active_params - experts_per_token * per_expert
    return shared + expert_params_read(b, params, active_params, experts, experts_per_token)


def expert_params_read(batch, params, active_params, experts, experts_per_token):
    """The routed-expert part of :func:`params_read`: ``experts_touched(B) × per_expert``
    [count] (zero for a dense model).

    References
    ----------
    .. [1] SPEC 4.1, mixture-of-experts models.
    """
    b = np.asarray(batch, dtype=float)
    if not experts or not experts_per_token or experts <= experts_per_token:
        return np.zeros_like(b)
    per_expert = (params - active_params) / (experts - experts_per_token)
    return experts_touched(b, experts, experts_per_token) * per_expert


def embedding_params_skipped(vocab, hidden, tied):
    """Parameters of the input-embedding table a decode step does not read [count].

    A step looks up only the rows of its batch's tokens (B × hidden, negligible) while the
    output head (vocab × hidden) is read in full; with tied embeddings both are one table, read
    once as the head, so nothing is skipped.

    References
    ----------
    .. [1] SPEC 4.0: weights read per decode step exclude the input-embedding table.
    """
    return 0.0 if tied else float(vocab) * float(hidden)


def kv_bytes_per_token_mla(layers, kv_lora_rank, qk_rope_head_dim, kv_bytes):
    """KV-cache bytes per token with multi-head latent attention: one latent of
    ``kv_lora_rank`` plus the shared rope key per layer, ``layers × (rank + rope) × bytes``.

    References
    ----------
    .. [1] DeepSeek-AI, "DeepSeek-V2" (2024), section 2.1.3: the cache holds the compressed
       latent c_KV (d_c = 512) and the decoupled key k_R (d_R = 64) per token and layer;
       DeepSeek-V3 config.json: kv_lora_rank 512, qk_rope_head_dim 64.
    """
    return float(layers) * (kv_lora_rank + qk_rope_head_dim) * kv_bytes


def kv_bytes_per_token(layers, kv_heads, head_dim, kv_bytes):
    """KV-cache bytes per token: ``2 × layers × kv_heads × head_dim × kv bytes`` (K and V).

    Parameters
    ----------
    layers, kv_heads, head_dim : int
        From the model's config. [count]
    kv_bytes : float
        Bytes per KV element (2 for bf16). [B]

    References
    ----------
    .. [1] SPEC 4.1; seed *The roofline flips*, "(e) The KV cache can dominate relative memory".
    """
    return 2.0 * layers * kv_heads * head_dim * kv_bytes


def attended_tokens(context_tokens, window, window_layers, layers):
    """KV tokens one new token attends to, averaged over the layers [tokens]:
    ``(1 − f) × ctx + f × min(ctx, window)`` with ``f = window_layers / layers``.

    A sliding-window layer attends to (and reads the KV of) at most the last ``window``
    tokens; the other layers to the whole context. ``ctx`` for a model without a window
    (``window`` or ``window_layers`` None or 0). Multiplied by the KV bytes per token of all
    layers it gives the KV a decode step reads per sequence; by ``4 × layers × heads ×
    head_dim`` the attention FLOPs.

    References
    ----------
    .. [1] Beltagy et al., "Longformer" (2020), section 3.1: a sliding window of w costs
       O(n × w) instead of O(n²); Jiang et al., "Mistral 7B" (2023), section 2: each layer
       attends to the previous W tokens.
    .. [2] https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json - sliding_window
       128, layer_types alternating sliding_attention / full_attention;
       https://huggingface.co/google/gemma-3-4b-it/blob/main/config.json - sliding_window
       1024, sliding_window_pattern 6 (5 local layers to 1 global).
    """
    c = np.asarray(context_tokens, dtype=float)
    if not window or not window_layers:
        return c
    f = float(window_layers) / float(layers)
    return (1.0 - f) * c + f * np.minimum(c, float(window))


def causal_attended(tokens, start, window, window_layers, layers):
    """Σ over a prefill chunk's tokens of the KV tokens each attends to, averaged over the
    layers [tokens]: token ``i`` (1-based) of a chunk after ``start`` sees ``start + i``
    tokens on a full layer, at most ``window`` on a sliding-window layer.

    Full layers give ``t × (start + (t + 1) / 2)`` (:func:`model.request.prefill_flops`);
    a window layer ``S(start + t) − S(start)`` with ``S(n) = Σ_{p=1..n} min(p, w)``.

    References
    ----------
    .. [1] As :func:`attended_tokens`; causal masking as in Kaplan et al. (2020), table 1.
    """
    t = np.asarray(tokens, dtype=float)
    a = np.asarray(start, dtype=float)
    full = t * (a + (t + 1.0) / 2.0)
    if not window or not window_layers:
        return full
    w = float(window)

    def s(n):
        return np.where(n <= w, n * (n + 1.0) / 2.0, w * (w + 1.0) / 2.0 + (n - w) * w)

    f = float(window_layers) / float(layers)
    return (1.0 - f) * full + f * (s(a + t) - s(a))


def chunk_kv_tokens(tokens, start, window, window_layers, layers):
    """KV tokens a prefill chunk of ``tokens`` after ``start`` reads and writes, averaged over
    the layers [tokens]: a full layer reads the ``start`` earlier tokens and writes the chunk's,
    ``start + tokens``; a sliding-window layer reads at most the ``window − 1`` tokens before the
    chunk and writes the chunk's, ``min(start, window − 1) + tokens``.

    References
    ----------
    .. [1] As :func:`attended_tokens` (the window's definition); the chunk's own KV is written on
       every layer before its attention reads it (vLLM's paged KV cache, Kwon et al. 2023).
    """
    t = np.asarray(tokens, dtype=float)
    a = np.asarray(start, dtype=float)
    if not window or not window_layers:
        return a + t
    f = float(window_layers) / float(layers)
    return (1.0 - f) * (a + t) + f * (np.minimum(a, float(window) - 1.0) + t)


def step_flops(batch, active_params, layers, heads, head_dim, context_tokens):
    """FLOPs of one decode step: ``2 × active_params × B + 4 × layers × heads × head_dim × ctx × B``.

    The first term is the weight GEMMs (one multiply-add per active weight per token); the
    second is attention over the context (Q·Kᵀ and A·V, 2 FLOP per element each).

    Parameters
    ----------
    batch : numeric
        Sequences in the step (the padded batch when a graph bucket pads it). [count]
    active_params : float
        Active parameters per token. [count]
    layers, heads, head_dim : int
        From the model's config. [count]
    context_tokens : numeric
        KV tokens attended to per sequence. [tokens]

    References
    ----------
    .. [1] Seed: *The roofline flips*, "each weight byte takes part in ~2 FLOP" (decode GEMM).
    .. [2] SPEC 4.1: FLOPs per step ≈ 2 × active_params × batch (+ attention over the context).
    """
    b = np.asarray(batch, dtype=float)
    attention = 4.0 * layers * heads * head_dim * np.asarray(context_tokens, dtype=float)
    return b * (2.0 * active_params + attention)


def arithmetic_intensity(flops, bytes_moved):
    """Arithmetic intensity ``AI = FLOPs / bytes`` [FLOP/B].

    With 1-byte weights decode has AI ≈ 2B (the seeds' figure); with BF16 weights AI ≈ B.

    References
    ----------
    .. [1] Williams, Waterman, Patterson, "Roofline", CACM 52(4), 2009; seed *The roofline
       flips*, "The bare mechanism".
    """
    return np.asarray(flops, dtype=float) / np.asarray(bytes_moved, dtype=float)


def ridge_point(peak_flops, bandwidth):
    """Ridge point ``peak FLOPS / peak BW`` [FLOP/B]: H100 SXM BF16 989e12 / 3.35e12 ≈ 295.

    References
    ----------
    .. [1] Seed: *The roofline flips*, "The bare mechanism" (295, ~590, 330).
    """
    return np.asarray(peak_flops, dtype=float) / bandwidth


def attainable_flops(intensity, peak_flops, bandwidth):
    """Roofline ``Perf = min(peak FLOPS, BW × AI)`` [FLOP/s].

    References
    ----------
    .. [1] Seed: *The roofline flips*, "The bare mechanism".
    """
    return np.minimum(peak_flops, bandwidth * np.asarray(intensity, dtype=float))


def memory_time(bytes_per_gpu, bandwidth, bw_efficiency=1.0):
    """``t_memory = bytes per GPU / (BW × efficiency)`` [s].

    References
    ----------
    .. [1] Seed: *The roofline flips*, T_HBM = weight bytes / BW (6 GB / 1 TB/s = 6 ms).
    """
    return np.asarray(bytes_per_gpu, dtype=float) / (bandwidth * bw_efficiency)


def compute_time(flops_per_gpu, peak_flops, flops_efficiency=1.0):
    """``t_compute = FLOPs per GPU / (peak × efficiency)`` [s].

    References
    ----------
    .. [1] SPEC 4.1 (compute time at the peak of the compute dtype).
    """
    return np.asarray(flops_per_gpu, dtype=float) / (peak_flops * flops_efficiency)


def allreduce_time(
    batch, hidden, layers, gpus, interconnect_bandwidth, latency=0.0, activation_bytes=2.0
):
    """Tensor-parallel all-reduces of one decode step [s].

    Two all-reduces per layer (after attention and after the MLP), each of ``B × hidden``
    activations. A ring all-reduce sends ``2 (p − 1) / p`` of the message per GPU.

    Parameters
    ----------
    batch : numeric
        Sequences in the step. [count]
    hidden, layers : int
        From the model's config. [count]
    gpus : int
        Tensor-parallel degree p. [count]
    interconnect_bandwidth : float
        GPU-to-GPU bandwidth per direction. [B/s]
    latency : float
        Fixed cost of one all-reduce. [s]
    activation_bytes : float
        Bytes per activation element (bf16: 2). [B]

    Notes
    -----
    t = 2 × layers × (2 (p − 1)/p × B × hidden × bytes / BW_link + latency); zero for p = 1.

    References
    ----------
    .. [1] SPEC 4.1: "With gpus > 1 add the tensor-parallel all-reduces (two per layer) on the
       interconnect"; Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms", 2009 (ring).
    """
    b = np.asarray(batch, dtype=float)
    if gpus <= 1:
        return np.zeros_like(b)
    message = b * hidden * activation_bytes
    per_op = 2.0 * (gpus - 1) / gpus * message / interconnect_bandwidth + latency
    return 2.0 * layers * per_op


def gpu_time(t_memory, t_compute, t_memory_attn=0.0, t_compute_attn=0.0, per_kernel=False):
    """A step's GPU time from its memory and compute times [s].

    Whole step (SPEC 4.1, the seeds' roofline): ``max(t_memory, t_compute)``. Per kernel: the
    step's GEMMs and its attention run as separate kernels one after the other, each at its own
    roof, so ``max(t_memory − t_memory_attn, t_compute − t_compute_attn) + max(t_memory_attn,
    t_compute_attn)``. The two agree while every kernel is memory-bound (small batches); at a
    large decode batch the GEMMs turn compute-bound while attention, reading each sequence's
    own KV, stays memory-bound, and the per-kernel time is the larger.

    References
    ----------
    .. [1] Williams, Waterman, Patterson, "Roofline: An Insightful Visual Performance Model",
       CACM 52(4), 2009: the roofline bounds one kernel; a sequence of kernels takes the sum.
    .. [2] aiconfigurator-core 0.12.0, systems/data/h100_sxm/{gemm,attention}/vllm/0.24.0:
       vLLM times its GEMMs and its decode attention as separate measured operations and a
       step as their sum (presets/engines-EVIDENCE.md, "Revision 2026.12.8").
    """
    if not per_kernel:
        return np.maximum(t_memory, t_compute)
    return np.maximum(t_memory - t_memory_attn, t_compute - t_compute_attn) + np.maximum(
        t_memory_attn, t_compute_attn
    )


def step_time(t_gpu, t_launch, t_host, launch_model="additive"):
    """Decode step time [s].

    ``additive``: T_step = T_gpu + T_launch + T_host (the seeds' T_HBM + T_fixed).
    ``pipelined``: T_step = max(T_gpu, T_launch) + T_host (CPU launches overlap GPU work).

    References
    ----------
    .. [1] Seed: *The roofline flips*, T_step ≈ T_HBM + T_fixed.
    .. [2] Seed: CUDA graphs Q&A, T_eager ≈ T_compute + Nτ.
    """
    t_gpu = np.asarray(t_gpu, dtype=float)
    if launch_model == "pipelined":
        return np.maximum(t_gpu, t_launch) + t_host
    return t_gpu + t_launch + t_host


def bound(t_memory, t_compute, t_gpu, t_overhead, t_comm=0.0):
    """Which term limits the step: ``memory``, ``compute``, ``communication`` or ``overhead``.

    ``overhead`` when launch + host time exceeds the GPU time; otherwise the largest of the
    roofline terms and the tensor-parallel all-reduce (8×RTX 4090 over PCIe at a large batch
    waits on the all-reduce more than on HBM). Returns an array of strings.

    References
    ----------
    .. [1] Seed: *The roofline flips*, "The bottleneck moves from HBM to orchestration".
    """
    t_memory, t_compute, t_gpu, t_overhead, t_comm = np.broadcast_arrays(
        np.asarray(t_memory, float),
        np.asarray(t_compute, float),
        np.asarray(t_gpu, float),
        np.asarray(t_overhead, float),
        np.asarray(t_comm, float),
    )
    roof = np.where(t_compute > t_memory, "compute", "memory")
    roof = np.where(t_comm > np.maximum(t_memory, t_compute), "communication", roof)
    return np.where(t_overhead > t_gpu, "overhead", roof)


def amdahl_speedup(fraction, speedup):
    """Amdahl's law ``1 / ((1 − f) + f / s)``: f = 0.6, s = 4 gives 1.8×.

    Parameters
    ----------
    fraction : numeric
        Share of the step that is sped up (e.g. T_HBM / T_step). [0–1]
    speedup : numeric
        Speed-up of that share (bf16 → int4 weights: 4). [×]

    References
    ----------
    .. [1] Seed: *The roofline flips*, "(d) Weight quantisation gives LESS latency improvement".
    """
    f = np.asarray(fraction, dtype=float)
    return 1.0 / ((1.0 - f) + f / speedup)
