"""The scenario: one pydantic model, the only input of the core (SPEC section 3).

Hardware and model specs are nested models whose field names are the public preset contract.
Every number has a default (on :class:`Scenario`) or comes from a preset, and bounds. Building
a scenario from outside input (URL, CLI, YAML, widgets) goes through :mod:`model.overrides`,
which turns pydantic's errors into one clear line per field.
"""

from __future__ import annotations

import re
import typing
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from model import engines, spec_methods
from model.units import (  # noqa: F401 - the rate_scale bounds are re-exported
    BYTES_PER_PARAM,
    MAX_RATE_SCALE,
    MIN_RATE_SCALE,
    PEAK_DTYPES,
    WeightsDtype,
)

_STRICT = ConfigDict(extra="forbid", allow_inf_nan=False, validate_default=True)
# Lower bounds mean something physically: a divisor (a bandwidth, a peak, an efficiency, τ, a
# size) is at least a small but real amount (1 GB/s of HBM, 1 GFLOPS, 0.1 % efficiency, 1 ns
# per launch, 1 MB of weights), never a subnormal float that passes "> 0" and then divides to
# inf. Everything derived from these stays finite (tests/test_bounds.py checks the corners).

Id = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]
Text = Annotated[
    str, Field(min_length=1, max_length=120, pattern=r"^[^\x00-\x1f\x7f-\x9f]+$")
]  # no control characters
PeakDtype = Literal["fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp4"]
CudaGraphs = Literal["none", "piecewise", "full_decode_only", "full_and_piecewise"]
LaunchModel = Literal["additive", "pipelined"]
Loader = Literal["safetensors", "runai_streamer", "tensorizer", "pickle"]
Storage = Literal["nvme", "nvme_raid0", "object_store", "nfs", "page_cache"]
KvDtype = Literal["fp32", "bf16", "fp16", "fp8"]

CUDA_GRAPHS_MODES: tuple[str, ...] = ("none", "piecewise", "full_decode_only", "full_and_piecewise")
LAUNCH_MODELS: tuple[str, ...] = ("additive", "pipelined")

#: vLLM's default capture sizes: 1, 2, 4, then 8..248 step 8, then 256..512 step 16 (51 sizes).
VLLM_CAPTURE_SIZES: tuple[int, ...] = (
    (1, 2, 4) + tuple(range(8, 256, 8)) + tuple(range(256, 513, 16))
)
MAX_CAPTURE_SIZES = 512
#: keys a calibration may write (model.calibrate.CALIBRATABLE; the ``calibrated`` key lists them)
CALIBRATED_KEYS = (
    "bw_efficiency",
    "flops_efficiency",
    "host_ms",
    "launch_us",
    "prefill_efficiency",
    "compile_s",
    "compile_cached_s",
    "capture_s_per_graph",
    "storage_gb_s",
    "stream_gb_s",
    "process_init_s",
    "cuda_context_s",
    "allocator_s",
    "hardware.h2d_gb_s",
    "frontend_ms",
)
CalibratedKey = Literal[CALIBRATED_KEYS]
MAX_BATCH = 65536
MAX_NUM_REQUESTS = 1_000_000


class HardwareSpec(BaseModel):
    """One GPU part. Decimal units; TFLOPS are dense tensor peaks per dtype."""

    model_config = _STRICT

    id: Id = Field("custom", description="preset id, or 'custom' for an inline part")
    name: Text
    memory_gb: float = Field(ge=0.1, le=2048, description="GPU memory [GB]")
    hbm_bandwidth_tb_s: float = Field(ge=0.001, le=100, description="memory bandwidth [TB/s]")
    peak_tflops: dict[PeakDtype, Annotated[float, Field(ge=0.001, le=100000)]] = Field(
        description="dense peak per dtype [TFLOPS]"
    )
    h2d_gb_s: float = Field(ge=0.001, le=10000, description="host-to-device copy per GPU [GB/s]")
    interconnect_gb_s: float = Field(
        ge=0.001, le=100000, description="GPU-to-GPU bandwidth per direction [GB/s]"
    )
    gpu_hour_usd: float = Field(ge=0, le=1000, description="indicative price [USD/GPU-hour]")
    sources: dict[str, Annotated[str, Field(max_length=500)]] = Field(default_factory=dict)

    @field_validator("peak_tflops")
    @classmethod
    def _has_a_16_or_32_bit_peak(cls, value: dict) -> dict:
        if not any(k in value for k in ("bf16", "fp16", "fp32")):
            raise ValueError("needs at least one of bf16, fp16, fp32")
        return value


class ModelSpec(BaseModel):
    """One model's public config. ``active_params_b`` defaults to ``params_b`` (dense)."""

    model_config = _STRICT

    id: Id = Field("custom", description="preset id, or 'custom' for an inline model")
    name: Text
    params_b: float = Field(ge=0.001, le=100000, description="total parameters [billions]")
    active_params_b: float | None = Field(
        None, ge=0.001, le=100000, description="parameters active per token [billions]"
    )
    layers: int = Field(ge=1, le=2000)
    hidden: int = Field(ge=1, le=1_000_000)
    heads: int = Field(ge=1, le=10000)
    kv_heads: int = Field(ge=1, le=10000)
    head_dim: int = Field(ge=1, le=10000)
    vocab: int = Field(ge=1, le=10_000_000)
    experts: int | None = Field(None, ge=2, le=100000)
    experts_per_token: int | None = Field(None, ge=1, le=100000)
    tied_embeddings: bool = Field(
        False, description="input embedding and output head share one table (tie_word_embeddings)"
    )
    max_context_tokens: int | None = Field(
        None, ge=1, le=100_000_000, description="longest context the model accepts [tokens]"
    )
    quantised: Literal["all", "layers", "experts"] = Field(
        "layers",
        description="which weights a quantised checkpoint (weights_dtype below 16 bits) stores "
        "in that dtype: 'layers', the decoder layers (AWQ, GPTQ, FP8 and NVFP4 checkpoints keep "
        "the embedding table and the output head in BF16); 'experts', only the MoE experts "
        "(gpt-oss's MXFP4: attention, router, embeddings and head in BF16); 'all', every "
        "parameter (the seeds' arithmetic, W = params × bytes per param)",
    )
    kv_lora_rank: int | None = Field(
        None,
        ge=1,
        le=100000,
        description="multi-head latent attention: the cached latent's width (KV per token is "
        "the latent plus the rope key, not heads × head_dim)",
    )
    qk_rope_head_dim: int | None = Field(
        None, ge=0, le=100000, description="multi-head latent attention: the rope key's width"
    )
    vision_params_b: float | None = Field(
        None,
        ge=0,
        le=100000,
        description="parameters of a vision encoder the checkpoint carries [billions] (Gemma "
        "3's SigLIP): loaded with the weights, not read or multiplied by a text decode step",
    )
    sliding_window: int | None = Field(
        None,
        ge=1,
        le=100_000_000,
        description="local attention: the window [tokens] that sliding-window layers attend "
        "to (config.json sliding_window); those layers read at most this much KV per step",
    )
    sliding_window_layers: int | None = Field(
        None,
        ge=1,
        le=2000,
        description="how many of the layers use the sliding window (config.json layer_types; "
        "Gemma 3: 5 of every 6); the others attend to the whole context",
    )
    checkpoint_dtype: WeightsDtype | None = Field(
        None,
        description="the dtype the published checkpoint stores its weights in (empty: bf16); "
        "weights_dtype=auto takes it",
    )
    checkpoint_kv_dtype: KvDtype | None = Field(
        None,
        description="the KV-cache dtype the checkpoint's config asks for (empty: bf16); "
        "kv_dtype=auto takes it",
    )
    mtp_params_b: float | None = Field(
        None,
        ge=0.001,
        le=100000,
        description="parameters of the checkpoint's multi-token-prediction module [billions] "
        "(DeepSeek-V3/R1: 14), not in params_b; loaded only for speculative=mtp",
    )
    chat_template_tokens: int | None = Field(
        None,
        ge=0,
        le=100_000,
        description="tokens the model's chat template puts around one user message (the "
        "generation prompt included): a chat endpoint prefills them, a benchmark's printed "
        "prompt tokens leave them out",
    )
    sources: dict[str, Annotated[str, Field(max_length=500)]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> ModelSpec:
        if self.vision_params_b is not None and self.vision_params_b >= self.active:
            raise ValueError(
                f"vision_params_b ({self.vision_params_b:g}) must be less than the active "
                f"parameters ({self.active:g}): the language model is the rest"
            )
        if (self.sliding_window is None) != (self.sliding_window_layers is None):
            raise ValueError(
                "sliding_window and sliding_window_layers go together (both or neither)"
            )
        if self.sliding_window_layers is not None and self.sliding_window_layers > self.layers:
            raise ValueError(
                f"sliding_window_layers ({self.sliding_window_layers}) cannot exceed "
                f"layers ({self.layers})"
            )
        if self.kv_heads > self.heads:
            raise ValueError(f"kv_heads ({self.kv_heads}) cannot exceed heads ({self.heads})")
        if self.active_params_b is not None and self.active_params_b > self.params_b:
            raise ValueError(
                f"active_params_b ({self.active_params_b}) cannot exceed params_b ({self.params_b})"
            )
        if (self.experts is None) != (self.experts_per_token is None):
            raise ValueError("experts and experts_per_token go together (both or neither)")
        if self.experts is not None and self.experts_per_token > self.experts:
            raise ValueError(
                f"experts_per_token ({self.experts_per_token}) cannot exceed "
                f"experts ({self.experts})"
            )
        if self.experts is not None:
            floor = self.params_b * self.experts_per_token / self.experts
            if self.active < floor * (1 - 1e-9):
                raise ValueError(
                    f"active_params_b ({self.active:g}) must be at least params_b × "
                    f"experts_per_token / experts ({floor:g}): k of E experts are active"
                )
        return self

    @property
    def active(self) -> float:
        """Active parameters per token [billions]."""
        return self.params_b if self.active_params_b is None else self.active_params_b

    @property
    def embedding_params(self) -> float:
        """The input-embedding table and the output head [count]: one table when tied."""
        return (1 if self.tied_embeddings else 2) * float(self.vocab) * self.hidden

    @property
    def attention_params(self) -> float:
        """The attention projections of every layer, q, k, v and o [count]: ``layers × hidden
        × head_dim × 2 × (heads + kv_heads)`` (a latent-attention model's are counted the same
        way, an upper bound)."""
        return float(self.layers) * self.hidden * self.head_dim * 2 * (self.heads + self.kv_heads)

    @property
    def unquantised_params(self) -> float:
        """Parameters a quantised checkpoint keeps in BF16 (:attr:`quantised`) [count].

        References
        ----------
        .. [1] https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json -
           ``quantization_config.modules_to_not_convert``: ``model.layers.*.self_attn``,
           ``model.layers.*.mlp.router``, ``model.embed_tokens``, ``lm_head`` (only the
           experts are MXFP4).
        .. [2] https://huggingface.co/RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic/blob/main/
           config.json - ``quantization_config.ignore: ["lm_head"]`` (llm-compressor's FP8;
           AWQ and GPTQ quantise the decoder layers' linear layers only, and the embedding
           table is a lookup no scheme quantises).
        """
        if self.quantised == "all":
            return 0.0
        kept = self.embedding_params
        if self.quantised == "experts" and self.experts:
            kept += self.attention_params
        return min(kept, self.params_b * 1e9)


class Scenario(BaseModel):
    """Everything the explorer needs. SPEC section 3 lists the public keys."""

    model_config = _STRICT

    scenario: Id | None = Field(
        None, description="named preset used as the base (`whatif presets` lists them)"
    )
    hardware: HardwareSpec = Field(
        description="hardware preset id (`whatif presets`), or an inline mapping in YAML"
    )
    model: ModelSpec = Field(
        description="model preset id (`whatif presets`), or an inline mapping in YAML"
    )
    engine: str = Field(
        engines.DEFAULT_ENGINE,
        max_length=80,
        description="serving-engine profile (`presets/engines.yaml`): `ideal` (the seeds' datasheet physics), `vllm` (V1), `vllm-v0`, `sglang`; `id@version` pins a revision, and every link names it",
    )
    gpus: int = Field(4, ge=1, le=64, description="GPUs per replica (tensor-parallel degree)")
    data_parallel: int = Field(
        1,
        ge=1,
        le=64,
        description="data-parallel ranks per replica (vLLM --data-parallel-size): each rank "
        "`gpus` GPUs with its own batch, scheduler and KV cache; a mixture of experts spreads its "
        "experts over all `gpus` × `data_parallel` GPUs (at most 64)",
    )
    expert_parallel: bool = Field(
        False,
        description="mixture-of-experts models: whole experts on each GPU, spread over the "
        "replica's GPUs (vLLM --enable-expert-parallel), instead of every expert sliced "
        "across them",
    )
    weights_dtype: WeightsDtype = Field(
        "fp8",
        description="`fp32` `bf16` `fp16` `fp8` `int8` `int4` `fp4` (fp4 needs FP4 or FP8 tensor cores: Blackwell, or Hopper's weight-only kernels), or `auto` = the checkpoint's (the model preset's `checkpoint_dtype`: gpt-oss `fp4`, DeepSeek-V3/R1 `fp8`, the rest `bf16`). A link or `--set` that names another `model` without a dtype takes `auto`; the sidebar says which the checkpoint stores",
    )
    weights_gb: float | None = Field(
        None,
        ge=0.001,
        le=1_000_000,
        description="size of the weights as loaded [GB] (`auto` = params × bytes per param); set it for checkpoints that keep some tensors wider, e.g. AWQ's 16-bit embeddings. A what-if in another dtype (the seed table, the per-dtype rows) drops it",
    )
    kv_dtype: KvDtype = Field(
        "bf16",
        description="KV-cache dtype: `fp32` `bf16` `fp16` `fp8`, or `auto` = the checkpoint's (`checkpoint_kv_dtype`, else `bf16`)",
    )
    batch: int = Field(1, ge=1, le=MAX_BATCH, description="concurrent sequences in a decode step")
    context_tokens: int = Field(
        2048,
        ge=0,
        le=10_000_000,
        description="KV-cache tokens read per sequence per step (0 = weights only, as the seeds count)",
    )
    prompt_tokens: int = Field(
        1024,
        ge=1,
        le=10_000_000,
        description="tokens of one request's prompt as the server prefills it (through a chat endpoint, with the model's chat template: presets/models.yaml `chat_template_tokens`): its prefill sets the time to first token; with `output_tokens` at most the model's context",
    )
    output_tokens: int = Field(
        256,
        ge=1,
        le=10_000_000,
        description="tokens of one request's answer: one decode step each (TPOT, end-to-end latency)",
    )
    kernels: int | None = Field(
        None,
        ge=1,
        le=1_000_000,
        description="kernel launches per decode step (`auto` = layers × `kernels_per_layer`)",
    )
    # ---- knobs whose 'auto' (None) is the engine profile's value (model.engines.ENGINE_KNOBS)
    kernels_per_layer: int | None = Field(
        None, ge=1, le=1000, description="GPU kernels one layer launches in an eager decode step"
    )
    launch_us: float | None = Field(
        None, ge=0.001, le=1000, description="CPU cost of one kernel launch τ [µs]"
    )
    host_ms: float | None = Field(
        None,
        ge=0,
        le=1000,
        description="per-step host work graphs do not remove (scheduler, sampling, sync) [ms]",
    )
    host_us_per_seq: float | None = Field(
        None,
        ge=0,
        le=10000,
        description="per-step engine-core host work per sequence in the batch [µs]",
    )
    api_us_per_token: float | None = Field(
        None,
        ge=0,
        le=100000,
        description="API-server work per streamed output token [µs]: a step's tokens reach the clients no faster than batch × this ÷ `api_server_count`",
    )
    frontend_us_per_token: float | None = Field(
        None,
        ge=0,
        le=100000,
        description="API-server work per prompt token, queued like `frontend_queued_ms` [µs]",
    )
    frontend_queued_ms: float | None = Field(
        None,
        ge=0,
        le=100000,
        description="the part of `frontend_ms` the API-server process spends on each request, one request after another (a flood queues there) [ms]",
    )
    api_server_count: int = Field(
        1,
        ge=1,
        le=64,
        description="API-server processes (vLLM `--api-server-count`)",
    )
    cuda_graphs: CudaGraphs | None = Field(
        None,
        description="`none` (= enforce-eager) `piecewise` `full_decode_only` `full_and_piecewise`",
    )
    launch_model: LaunchModel = Field(
        "additive",
        description="`additive` (T_gpu + N·τ + host, the seeds') or `pipelined` (max(T_gpu, N·τ) + host)",
    )
    bw_efficiency: float | None = Field(
        None,
        ge=0.001,
        le=1,
        description="fraction of the datasheet HBM bandwidth decode's reads reach; the engine's depends on the weights dtype",
    )
    flops_efficiency: float | None = Field(
        None,
        ge=0.001,
        le=1,
        description="fraction of the datasheet peak FLOPS decode reaches; the engine's depends on the weights dtype",
    )
    prefill_efficiency: float | None = Field(
        None,
        ge=0.001,
        le=1,
        description="fraction of the datasheet peak FLOPS the prompt's prefill reaches; the engine's depends on the weights dtype",
    )
    allreduce_latency_us: float | None = Field(
        None,
        ge=0,
        le=10000,
        description="fixed latency of one tensor-parallel all-reduce [µs]",
    )
    max_num_batched_tokens: int | None = Field(
        None,
        ge=1,
        le=10_000_000,
        description="tokens per prefill chunk (chunked prefill)",
    )
    max_num_seqs: int | None = Field(
        None,
        ge=1,
        le=100000,
        description="sequences one engine step may run (vLLM --max-num-seqs) (auto: engine's)",
    )
    frontend_ms: float | None = Field(
        None,
        ge=0,
        le=100000,
        description="per-request front-end time before the first schedule: HTTP, chat template, "
        "tokenisation [ms] (auto: engine's)",
    )
    gpu_memory_utilization: float = Field(
        0.9, ge=0.01, le=1, description="fraction of GPU memory the server may use (vLLM's)"
    )
    graph_mb_per_graph: float | None = Field(
        None, ge=0, le=100000, description="HBM taken by one captured CUDA graph [MB]"
    )
    capture_s_per_graph: float | None = Field(
        None,
        ge=0,
        le=600,
        description="start-up seconds to capture one CUDA graph [s]",
    )
    loader: Loader = Field(
        "safetensors",
        description="`safetensors` `runai_streamer` `tensorizer` `pickle` (cold-start lens)",
    )
    storage: Storage = Field(
        "nvme",
        description="`nvme` `nvme_raid0` `object_store` `nfs` `page_cache` (cold-start lens)",
    )
    concurrency: int | None = Field(
        None,
        ge=1,
        le=1024,
        description="loader read streams (`auto` = the loader's default: safetensors 1, Run:ai streamer 16, Tensorizer 8, pickle 1)",
    )
    storage_gb_s: float | None = Field(
        None,
        ge=0.001,
        le=10000,
        description="aggregate read bandwidth of the storage [GB/s] (`auto` = the tier's)",
    )
    stream_gb_s: float | None = Field(
        None,
        ge=0.001,
        le=10000,
        description="read bandwidth of one stream [GB/s] (`auto` = the tier's)",
    )
    compile_s: float | None = Field(
        None, ge=0, le=3600, description="torch.compile time on a cold start [s]"
    )
    compile_cached_s: float | None = Field(
        None,
        ge=0,
        le=3600,
        description="torch.compile time loaded from a warm cache [s]; longer than `compile_s` is refused",
    )
    process_init_s: float = Field(
        4.0, ge=0, le=3600, description="cold-start item 1: process start and imports [s]"
    )
    cuda_context_s: float = Field(
        6.0, ge=0, le=3600, description="cold-start item 2: the CUDA context [s]"
    )
    allocator_s: float = Field(
        4.0, ge=0, le=3600, description="cold-start item 3: the allocator's warm-up [s]"
    )
    compile_cache: bool = Field(False, description="torch.compile cache present (warm)")
    capture_sizes: list[Annotated[int, Field(ge=1, le=MAX_BATCH)]] | None = Field(
        None,
        min_length=1,
        max_length=MAX_CAPTURE_SIZES,
        description="batch sizes captured as graphs, comma separated, strictly increasing, each 1–65536, 1–512 of them",
    )
    sleep_level: Literal[0, 1, 2] = Field(
        0, description="0 (off), 1 (weights parked in host RAM), 2 (weights discarded)"
    )
    gpu_hour_usd: float | None = Field(
        None, ge=0, le=1000, description="price of one GPU-hour (`auto` = the hardware preset's)"
    )
    # ---- scale to zero (SPEC 4.4)
    traffic: str = Field(
        "business-hours",
        pattern=r"^[a-z0-9][a-z0-9.-]{0,63}$",
        description="traffic profile (`presets/traffic.yaml`): `steady`, `business-hours`, `bursts`, `nightly-batch`, `spiky-internal`",
    )
    rate_scale: float = Field(
        1.0,
        ge=MIN_RATE_SCALE,
        le=MAX_RATE_SCALE,
        description="multiplies the arrival rate; on a trace it compresses (> 1) or stretches (< 1) the time axis",
    )
    idle_timeout_s: float = Field(
        300.0,
        ge=1,
        le=86400,
        description="a replica stops (or sleeps) after this long without requests [s]",
    )
    warm_replicas: int | None = Field(
        None, ge=1, le=1000, description="the warm floor (`auto` = what the peak hour needs)"
    )
    prewarm_hours: str = Field(
        "8-18",
        max_length=100,
        description="hours the pre-warm strategy keeps warm: `8-18`, `7-12,13-19`, `22-6`, `none`",
    )
    sla_s: float = Field(
        10.0, ge=0, le=86400, description="the start-up wait a request tolerates [s]"
    )
    sla_penalty_usd: float = Field(
        0.05,
        ge=0,
        le=1e6,
        description="what one request that waits longer than `sla_s` costs [USD]",
    )
    shared_while_asleep: float = Field(
        0.0,
        ge=0,
        le=1,
        description="share of an asleep replica's GPU time another model pays for",
    )
    # ---- serving under load (SPEC 4.6)
    request_rate: float | Literal["inf"] = Field(
        1.0, description="requests per second the clients send [req/s], or inf (all at once)"
    )
    max_concurrency: int | None = Field(
        None,
        ge=1,
        le=100_000,
        description="requests in flight at most (none: no limit)",
        json_schema_extra={"empty": "none"},
    )
    burstiness: float = Field(
        1.0, ge=0.001, le=1000, description="shape of the gamma inter-arrival times (1 = Poisson)"
    )
    num_requests: int = Field(1000, ge=1, le=MAX_NUM_REQUESTS, description="requests in a run")
    lengths: str = Field(
        "fixed",
        max_length=64,
        description="prompt and output lengths: fixed (prompt_tokens, output_tokens), random "
        "(uniform around them within range_ratio) or a shipped distribution "
        "(presets/lengths.yaml)",
    )
    range_ratio: float = Field(
        0.0,
        ge=0,
        lt=1,
        description="`lengths=random`: each length uniform in [L(1 − r), L(1 + r)] (vLLM's `--random-range-ratio`), r in [0, 1)",
    )
    prefix_caching: Literal["auto", "true", "false"] = Field(
        "auto",
        description="automatic prefix caching: `auto` (the engine's: vLLM V1 and SGLang on, vLLM V0 off), `true`, `false`",
    )
    async_scheduling: Literal["auto", "true", "false"] = Field(
        "auto",
        description="the engine core's per-sequence host work overlaps the GPU step (vLLM's `--async-scheduling`): `auto` (the engine release's: vLLM on from 0.14, off in 0.11-0.13; SGLang's overlap scheduler on), `true`, `false`",
    )
    shared_prefix_tokens: int = Field(
        0,
        ge=0,
        le=10_000_000,
        description="tokens every prompt starts with, part of `prompt_tokens` (0 to `prompt_tokens`)",
    )
    prefix_groups: int = Field(
        1,
        ge=1,
        le=1_000_000,
        description="distinct shared prefixes the requests draw from uniformly, ≥ 1",
    )
    # ---- speculative decoding (issue 42; presets/speculative.yaml)
    draft_model: Id | None = Field(
        None,
        description="`speculative=draft`: the draft model's preset id, smaller than the target "
        "and of its vocabulary (`auto` = the smallest such preset: `llama-3.2-1b` for the "
        "Llama 3 models, `qwen3-0.6b` for Qwen3)",
    )
    speculative: spec_methods.Method = Field(
        "none",
        description="speculative decoding: `none`, `ngram` (prompt lookup), `eagle`, `eagle3`, "
        "`mtp` (the model's multi-token-prediction module: DeepSeek-V3/R1), `draft` (a smaller "
        "model of the family, `draft_model`)",
    )
    num_speculative_tokens: int | None = Field(
        None,
        ge=1,
        le=spec_methods.MAX_K,
        description="tokens the drafter proposes per step, k, 1–16 (`auto` = the method's)",
    )
    spec_acceptance: float | None = Field(
        None,
        ge=0,
        lt=1,
        description="per-token acceptance rate α of the drafts, 0 to below 1 (`auto` = the "
        "method's published default); a step emits (1 − α^(k+1)) / (1 − α) tokens",
    )
    spec_acceptance_length: float | None = Field(
        None,
        ge=1,
        lt=17,
        description="instead of `spec_acceptance`: the mean acceptance length τ you measured "
        "(tokens per verify step, the bonus token included, as vLLM logs it), 1 to below k + 1; "
        "α is solved from it",
    )
    # ---- prefill/decode disaggregation (issue 42 §2; model/disagg.py)
    disaggregated: bool = Field(
        False,
        description="serve as a prefill pool and a decode pool (xPyD): prompts are prefilled on "
        "prefill instances, their KV cache moves to a decode instance, which decodes without "
        "prefill chunks in its steps",
    )
    prefill_gpus: int | None = Field(
        None,
        ge=1,
        le=64,
        description="`disaggregated`: GPUs per prefill instance, its tensor-parallel degree "
        "(`auto` = gpus)",
    )
    prefill_instances: int = Field(
        1, ge=1, le=64, description="`disaggregated`: prefill instances per replica, ≥ 1"
    )
    decode_gpus: int | None = Field(
        None,
        ge=1,
        le=64,
        description="`disaggregated`: GPUs per decode instance, its tensor-parallel degree "
        "(`auto` = gpus)",
    )
    decode_instances: int = Field(
        1, ge=1, le=64, description="`disaggregated`: decode instances per replica, ≥ 1"
    )
    kv_transfer_gb_s: float | None = Field(
        None,
        gt=0,
        le=100000,
        description="`disaggregated`: rate at which a prompt's KV cache moves from a prefill to "
        "a decode instance [GB/s], above 0 (`auto` = the interconnect's: NVLink inside a node "
        "of 8 GPUs, a 400 Gb/s RDMA NIC per GPU across nodes; presets/disaggregation.yaml)",
    )
    seed: int = Field(0, ge=0, le=2**31 - 1, description="seed of the arrivals and lengths")
    ttft_slo_ms: float = Field(
        450.0, ge=0.001, le=1e7, description="time-to-first-token objective [ms]"
    )
    tpot_slo_ms: float = Field(
        40.0, ge=0.001, le=1e6, description="time-per-output-token objective [ms]"
    )
    slo_attainment: float = Field(
        0.99, ge=0.01, le=1, description="share of requests that must meet both objectives"
    )
    calibrated: list[CalibratedKey] | None = Field(
        None,
        max_length=len(CALIBRATED_KEYS),
        description='keys whose values were fitted to measurements (the Measurements page\'s "Apply" sets it; the landing page says so)',
    )

    @field_validator("capture_sizes", mode="before")
    @classmethod
    def _split_comma_list(cls, value):
        if isinstance(value, str):
            # commas and/or spaces separate; a trailing separator is harmless
            return [p for p in re.split(r"[,\s]+", value.strip()) if p]
        return value

    @field_validator("calibrated", mode="before")
    @classmethod
    def _split_calibrated(cls, value):
        if isinstance(value, str):
            value = [p for p in re.split(r"[,\s]+", value.strip()) if p]
        if isinstance(value, list) and not value:
            return None
        if isinstance(value, list):
            return list(dict.fromkeys(value))  # a key listed twice is listed once
        return value

    @field_validator("prewarm_hours")
    @classmethod
    def _hour_ranges(cls, value: str) -> str:
        parse_hour_ranges(value)  # raises with what is accepted
        return value.replace(" ", "")

    @field_validator("traffic")
    @classmethod
    def _traffic_known(cls, value: str) -> str:
        from model.traffic import traffic_profiles  # presets: read on first use, not at import

        known = traffic_profiles()
        if value not in known:
            raise ValueError(f"unknown traffic profile {value!r}; accepted: {', '.join(known)}")
        return value

    @field_validator("capture_sizes")
    @classmethod
    def _strictly_increasing(cls, value: list[int] | None) -> list[int] | None:
        for before, after in zip(value or [], (value or [])[1:], strict=False):
            if after <= before:
                kind = "duplicated" if after == before else "unsorted"
                raise ValueError(f"must be strictly increasing, {kind} at {before}, {after}")
        return value

    @field_validator("engine", mode="before")
    @classmethod
    def _engine_known(cls, value):
        if not isinstance(value, str):
            raise ValueError(f"must be an engine id; accepted: {engines.accepted_engines()}")
        return engines.normalise(value)

    @field_validator("weights_dtype", mode="before")
    @classmethod
    def _weights_auto(cls, value, info):
        """``auto``: the checkpoint's weights dtype (the model preset's ``checkpoint_dtype``;
        bf16 when it states none): gpt-oss opens in MXFP4, DeepSeek-V3/R1 in FP8."""
        if isinstance(value, str) and value.strip().lower() == "auto":
            m = info.data.get("model")
            return (getattr(m, "checkpoint_dtype", None) or "bf16") if m is not None else "bf16"
        return value

    @field_validator("kv_dtype", mode="before")
    @classmethod
    def _kv_auto(cls, value, info):
        """``auto``: the KV-cache dtype the checkpoint asks for (bf16 when it states none)."""
        if isinstance(value, str) and value.strip().lower() == "auto":
            m = info.data.get("model")
            return (getattr(m, "checkpoint_kv_dtype", None) or "bf16") if m is not None else "bf16"
        return value

    @field_validator("weights_dtype")
    @classmethod
    def _dtype_runs_here(cls, value, info):
        hw = info.data.get("hardware")
        # FP4 weights run natively on Blackwell; elsewhere vLLM dequantises them in the GEMM
        # (Marlin weight-only FP4, 16-bit math: a 0.10.1.1 log on an A100 80GB says "Your GPU
        # does not have native support for FP4 computation ... Weight-only FP4 compression
        # will be used leveraging the Marlin kernel"), which needs BF16 tensor cores (Ampere+)
        if value == "fp4" and hw is not None and not ({"fp4", "fp8", "bf16"} & set(hw.peak_tflops)):
            raise ValueError(
                f"{hw.name} cannot run fp4 weights (no FP4, FP8 or BF16 tensor cores: NVFP4/MXFP4 "
                "need Blackwell's, or the weight-only kernels of Ampere and later); accepted "
                "here: fp32, fp16, int8, int4"
            )
        return value

    @field_validator("output_tokens")
    @classmethod
    def _request_fits_context(cls, value, info):
        m, prompt = info.data.get("model"), info.data.get("prompt_tokens")
        limit = getattr(m, "max_context_tokens", None)
        if limit and prompt is not None and prompt + value > limit:
            raise ValueError(
                f"prompt_tokens + output_tokens = {prompt + value:,} exceeds {m.name}'s context "
                f"of {limit:,} tokens; keep their sum at most {limit:,}"
            )
        return value

    @field_validator("data_parallel")
    @classmethod
    def _ranks_fit(cls, value, info):
        tp = info.data.get("gpus")
        if tp is not None and tp * value > 64:
            raise ValueError(
                f"gpus {tp} × data_parallel {value} = {tp * value} GPUs; a replica has at "
                f"most 64: accepted, an integer from 1 to {max(64 // tp, 1)}"
            )
        return value

    @field_validator("expert_parallel")
    @classmethod
    def _experts_to_spread(cls, value, info):
        m, tp, dp = info.data.get("model"), info.data.get("gpus"), info.data.get("data_parallel")
        if not value or m is None:
            return value
        if not m.experts:
            raise ValueError(
                f"{m.name} is a dense model: it has no experts to spread; accepted here: false"
            )
        if tp is not None and dp is not None and tp * dp > m.experts:
            raise ValueError(
                f"{tp * dp} GPUs (gpus × data_parallel) for {m.experts} experts: each GPU needs "
                f"at least one; accepted: true with at most {m.experts} GPUs, or false"
            )
        return value

    @field_validator("disaggregated")
    @classmethod
    def _one_layout(cls, value, info):
        if value and (info.data.get("data_parallel") or 1) > 1:
            raise ValueError(
                "disaggregated pools with data-parallel ranks are not modelled; accepted: "
                "false while data_parallel is above 1 (or set data_parallel=1)"
            )
        return value

    @field_validator("draft_model")
    @classmethod
    def _draft_fits_target(cls, value, info):
        m = info.data.get("model")
        if value is None or m is None:
            return value
        catalogue = model_catalogue()
        if value not in catalogue:
            raise ValueError(
                f"unknown model id {value[:60]!r}; accepted: "
                f"{', '.join(draft_candidates(m)) or 'no preset here'}"
            )
        d = catalogue[value]
        if d.vocab != m.vocab:
            raise ValueError(
                f"{d.name} has a vocabulary of {d.vocab:,} tokens and {m.name} one of "
                f"{m.vocab:,}: a draft model must share the target's tokenizer; accepted: "
                f"{', '.join(draft_candidates(m)) or 'no preset here'}"
            )
        if d.params_b >= m.params_b:
            raise ValueError(
                f"{d.name} ({d.params_b:g} B) is not smaller than {m.name} ({m.params_b:g} B): "
                f"a draft model must be; accepted: {', '.join(draft_candidates(m)) or 'none'}"
            )
        return value

    @field_validator("speculative")
    @classmethod
    def _method_fits_model(cls, value, info):
        m = info.data.get("model")
        if m is None or value == "none":
            return value
        accepted = ", ".join(speculative_methods(m))
        if value == "mtp" and not m.mtp_params_b:
            raise ValueError(
                f"{m.name} has no multi-token-prediction module (model.mtp_params_b); mtp "
                f"needs one (DeepSeek-V3, DeepSeek-R1); accepted here: {accepted}"
            )
        if value == "draft" and info.data.get("draft_model") is None and not draft_candidates(m):
            raise ValueError(
                f"no smaller model preset shares {m.name}'s vocabulary to draft for it; "
                f"accepted here: {accepted}"
            )
        return value

    @field_validator("spec_acceptance_length")
    @classmethod
    def _length_fits_k(cls, value, info):
        if value is None:
            return value
        if info.data.get("spec_acceptance") is not None:
            raise ValueError(
                "set spec_acceptance (α) or spec_acceptance_length (τ), not both; accepted: "
                "'auto' while spec_acceptance is set"
            )
        method = info.data.get("speculative")
        if method in (None, "none"):
            return value
        k = (
            info.data.get("num_speculative_tokens")
            or spec_methods.methods()[method].num_speculative_tokens
        )
        if value >= k + 1:
            raise ValueError(
                f"a step of k = {k} drafts emits at most {k + 1} tokens; accepted: a number "
                f"≥ 1 and < {k + 1} (or raise num_speculative_tokens)"
            )
        return value

    @field_validator("compile_cached_s")
    @classmethod
    def _cache_not_slower_than_cold(cls, value, info):
        if value is None:
            return value
        cold = info.data.get("compile_s")
        if cold is None:
            engine, m = info.data.get("engine"), info.data.get("model")
            if engine is None or m is None:
                return value
            _, fig = engines.split(engine)
            cold = fig.compile_s + fig.compile_s_per_layer * m.layers
        if value > cold + 1e-9:
            raise ValueError(
                f"a warm-cache compile ({value:g} s) cannot take longer than the cold compile "
                f"compile_s ({cold:g} s); set it at most {cold:g}"
            )
        return value

    @field_validator("request_rate", mode="before")
    @classmethod
    def _rate(cls, value):
        if isinstance(value, str):
            text = value.strip().lower()
            if text in ("inf", "infinity", "+inf"):
                return "inf"
            try:
                value = float(text)
            except ValueError:
                raise ValueError(
                    f"{value!r} is not a request rate; accepted: a number of requests per "
                    "second above 0 (at most 1,000,000) or inf (all at once)"
                ) from None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError("accepted: a number of requests per second above 0, or inf")
        if value != value or value <= 0 or (value > 1e6 and value != float("inf")):
            raise ValueError(
                f"{value!r} is not accepted; a request rate is above 0 and at most 1,000,000 "
                "requests per second, or inf (all at once)"
            )
        return "inf" if value == float("inf") else float(value)

    @field_validator("max_concurrency", mode="before")
    @classmethod
    def _concurrency_none(cls, value):
        if isinstance(value, str) and value.strip().lower() in ("none", "inf", "unlimited"):
            return None
        return value

    @field_validator("lengths")
    @classmethod
    def _lengths_known(cls, value: str) -> str:
        from model.lengths import length_sets  # presets: read on first use, not at import

        known = ["fixed", "random", *length_sets()]
        if value not in known:
            raise ValueError(f"unknown lengths {value!r}; accepted: {', '.join(known)}")
        return value

    @field_validator("prefix_caching", "async_scheduling", mode="before")
    @classmethod
    def _auto_switch_text(cls, value, info):
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            text = value.strip().lower()
            aliases = {"on": "true", "yes": "true", "1": "true", "off": "false", "no": "false"}
            text = aliases.get(text, text)
            if text not in ("auto", "true", "false"):
                raise ValueError(
                    f"{value!r} is not accepted; {info.field_name} is auto (the engine's "
                    "default), true or false"
                )
            return text
        return value

    @field_validator("shared_prefix_tokens")
    @classmethod
    def _prefix_within_prompt(cls, value, info):
        prompt = info.data.get("prompt_tokens")
        if prompt is not None and value > prompt:
            raise ValueError(
                f"{value:,} shared prefix tokens exceed the prompt's {prompt:,}; the shared "
                f"prefix is part of the prompt: 0 to {prompt:,}"
            )
        return value

    @field_validator("sleep_level", mode="before")
    @classmethod
    def _sleep_level_from_text(cls, value):
        if isinstance(value, str) and value.strip() in {"0", "1", "2"}:
            return int(value.strip())
        return value

    # ---------------------------------------------------------------- the engine's values

    #: the engine knobs this scenario leaves ``auto`` (filled with the engine's values)
    _auto: frozenset[str] = PrivateAttr(default=frozenset())
    #: True only for :attr:`raw`'s copy: the scenario as given, its ``auto`` knobs empty
    _is_raw: bool = PrivateAttr(default=False)

    @model_validator(mode="after")
    def _resolve_engine_knobs(self) -> Scenario:
        """Resolved once, where it is built: every ``auto`` knob (``None``) takes the engine
        profile's value for this model and GPU set (:meth:`engine_defaults`), so every
        scenario the core receives is the one it computes with, and no core function
        resolves it again (issue 41). :attr:`raw` keeps which knobs were ``auto``."""
        self._fill_auto()
        return self

    def _fill_auto(self) -> None:
        auto = [k for k in engines.ENGINE_KNOBS if getattr(self, k) is None]
        if auto:
            defaults = self.engine_defaults()
            for k in auto:
                self.__dict__[k] = defaults[k]
        self._auto = frozenset(auto)
        self._is_raw = False

    @property
    def is_effective(self) -> bool:
        """True for the scenario the core computes with (every ``auto`` knob filled in): every
        scenario but :attr:`raw`'s copy."""
        return not self._is_raw

    @property
    def raw(self) -> Scenario:
        """The scenario as given (``auto`` knobs left empty): what links and YAML carry. A
        copy built on demand (never held, so equal scenarios stay equal); not for the core."""
        if self._is_raw or not self._auto:
            return self
        out = BaseModel.model_copy(self, update=dict.fromkeys(self._auto))
        out._is_raw = True
        return out

    @property
    def prefix_caching_on(self) -> bool:
        """Automatic prefix caching: the scenario's choice, or the engine's default."""
        if self.prefix_caching == "auto":
            return bool(self.engine_figures.prefix_caching)
        return self.prefix_caching == "true"

    @property
    def async_scheduling_on(self) -> bool:
        """Asynchronous scheduling: the scenario's choice, or the engine's default."""
        if self.async_scheduling == "auto":
            return bool(self.engine_figures.async_scheduling)
        return self.async_scheduling == "true"

    @property
    def replica_gpus(self) -> int:
        """GPUs of one replica: ``gpus`` × ``data_parallel``, or with ``disaggregated`` its
        prefill and decode pools' (``prefill_gpus`` × ``prefill_instances`` + ``decode_gpus``
        × ``decode_instances``, each ``auto`` GPUs per instance being ``gpus``)."""
        if not self.disaggregated:
            return self.gpus * self.data_parallel
        pg = self.prefill_gpus or self.gpus
        dg = self.decode_gpus or self.gpus
        return pg * self.prefill_instances + dg * self.decode_instances

    @property
    def engine_id(self) -> str:
        return self.engine.partition("@")[0]

    @property
    def engine_version(self) -> str:
        return self.engine.partition("@")[2]

    @property
    def engine_profile(self) -> engines.EngineProfile:
        return engines.split(self.engine)[0]

    @property
    def engine_figures(self) -> engines.EngineFigures:
        return engines.split(self.engine)[1]

    def engine_defaults(self) -> dict:
        """The engine's value of every ``auto`` knob for this model and GPU set."""
        return engines.engine_values(
            self.engine_figures,
            layers=self.model.layers,
            hidden=self.model.hidden,
            gpus=self.gpus,
            link_gb_s=self.hardware.interconnect_gb_s,
            memory_gib=self.hardware.memory_gb,
            weights_dtype=self.weights_dtype,
            experts=self.model.experts,
            capture_sizes=self.capture_sizes,
            hardware_id=self.hardware.id,
        )

    @property
    def bw_efficiency_auto(self) -> bool:
        """True when the bandwidth efficiency is the engine's (its MoE refinement applies)."""
        return "bw_efficiency" in self._auto

    @property
    def flops_efficiency_auto(self) -> bool:
        """True when both FLOPS efficiencies are the engine's (its MoE compute curve applies)."""
        return {"flops_efficiency", "prefill_efficiency"} <= self._auto

    def from_engine(self) -> list[str]:
        """The knobs that take the engine's value (left ``auto``)."""
        return [k for k in engines.ENGINE_KNOBS if k in self._auto]

    def effective(self) -> Scenario:
        """The scenario the core computes with: itself, as every scenario is resolved where it
        is built (:meth:`_resolve_engine_knobs`); :attr:`raw`'s copy resolved again. For a
        caller holding :attr:`raw`; no core function calls it."""
        if not self._is_raw:
            return self
        out = BaseModel.model_copy(self)
        out._fill_auto()
        return out

    def model_copy(self, *, update=None, deep: bool = False) -> Scenario:
        """A copy; a variant (``update``) is built from the scenario as given, so a variant
        with another engine, model or GPU count takes that engine's values for its ``auto``
        knobs, and is resolved like any scenario."""
        if not update:
            return super().model_copy(deep=deep)
        out = BaseModel.model_copy(self.raw, update=update, deep=deep)
        out._fill_auto()
        return out

    @property
    def bytes_per_param(self) -> float:
        """Bytes per parameter of the weights as loaded [B]: the dtype's (SPEC 4.1), or
        ``weights_gb`` spread over all parameters when the scenario sets the size."""
        if self.weights_gb is None:
            return BYTES_PER_PARAM[self.weights_dtype]
        return self.weights_gb * 1e9 / (self.model.params_b * 1e9)

    @property
    def unquantised_extra_bytes_per_param(self) -> float:
        """What a parameter a quantised checkpoint keeps in BF16 weighs beyond the dtype's
        bytes [B]: 0 for a 16- or 32-bit dtype or a size the scenario sets (``weights_gb``)."""
        if self.weights_gb is not None:
            return 0.0
        return max(BYTES_PER_PARAM["bf16"] - self.bytes_per_param, 0.0)

    @property
    def weights_bytes(self) -> float:
        """All the weights as loaded [B]: params × bytes per param, plus the BF16 parts a
        quantised checkpoint keeps (:attr:`ModelSpec.unquantised_params`), or ``weights_gb``."""
        extra = self.model.unquantised_params * self.unquantised_extra_bytes_per_param
        return self.model.params_b * 1e9 * self.bytes_per_param + extra

    def with_dtype(self, weights_dtype: str, **update) -> Scenario:
        """The same scenario with other weights (a what-if variant). A ``weights_gb`` override
        belongs to the scenario's own dtype, so a variant in another dtype drops it."""
        if weights_dtype != self.weights_dtype:
            update["weights_gb"] = None
        return self.model_copy(update={"weights_dtype": weights_dtype, **update})

    @property
    def price_per_gpu_hour_usd(self) -> float:
        """The scenario's price, or the hardware preset's when unset."""
        return self.hardware.gpu_hour_usd if self.gpu_hour_usd is None else self.gpu_hour_usd


#: the model presets by id (:func:`model.presets.model_presets`), which model.presets registers
#: when it is imported: it builds them from this module's ModelSpec, so this module cannot
#: import it. Read by the draft_model checks; empty until registered.
_MODEL_CATALOGUE: list = []


def register_model_catalogue(load) -> None:
    """Called by :mod:`model.presets` with its loader of the model presets."""
    _MODEL_CATALOGUE[:] = [load]


def model_catalogue() -> dict[str, ModelSpec]:
    """The model presets by id ({} before :mod:`model.presets` is imported)."""
    return _MODEL_CATALOGUE[0]() if _MODEL_CATALOGUE else {}


def draft_candidates(m: ModelSpec) -> list[str]:
    """Model presets that can draft for ``m`` (its vocabulary, fewer parameters), smallest
    first: the choices of ``draft_model``, the first its ``auto``."""
    fits = [p for p in model_catalogue().values() if p.vocab == m.vocab and p.params_b < m.params_b]
    return [p.id for p in sorted(fits, key=lambda p: p.params_b)]


def speculative_methods(m: ModelSpec) -> list[str]:
    """The ``speculative`` values model ``m`` can take: every method, less ``mtp`` without a
    multi-token-prediction module and ``draft`` without a smaller preset of its vocabulary."""
    return [
        k
        for k in typing.get_args(spec_methods.Method)
        if (k != "mtp" or m.mtp_params_b) and (k != "draft" or draft_candidates(m))
    ]


def draft_spec(s) -> ModelSpec:
    """The draft model of ``speculative=draft``: ``draft_model``'s preset, or the smallest
    candidate (:func:`draft_candidates`)."""
    return model_catalogue()[s.draft_model or draft_candidates(s.model)[0]]


def parse_hour_ranges(text: str) -> list[tuple[int, int]]:
    """``8-18`` or ``7-12,13-19`` as [(start, end)] hours of the day, end exclusive; ``22-6``
    wraps midnight; an empty text or ``none`` is no hours. Raises ValueError saying what is
    accepted."""
    out: list[tuple[int, int]] = []
    text = (text or "").replace(" ", "")
    if text.lower() in ("", "none"):
        return out
    for part in text.split(","):
        m = re.fullmatch(r"(\d{1,2})-(\d{1,2})", part)
        if not m or not (0 <= int(m[1]) <= 23 and 1 <= int(m[2]) <= 24) or int(m[1]) == int(m[2]):
            raise ValueError(
                f"{part!r} is not an hour range; accepted: start-end hours of the day such as "
                "8-18 (end exclusive, 0-24), several separated by commas (7-12,13-19), 22-6 "
                "across midnight, or none"
            )
        out.append((int(m[1]), int(m[2])))
    return out


#: Scenario fields that name a preset or hold a nested spec (not plain values).
NESTED_FIELDS = ("hardware", "model")
PEAK_DTYPE_NAMES = PEAK_DTYPES
