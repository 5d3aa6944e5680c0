"""Prefill and one request: TTFT, TPOT, end-to-end latency and request throughput (SPEC 4.0).

Prefill runs the prompt through the same roofline as decode: the FLOPs of every prompt token
(2 × active params, plus causal attention over the tokens before it) against the weights read
once per chunk and the KV cache read and written. Engines that chunk prefill
(``max_num_batched_tokens``) read the weights once per chunk; each chunk is one engine step.
"""

from __future__ import annotations

import numpy as np

from model import memory, roofline
from model.decode import (
    at_batch,
    attention_s,
    comm_s,
    dense_matmul_params,
    launch_s,
    matmul_params,
    moe_flops_s,
    peaks,
    prefill_attention_scale,
    weights_bytes_per_gpu,
)
from model.scenario import Scenario
from model.stepmodel import lone_frontend_s
from model.units import MS, TERA


def chunk_sizes(prompt_tokens: int, chunk: int) -> np.ndarray:
    """Tokens of each prefill chunk: full chunks of ``chunk`` then the remainder [tokens]."""
    n = -(-int(prompt_tokens) // int(chunk))
    sizes = np.full(n, float(chunk))
    sizes[-1] = prompt_tokens - chunk * (n - 1)
    return sizes


def prefill_flops(tokens, start, active_params, layers, heads, head_dim, attended=None):
    """FLOPs of prefilling ``tokens`` prompt tokens that follow ``start`` earlier ones [FLOP].

    ``2 × active × t`` for the weight GEMMs plus causal attention: token i attends to
    ``start + i`` earlier tokens and itself, 4 FLOP per head dimension (Q·Kᵀ and A·V), so
    ``4 × layers × heads × head_dim × t × (start + (t + 1) / 2)``.

    Parameters
    ----------
    tokens, start : numeric
        Tokens in the chunk and tokens before it. [tokens]
    active_params : float
        Active parameters per token. [count]
    layers, heads, head_dim : int
        From the model's config. [count]
    attended : numeric, optional
        Σ over the chunk's tokens of the tokens each attends to, when sliding-window layers
        see less than the causal context (:func:`model.memory.causal_attended`). [tokens]

    References
    ----------
    .. [1] Kaplan et al., "Scaling Laws for Neural Language Models" (2020), table 1: forward
       pass ≈ 2N + 2 n_layer n_ctx d_attn FLOPs per token; causal masking halves the context.
    .. [2] SPEC 4.0: prefill FLOPs = 2 × active params × prompt tokens plus attention.
    """
    t = np.asarray(tokens, dtype=float)
    if attended is None:
        attended = t * (np.asarray(start, dtype=float) + (t + 1.0) / 2.0)
    return 2.0 * active_params * t + 4.0 * layers * heads * head_dim * np.asarray(attended, float)


def prefill_steps(
    s: Scenario, sizes, attended, kv_tokens, attended_time=None
) -> dict[str, np.ndarray]:
    """The GPU work of prefill steps of ``sizes`` tokens: FLOPs, bytes per GPU and the time
    terms, each an array over the steps. ``attended`` is Σ over a step's tokens of the KV tokens
    each attends to, ``kv_tokens`` the KV tokens the step reads and writes [tokens]. A step is
    ``max(t_compute, t_memory) + t_comm`` at the engine's prefill efficiency, with its launches
    overlapped (they count only when they exceed it): ``t_step``.

    ``attended_time``: the attended tokens as the step's time counts them, where the engine
    times its prefill attention on its own curve (:func:`model.decode.prefill_attention_scale`);
    ``attended`` by default. The FLOPs reported are ``attended``'s.

    References
    ----------
    .. [1] SPEC 4.0, "Prefill of a prompt of prompt_tokens".
    """
    m = s.model
    _, peak, bw = peaks(s)
    timed = attended if attended_time is None else attended_time
    kv_bytes = kv_tokens * memory.kv_bytes_per_token(s)
    # data-parallel ranks' experts spread over the replica (model.decode.weights_bytes_per_gpu)
    bytes_per_gpu = weights_bytes_per_gpu(s, sizes) + kv_bytes / memory.kv_shards_of(s)
    flops = prefill_flops(sizes, 0.0, matmul_params(s), m.layers, m.heads, m.head_dim, attended)
    moe_flops = moe_flops_s(s, sizes)
    if moe_flops is None:
        timed_flops = (
            flops
            if attended_time is None
            else prefill_flops(sizes, 0.0, matmul_params(s), m.layers, m.heads, m.head_dim, timed)
        )
        t_cmp = roofline.compute_time(timed_flops / s.gpus, peak, s.prefill_efficiency)
    else:  # the routed experts on the engine's grouped-GEMM curve (model.decode.moe_flops_s)
        dense = prefill_flops(
            sizes, 0.0, dense_matmul_params(s), m.layers, m.heads, m.head_dim, timed
        )
        t_cmp = roofline.compute_time(dense / s.gpus, peak, s.prefill_efficiency) + moe_flops
    t_mem = roofline.memory_time(bytes_per_gpu, bw, s.bw_efficiency)
    t_comm = comm_s(s, sizes)
    _, t_launch = launch_s(s, sizes)
    # the chunk's attention: its KV read and its FLOPs over the context (roofline.gpu_time)
    attn_flops = prefill_flops(sizes, 0.0, 0.0, m.layers, m.heads, m.head_dim, timed)
    attn = attention_s(s, kv_bytes, attn_flops, s.prefill_efficiency)
    t_gpu = roofline.gpu_time(t_mem, t_cmp, *attn, s.engine_figures.per_kernel_roofline)
    t_step = np.maximum(t_gpu + t_comm, t_launch)
    return {
        "flops": flops,
        "bytes_per_gpu": bytes_per_gpu,
        "t_compute": t_cmp,
        "t_memory": t_mem,
        "t_comm": t_comm,
        "t_launch": t_launch,
        "t_step": t_step,
    }


def batch_prefill_s(s: Scenario, prompts: int) -> tuple[float, int]:
    """Prefill time of ``prompts`` prompts of ``s.prompt_tokens`` that arrive together, and the
    number of engine steps it takes [s, steps].

    vLLM's offline latency benchmark (``benchmark_latency.py``, ``vllm bench latency``) hands the
    engine a whole batch at once: its ``prompts × prompt_tokens`` tokens are prefilled in steps of
    ``max_num_batched_tokens``, each step reading the weights once, before the batch decodes
    together. Each prompt attends only to itself, so a step's FLOPs are its tokens times one
    prompt's per-token average (weight GEMMs plus that prompt's causal attention and KV
    traffic, as :func:`request_figures` counts them chunk by chunk), not those of one prompt
    ``prompts`` times as long. The steps are full but the last, so the time is worked out for
    two step sizes: memory and time do not grow with the batch.

    References
    ----------
    .. [1] SPEC 4.0, "Prefill of a prompt of prompt_tokens"; vLLM ``benchmarks/
       benchmark_latency.py`` (``llm.generate`` of ``batch_size`` prompts at once).
    .. [2] vLLM docs, "Chunked prefill": max_num_batched_tokens tokens per engine step.
    """
    p = int(s.prompt_tokens)
    chunk = int(s.max_num_batched_tokens)
    sizes = chunk_sizes(p, chunk)
    starts = np.concatenate([[0.0], np.cumsum(sizes)[:-1]])
    att = memory.causal_attended(s, sizes, starts)
    attended = float(att.sum()) / p  # per token
    attended_t = float((att * prefill_attention_scale(s, starts + sizes)).sum()) / p
    kv_tokens = float(memory.chunk_kv_tokens(s, sizes, starts).sum()) / p
    full, rem = divmod(max(int(prompts), 1) * p, chunk)
    # (tokens, how many such steps): full steps of `chunk` tokens, then the rest
    kinds = [(x, c) for x, c in ((chunk, full), (rem, 1)) if x and c]
    steps = np.array([float(x) for x, _ in kinds])
    count = np.array([float(c) for _, c in kinds])
    t_step = prefill_steps(s, steps, steps * attended, steps * kv_tokens, steps * attended_t)[
        "t_step"
    ]
    return float((count * (t_step + s.host_ms * MS)).sum()), int(count.sum())


def batch_e2e_s(s: Scenario, prompts: int) -> float:
    """End-to-end latency of ``prompts`` requests that arrive together and decode together, as
    the offline latency benchmark measures it [s]: the front-end time, the batch's prefill
    (:func:`batch_prefill_s`), then ``output_tokens − 1`` decode steps at a batch of
    ``prompts`` (the decode step at the scenario's context).

    References
    ----------
    .. [1] vLLM ``benchmarks/benchmark_latency.py``: ``avg_latency`` is the wall time of one
       ``llm.generate`` call on ``batch_size`` prompts of ``input_len`` tokens, ``output_len``
       tokens each (ignore_eos).
    """
    prefill, _ = batch_prefill_s(s, prompts)
    tpot = at_batch(s, int(prompts))["t_token_s"]
    return s.frontend_ms * MS + prefill + (s.output_tokens - 1) * tpot


def request_figures(s: Scenario) -> dict:
    """The ``request`` section of ``whatif eval --json`` (SPEC 4.0).

    Each prefill chunk is ``max(t_compute, t_memory) + t_comm`` on the GPU at the engine's
    prefill efficiency, with its launches overlapped (a long GPU step hides the CPU's launch
    queue; launches count only when they exceed it). TTFT at light load = the engine's
    front-end time (``frontend_ms``: HTTP, chat template, tokenisation, first schedule; SPEC
    4.6, or the API server's own work on the prompt where that is longer:
    :func:`model.stepmodel.lone_frontend_s`) + prefill + one host step per chunk. TPOT = the decode step at the scenario's batch (``decode.t_step_ms``) over
    the tokens it emits per sequence (``decode.accepted_tokens_per_step``: 1 without speculation).
    End-to-end = TTFT + (output_tokens − 1) × TPOT. ``requests_per_s`` at the scenario's batch:
    each request costs its prefill alone on the GPU plus its share (1 / batch) of its
    ``output_tokens`` decode steps.

    References
    ----------
    .. [1] SPEC 4.0, "Prefill of a prompt of prompt_tokens".
    .. [2] vLLM docs, "Chunked prefill": max_num_batched_tokens tokens per engine step.
    """
    sizes = chunk_sizes(s.prompt_tokens, s.max_num_batched_tokens)
    starts = np.concatenate([[0.0], np.cumsum(sizes)[:-1]])
    # earlier chunks' KV read (at most the window on sliding-window layers), this chunk's written
    attended = memory.causal_attended(s, sizes, starts)
    work = prefill_steps(
        s,
        sizes,
        attended,
        memory.chunk_kv_tokens(s, sizes, starts),
        attended * prefill_attention_scale(s, starts + sizes),
    )
    flops, bytes_per_gpu = work["flops"], work["bytes_per_gpu"]
    t_cmp, t_mem, t_comm, t_launch = (
        work[k] for k in ("t_compute", "t_memory", "t_comm", "t_launch")
    )
    prefill_s = float(work["t_step"].sum())
    host_s = len(sizes) * s.host_ms * MS
    frontend_s = float(lone_frontend_s(s, s.prompt_tokens))
    ttft_s = frontend_s + prefill_s + host_s

    decode = at_batch(s, s.batch)
    tpot_s = decode["t_token_s"]  # the step over the tokens it emits (speculative decoding)
    e2e_s = ttft_s + (s.output_tokens - 1) * tpot_s
    per_request_s = ttft_s + s.output_tokens * tpot_s / s.batch
    terms = {
        "compute": float(t_cmp.sum()),
        "memory": float(t_mem.sum()),
        "communication": float(t_comm.sum()),
    }
    roof = max(terms, key=terms.get)
    overhead = float(t_launch.sum()) + host_s
    total_flops = float(flops.sum())
    total_bytes = float(bytes_per_gpu.sum()) * s.gpus
    return {
        "prompt_tokens": s.prompt_tokens,
        "output_tokens": s.output_tokens,
        "prefill_chunks": len(sizes),
        "prefill_chunk_tokens": int(sizes[0]),
        "prefill_ms": prefill_s / MS,
        "prefill_t_compute_ms": terms["compute"] / MS,
        "prefill_t_memory_ms": terms["memory"] / MS,
        "prefill_t_comm_ms": terms["communication"] / MS,
        "prefill_t_launch_ms": float(t_launch.sum()) / MS,
        "prefill_bound": "overhead" if overhead > prefill_s else roof,
        "prefill_flops": total_flops,
        "prefill_arithmetic_intensity": total_flops / total_bytes,
        "prefill_attained_tflops": total_flops / s.gpus / prefill_s / TERA,
        "prefill_tokens_per_s": s.prompt_tokens / prefill_s,
        "frontend_ms": frontend_s / MS,
        "ttft_ms": ttft_s / MS,
        "tpot_ms": tpot_s / MS,
        "e2e_s": e2e_s,
        "requests_per_s": 1.0 / per_request_s,
        "output_tokens_per_s": s.output_tokens / per_request_s,
        "batch": s.batch,
    }
