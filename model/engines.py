"""Engine profiles: what a serving engine adds to the physics (SPEC 4.0, ``presets/engines.yaml``).

A profile holds achieved fractions of the datasheet peaks, the host work of a step, launch and
all-reduce costs, the engine's CUDA graph mode and capture sizes, what capture and compile cost
at start-up and the start-up steps real servers run beside the seed's five items. Every number
names its source. ``ideal`` is the seeds' idealised physics; the built-in default is ``vllm``.

A profile has a ``version``; revisions keep the old numbers under ``previous`` (frozen in
``presets/engines-previous*.yaml``), so a share link that names ``vllm@2026.11`` keeps its numbers
after the profile is revised. Nothing here imports
the scenario: :mod:`model.scenario` resolves its ``auto`` knobs through :func:`engine_values`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from model.datafiles import PRESETS_DIR, load_file

_STRICT = ConfigDict(extra="forbid", allow_inf_nan=False)
Source = Annotated[str, Field(min_length=1, max_length=800)]
Version = Annotated[str, Field(pattern=r"^[0-9A-Za-z][0-9A-Za-z.-]{0,31}$")]
CudaGraphsMode = Literal["none", "piecewise", "full_decode_only", "full_and_piecewise"]

DEFAULT_ENGINE = "vllm"
#: below this GPU-to-GPU bandwidth [GB/s] the link is PCIe, not NVLink / Infinity Fabric
PCIE_LINK_GB_S = 100.0


def parse_sizes(value) -> list[int]:
    """Capture sizes from a comma/space separated string or a list (``8-256/8`` ranges too)."""
    if isinstance(value, list):
        return [int(v) for v in value]
    out: list[int] = []
    for part in re.split(r"[,\s]+", str(value).strip()):
        if not part:
            continue
        m = re.fullmatch(r"(\d+)-(\d+)/(\d+)", part)
        if m:
            lo, hi, step = (int(g) for g in m.groups())
            out.extend(range(lo, hi + 1, step))
        else:
            out.append(int(part))
    return out


class StartupExtras(BaseModel):
    """Start-up steps real logs show beside the seed's five items [s] (SPEC 4.0)."""

    model_config = _STRICT
    memory_profiling_s: float = Field(0.0, ge=0, le=3600)
    kv_cache_init_s: float = Field(0.0, ge=0, le=3600)
    warmup_s: float = Field(0.0, ge=0, le=3600)
    p2p_check_s: float = Field(0.0, ge=0, le=3600, description="multi-GPU only")
    kernel_jit_s: float = Field(0.0, ge=0, le=3600)


ComputeDtype = Literal["fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp4"]
#: figures that carry a range beside the point (SPEC 4.3 "Ranges where the world is wide")
RANGED = (
    "capture_s",
    "graph_memory",
    "compile_s",
    "weights_read",
    "memory_profiling_s",
    "kv_cache_init_s",
    "warmup_s",
    "kernel_jit_s",
)


class DtypeEfficiency(BaseModel):
    """Achieved fractions of peak for one compute dtype, where they differ from the profile's
    (FP8 GEMMs reach a lower share of bandwidth and FLOPS than BF16 ones)."""

    model_config = _STRICT
    bw_efficiency: float | None = Field(None, ge=0.001, le=1)
    flops_efficiency: float | None = Field(None, ge=0.001, le=1)
    prefill_efficiency: float | None = Field(None, ge=0.001, le=1)
    moe_bw_efficiency: float | None = Field(None, ge=0.001, le=1)
    moe_flops_efficiency: float | None = Field(None, ge=0.001, le=1)
    moe_us_per_layer: float | None = Field(None, ge=0, le=10000)
    moe_us_per_expert: float | None = Field(None, ge=0, le=10000)


class EngineFigures(BaseModel):
    """One version of a profile's numbers."""

    model_config = _STRICT
    version: Version
    releases: Annotated[str, Field(max_length=40)] = Field(
        "", description="engine releases these numbers describe, e.g. 0.8-0.10"
    )
    dtype_efficiency: dict[ComputeDtype, DtypeEfficiency] = Field(
        default_factory=dict, description="refinements per weights dtype"
    )
    ranges: dict[str, tuple[float, float]] = Field(
        default_factory=dict,
        description="low and high factors on the point of each ranged figure (RANGED)",
    )
    bw_efficiency: float = Field(ge=0.001, le=1)
    gpu_bw_share: dict[
        Annotated[str, Field(max_length=40)], Annotated[float, Field(ge=0.1, le=2)]
    ] = Field(
        default_factory=dict,
        description="bandwidth share a GPU's kernels reach relative to the H100 SXM the "
        "bandwidth efficiencies were derived on, by hardware preset id (absent: 1)",
    )
    gpu_gemm_us: dict[
        Annotated[str, Field(max_length=40)], Annotated[float, Field(ge=0, le=1000)]
    ] = Field(
        default_factory=dict,
        description="fixed time a GPU's one-token GEMM takes beyond its bytes at the profile's "
        "rate, over the H100 SXM's the efficiencies were derived on, by hardware preset id [µs] "
        "(absent: 0)",
    )
    flops_efficiency: float = Field(ge=0.001, le=1)
    prefill_efficiency: float = Field(ge=0.001, le=1)
    host_ms: float = Field(ge=0, le=1000)
    host_us_per_seq: float = Field(
        0.0, ge=0, le=10000, description="engine-core host work per running sequence per step"
    )
    api_us_per_token: float = Field(
        0.0,
        ge=0,
        le=100000,
        description="API-server work per streamed output token (detokenise, stop checks, one "
        "SSE chunk), in a process beside the engine: a step's tokens are delivered no faster",
    )
    frontend_us_per_token: float = Field(
        0.0,
        ge=0,
        le=100000,
        description="API-server work per prompt token before a request reaches the scheduler "
        "(chat template, tokenisation), one request after another",
    )
    frontend_queued_ms: float = Field(
        0.0,
        ge=0,
        le=100000,
        description="the part of a request's front-end time spent in the API-server process, "
        "one request after another (the rest of frontend_ms overlaps other requests)",
    )
    prefix_caching: bool = Field(
        False, description="the engine caches prompt prefixes by default (block hashes, LRU)"
    )
    api_servers_per_dp_rank: bool = Field(
        False,
        description="with data-parallel ranks the engine starts one API-server process per "
        "rank unless told otherwise (vLLM V1); false: one front end streams every rank's "
        "tokens (SGLang's TokenizerManager and DetokenizerManager)",
    )
    mixed_prefill: bool = Field(
        True,
        description="a step's prefill chunks ride with the running decodes (vLLM V1); false: "
        "a step that admits prefill runs it alone and the decodes wait (SGLang without "
        "--enable-mixed-chunk)",
    )
    async_scheduling: bool = Field(
        False,
        description="the engine core schedules the next step while the GPU runs this one, so "
        "its per-sequence host work overlaps the GPU instead of adding to each step (vLLM's "
        "--async-scheduling, on by default from 0.14; SGLang's overlap scheduler, on by default)",
    )
    per_kernel_roofline: bool = Field(
        False,
        description="a step's GEMMs and its attention are separate kernels, each at its own "
        "roof: GPU time = max(GEMM bytes, GEMM FLOPs) + max(KV bytes, attention FLOPs); false: "
        "the whole step at one roof, max(all bytes, all FLOPs) (SPEC 4.1, the seeds' count)",
    )
    prefill_attn_efficiency: float | None = Field(
        None,
        ge=0.001,
        le=1,
        description="a prefill chunk's causal attention at its own share of the BF16 peak, "
        "e × kv / (kv + prefill_attn_kv_half) over the kv tokens the chunk attends to (the "
        "context-attention kernel's measured curve); none: at prefill_efficiency like its GEMMs",
    )
    prefill_attn_kv_half: float = Field(
        0.0,
        ge=0,
        le=10_000_000,
        description="the kv tokens at which the prefill attention reaches half its share [tokens]",
    )
    cache_keeps_decoded: bool = Field(
        True,
        description="with prefix caching on, a preempted request's generated tokens stay "
        "cached as its prompt's do (vLLM V1 hashes every block as it fills and frees a "
        "preempted request as a finished one); false: only the prompt's (SGLang inserts decode "
        "tokens into its radix tree when a request finishes, and a retracted request frees "
        "everything past its cached prefix)",
    )
    moe_bw_efficiency: float | None = Field(None, ge=0.001, le=1)
    moe_flops_efficiency: float | None = Field(
        None,
        ge=0.001,
        le=1,
        description="share of the dtype's peak the routed experts' grouped GEMMs reach with "
        "many tokens per expert and a wide expert (None: they run at the dense efficiencies)",
    )
    moe_tokens_half: float = Field(
        0.0, ge=0, le=100000, description="tokens per expert at which they reach half of it"
    )
    moe_inter_half: float = Field(
        0.0,
        ge=0,
        le=100000,
        description="per-GPU expert width (intermediate size / GPUs) at which they reach half",
    )
    moe_us_per_layer: float = Field(0.0, ge=0, le=10000)
    moe_us_per_expert: float = Field(
        0.0, ge=0, le=10000, description="per distinct expert a step touches, per MoE layer"
    )
    mla_us_per_layer: float = Field(
        0.0,
        ge=0,
        le=10000,
        description="fixed time of one multi-head latent attention layer beyond its bytes [µs]",
    )
    launch_us: float = Field(ge=0.001, le=1000)
    kernels_per_layer: int = Field(ge=1, le=1000)
    allreduce_latency_us: float = Field(ge=0, le=10000)
    allreduce_latency_pcie_us: float = Field(ge=0, le=10000)
    cuda_graphs: CudaGraphsMode
    capture_sizes: list[Annotated[int, Field(ge=1, le=65536)]] = Field(min_length=1, max_length=512)
    graph_mb_per_graph: float = Field(ge=0, le=100000)
    graph_mb_per_graph_per_khidden_per_tp: float = Field(0.0, ge=0, le=100000)
    capture_s_per_graph: float = Field(ge=0, le=600)
    capture_s_per_graph_per_layer: float = Field(0.0, ge=0, le=60)
    capture_free_layers: int = Field(
        0, ge=0, le=1000, description="layers a graph captures at the base cost alone"
    )
    graph_mb_per_graph_per_khidden: float = Field(0.0, ge=0, le=100000)
    graph_capture_ref: int = Field(
        512, ge=1, le=65536, description="largest capture size the graph memory was fitted at"
    )
    graph_moe_factor: float = Field(1.0, ge=0.1, le=100)
    compile_s: float = Field(ge=0, le=3600)
    compile_s_per_layer: float = Field(0.0, ge=0, le=600)
    compile_cached_s: float = Field(ge=0, le=3600)
    compile_cached_s_per_layer: float = Field(
        0.0, ge=0, le=600, description="warm-cache torch.compile time per layer [s]"
    )
    compiles: bool = Field(True, description="runs torch.compile by default")
    max_num_batched_tokens: int = Field(ge=1, le=10_000_000)
    non_torch_gib: float = Field(0.0, ge=0, le=100)
    non_torch_gib_multi_gpu: float = Field(0.0, ge=0, le=100)
    max_num_seqs: int = Field(1024, ge=1, le=100000)
    frontend_ms: float = Field(
        0.0, ge=0, le=100000, description="per-request front-end time before the first schedule"
    )
    max_num_seqs_small_gpu: int = Field(256, ge=1, le=100000)
    small_gpu_gib: float = Field(70, ge=0, le=10000)
    small_gpu_ids: list[Annotated[str, Field(max_length=40)]] = Field(
        default_factory=list,
        max_length=64,
        description="GPUs (preset ids) that take the small-GPU defaults whatever their memory "
        "(vLLM's batch defaults exclude the A100 by name)",
    )
    sampler_bytes_per_seq_vocab: float = Field(0.0, ge=0, le=1000)
    max_num_batched_tokens_small_gpu: int | None = Field(None, ge=1, le=10_000_000)
    #: the prefill chunk on GPUs of ``large_gpu_gib`` or more (SGLang: 16384 from 160 GiB)
    max_num_batched_tokens_large_gpu: int | None = Field(None, ge=1, le=10_000_000)
    large_gpu_gib: float | None = Field(None, ge=0, le=100000)
    startup: StartupExtras = Field(default_factory=StartupExtras)
    eager_startup: StartupExtras | None = Field(
        None, description="the start-up steps with enforce-eager (no graphs, no compile)"
    )
    profile_activation_bytes_per_token_per_hidden: float = Field(0.0, ge=0, le=10000)
    safetensors_gb_s_per_process: float | None = Field(
        None, ge=0.01, le=1000, description="cold safetensors read per process (mmap faults)"
    )
    safetensors_gb_s_per_host: float | None = Field(
        None, ge=0.01, le=10000, description="cold safetensors reads of all ranks on one host"
    )
    wake_h2d_share: float = Field(1.0, ge=0.01, le=1)
    wake2_extra_s: float = Field(
        0.0, ge=0, le=3600, description="a level-2 wake's fixed time beyond level 1's"
    )
    wake2_page_cache: bool = Field(
        False, description="a level-2 wake rereads the checkpoint from the host page cache"
    )
    weights_parallel_ranks: bool = False
    wake_fixed_s: float = Field(0.0, ge=0, le=3600)
    wake_h2d: Literal["pinned", "pageable"] = "pinned"
    pageable_h2d_share: float = Field(0.5, ge=0.01, le=1)
    sources: dict[str, Source] = Field(default_factory=dict)

    @field_validator("ranges")
    @classmethod
    def _ranges(cls, value: dict) -> dict:
        for key, (lo, hi) in value.items():
            if key not in RANGED:
                raise ValueError(f"ranges: unknown figure {key!r}; accepted: {', '.join(RANGED)}")
            if not 0 < lo <= 1 <= hi <= 100:
                raise ValueError(f"ranges.{key}: need 0 < low <= 1 <= high <= 100")
        return value

    @field_validator("capture_sizes", mode="before")
    @classmethod
    def _sizes(cls, value):
        return parse_sizes(value)

    @field_validator("capture_sizes")
    @classmethod
    def _increasing(cls, value: list[int]) -> list[int]:
        if any(b <= a for a, b in zip(value, value[1:], strict=False)):
            raise ValueError("capture_sizes must be strictly increasing")
        return value

    @model_validator(mode="after")
    def _sourced(self) -> EngineFigures:
        numeric = [
            k
            for k, v in self
            if k not in ("version", "sources", "startup") and isinstance(v, int | float)
        ]
        missing = [k for k in numeric if k not in self.sources and not _left_at_default(k, self)]
        missing += [f"dtype_efficiency.{d}" for d in self.dtype_efficiency]
        if self.gpu_bw_share:
            missing.append("gpu_bw_share")
        if self.gpu_gemm_us:
            missing.append("gpu_gemm_us")
        missing += [f"ranges.{k}" for k in self.ranges]
        if self.eager_startup is not None:
            missing.append("eager_startup")
        missing = [k for k in missing if k not in self.sources]
        if missing:
            raise ValueError(f"sources is missing {', '.join(missing)}")
        return self


def moe_values(fig: EngineFigures, weights_dtype: str) -> tuple[float | None, float, float]:
    """The mixture-of-experts terms of a profile for a weights dtype: the bandwidth share the
    expert GEMMs reach (None: as dense), the fixed time per MoE layer [µs] and the time per
    distinct expert a step touches [µs] (the dtype's refinement where the profile has one)."""
    d = fig.dtype_efficiency.get(weights_dtype) or DtypeEfficiency()
    bw = d.moe_bw_efficiency if d.moe_bw_efficiency is not None else fig.moe_bw_efficiency
    per_layer = d.moe_us_per_layer if d.moe_us_per_layer is not None else fig.moe_us_per_layer
    per_expert = d.moe_us_per_expert if d.moe_us_per_expert is not None else fig.moe_us_per_expert
    return bw, per_layer, per_expert


def moe_flops_values(fig: EngineFigures, weights_dtype: str) -> tuple[float, float, float] | None:
    """The routed experts' compute curve of a profile for a weights dtype: the share of peak
    they reach, and the tokens per expert and per-GPU expert width at which they reach half of
    it; None where the profile leaves the experts' FLOPs at the dense efficiencies."""
    d = fig.dtype_efficiency.get(weights_dtype) or DtypeEfficiency()
    eff = d.moe_flops_efficiency if d.moe_flops_efficiency is not None else fig.moe_flops_efficiency
    if eff is None:
        return None
    return eff, fig.moe_tokens_half, fig.moe_inter_half


def small_gpu(fig: EngineFigures, memory_gib: float, hardware_id: str) -> bool:
    """True where the engine takes its small-GPU defaults (prefill chunk, ``max_num_seqs``):
    under ``small_gpu_gib`` of memory, or a GPU the profile names (``small_gpu_ids``).

    References
    ----------
    .. [1] vLLM ``EngineArgs.get_batch_defaults`` and its test ``test_defaults_with_usage_context``
       (tests/engine/test_arg_utils.py): ``device_memory >= 70 GiB and "a100" not in
       device_name`` → 8192 tokens / 1024 sequences for the API server, else 2048 / 256; a
       published vLLM 0.10.1.1 log on A100 80GB says "Chunked prefill is enabled with
       max_num_batched_tokens=2048" (presets/engines-EVIDENCE.md).
    """
    return memory_gib < fig.small_gpu_gib or hardware_id in fig.small_gpu_ids


def bw_share(fig: EngineFigures, hardware_id: str) -> float:
    """The factor on a profile's bandwidth efficiencies for one GPU: the share of datasheet
    bandwidth its decode GEMMs reach over the H100 SXM's, where the profile's efficiencies were
    derived (presets/engines-EVIDENCE.md, "Bandwidth share per GPU"; ``tools/fit_gpu_bw.py``
    measures it on aiconfigurator's GEMM tables). 1 for a GPU without a measurement."""
    return fig.gpu_bw_share.get(hardware_id, 1.0)


def gemm_extra_us(fig: EngineFigures, hardware_id: str) -> float:
    """The fixed time one GEMM of a decode step takes on a GPU beyond its bytes at the profile's
    rate, over the H100 SXM's, whose small-GEMM floors the profile's efficiencies already hold
    (presets/engines-EVIDENCE.md, "Revision 2026.12.3") [µs]. 0 for a GPU without a measurement."""
    return fig.gpu_gemm_us.get(hardware_id, 0.0)


def _left_at_default(key: str, fig: EngineFigures) -> bool:
    """An optional refinement left at its default needs no source (it is the schema's)."""
    info = EngineFigures.model_fields[key]
    return not info.is_required() and getattr(fig, key) == info.default


#: a profile's keys that are not numbers a band could take from it
_NOT_INHERITED = frozenset(
    {"id", "name", "description", "previous", "bands", "version", "releases", "sources"}
)


class EngineProfile(EngineFigures):
    """A profile: its current numbers, a name, and the numbers of earlier versions."""

    id: str = ""
    name: Annotated[str, Field(min_length=1, max_length=120)]
    description: Annotated[str, Field(max_length=600)] = ""
    previous: list[EngineFigures] = Field(default_factory=list)
    bands: list[EngineFigures] = Field(
        default_factory=list,
        description="numbers for other engine releases (version = a release band, e.g. 0.9); "
        "a band states what differs, and takes the profile's current numbers (and their "
        "sources) for the rest",
    )

    @model_validator(mode="before")
    @classmethod
    def _bands_inherit(cls, data):
        """A band written as what differs from the profile (``vllm-v0@0.4``: only its capture
        per graph) gets the profile's other numbers and sources; a band that states them all
        (``vllm@0.9``) keeps its own."""
        if not isinstance(data, dict) or not isinstance(data.get("bands"), list):
            return data
        own = {k: v for k, v in data.items() if k not in _NOT_INHERITED}
        bands = []
        for band in data["bands"]:
            if isinstance(band, dict):
                sources = {**(data.get("sources") or {}), **(band.get("sources") or {})}
                band = {**own, **band, "sources": sources}
            bands.append(band)
        return {**data, "bands": bands}

    def figures(self, version: str | None = None) -> EngineFigures:
        """The numbers of ``version`` (the current one when None)."""
        if version is None or version == self.version:
            return self
        for old in [*self.bands, *self.previous]:
            if old.version == version:
                return old
        raise KeyError(version)

    @property
    def versions(self) -> list[str]:
        return [self.version] + [b.version for b in self.bands] + [p.version for p in self.previous]

    def band_for(self, release: str) -> str | None:
        """The version (band) whose ``releases`` hold an engine release such as ``0.8.5``, or
        None when no band names it (the current numbers then apply)."""
        got = _minor(release)
        if got is None:
            return None
        for fig in [*self.bands, self]:
            lo, _, hi = fig.releases.partition("-")
            lo_v, hi_v = _minor(lo), _minor(hi or lo)
            if lo_v is not None and hi_v is not None and lo_v <= got <= hi_v:
                return fig.version
        return None


def _minor(text: str) -> tuple[int, int] | None:
    m = re.match(r"\s*v?(\d{1,3})\.(\d{1,3})", str(text))
    return (int(m.group(1)), int(m.group(2))) if m else None


@lru_cache(maxsize=1)
def engine_profiles() -> dict[str, EngineProfile]:
    """Every engine profile by id (``presets/engines.yaml``), validated, with its frozen earlier
    revisions (``presets/engines-previous*.yaml``: per profile, a list of full revisions; one
    file per batch of revisions keeps each under the YAML reader's size limit)."""
    raw = load_file(PRESETS_DIR / "engines.yaml")
    earlier: dict[str, list] = {}
    for path in sorted(PRESETS_DIR.glob("engines-previous*.yaml")):
        for key, revisions in load_file(path).items():
            if key not in raw:
                raise ValueError(f"{path.name}: no profile {key} in engines.yaml")
            if not isinstance(revisions, list):
                raise ValueError(f"{path.name}: {key!r} must be a list of revisions")
            earlier.setdefault(key, []).extend(revisions)
    out = {}
    for key, spec in raw.items():
        if not isinstance(spec, dict):
            raise ValueError(f"engines.yaml: {key!r} must be a mapping")
        old = earlier.get(key) or []
        try:
            out[key] = EngineProfile.model_validate(
                {**spec, "id": key, "previous": [*(spec.get("previous") or []), *old]}
            )
        except ValidationError as exc:
            raise ValueError(f"engines.yaml: profile {key!r} is invalid: {exc}") from None
    if DEFAULT_ENGINE not in out or "ideal" not in out:
        raise ValueError("engines.yaml needs the profiles 'ideal' and 'vllm'")
    return out


def accepted_engines() -> str:
    return ", ".join(engine_profiles()) + " (optionally @VERSION)"


def normalise(value: str) -> str:
    """``id`` or ``id@version`` → ``id@version`` (the current version when none is named).

    Raises ``ValueError`` naming what is accepted when the id or the version is unknown.
    """
    text = str(value).strip().lower()
    ident, _, version = text.partition("@")
    profiles = engine_profiles()
    if ident not in profiles:
        raise ValueError(f"unknown engine {ident[:40]!r}; accepted: {accepted_engines()}")
    profile = profiles[ident]
    if not version:
        return f"{ident}@{profile.version}"
    if version not in profile.versions:
        raise ValueError(
            f"engine {ident!r} has no version {version[:32]!r}; known: {', '.join(profile.versions)}"
        )
    return f"{ident}@{version}"


def banded(ident: str, release: str | None) -> str:
    """``ident@band`` for the profile's band whose releases hold ``release`` (``0.7.4`` on
    vllm-v0: ``vllm-v0@0.7``; ``0.4.3`` on sglang: ``sglang@0.4``), ``ident@<current>`` when no
    band names it or no release is known."""
    band = engine_profiles()[ident].band_for(release) if release else None
    return normalise(f"{ident}@{band}" if band else ident)


def engine_for_log(release: str | None, kind: str | None = None) -> str | None:
    """The vLLM profile and band a start-up log's release runs on (``vllm-v0@0.4`` for
    0.2-0.4, ``vllm-v0@<current>``, ``vllm@0.9``, ``vllm@<current>``), or None when the log
    states neither its release nor its engine. ``kind`` is the log's ``V0`` / ``V1`` where it
    says so; a release before 0.8 is V0.

    References
    ----------
    .. [1] ``presets/engines.yaml``: the vllm and vllm-v0 profiles' ``bands`` (``releases`` of
       each).
    """
    minor = _minor(release) if release else None
    if kind == "V0" or (kind is None and minor is not None and minor < (0, 8)):
        return banded("vllm-v0", release)
    if minor is None:
        return normalise("vllm") if kind == "V1" else None
    return banded(DEFAULT_ENGINE, release)


def split(engine: str) -> tuple[EngineProfile, EngineFigures]:
    """The profile and the figures of a normalised ``id@version``."""
    ident, _, version = engine.partition("@")
    profile = engine_profiles()[ident]
    return profile, profile.figures(version or None)


#: Scenario keys whose ``auto`` value is the engine's.
ENGINE_KNOBS: tuple[str, ...] = (
    "bw_efficiency",
    "flops_efficiency",
    "prefill_efficiency",
    "host_ms",
    "host_us_per_seq",
    "api_us_per_token",
    "frontend_us_per_token",
    "frontend_queued_ms",
    "launch_us",
    "kernels_per_layer",
    "allreduce_latency_us",
    "cuda_graphs",
    "capture_sizes",
    "graph_mb_per_graph",
    "capture_s_per_graph",
    "compile_s",
    "compile_cached_s",
    "max_num_batched_tokens",
    "max_num_seqs",
    "frontend_ms",
)


def engine_values(
    fig: EngineFigures,
    *,
    layers: int,
    hidden: int,
    gpus: int,
    link_gb_s: float,
    memory_gib: float = 80.0,
    weights_dtype: str = "bf16",
    experts: int | None = None,
    capture_sizes: list[int] | None = None,
    hardware_id: str = "custom",
):
    """The value of every :data:`ENGINE_KNOBS` key for a model and a GPU set.

    Parameters
    ----------
    fig : EngineFigures
        The profile's numbers.
    layers, hidden : int
        The model's depth and width. [count]
    gpus : int
        Tensor-parallel degree. [count]
    link_gb_s : float
        GPU-to-GPU bandwidth per direction; below ``PCIE_LINK_GB_S`` the all-reduce latency is
        the PCIe one. [GB/s]
    memory_gib : float
        GPU memory; below the profile's ``small_gpu_gib`` the engine's smaller prefill chunk
        applies (vLLM: 2048 tokens instead of 8192), from its ``large_gpu_gib`` its larger one
        (SGLang: 16384 from 160 GiB). [GiB]
    weights_dtype : str
        The weights' dtype: the profile's ``dtype_efficiency`` for it replaces the BF16
        efficiencies (FP8 scaled-mm kernels reach less; MXFP4 experts run a slower MoE path).
    experts : int or None
        Mixture-of-experts models keep more graph memory (``graph_moe_factor``).
    capture_sizes : list of int or None
        The scenario's own capture sizes when it sets them: graph memory grows with the largest.
    hardware_id : str
        The GPU's preset id: the profile's bandwidth efficiency is scaled by its
        ``gpu_bw_share`` for that GPU (:func:`bw_share`; 1 for a custom part).

    Notes
    -----
    Graph memory per graph grows with the activations a graph keeps: ``graph_mb = (base +
    per_khidden × hidden / 1000 × largest / ref + per_khidden_per_tp × hidden / 1000 / gpus) ×
    (moe factor)`` (profiles from 2026.12 use the first slope, which published logs support;
    2026.11 kept the second). Capture time grows with the layers a graph captures beyond the
    first few, ``base + per_layer × max(layers − free, 0)``; compile time with the layers
    traced, ``base + per_layer × layers``.

    References
    ----------
    .. [1] ``presets/engines.yaml`` and ``presets/engines-EVIDENCE.md`` (the fits and their sources).
    """
    compile_s = fig.compile_s + fig.compile_s_per_layer * layers
    eff = fig.dtype_efficiency.get(weights_dtype) or DtypeEfficiency()
    sizes = capture_sizes or fig.capture_sizes
    khidden = hidden / 1000
    graph_mb = (
        fig.graph_mb_per_graph
        + fig.graph_mb_per_graph_per_khidden * khidden * max(sizes) / fig.graph_capture_ref
        + fig.graph_mb_per_graph_per_khidden_per_tp * khidden / max(gpus, 1)
    ) * (fig.graph_moe_factor if experts else 1.0)
    small = small_gpu(fig, memory_gib, hardware_id)
    return {
        "bw_efficiency": min(
            (eff.bw_efficiency or fig.bw_efficiency) * bw_share(fig, hardware_id), 1.0
        ),
        "flops_efficiency": eff.flops_efficiency or fig.flops_efficiency,
        "prefill_efficiency": eff.prefill_efficiency or fig.prefill_efficiency,
        "host_ms": fig.host_ms,
        "host_us_per_seq": fig.host_us_per_seq,
        "api_us_per_token": fig.api_us_per_token,
        "frontend_us_per_token": fig.frontend_us_per_token,
        "frontend_queued_ms": fig.frontend_queued_ms,
        "launch_us": fig.launch_us,
        "kernels_per_layer": fig.kernels_per_layer,
        "allreduce_latency_us": (
            fig.allreduce_latency_pcie_us
            if link_gb_s < PCIE_LINK_GB_S
            else fig.allreduce_latency_us
        ),
        "cuda_graphs": fig.cuda_graphs,
        "capture_sizes": list(fig.capture_sizes),
        "graph_mb_per_graph": graph_mb,
        "capture_s_per_graph": fig.capture_s_per_graph
        + fig.capture_s_per_graph_per_layer * max(layers - fig.capture_free_layers, 0),
        "compile_s": compile_s if fig.compiles else 0.0,
        "compile_cached_s": (
            min(fig.compile_cached_s + fig.compile_cached_s_per_layer * layers, compile_s)
            if fig.compiles
            else 0.0
        ),
        "max_num_batched_tokens": (
            fig.max_num_batched_tokens_small_gpu
            if fig.max_num_batched_tokens_small_gpu and small
            else fig.max_num_batched_tokens_large_gpu
            if fig.max_num_batched_tokens_large_gpu
            and fig.large_gpu_gib is not None
            and memory_gib >= fig.large_gpu_gib
            else fig.max_num_batched_tokens
        ),
        "max_num_seqs": fig.max_num_seqs_small_gpu if small else fig.max_num_seqs,
        "frontend_ms": fig.frontend_ms,
    }
