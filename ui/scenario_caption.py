"""The line under a page's title: the scenario's model, dtype and GPUs, with what differs
from their presets; and the calibrated keys' values."""

from __future__ import annotations

import streamlit as st

from model.presets import hardware_presets, model_presets
from model.scenario import Scenario
from ui.text import (
    field_name,
    gpus_text,
    key_name,
    md_escape,
)


def _flat(prefix: str, value) -> dict:
    if isinstance(value, dict):
        return {
            k: v for key, sub in value.items() for k, v in _flat(f"{prefix}.{key}", sub).items()
        }
    return {prefix: value}


def spec_name(spec, presets: dict) -> str:
    """A hardware or model name for a caption, escaped, saying where the spec differs from
    the preset whose id it carries (a link's ``model.params_b=70`` keeps the preset's id and
    name): "Llama 3.1 70B (parameters [B] 70, the preset's 70.55)"."""
    name = md_escape(spec.name)
    preset = presets.get(spec.id)
    if preset is None:
        return name  # an inline spec: its name is all there is
    skip = {"id", "name", "sources"}
    mine = _flat("", spec.model_dump(exclude=skip))
    theirs = _flat("", preset.model_dump(exclude=skip))
    changed = [k for k in sorted(mine.keys() | theirs.keys()) if mine.get(k) != theirs.get(k)]
    if not changed:
        return name
    if len(changed) == 1:
        key = changed[0]
        what = (
            f"{field_name(key[1:])} {_value(mine.get(key))}, the preset's {_value(theirs.get(key))}"
        )
    else:
        what = "changed from the preset: " + ", ".join(field_name(k[1:]) for k in changed[:4])
        what += ", …" if len(changed) > 4 else ""
    return f"{name} ({md_escape(what)})"


def _value(v) -> str:
    return "none" if v is None else f"{v:g}" if isinstance(v, float) else str(v)


def scenario_caption(s: Scenario, *details: str) -> None:
    """The line under a page's title: the model, the dtype, GPUs × hardware, then the page's
    ``details``. The names are user text (a link or a YAML file sets them) and are escaped
    here, with what differs from their presets; ``details`` must be the page's own text,
    never user text."""
    st.caption(
        " · ".join(
            [
                spec_name(s.model, model_presets()),
                s.weights_dtype.upper(),
                f"{gpus_text(s)} {spec_name(s.hardware, hardware_presets())}",
                *details,
            ]
        )
    )


def key_value(s: Scenario, key: str) -> float:
    """The value the scenario computes with for a calibratable key (dotted hardware keys too)."""
    return s.hardware.h2d_gb_s if key == "hardware.h2d_gb_s" else getattr(s, key)


def calibrated_values(s: Scenario) -> str:
    """``key = value unit`` of every calibrated key (the values the scenario computes with):
    "host work = 1.424 ms", "HBM bandwidth efficiency = 0.82" (a share has no unit)."""
    from model.calibrate import UNITS

    return ", ".join(
        f"{key_name(key)} = {key_value(s, key):.4g} {UNITS.get(key, '')}".rstrip()
        for key in s.calibrated or []
    )
