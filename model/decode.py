"""The decode step for any batch, and the launch section built from it (SPEC 4.1 and 4.2).

``sweep`` evaluates a batch array in one vectorised call; ``at_batch`` reads one batch of it for
a variant of the scenario; ``launch_figures`` is the ``launch`` section of ``whatif eval --json``
(eager against graph steps). :mod:`model.evaluate` composes the lenses on top of these and
:mod:`model.knobs` reads them, so neither imports the other's caller.
"""

from __future__ import annotations

import numpy as np

from model import engines, launch, memory, ranges, roofline, speculative
from model.memory import memory_figures
from model.scenario import Scenario
from model.units import GB, MS, TERA, US, compute_dtype

ACTIVATION_BYTES = 2.0  # bf16 activations on the tensor-parallel all-reduce


def peaks(s: Scenario) -> tuple[str, float, float]:
    """The compute dtype, its dense peak [FLOP/s] and the HBM bandwidth [B/s] of the scenario's
    GPU (datasheet figures; the efficiencies apply where they are used)."""
    hw = s.hardware
    cdtype = compute_dtype(s.weights_dtype, hw.peak_tflops)
    return cdtype, hw.peak_tflops[cdtype] * TERA, hw.hbm_bandwidth_tb_s * 1e12


def weights_read_bytes(s: Scenario, tokens) -> np.ndarray:
    """Weight bytes one engine step of ``tokens`` tokens reads from HBM, all GPUs together [B].

    Mixture-of-experts models read the experts those tokens touch (:func:`roofline.params_read`).
    The input-embedding table is not read in full (SPEC 4.0) unless the scenario sets
    ``weights_gb``, which is then what a step reads, as the CUDA graphs Q&A seed counts its
    5.5 GiB checkpoint. The parts a quantised checkpoint keeps in BF16
    (:attr:`~model.scenario.ModelSpec.unquantised_params`: the output head, and gpt-oss's
    attention) are shared by every token, so each step reads them in full at two bytes. A
    vision encoder the checkpoint carries (:attr:`~model.scenario.ModelSpec.vision_params_b`)
    is loaded but not read by a text decode step.
    """
    m = s.model
    params = roofline.params_read(
        tokens, m.params_b * 1e9, m.active * 1e9, m.experts, m.experts_per_token
    )
    if s.weights_gb is not None:
        return roofline.weights_bytes(params, s.bytes_per_param)
    # a vision encoder (Gemma 3's SigLIP) is loaded but a text decode step does not run it
    params = params - (m.vision_params_b or 0.0) * 1e9
    skipped = roofline.embedding_params_skipped(m.vocab, m.hidden, m.tied_embeddings)
    kept_read = max(m.unquantised_params - skipped, 0.0)  # the input table is not read
    return (
        roofline.weights_bytes(params - skipped, s.bytes_per_param)
        + kept_read * s.unquantised_extra_bytes_per_param
    )


def matmul_params(s: Scenario) -> float:
    """Active parameters that take part in a matrix multiply per token [count].

    The input-embedding table is a lookup (one row per token), not a GEMM: of an untied model's
    parameters only the layers and the output head do FLOPs, ``2 × (active − vocab × hidden)``
    per token; a tied table is the head and counts once. (For Llama-3.1-8B, 8.03 B parameters of
    which 0.53 B are the input table, this is 7 % fewer FLOPs: arithmetic intensity 128, not
    137, at batch 128 in BF16.)

    References
    ----------
    .. [1] Kaplan et al., "Scaling Laws for Neural Language Models" (2020), section 2.1: "we
       exclude embedding parameters"; forward FLOPs ≈ 2 N with N the non-embedding parameters.
    .. [2] SPEC 4.1: FLOPs per step ≈ 2 × active_params × batch (issue 20 narrows it to the
       parameters that multiply).
    """
    m = s.model
    skipped = roofline.embedding_params_skipped(m.vocab, m.hidden, m.tied_embeddings)
    skipped += (m.vision_params_b or 0.0) * 1e9  # a vision encoder does not run on text
    return max(m.active * 1e9 - skipped, 0.0)


def moe_overhead_s(s: Scenario, tokens) -> np.ndarray:
    """Time a mixture-of-experts step spends beyond reading the experts' bytes [s]: per MoE
    layer a fixed part (routing, top-k, permute, the fused kernel's launch) and a part per
    distinct expert the step's ``tokens`` touch; 0 for a dense model.

    References
    ----------
    .. [1] https://github.com/ai-dynamo/aiconfigurator (systems/data/h100_sxm/moe/vllm/0.14.0/
       moe_perf.parquet): vLLM's fused-MoE layer on an H100, 1-64 tokens, over Mixtral,
       DeepSeek-V3, Qwen3 and GPT-OSS shapes at TP 1-8, fits ``20-25 µs + 0.24-0.36 µs ×
       touched experts + expert bytes / (0.72-0.77 × HBM bandwidth)`` with a median error of
       10-11 % (presets/engines-EVIDENCE.md).
    """
    m = s.model
    if not m.experts or not m.experts_per_token:
        return np.zeros_like(np.asarray(tokens, dtype=float))
    _, per_layer, per_expert = engines.moe_values(s.engine_figures, s.weights_dtype)
    # every rank's tokens meet in the MoE layer (model.decode.moe_ranks); with whole experts
    # per GPU (expert_parallel) each GPU runs its share of the experts touched
    d, g = moe_ranks(s)
    touched = roofline.experts_touched(
        d * np.asarray(tokens, dtype=float), m.experts, m.experts_per_token
    )
    if s.expert_parallel:
        touched = touched / g
    return m.layers * (per_layer + per_expert * touched) * US


def mla_overhead_s(s: Scenario, tokens) -> np.ndarray:
    """Time a multi-head latent attention (MLA) step spends beyond the bytes it reads [s]:
    ``layers × mla_us_per_layer`` for a model with a latent KV (``kv_lora_rank``: DeepSeek-V2/V3,
    R1), 0 for any other. An MLA layer runs a dozen small kernels whatever the batch (the
    replicated down-projections and their norms, the per-token FP8 quantisation before each
    block-scaled GEMM, rotary, the absorbed W_UK / W_UV batched matmuls, the latent attention,
    the output projection), each with a floor of a few microseconds inside a CUDA graph.

    References
    ----------
    .. [1] https://github.com/ai-dynamo/aiconfigurator (systems/data/h100_sxm and h200_sxm/mla/
       vllm/0.24.0/mla_generation_module_perf.parquet, measured in CUDA graphs): vLLM's whole
       DeepSeek-V3 MLA module at 16-128 heads (TP 8-1), batch 1-64, 1-8 K context, less its
       weights at the profile's bandwidth share and its latent KV at the HBM rate, leaves a
       median 87-105 µs per layer on both GPUs in FP8 and BF16; SGLang 0.5.10's module
       (wideep_generation_mla_perf.parquet, H200) leaves 36-47 µs (presets/engines-EVIDENCE.md).
    """
    t = np.asarray(tokens, dtype=float)
    if not s.model.kv_lora_rank:
        return np.zeros_like(t)
    return np.full_like(t, s.model.layers * s.engine_figures.mla_us_per_layer * US)


#: GEMMs a decode step runs per layer outside a fused-MoE kernel: QKV, output, gate-up and down
#: projections in a dense layer; the attention's input and output projections in a layer whose
#: feed-forward is the experts' kernel (its fixed time is ``moe_us_per_layer``)
GEMMS_PER_DENSE_LAYER = 4
GEMMS_PER_MOE_LAYER = 2


def gemm_floor_s(s: Scenario, tokens) -> np.ndarray:
    """Fixed time the step's GEMMs take on this GPU beyond their bytes, over the H100 SXM's [s]:
    ``layers × GEMMs per layer × gpu_gemm_us`` (:func:`model.engines.gemm_extra_us`; 0 on the
    GPUs the profile's efficiencies were derived on). A one-token GEMM on an MI300X has a floor
    of ~10 µs where an H100's is ~3 µs, so at TP8, where a 70B layer's GEMMs are 8-29 MB each, the
    floors outweigh the bytes.

    References
    ----------
    .. [1] https://github.com/ROCm/aiter/pull/1092 - MI300X, Llama-70B TP8's QKV GEMM (m = 1-64,
       n = 1280, k = 8192, FP8, 10.5 MB) in 10.7-10.8 µs with pre-shuffled weights: 6.6 µs beyond
       its bytes at the profile's MI300X FP8 rate (0.55 × 0.87 × 5.3 TB/s).
    .. [2] https://github.com/ai-dynamo/aiconfigurator (systems/data/h100_sxm/gemm/vllm/0.24.0/
       gemm_perf.parquet): one-token BF16 GEMMs on an H100 fit 3.1 µs + bytes / (0.86 × HBM).
    """
    t = np.asarray(tokens, dtype=float)
    extra = engines.gemm_extra_us(s.engine_figures, s.hardware.id)
    if not extra:
        return np.zeros_like(t)
    per_layer = GEMMS_PER_MOE_LAYER if s.model.experts else GEMMS_PER_DENSE_LAYER
    return np.full_like(t, s.model.layers * per_layer * extra * US)


def moe_bw_efficiency(s: Scenario) -> float | None:
    """The share of HBM bandwidth the expert GEMMs reach (the profile's, times the GPU's
    :func:`model.engines.bw_share`), or None where they read as dense weights (a dense model, a
    profile without the refinement, or a bandwidth efficiency the scenario sets itself)."""
    if not s.model.experts or not s.bw_efficiency_auto:
        return None
    bw, _, _ = engines.moe_values(s.engine_figures, s.weights_dtype)
    if bw is None:
        return None
    return min(bw * engines.bw_share(s.engine_figures, s.hardware.id), 1.0)


def routed_params(s: Scenario) -> float:
    """Routed-expert parameters one token multiplies: ``experts_per_token × per_expert``
    [count] (0 for a dense model); ``per_expert`` as :func:`roofline.expert_params_read`."""
    m = s.model
    if not m.experts or not m.experts_per_token or m.experts <= m.experts_per_token:
        return 0.0
    per_expert = (m.params_b - m.active) * 1e9 / (m.experts - m.experts_per_token)
    return m.experts_per_token * per_expert


def moe_flops_s(s: Scenario, tokens) -> np.ndarray | None:
    """Time of the routed experts' FLOPs in one step of ``tokens`` tokens, per GPU [s], on the
    engine's grouped-GEMM curve; None where the experts run at the dense efficiencies (a dense
    model, a profile without the curve, or FLOPS efficiencies the scenario sets itself).

    ``t = 2 × (routed / k) × (tokens × k + x½ × touched) / GPUs / (peak × e × n / (n + n½))``:
    each expert a step touches (:func:`roofline.experts_touched`) costs its rows plus ``x½``
    rows of tile and scheduling overhead, at a share of peak that grows with ``n``, the per-GPU
    expert width (intermediate size / GPUs, the size per expert over 3 × hidden × layers). With
    every expert touched this is the fitted ``share = e × x / (x + x½) × n / (n + n½)`` at
    ``x = tokens × k / E`` tokens per expert; with few tokens it stays below the experts' bytes
    (the memory term), as the kernel is then bandwidth-bound.

    References
    ----------
    .. [1] The engine profile's ``moe_flops_efficiency``, ``moe_tokens_half`` and
       ``moe_inter_half``, derived from NVIDIA AIConfigurator's measured fused-MoE tables
       (aiconfigurator-core 0.12, ``systems/data/{h100_sxm,h200_sxm}/moe/vllm/0.24.0/
       moe_perf.parquet``; ``tools/fit_moe_flops.py``; presets/engines-EVIDENCE.md).
    """
    m = s.model
    routed = routed_params(s)
    if not routed or not s.flops_efficiency_auto:
        return None
    curve = engines.moe_flops_values(s.engine_figures, s.weights_dtype)
    if curve is None:
        return None
    eff, x_half, n_half = curve
    # data-parallel ranks: every rank's tokens, over the G GPUs holding the experts, each
    # expert sliced G ways or (expert_parallel) whole (model.decode.moe_ranks)
    d, g = moe_ranks(s)
    t = d * np.maximum(np.asarray(tokens, dtype=float), 0.0)
    k = m.experts_per_token
    rows = t * k + x_half * roofline.experts_touched(t, m.experts, k)
    width = routed / k / (3.0 * m.hidden * m.layers) / (1 if s.expert_parallel else g)
    share = eff * width / (width + n_half)
    _, peak, _ = peaks(s)
    return 2.0 * (routed / k) * rows / g / (peak * share)


def dense_matmul_params(s: Scenario) -> float:
    """:func:`matmul_params` less the routed experts where :func:`moe_flops_s` times them."""
    if moe_flops_s(s, 1.0) is None:
        return matmul_params(s)
    return max(matmul_params(s) - routed_params(s), 0.0)


def allreduce_s(s: Scenario, tokens) -> np.ndarray:
    """The tensor-parallel all-reduces of one step of ``tokens`` tokens [s]
    (:func:`roofline.allreduce_time` with the scenario's link, latency and model)."""
    return roofline.allreduce_time(
        tokens,
        s.model.hidden,
        s.model.layers,
        s.gpus,
        s.hardware.interconnect_gb_s * GB,
        s.allreduce_latency_us * US,
        ACTIVATION_BYTES,
    )


#: GPUs in one NVLink domain (an HGX node); a data-parallel MoE replica wider than this
#: exchanges its tokens over the nodes' RDMA network
GPUS_PER_NODE = 8
#: per-GPU bandwidth of an all-to-all between nodes [B/s]: DeepEP's normal kernels on H800 with
#: CX7 400 Gb/s InfiniBand reach 43-58 GB/s per GPU (EP16-EP64, its README's internode table)
RDMA_GB_S = 50.0


def moe_ranks(s: Scenario) -> tuple[int, int]:
    """``(d, G)``: data-parallel ranks whose tokens meet in the mixture-of-experts layers, and
    the GPUs the experts are spread over. A dense model's ranks never meet (``(1, gpus)``);
    a mixture of experts with ``data_parallel`` ranks spreads its experts over all
    ``gpus × data_parallel`` GPUs, sliced (the default) or whole (``expert_parallel``).

    References
    ----------
    .. [1] vLLM docs, "Data Parallel Deployment": "By default, expert layers form a tensor
       parallel group of size DP × TP"; with --enable-expert-parallel, EP_SIZE = TP × DP.
    """
    if not s.model.experts:
        return 1, s.gpus
    return s.data_parallel, s.gpus * s.data_parallel


def expert_bytes_per_gpu(s: Scenario, tokens) -> np.ndarray:
    """Routed-expert bytes one GPU reads in a step of ``tokens`` tokens per rank [B]: the
    experts every rank's tokens touch together (``d × tokens``, the ranks balanced), over the
    ``G`` GPUs that hold them (:func:`moe_ranks`); zeros for a dense model."""
    m = s.model
    d, g = moe_ranks(s)
    t = np.asarray(tokens, dtype=float)
    read = roofline.expert_params_read(
        d * t, m.params_b * 1e9, m.active * 1e9, m.experts, m.experts_per_token
    )
    return roofline.weights_bytes(read, s.bytes_per_param) / g


def weights_bytes_per_gpu(s: Scenario, tokens) -> np.ndarray:
    """Weight bytes one GPU reads in a step of ``tokens`` tokens per rank [B]:
    :func:`weights_read_bytes` over the tensor-parallel GPUs, its routed experts as
    :func:`expert_bytes_per_gpu` reads them (the same without data parallelism)."""
    t = np.asarray(tokens, dtype=float)
    all_ = weights_read_bytes(s, t) / s.gpus
    if moe_ranks(s)[0] == 1:
        return all_
    m = s.model
    own = roofline.weights_bytes(
        roofline.expert_params_read(
            t, m.params_b * 1e9, m.active * 1e9, m.experts, m.experts_per_token
        ),
        s.bytes_per_param,
    )
    return all_ - own / s.gpus + expert_bytes_per_gpu(s, t)


def comm_s(s: Scenario, tokens) -> np.ndarray:
    """The step's collectives [s]: the tensor-parallel all-reduces (:func:`allreduce_s`); with
    data-parallel ranks on a mixture of experts, the attention's all-reduce within a rank and,
    in each MoE layer, the all-gather and reduce-scatter of every rank's tokens over the
    replica's ``G`` GPUs (vLLM's default all2all backend, ``allgather_reducescatter``; the same
    bytes as an all-reduce of ``d × tokens``), over NVLink within a node and the RDMA network
    beyond it.

    References
    ----------
    .. [1] vLLM docs, "Expert Parallel Deployment": the all2all backends; allgather_reducescatter
       is the default.
    .. [2] deepseek-ai/DeepEP README (legacy tables): internode normal kernels 43-58 GB/s per
       GPU over RDMA.
    """
    d, g = moe_ranks(s)
    t = np.asarray(tokens, dtype=float)
    if d == 1:
        return allreduce_s(s, t)
    link = s.hardware.interconnect_gb_s * GB
    if g > GPUS_PER_NODE:
        link = min(link, RDMA_GB_S * GB)
    m = s.model
    moe = roofline.allreduce_time(
        d * t, m.hidden, m.layers, g, link, s.allreduce_latency_us * US, ACTIVATION_BYTES
    )
    return allreduce_s(s, t) / 2 + moe / 2


def launch_s(s: Scenario, tokens) -> tuple[np.ndarray, np.ndarray]:
    """Launches of one step of ``tokens`` tokens under the scenario's graphs mode and capture
    sizes, and their CPU time [count, s] (SPEC 4.2)."""
    m = s.model
    n_eager = launch.launches_eager(m.layers, s.kernels_per_layer, s.kernels)
    launches = launch.launches_per_step(tokens, n_eager, m.layers, s.cuda_graphs, s.capture_sizes)
    return launches, launches * s.launch_us * US


def draft_s(s: Scenario, batch) -> np.ndarray:
    """Time the speculative proposer takes per step for ``batch`` sequences [s]: ``k`` decode
    steps of the drafter (:func:`sweep` of :func:`model.speculative.drafter_scenario`) and the
    proposer's host work (:func:`model.speculative.proposer_host_s`: the n-gram matcher, each
    draft step's preparation); zeros without speculation.

    References
    ----------
    .. [1] Leviathan et al., ICML 2023, section 3: the drafter runs autoregressively, one step
       per drafted token, before the target's one verify step.
    """
    b = np.asarray(batch, dtype=float)
    host = speculative.proposer_host_s(s, b)
    d = speculative.drafter_scenario(s)
    if d is None:
        return host
    t = sweep(d, np.maximum(b, 1.0))["t_step_s"]
    return host + speculative.k_of(s) * t * (b > 0)


def prefill_attention_scale(s: Scenario, kv_tokens):
    """The factor on a prefill chunk's attended tokens (Σ over its tokens of the tokens each
    attends to) that times its attention on the engine's measured context-attention curve,
    share = e × kv / (kv + kv½) of the BF16 peak over the ``kv_tokens`` the chunk attends to,
    where the step otherwise runs every FLOP at ``prefill_efficiency`` of the compute dtype's
    peak: (that peak × prefill_efficiency) / (BF16 peak × share). 1 where the engine states no
    curve (``prefill_attn_efficiency`` none). Vectorised.

    References
    ----------
    .. [1] aiconfigurator-core 0.12.0, systems/data/h100_sxm/attention/{vllm/0.24.0,
       sglang/0.5.14}/context_attention_perf.parquet: causal context attention (vLLM's
       FlashAttention-3) over one prompt reaches 0.26 of the BF16 peak at 1,024 tokens, 0.52 at
       4,096 and 0.62 at 16,384 (tools/fit_prefill_attention.py; presets/engines-EVIDENCE.md,
       "Prefill attention at its own efficiency").
    """
    kv = np.asarray(kv_tokens, dtype=float)
    fig = s.engine_figures
    e = fig.prefill_attn_efficiency
    if not e:
        return np.ones_like(kv)
    cdtype, peak, _ = peaks(s)
    table = s.hardware.peak_tflops
    bf16 = table.get("bf16", table.get("fp16", table[cdtype])) * TERA
    share = e * kv / (kv + fig.prefill_attn_kv_half)
    return peak * s.prefill_efficiency / (bf16 * np.maximum(share, 1e-6))


def attention_s(s: Scenario, kv_bytes, attn_flops, efficiency: float) -> tuple:
    """A step's attention kernel on one GPU: the time of its KV read and of its FLOPs at
    ``efficiency`` of the peak [s], the terms :func:`model.roofline.gpu_time` sets apart."""
    _, peak, bw = peaks(s)
    t_mem = roofline.memory_time(kv_bytes / memory.kv_shards_of(s), bw, s.bw_efficiency)
    return t_mem, roofline.compute_time(attn_flops / s.gpus, peak, efficiency)


def sweep(s: Scenario, batch) -> dict[str, np.ndarray]:
    """Decode-step figures for every batch in ``batch`` (one vectorised call).

    Returns arrays keyed with their unit: ``t_memory_s``, ``t_compute_s``, ``t_comm_s``,
    ``t_gpu_s``, ``t_launch_s``, ``t_host_s``, ``t_step_s``, ``tokens_per_s``, ``flops``,
    ``bytes_per_gpu``, ``arithmetic_intensity``, ``attained_flops``, ``padded_batch``,
    ``launches``, ``bound``. With speculative decoding (:mod:`model.speculative`) the step is
    the target's verify of ``k + 1`` tokens per sequence (``t_verify_s``, the terms above) plus
    the drafter's ``k`` steps (``t_draft_s``); it emits ``accepted_tokens_per_step`` tokens per
    sequence, so ``tokens_per_s`` is batch × that / step and ``t_token_s`` the time per output
    token. ``padded_batch`` counts the step's tokens (batch × (k + 1)).
    """
    m = s.model
    b = np.asarray(batch, dtype=float)
    _, peak, bw = peaks(s)
    # speculative decoding: each sequence sends its k drafts and one more token through the
    # target (model.speculative); the graphs, weights touched, FLOPs and all-reduces are of
    # those tokens, the KV read of the sequences
    q = speculative.verify_tokens(s)
    tok = b * q

    graph = launch.in_graph(tok, s.capture_sizes, s.cuda_graphs)
    padded = np.where(graph, launch.padded_batch(tok, s.capture_sizes), tok)

    w_bytes = weights_read_bytes(s, tok)
    kv_tok = memory.kv_bytes_per_token(s)
    # sliding-window layers read at most their window of the context (memory.attended_tokens)
    attended = memory.attended_tokens(s, s.context_tokens)
    kv_bytes = b * attended * kv_tok
    # per GPU: the rank's weights over its tensor-parallel GPUs, the routed experts every
    # data-parallel rank's tokens touch over the GPUs holding them (moe_ranks)
    bytes_per_gpu = weights_bytes_per_gpu(s, tok) + kv_bytes / memory.kv_shards_of(s)
    # mixture-of-experts engines read expert weights through grouped / fused-MoE kernels that
    # reach a lower share of the bandwidth, and pay routing work per MoE layer (engine profile)
    moe_eff = moe_bw_efficiency(s)
    moe = moe_eff is not None
    expert_bytes = expert_bytes_per_gpu(s, tok) if moe else 0.0

    flops = roofline.step_flops(padded, matmul_params(s), m.layers, m.heads, m.head_dim, attended)
    flops_per_gpu = flops / s.gpus

    t_mem = roofline.memory_time(bytes_per_gpu - expert_bytes, bw, s.bw_efficiency)
    if moe:
        t_mem = t_mem + roofline.memory_time(expert_bytes, bw, moe_eff)
    moe_flops = moe_flops_s(s, padded)
    if moe_flops is None:
        t_cmp = roofline.compute_time(flops_per_gpu, peak, s.flops_efficiency)
    else:  # the routed experts on the engine's grouped-GEMM curve, the rest as dense
        dense = roofline.step_flops(
            padded, dense_matmul_params(s), m.layers, m.heads, m.head_dim, attended
        )
        t_cmp = roofline.compute_time(dense / s.gpus, peak, s.flops_efficiency) + moe_flops
    t_comm = comm_s(s, padded)
    # the step's attention: its KV read and its FLOPs over the context (roofline.gpu_time)
    attn_flops = roofline.step_flops(padded, 0.0, m.layers, m.heads, m.head_dim, attended)
    attn = attention_s(s, kv_bytes, attn_flops, s.flops_efficiency)
    per_kernel = s.engine_figures.per_kernel_roofline
    t_gpu = roofline.gpu_time(t_mem, t_cmp, *attn, per_kernel) + t_comm

    launches, t_launch = launch_s(s, tok)
    # the engine core's per-sequence work: in every step, or, with asynchronous scheduling,
    # overlapping the GPU's step and bounding it (vLLM PR 19970; model.stepmodel)
    t_seq = b * s.host_us_per_seq * US
    overlap = s.async_scheduling_on
    t_host = s.host_ms * MS + (0.0 if overlap else t_seq) + speculative.verify_host_s(s)
    t_fixed = moe_overhead_s(s, tok) + mla_overhead_s(s, tok) + gemm_floor_s(s, tok)
    t_host = t_host + t_fixed
    t_verify = roofline.step_time(t_gpu, t_launch, t_host, s.launch_model)
    if overlap:
        t_verify = np.maximum(t_verify, t_seq)
    t_draft = draft_s(s, b)
    t_step = t_verify + t_draft
    accepted = speculative.tokens_per_step(s)
    ai = roofline.arithmetic_intensity(flops_per_gpu, bytes_per_gpu)
    return {
        "batch": b,
        "padded_batch": padded,
        "launches": launches,
        "weights_read_bytes": w_bytes,
        "bytes_per_gpu": bytes_per_gpu,
        "flops": flops,
        "arithmetic_intensity": ai,
        "attained_flops": flops_per_gpu / t_gpu,
        "t_memory_s": t_mem,
        "t_compute_s": t_cmp,
        "t_comm_s": t_comm,
        "t_gpu_s": t_gpu,
        "t_launch_s": t_launch,
        "t_host_s": t_host,
        "t_layer_fixed_s": t_fixed,
        "t_verify_s": t_verify,
        "t_draft_s": t_draft,
        "t_step_s": t_step,
        "accepted_tokens_per_step": np.full_like(b, accepted),
        # the time per output token a sequence sees (TPOT): the step over its tokens
        "t_token_s": t_step / accepted,
        # the replica's: every data-parallel rank decodes its own batch in the same step
        "tokens_per_s": s.data_parallel * b * accepted / t_step,
        # the verify step's bound (the drafter's steps are their own, model.speculative)
        "bound": roofline.bound(t_mem, t_cmp, t_gpu, t_launch + t_host, t_comm),
    }


def graph_mode(s: Scenario) -> str:
    """The graphs mode behind ``t_step_graph_ms``: the scenario's own, or, when the scenario
    runs eager, its engine's default (vLLM's ``full_and_piecewise`` when that is eager too)."""
    if s.cuda_graphs != "none":
        return s.cuda_graphs
    own = s.engine_figures.cuda_graphs
    return own if own != "none" else "full_and_piecewise"


def at_batch(s: Scenario, batch: int, **update) -> dict:
    """One batch of ``sweep`` for a variant of ``s``, as floats (``bound`` as text)."""
    v = s.model_copy(update=update) if update else s
    return {k: (str(a[0]) if k == "bound" else float(a[0])) for k, a in sweep(v, [batch]).items()}


def launch_figures(s: Scenario) -> dict:
    """The ``launch`` section of ``whatif eval --json`` (SPEC 4.2).

    ``t_step_eager_ms`` runs the scenario with ``cuda_graphs=none``; ``t_step_graph_ms`` with
    the graphs mode named in ``graph_mode`` (the scenario's own, or ``full_and_piecewise``
    when the scenario is eager), padded to its bucket. ``padded_batch`` and ``padding_waste``
    describe that graph step; ``graphs_captured``, ``capture_s`` and ``graph_memory_gb`` what
    the scenario as configured pays at start-up (zero when eager).

    References
    ----------
    .. [1] Seed: *The chef who calls out every order* (800 launches, 4.0 ms, 250 tok/s).
    .. [2] Seed: CUDA graphs Q&A (N = 430, τ = 5 µs: 1.36× at 5.5 GiB, 1.14× at 14.2 GiB).
    """
    m = s.model
    tau = s.launch_us * US
    n = launch.launches_eager(m.layers, s.kernels_per_layer, s.kernels)
    mode = graph_mode(s)
    eager = at_batch(s, s.batch, cuda_graphs="none")
    graph = at_batch(s, s.batch, cuda_graphs=mode)
    own = graph if s.cuda_graphs == mode else eager
    t_launch_eager = float(launch.launch_time(n, tau))
    ceiling = float(launch.launch_ceiling(n, tau))
    graphs = launch.graphs_captured(s.cuda_graphs, s.capture_sizes)
    graph_bytes = float(launch.graph_memory(graphs, s.graph_mb_per_graph * 1e6))
    in_graph = bool(
        launch.in_graph(s.batch * speculative.verify_tokens(s), s.capture_sizes, s.cuda_graphs)
    )
    no_graphs = memory_figures(s.model_copy(update={"cuda_graphs": "none"}))
    capture = float(launch.capture_seconds(graphs, s.capture_s_per_graph))
    return {
        "kernels": n,
        "launch_us": s.launch_us,
        "launch_model": s.launch_model,
        "graph_mode": mode,
        "t_launch_eager_ms": t_launch_eager / MS,
        "t_gpu_eager_ms": eager["t_gpu_s"] / MS,
        "t_step_eager_ms": eager["t_step_s"] / MS,
        "t_gpu_graph_ms": graph["t_gpu_s"] / MS,
        "launches_graph": int(graph["launches"]),
        "t_launch_graph_ms": graph["t_launch_s"] / MS,
        "t_step_graph_ms": graph["t_step_s"] / MS,
        "graph_speedup": eager["t_step_s"] / graph["t_step_s"],
        "launch_share_of_eager_step": t_launch_eager / eager["t_step_s"],
        "launch_tax_of_gpu_time": t_launch_eager / eager["t_gpu_s"],
        "launch_ceiling_tokens_per_s": ceiling,
        "launch_ceiling_aggregate_tokens_per_s": s.batch * ceiling,
        "padded_batch": int(graph["padded_batch"]),
        # the graph's tokens against the step's (batch × (k + 1) with speculative decoding)
        "padding_waste": float(
            launch.padding_waste(s.batch * speculative.verify_tokens(s), graph["padded_batch"])
        ),
        "eager_fallback": bool(s.batch * speculative.verify_tokens(s) > max(s.capture_sizes)),
        "in_graph": in_graph,
        "launches": int(own["launches"]),
        "t_step_ms": own["t_step_s"] / MS,
        "graphs_captured": graphs,
        "capture_sizes_count": len(s.capture_sizes),
        "largest_capture_size": max(s.capture_sizes),
        "capture_s": capture,
        # SPEC 4.3 "Ranges where the world is wide": the spread of published measurements
        "capture_s_range": ranges.capture_range(s, capture),
        "graph_memory_gb": graph_bytes / GB,
        "graph_memory_gb_range": ranges.graph_memory_range(s, graph_bytes / GB),
        "max_batch_without_graphs": no_graphs["max_batch"],
    }
