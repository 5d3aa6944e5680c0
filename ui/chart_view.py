"""Every chart of every page goes through :func:`chart`: one place that draws the pinned
baseline with it (:mod:`ui.baseline_charts`), puts the scenario and its share link under the
legend, names the chart's downloads after the scenario and the page (:mod:`ui.export`) and
hands the figure to Streamlit."""

from __future__ import annotations

import streamlit as st

from ui import baseline_charts, export
from ui.chart_common import SpecFigure


def chart(
    fig: SpecFigure, name: str, base: SpecFigure | None = None, where=None, share: float = 0.5
) -> None:
    """Draw ``fig`` (the chart called ``name``: a short slug for its downloads) in ``where``
    (a column or container; the page by default), with the pinned baseline's figure ``base``
    over it (dashed) or, where an overlay would mislead, beneath it. The camera button in its
    toolbar downloads ``<scenario>-<page>-<name>`` as PNG or SVG (the sidebar's choice), at a
    size that fits its title, legend and caption. ``share``: the part of the page's width
    the chart is drawn over (a narrow column wraps its caption shorter)."""
    where = st if where is None else where
    chars = export.caption_chars(share)
    ctx = export.context()
    if base is not None and baseline_charts.can_overlay(fig) and baseline_charts.can_overlay(base):
        both = export.compact_baseline(baseline_charts.overlay(fig, base))
        label = ctx and [ctx.label, f"dashed: baseline {ctx.base_label}"]
        _draw(where, both, name, ctx, label, chars)
        return
    _draw(where, fig, name, ctx, ctx and ctx.label, chars)
    if base is not None:
        label = ctx and f"Baseline: {ctx.base_label}"
        _draw(where, baseline_charts.titled_baseline(base), f"{name}-baseline", ctx, label, chars)


def _draw(where, fig: SpecFigure, name: str, ctx: export.Context | None, label, chars: int) -> None:
    if ctx is None:  # a page that has not called page_scenario: the chart as it is
        where.plotly_chart(fig, width="stretch")
        return
    fig = export.captioned(fig, label, ctx.link, chars)
    config = export.chart_config(ctx.chart_file(name), export.chart_format(), fig)
    # no stable id: Streamlit's id hashes the spec, and its Plotly element draws a figure once
    # per id (it keeps the figure in component state), so a chart must get a new id when its
    # figure changes (tests/browser/test_charts_follow_changes.py)
    where.plotly_chart(fig, width="stretch", config=config)
