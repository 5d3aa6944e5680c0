"""Preset loading: hardware, models and named scenarios from ``presets/`` (YAML, safe_load only).

Each file is validated by pydantic on load (``extra="forbid"``, bounds on every number) and every
figure must name its source. An unknown id fails with the list of known ids.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import ValidationError, model_validator

from model.cold_start_presets import ColdStartPresets, cold_start_presets  # noqa: F401 - API
from model.datafiles import PRESETS_DIR, load_file  # noqa: F401 - PRESETS_DIR is API
from model.engines import engine_profiles
from model.errors import ScenarioError
from model.scenario import HardwareSpec, ModelSpec, register_model_catalogue

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
        needed = ["config", "params_b"]
        if self.chat_template_tokens is not None:
            needed.append("chat_template_tokens")
        missing = [k for k in needed if not self.sources.get(k)]
        if missing:
            raise ValueError(f"sources is missing {', '.join(missing)}")
        return self


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
    return _validate_all(load_file(PRESETS_DIR / "hardware.yaml"), HardwarePreset, "hardware")


@lru_cache(maxsize=1)
def model_presets() -> dict[str, ModelSpec]:
    """Every model preset by id, validated."""
    return _validate_all(load_file(PRESETS_DIR / "models.yaml"), ModelPreset, "model")


register_model_catalogue(model_presets)  # the scenario's draft_model checks read it


@lru_cache(maxsize=1)
def scenario_files() -> dict[str, dict]:
    """Raw named scenarios by name (the file stem). Resolved by :mod:`model.overrides`."""
    out = {}
    for path in sorted((PRESETS_DIR / "scenarios").glob("*.yaml")):
        out[path.stem] = load_file(path)
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
        "engine": sorted(engine_profiles()),
        "scenario": scenario_names(),
    }
