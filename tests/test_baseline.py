"""Baseline and compare: the link's base.* keys, the metrics' deltas, the charts' baseline, the
Compare page (issue 12, part 1). Expected deltas are hand calculations on the CLI's figures."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from model import codecs
from model.compare import lookup
from model.evaluate import roofline_lens, summary
from model.overrides import resolve
from tests import pages
from ui import baseline_charts, roofline_charts
from ui.chart_common import validated
from ui.compare import changed_keys, delta_text, metric_delta
from ui.lenses import ROWS, compare

ROOT = Path(__file__).resolve().parent.parent
SEED = "seed-3b-4090"


def scen(*pairs):
    s, errors = resolve(list(pairs))
    assert not errors
    return s


def base_query(b) -> dict:
    return dict(codecs.baseline_params(b))


def open_page(page: str, pairs: list[tuple[str, str]]) -> AppTest:
    return pages.open_page(page, pairs=pairs, timeout=60)


# --- link keys ---------------------------------------------------------------------------


def test_split_link_separates_baseline_data_and_compared():
    pairs = [
        ("scenario", SEED),
        ("batch", "8"),
        ("base.scenario", SEED),
        ("base.batch", "1"),
        ("data", "ex-a,ex-b"),
        ("data", "ex-c"),
        ("vs", "batch=2"),
    ]
    own, base, data, more = codecs.split_link(pairs)
    assert own == [("scenario", SEED), ("batch", "8")]
    assert base == [("scenario", SEED), ("batch", "1")]
    assert data == ["ex-a", "ex-b", "ex-c"]
    assert more == ["batch=2"]


def test_baseline_round_trips_through_a_link():
    s, b = scen(("scenario", SEED), ("batch", "8")), scen(("scenario", SEED))
    url = codecs.to_url(s, extra=codecs.baseline_params(b))
    assert "base.scenario=seed-3b-4090" in url
    pairs = codecs.parse_query(url.split("?", 1)[1])
    own, base, _, _ = codecs.split_link(pairs)
    assert resolve(own)[0] == s
    assert resolve(base)[0] == b
    assert codecs.from_url(url) == s  # a baseline is not part of the scenario


# --- deltas ------------------------------------------------------------------------------


def test_delta_text_hand_cases():
    assert delta_text(10.0, 8.0, "ms") == "+2 ms (+25 %)"
    assert delta_text(6.0, 8.0, "ms") == "-2 ms (-25 %)"
    assert delta_text(5.5, 8.0, "$") == "-$2.5 (-31 %)"
    assert delta_text(2500.0, 100.0) == "+2,400 (×25)"
    assert delta_text(1.0, 1.0) is None
    assert delta_text(3.0, 0.0, "s") == "+3 s"


def test_metric_delta_colours_by_which_way_is_better():
    assert metric_delta(6.0, 8.0, "lower", "ms")["delta_color"] == "inverse"
    assert metric_delta(6.0, 8.0, "higher")["delta_color"] == "normal"
    assert metric_delta(6.0, 8.0, None)["delta_color"] == "off"
    assert metric_delta(8.0, 8.0)["delta"] == "= baseline"
    assert metric_delta("memory", "compute") == {
        "delta": "baseline: compute",
        "delta_color": "off",
        "delta_arrow": "off",
    }
    assert metric_delta(1.0, None) == {}


def test_changed_keys_names_the_differences():
    s, b = (
        scen(("scenario", SEED), ("batch", "8"), ("weights_dtype", "int4")),
        scen(("scenario", SEED)),
    )
    assert changed_keys(s, b) == ["weights_dtype", "batch"]
    assert changed_keys(b, b) == []


# --- the Compare table ---------------------------------------------------------------------


def test_compare_rows_and_changes_match_summary():
    b, s = scen(("scenario", SEED)), scen(("scenario", SEED), ("weights_dtype", "int4"))
    rows = compare([b, s])
    assert len(rows) == len(ROWS)
    fb, fs = summary(b), summary(s)
    step = next(r for r in rows if r["label"] == "Step time")
    assert step["values"] == [fb["decode"]["t_step_ms"], fs["decode"]["t_step_ms"]]
    expected = (fs["decode"]["t_step_ms"] - fb["decode"]["t_step_ms"]) / fb["decode"]["t_step_ms"]
    assert step["changes"][1] == pytest.approx(expected)
    assert step["differs"]
    kernels = next(r for r in rows if r["label"] == "Kernels per step")
    assert not kernels["differs"]  # the dtype does not change the launches
    assert lookup(fs, "decode.nothing") is None


def test_compare_refuses_more_than_four():
    s = scen()
    with pytest.raises(ValueError):
        compare([s] * 5)


# --- charts ------------------------------------------------------------------------------


def _roofline_fig(s):
    lens = roofline_lens(s)
    rf = lens["figures"]["roofline"]
    return roofline_charts.roofline_figure(
        s,
        lens["sweep"],
        lens["current_index"],
        rf["ridge_flop_per_byte"],
        rf["compute_dtype"],
        lens["figures"]["request"],
    )


def test_overlay_adds_dashed_labelled_baseline_traces():
    s, b = scen(("scenario", SEED), ("weights_dtype", "int4")), scen(("scenario", SEED))
    fig, base = _roofline_fig(s), _roofline_fig(b)
    assert baseline_charts.can_overlay(fig)
    merged = baseline_charts.overlay(fig, base)
    validated(merged)  # Plotly accepts every property
    extra = merged.spec["data"][len(fig.spec["data"]) :]
    assert len(extra) == len(base.spec["data"])
    assert all(t["name"].startswith("baseline") for t in extra)
    assert all(t["legendgroup"] == "baseline" for t in extra)
    assert all(t.get("line", {}).get("dash") == "dash" for t in extra if t.get("type") != "bar")


def test_stacked_bars_are_drawn_beneath_not_over():
    s = scen(("scenario", SEED))
    fig = roofline_charts.memory_figure(summary(s)["memory"])
    assert not baseline_charts.can_overlay(fig)
    titled = baseline_charts.titled_baseline(fig)
    validated(titled)
    assert titled.spec["layout"]["title"]["text"].startswith("Baseline: ")


def test_stacked_areas_become_outlines_in_their_own_stack():
    s = scen(("scenario", SEED))
    lens = roofline_lens(s)
    fig = roofline_charts.step_composition_figure(
        lens["sweep"], s.batch, lens["ridge_batch"], lens["figures"]["memory"]["max_batch"], None
    )
    merged = baseline_charts.overlay(fig, fig)
    extra = merged.spec["data"][len(fig.spec["data"]) :]
    stacked = [t for t in extra if "stackgroup" in t]
    assert stacked and all(t["stackgroup"].startswith("baseline") for t in stacked)
    assert all(t.get("fill") in (None, "none") for t in stacked)


# --- pages (AppTest) ---------------------------------------------------------------------


def test_landing_page_shows_deltas_against_the_link_baseline():
    b = scen(("scenario", SEED))
    s = scen(("scenario", SEED), ("weights_dtype", "int4"))
    at = open_page("app.py", codecs.to_params(s) + codecs.baseline_params(b))
    fb, fs = summary(b), summary(s)
    step = next(m for m in at.metric if m.label == "Step time")
    diff = fs["decode"]["t_step_ms"] - fb["decode"]["t_step_ms"]
    assert step.proto.delta.startswith(f"{diff:+.3g} ms")
    assert not at.warning
    assert any("Baseline:" in c.value for c in at.sidebar.caption)


def test_invalid_baseline_is_dropped_with_a_notice_and_the_scenario_stays():
    pairs = [("scenario", SEED), ("batch", "8"), ("base.scenario", SEED), ("base.batch", "-3")]
    at = open_page("pages/1_Roofline.py", pairs)
    warnings = " ".join(w.value for w in at.warning)
    assert "baseline in the link was dropped" in warnings
    assert "batch" in warnings and "from 1 to 65536" in warnings
    assert all(not m.proto.delta for m in at.metric)
    s = scen(("scenario", SEED), ("batch", "8"))
    tps = next(m for m in at.metric if m.label == "Aggregate tok/s")
    assert tps.value == f"{summary(s)['decode']['tokens_per_s']:,.0f}"


def test_pin_button_puts_the_baseline_into_the_link():
    at = open_page("app.py", [("scenario", SEED)])
    next(b for b in at.sidebar.button if b.label == "Pin as baseline").click().run()
    assert at.query_params.get("base.scenario") == SEED
    at.sidebar.number_input(key="w_batch").set_value(8).run()
    assert at.query_params.get("base.scenario") == SEED
    step = next(m for m in at.metric if m.label == "Step time")
    assert step.proto.delta  # batch 8 against the pinned batch 1


@pytest.mark.parametrize(
    "page",
    [
        "pages/1_Roofline.py",
        "pages/3_Launch_overhead.py",
        "pages/4_Cold_start.py",
        "pages/5_Scale_to_zero.py",
        "pages/7_Compare.py",
    ],
)
def test_every_page_runs_with_a_baseline(page):
    b = scen(("scenario", SEED))
    s = scen(("scenario", SEED), ("weights_dtype", "int4"), ("batch", "16"))
    at = open_page(page, codecs.to_params(s) + codecs.baseline_params(b))
    assert not at.warning
    assert any(m.proto.delta for m in at.metric) or page.endswith("Compare.py")


def test_compare_page_columns_and_bad_compared_link():
    b = scen(("scenario", SEED))
    s = scen(("scenario", SEED), ("batch", "16"))
    pairs = codecs.to_params(s) + codecs.baseline_params(b)
    at = open_page("pages/7_Compare.py", pairs + [("vs", "scenario=seed-70b-fp8-cold-start")])
    frame = at.dataframe[0].value
    assert list(frame.columns)[2:] == ["1 · Baseline", "2 · This scenario", "3 · Scenario 3"]
    at = open_page("pages/7_Compare.py", pairs + [("vs", "batch=-1")])
    assert any("left out" in w.value for w in at.warning)
    assert list(at.dataframe[0].value.columns)[2:] == ["1 · Baseline", "2 · This scenario"]


@pytest.mark.parametrize("page", ["app.py", "pages/1_Roofline.py", "pages/4_Cold_start.py"])
def test_a_link_to_a_missing_data_set_opens_any_page_with_a_notice(page):
    at = open_page(page, [("scenario", SEED), ("data", "a" * 64 + ",ex-nothing")])
    shown = " ".join(w.value for w in at.warning)
    assert "is no longer stored" in shown and "not one of the example data sets" in shown
    assert next(m for m in at.metric if m.label in ("Step time", "Time to ready")).value
    assert "data" not in at.query_params  # the ids that could not be opened leave the link


def test_a_pasted_compare_link_is_read_strictly():
    from model.errors import ScenarioError
    from ui.compare_view import parse_compared

    s = parse_compared("http://host:8501/Roofline?scenario=seed-3b-4090&batch=4&base.batch=1")
    assert (s.scenario, s.batch) == (SEED, 4)  # its baseline is not part of it
    with pytest.raises(ScenarioError) as err:
        parse_compared("scenario=seed-3b-4090&batch=-1")
    assert err.value.key == "batch"
    with pytest.raises(ScenarioError):
        parse_compared("x" * 20_000)


def test_a_links_tab_is_the_view_not_the_scenario():
    pairs = [("scenario", "seed-3b-4090"), ("tab", "HBM per GPU"), ("batch", "4")]
    own, base, data, more = codecs.split_link(pairs)
    assert own == [("scenario", "seed-3b-4090"), ("batch", "4")]
    assert codecs.link_tab(pairs) == "HBM per GPU"
    assert codecs.link_tab([("tab", "a"), ("tab", "b")]) == "b"  # the last one, as for keys
    assert codecs.link_tab([("tab", "")]) is None
    assert codecs.link_tab([("tab", "x" * (codecs.MAX_TAB_CHARS + 1))]) is None
    assert codecs.link_tab(own) is None
