"""Cold-start presets: storage tiers, weights loaders and start-up timings
(``presets/cold_start.yaml``, SPEC 4.3), validated, every figure with its source.

They depend on nothing of the scenario, so :mod:`model.scenario` reads the start-up defaults
from here (its warm-cache compile check) and :mod:`model.presets` re-exports them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from model.datafiles import PRESETS_DIR, load_file

_STRICT = ConfigDict(extra="forbid", allow_inf_nan=False)
Source = Annotated[str, Field(min_length=1, max_length=600)]


def _require_sources(obj: BaseModel, fields: tuple[str, ...]) -> None:
    missing = [k for k in fields if getattr(obj, k) is not None and not obj.sources.get(k)]
    if missing:
        raise ValueError(f"sources is missing {', '.join(missing)}")


class StorageTier(BaseModel):
    """A storage tier: aggregate read bandwidth and the bandwidth of one read stream."""

    model_config = _STRICT
    id: str = ""
    name: str
    aggregate_gb_s: float = Field(gt=0, le=10000, description="all streams together [GB/s]")
    per_stream_gb_s: float = Field(gt=0, le=10000, description="one read stream [GB/s]")
    warm_cache_trap: bool = False
    sources: dict[str, Source]

    @model_validator(mode="after")
    def _sourced(self) -> StorageTier:
        _require_sources(self, ("aggregate_gb_s", "per_stream_gb_s"))
        return self


class LoaderSpec(BaseModel):
    """A weights loader: whether read and H2D overlap, its default read streams, and the
    extra passes through host memory it makes (pickle's intermediate buffer)."""

    model_config = _STRICT
    id: str = ""
    name: str
    overlap: bool
    default_concurrency: int = Field(ge=1, le=1024)
    host_passes: int = Field(0, ge=0, le=4)
    host_copy_gb_s: float | None = Field(None, gt=0, le=10000)
    notes: str = ""
    sources: dict[str, Source]

    @model_validator(mode="after")
    def _sourced(self) -> LoaderSpec:
        _require_sources(self, ("overlap", "default_concurrency", "host_passes", "host_copy_gb_s"))
        if self.host_passes and self.host_copy_gb_s is None:
            raise ValueError("host_passes needs host_copy_gb_s")
        return self


class StartupSpec(BaseModel):
    """Compile and capture timings of item 5, and the optimisations the seed applies."""

    model_config = _STRICT
    compile_s: float = Field(ge=0, le=3600)
    compile_cached_s: float = Field(ge=0, le=3600)
    capture_s_per_graph: float = Field(ge=0, le=600)
    bounded_capture_sizes: list[int] = Field(min_length=1, max_length=512)
    lean_process_init_s: float = Field(ge=0, le=3600)
    sources: dict[str, Source]

    @model_validator(mode="after")
    def _sourced(self) -> StartupSpec:
        _require_sources(
            self,
            (
                "compile_s",
                "compile_cached_s",
                "capture_s_per_graph",
                "bounded_capture_sizes",
                "lean_process_init_s",
            ),
        )
        return self


class ColdStartPresets(BaseModel):
    model_config = _STRICT
    storage: dict[str, StorageTier]
    loaders: dict[str, LoaderSpec]
    startup: StartupSpec


@lru_cache(maxsize=1)
def cold_start_presets() -> ColdStartPresets:
    """Storage tiers, loaders and start-up timings (``presets/cold_start.yaml``), validated."""
    raw = load_file(PRESETS_DIR / "cold_start.yaml")
    for kind in ("storage", "loaders"):
        for key, spec in (raw.get(kind) or {}).items():
            if isinstance(spec, dict):
                spec.setdefault("id", key)
    try:
        return ColdStartPresets.model_validate(raw)
    except ValidationError as exc:
        raise ValueError(f"cold_start.yaml is invalid: {exc}") from None
