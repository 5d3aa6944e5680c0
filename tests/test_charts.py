"""Every chart builder's spec is a valid Plotly figure, and what Streamlit is handed
(``SpecFigure.to_dict``: plain lists and a data revision) carries the same numbers; a chart is
drawn so that the browser updates it in place (a stable element id, few marker nodes)."""

from __future__ import annotations

import json

import numpy as np
import plotly.io as pio
import pytest

from model.overrides import resolve
from tests.helpers import every_figure
from tests.pages import page_test
from ui.chart_common import SpecFigure, validated


def _unpack(value):
    assert not (isinstance(value, dict) and "bdata" in value), "typed arrays defeat datarevision"
    return [np.nan if v is None else v for v in value] if isinstance(value, list) else value


@pytest.mark.parametrize("name", ["default", "seed-3b-4090", "seed-70b-fp8-cold-start"])
def test_every_builder_spec_validates_and_ships_the_same_numbers(name):
    s, _ = resolve([("scenario", name), ("loader", "pickle")])
    for fig in every_figure(s):
        assert isinstance(fig, SpecFigure)
        checked = validated(fig)  # raises on any property Plotly does not know
        shipped = json.loads(pio.to_json(fig.to_dict(), validate=False))
        assert len(shipped["data"]) == len(checked.data)
        for sent, trace in zip(shipped["data"], checked.data, strict=True):
            for key in ("x", "y"):
                mine = trace[key]
                if mine is None or (len(mine) and isinstance(mine[0], str)):
                    continue
                got = _unpack(sent[key])
                np.testing.assert_allclose(
                    np.asarray(got, dtype=float), np.asarray(mine, dtype=float), equal_nan=True
                )


def test_the_data_revision_follows_the_numbers_and_nothing_else():
    from ui.chart_common import figure

    def fig(y):
        return figure([{"type": "scatter", "x": np.arange(20.0), "y": y}], {"title": "t"})

    y = np.linspace(0, 1, 20)
    y[3] = np.nan
    a, b, c = fig(y).to_dict(), fig(y.copy()).to_dict(), fig(y * 1.01).to_dict()
    assert a["layout"]["datarevision"] == b["layout"]["datarevision"]
    assert a["layout"]["datarevision"] != c["layout"]["datarevision"]
    assert a["data"][0]["y"][3] is None and json.loads(pio.to_json(a))["data"][0]["y"][3] is None


def test_a_line_with_few_markers_draws_only_those_markers():
    from ui.chart_common import figure, sparse_markers

    x = np.arange(1.0, 701.0)
    trace = {
        "type": "scatter", "x": x, "y": x * 2, "mode": "lines+markers", "name": "eager",
        "line": {"color": "#0072B2"}, "marker": sparse_markers(x, "square"),
        "hovertemplate": "%{y}",
    }  # fmt: skip
    line, marks, key = figure([trace], {}).spec["data"]
    assert line["mode"] == "lines" and len(line["x"]) == 700 and line["hovertemplate"] == "%{y}"
    assert marks["mode"] == "markers" and 8 <= len(marks["x"]) <= 12
    assert marks["marker"]["symbol"] == "square" and marks["hoverinfo"] == "skip"
    np.testing.assert_array_equal(marks["y"], marks["x"] * 2)
    assert key["x"] == [None] and key["name"] == "eager" and key["mode"] == "lines+markers"
    assert {t["legendgroup"] for t in (line, marks, key)} == {"eager"}
    assert line["showlegend"] is False and marks["showlegend"] is False
    # drawing the result again changes nothing (the baseline overlay draws through figure too)
    assert len(figure([line, marks, key], {}).spec["data"]) == 3


@pytest.mark.parametrize(
    "page", ["pages/1_Roofline.py", "pages/3_Launch_overhead.py", "pages/4_Cold_start.py"]
)
def test_a_chart_gets_a_new_element_id_when_its_figure_changes(page):
    """Streamlit's Plotly element draws a figure once per element id, so a chart whose figure
    changed must carry a new id (the browser test test_charts_follow_changes sees the redraw);
    a rerun that changes nothing keeps every id (nothing is re-mounted)."""

    at = page_test(page, timeout=120)
    at.run()
    before = [c.proto.id for c in at.get("plotly_chart")]
    at.run()
    assert [c.proto.id for c in at.get("plotly_chart")] == before
    at.number_input(key="w_gpus").set_value(2).run()
    assert not at.exception
    after = [c.proto.id for c in at.get("plotly_chart")]
    assert len(set(after)) == len(after)
    assert not set(before) & set(after)
