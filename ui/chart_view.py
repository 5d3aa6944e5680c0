"""Every chart of every page goes through :func:`chart`: one place that draws the pinned
baseline with it (:mod:`ui.baseline_charts`), puts the scenario and its share link under the
legend, names the chart's downloads after the scenario and the page (:mod:`ui.export`) and
hands the figure to Streamlit."""

from __future__ import annotations

import contextlib
import threading

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
    with stable_chart_id(f"whatif-chart-{name}"):
        where.plotly_chart(fig, width="stretch", config=config)


_local = threading.local()


@contextlib.contextmanager
def stable_chart_id(ident: str):
    """Give the ``st.plotly_chart`` drawn inside this block the element id ``ident``.

    Streamlit's id for a chart hashes its whole spec, and the frontend keys the chart's React
    component on that id, so every change of any number re-mounts the chart: Plotly draws it
    from scratch (``newPlot``) and sizes it a second time ~0.3 s later. With an id that stays
    the same from run to run, the frontend updates the chart in place (``Plotly.react``). The
    id is this thread's only (a script run's), so other sessions are untouched."""
    _local.ident = _once_this_run(ident)
    try:
        yield
    finally:
        _local.ident = None


def _once_this_run(ident: str) -> str:
    """``ident``, or ``ident-2``, ``-3``, ... for a name drawn again in the same run (two charts
    never share an id; the n-th drawing of a name keeps its id from run to run)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    run = id(getattr(ctx, "cursors", None)) if ctx is not None else None  # reset every run
    if getattr(_local, "run", None) != run:
        _local.run, _local.seen = run, {}
    n = _local.seen[ident] = _local.seen.get(ident, 0) + 1
    return ident if n == 1 else f"{ident}-{n}"


def _install() -> None:
    """Wrap the id function ``st.plotly_chart`` calls (once per process): the spec-hashed id
    is still computed and registered; the chart carries the stable one when a
    :func:`stable_chart_id` block asked for it."""
    try:
        from streamlit.elements import plotly_chart as module
    except ImportError:  # pragma: no cover - a Streamlit without the module: ids as they are
        return
    original = getattr(module, "compute_and_register_element_id", None)
    if original is None or getattr(original, "_whatif", False):
        return

    def compute(*args, **kwargs):
        element_id = original(*args, **kwargs)
        ident = getattr(_local, "ident", None)
        return ident or element_id

    compute._whatif = True
    module.compute_and_register_element_id = compute


_install()
