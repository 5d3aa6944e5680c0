"""model/scenario.py: a scenario is resolved where it is built (issue 41, item 5).

Every ``auto`` engine knob takes the engine profile's value when the scenario is validated or
copied as a variant; :attr:`Scenario.raw` keeps which knobs were ``auto`` (what links and YAML
carry). The core never resolves a scenario again, so no module calls ``.effective()``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from model import codecs, decode, engines
from model.presets import get_hardware, get_model
from model.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]


def _built(**kw) -> Scenario:
    return Scenario(
        hardware=get_hardware("h100-sxm"), model=get_model("llama-3.1-8b"), gpus=1, **kw
    )


def test_a_scenario_is_resolved_where_it_is_built():
    s = _built()
    assert s.is_effective
    want = s.engine_defaults()
    for key in engines.ENGINE_KNOBS:
        assert getattr(s, key) is not None, key
        assert getattr(s, key) == want[key], key
    assert s.from_engine() == list(engines.ENGINE_KNOBS)
    assert s.bw_efficiency_auto and s.flops_efficiency_auto


def test_raw_keeps_the_auto_knobs_empty_and_a_set_knob_set():
    s = _built(bw_efficiency=0.7)
    raw = s.raw
    assert not raw.is_effective
    assert raw.bw_efficiency == 0.7
    assert raw.host_ms is None and s.host_ms is not None
    assert "bw_efficiency" not in s.from_engine() and not s.bw_efficiency_auto
    assert raw.effective() == s  # a caller holding the raw scenario gets the same one back
    assert s.effective() is s
    assert "host_ms" not in dict(codecs.to_params(s))  # links leave the engine's values auto


def test_equal_inputs_build_equal_scenarios():
    a, b = _built(), _built()
    _ = a.raw  # reading raw holds nothing, so a and b stay equal
    assert a == b
    assert a.model_copy() == a


def test_a_variant_takes_its_own_engines_values():
    s = _built()
    other = s.model_copy(update={"engine": "sglang"})
    fresh = _built(engine="sglang")
    for key in engines.ENGINE_KNOBS:
        assert getattr(other, key) == getattr(fresh, key), key
    assert other.from_engine() == fresh.from_engine()
    # a variant of the raw scenario is resolved too (it is a scenario like any other)
    again = s.raw.model_copy(update={"engine": "sglang"})
    assert again.is_effective
    assert [getattr(again, k) for k in engines.ENGINE_KNOBS] == [
        getattr(fresh, k) for k in engines.ENGINE_KNOBS
    ]


def test_a_variant_keeps_a_set_knob_and_resolves_one_set_back_to_auto():
    s = _built(host_ms=0.5)
    assert s.model_copy(update={"gpus": 2}).host_ms == 0.5
    back = s.model_copy(update={"host_ms": None})
    assert back.host_ms == _built().host_ms and "host_ms" in back.from_engine()


def test_the_core_computes_with_a_scenario_built_by_a_library_caller():
    """A scenario a test or a library user builds reaches the physics with numbers, not
    ``None``: no core function needs to resolve it first."""
    t = decode.sweep(_built(), [1, 8])["t_step_s"]
    assert t.shape == (2,) and (t > 0).all()


@pytest.mark.parametrize("package", ["model", "ui", "pages", "tools", "benchmarks"])
def test_no_module_resolves_a_scenario_again(package):
    """``.effective()`` is for a caller holding :attr:`Scenario.raw`; none of ours does."""
    calls = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "effective"
            ):
                calls.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not calls, calls
