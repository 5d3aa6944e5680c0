"""The Cold start page (AppTest): the optimised delta says what it is against, the optimised
settings apply in one click, and the capture-size lever is among its knobs."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.pages import open_page

ROOT = Path(__file__).resolve().parent.parent


def test_the_optimised_delta_says_what_it_is_against():
    at = open_page("pages/4_Cold_start.py", scenario="default")
    opt = next(m for m in at.metric if m.label == "Optimised")
    assert opt.proto.delta.endswith("vs this start"), opt.proto.delta


def _cold(**query) -> AppTest:
    at = open_page("pages/4_Cold_start.py", pairs=list(query.items()))
    return at


def _params(at) -> dict:
    return {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}


def test_cold_start_applies_the_optimised_settings_in_one_click():
    """Issue 40, item 8: the button sets what the Optimised figure assumes, and the page's
    Time to ready becomes that figure."""
    at = _cold(concurrency="2")
    optimised = next(m.value for m in at.metric if m.label == "Optimised")
    at.button(key="w_apply_optimised").click().run()
    assert not at.exception
    p = _params(at)
    assert p["loader"] == "runai_streamer" and p["compile_cache"] == "true"
    assert "concurrency" not in p and p["capture_sizes"].startswith("1,2,4,8")
    assert next(m.value for m in at.metric if m.label == "Time to ready") == optimised
    assert at.button(key="w_apply_optimised").disabled  # nothing left to apply


def test_cold_start_has_the_capture_size_lever_among_its_knobs():
    at = _cold()
    before = next(m.value for m in at.metric if m.label == "5 Graphs + JIT")
    at.selectbox(key="w_capture_lever").set_value("bounded (1 to 64)").run()
    assert not at.exception
    assert _params(at)["capture_sizes"] == "1,2,4,8,16,24,32,64"
    assert next(m.value for m in at.metric if m.label == "5 Graphs + JIT") != before
