"""Preset loading: hardware, models and named scenarios from ``presets/`` (YAML, safe_load only).

Each file is validated by pydantic on load (``extra="forbid"``, bounds on every number) and every
figure must name its source. An unknown id fails with the list of known ids.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from model.errors import ScenarioError
from model.scenario import HardwareSpec, ModelSpec

PRESETS_DIR = Path(
    os.environ.get("WHATIF_PRESETS", Path(__file__).resolve().parent.parent / "presets")
)

_HARDWARE_SOURCED = (
    "memory_gb",
    "hbm_bandwidth_tb_s",
    "peak_tflops",
    "h2d_gb_s",
    "interconnect_gb_s",
    "gpu_hour_usd",
)


class HardwarePreset(HardwareSpec):
    """A hardware preset file entry: every figure cites its source."""

    @model_validator(mode="after")
    def _every_figure_sourced(self) -> HardwarePreset:
        missing = [k for k in _HARDWARE_SOURCED if not self.sources.get(k)]
        if missing:
            raise ValueError(f"sources is missing {', '.join(missing)}")
        return self


class ModelPreset(ModelSpec):
    """A model preset file entry: the config and the parameter count cite their sources."""

    @model_validator(mode="after")
    def _config_and_params_sourced(self) -> ModelPreset:
        missing = [k for k in ("config", "params_b") if not self.sources.get(k)]
        if missing:
            raise ValueError(f"sources is missing {', '.join(missing)}")
        return self


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


def read_yaml_text(text: str, what: str) -> dict:
    """Parse YAML text with ``yaml.safe_load`` and insist on a mapping.

    Python tags (``!!python/object``) are refused by the safe loader; the error names ``what``.
    """
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid YAML"
        raise ScenarioError(what, f"not valid YAML ({first})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ScenarioError(
            what, f"must be a YAML mapping of keys to values, got a {type(data).__name__}"
        )
    return data


def _load_file(path: Path) -> dict:
    return read_yaml_text(path.read_text(encoding="utf-8"), str(path.name))


def _validate_all(raw: dict, cls, kind: str) -> dict:
    out = {}
    for preset_id, spec in raw.items():
        if not isinstance(spec, dict):
            raise ValueError(f"{kind} preset {preset_id!r} must be a mapping")
        try:
            out[preset_id] = cls.model_validate({**spec, "id": preset_id})
        except ValidationError as exc:
            raise ValueError(f"{kind} preset {preset_id!r} is invalid: {exc}") from None
    return out


@lru_cache(maxsize=1)
def hardware_presets() -> dict[str, HardwareSpec]:
    """Every hardware preset by id, validated."""
    return _validate_all(_load_file(PRESETS_DIR / "hardware.yaml"), HardwarePreset, "hardware")


@lru_cache(maxsize=1)
def model_presets() -> dict[str, ModelSpec]:
    """Every model preset by id, validated."""
    return _validate_all(_load_file(PRESETS_DIR / "models.yaml"), ModelPreset, "model")


@lru_cache(maxsize=1)
def cold_start_presets() -> ColdStartPresets:
    """Storage tiers, loaders and start-up timings (``presets/cold_start.yaml``), validated."""
    raw = _load_file(PRESETS_DIR / "cold_start.yaml")
    for kind in ("storage", "loaders"):
        for key, spec in (raw.get(kind) or {}).items():
            if isinstance(spec, dict):
                spec.setdefault("id", key)
    try:
        return ColdStartPresets.model_validate(raw)
    except ValidationError as exc:
        raise ValueError(f"cold_start.yaml is invalid: {exc}") from None


@lru_cache(maxsize=1)
def scenario_files() -> dict[str, dict]:
    """Raw named scenarios by name (the file stem). Resolved by :mod:`model.overrides`."""
    out = {}
    for path in sorted((PRESETS_DIR / "scenarios").glob("*.yaml")):
        out[path.stem] = _load_file(path)
    return out


def _unknown(kind: str, value: object, known) -> ScenarioError:
    return ScenarioError(
        kind, f"unknown {kind} id {str(value)[:60]!r}; known ids: {', '.join(sorted(known))}"
    )


def get_hardware(preset_id: str) -> HardwareSpec:
    """The hardware preset ``preset_id``; unknown ids list the known ones."""
    presets = hardware_presets()
    if preset_id not in presets:
        raise _unknown("hardware", preset_id, presets)
    return presets[preset_id]


def get_model(preset_id: str) -> ModelSpec:
    """The model preset ``preset_id``; unknown ids list the known ones."""
    presets = model_presets()
    if preset_id not in presets:
        raise _unknown("model", preset_id, presets)
    return presets[preset_id]


def scenario_names() -> list[str]:
    """Named scenarios, the default first."""
    names = list(scenario_files())
    return sorted(names, key=lambda n: (n != "default", n))


def scenario_description(name: str) -> str:
    return str(scenario_files().get(name, {}).get("description", ""))


def all_preset_ids() -> dict[str, list[str]]:
    """Every preset id by kind (``whatif presets``)."""
    return {
        "hardware": sorted(hardware_presets()),
        "model": sorted(model_presets()),
        "storage": sorted(cold_start_presets().storage),
        "loader": sorted(cold_start_presets().loaders),
        "scenario": scenario_names(),
    }
