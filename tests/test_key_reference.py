"""The key reference (``docs/keys.md``) is generated from the keys' declarations, and the
sidebar's widgets take their bounds from them (issue 41: one description per key)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from model.overrides import bounds
from model.scenario import Scenario
from tools import key_reference

ROOT = Path(__file__).resolve().parent.parent


def test_the_committed_key_reference_is_what_the_declarations_write():
    assert key_reference.PAGE.read_text(encoding="utf-8") == key_reference.page(), (
        "run: python -m tools.key_reference --write"
    )


def test_every_key_has_one_description_of_its_own():
    texts = {}
    for key, info in Scenario.model_fields.items():
        assert info.description, key
        assert texts.setdefault(info.description, key) == key, (key, texts[info.description])
        assert f"| `{key}` |" in key_reference.page()


@pytest.mark.parametrize(
    "key, want",
    [
        ("batch", (1, 65536, int)),
        ("launch_us", (0.001, 1000.0, float)),
        ("hardware.h2d_gb_s", (0.001, 10000.0, float)),
        ("range_ratio", (0.0, None, float)),  # < 1: left to the validation
        ("cuda_graphs", (None, None, None)),
        ("no_such_key", (None, None, None)),
    ],
)
def test_bounds_are_read_from_the_field(key, want):
    assert bounds(key) == want


def _number_widgets_with_literal_bounds(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
        if name not in ("number_input", "slider", "field_widget"):
            continue
        if any(k.arg in ("min_value", "max_value") for k in node.keywords):
            out.append(node.lineno)
    return out


@pytest.mark.parametrize("path", sorted((ROOT / "ui").glob("*.py")), ids=lambda p: p.name)
def test_no_widget_restates_a_fields_bounds(path):
    if path.name == "state.py":  # field_widget itself, which reads them
        return
    assert _number_widgets_with_literal_bounds(path) == []


def test_the_overheads_panel_widgets_carry_the_fields_bounds_and_write_the_link(app_page):
    at = app_page(
        "pages/3_Launch_overhead.py", scenario="seed-3b-4090", state={"x_overheads": True}
    )
    for key in ("bw_efficiency", "flops_efficiency", "prefill_efficiency", "launch_us"):
        w = at.number_input(key=f"w_{key}")
        lo, hi, _ = bounds(key)
        assert (w.min, w.max) == (lo, hi), key
    at.number_input(key="w_bw_efficiency").set_value(0.5).run()
    assert not at.exception
    assert at.query_params["bw_efficiency"] in ("0.5", ["0.5"])
