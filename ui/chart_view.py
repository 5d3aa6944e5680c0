"""Every chart of every page goes through :func:`chart`: one place that draws the pinned
baseline with it (:mod:`ui.baseline_charts`) and hands the figure to Streamlit."""

from __future__ import annotations

import streamlit as st

from ui import baseline_charts
from ui.chart_common import SpecFigure


def chart(fig: SpecFigure, name: str, base: SpecFigure | None = None, where=None) -> None:
    """Draw ``fig`` (the chart called ``name``: a short slug for its downloads) in ``where``
    (a column or container; the page by default), with the pinned baseline's figure ``base``
    over it (dashed) or, where an overlay would mislead, beneath it."""
    where = st if where is None else where
    if base is not None and baseline_charts.can_overlay(fig) and baseline_charts.can_overlay(base):
        where.plotly_chart(baseline_charts.overlay(fig, base), width="stretch")
        return
    where.plotly_chart(fig, width="stretch")
    if base is not None:
        where.plotly_chart(baseline_charts.titled_baseline(base), width="stretch")
