"""A lens's declaration (:mod:`ui.lens`) drawn on its page: the core call once for the scenario
and once for the pinned baseline (kept in the session while it is unchanged), then the headline
metrics with their deltas, the charts with the baseline in them, the tables, the breakdown and
the downloads, each by its name in the declaration.

A page reads like a table of contents::

    shown = lens_view.run(ROOFLINE, s)
    shown.metrics("headline")
    shown.chart("roofline", where=left)
"""

from __future__ import annotations

import streamlit as st

from model import codecs
from model.scenario import Scenario
from ui import breakdown, compare, state, views
from ui.chart_view import chart
from ui.lens import Lens, Metric, Page, View, text
from ui.text import BOUND_HELP, fmt


def _compute(lens: Lens, s: Scenario, baseline: bool) -> dict:
    if lens.page_compute is not None:
        return lens.page_compute(s, baseline)
    if not baseline:
        return lens.compute(s, None)
    key = tuple(codecs.to_params(s))
    return state.session_cached(f"_whatif_base_{lens.key}", key, lambda: lens.compute(s, None))


def run(lens: Lens, s: Scenario) -> Shown:
    """``lens`` computed for the scenario ``s`` and, when one is pinned, for the baseline."""
    b = compare.baseline()
    base = None if b is None else lens.view(b, _compute(lens, b, True))
    return Shown(lens, lens.view(s, _compute(lens, s, False), base))


def show(lens: Lens, s: Scenario, r: dict) -> Shown:
    """``lens`` for a result ``r`` the page computed itself (no baseline)."""
    return Shown(lens, lens.view(s, r))


class Shown:
    """One lens on its page: draw its parts by name."""

    def __init__(self, lens: Lens, view: View):
        self.lens = lens
        self.view = view
        self.s, self.r, self.f = view.s, view.r, view.f
        self.base = view.base
        self.deltas = compare.Deltas(view.f, view.base and view.base.f)

    def text(self, name: str) -> str | None:
        """The lens's text ``name`` for this view."""
        return text(self.lens.texts[name], self.view)

    def markdown(self, name: str, where=None) -> None:
        value = self.text(name)
        if value:
            (where or st).markdown(value)

    def caption(self, name: str, where=None) -> None:
        value = self.text(name)
        if value:
            (where or st).caption(value)

    def notice(self, name: str, kind: str = "info") -> None:
        """The lens's text ``name`` as an ``info``, ``warning`` or ``error`` box, where it has
        one for this view."""
        value = self.text(name)
        if value:
            getattr(st, kind)(value)

    def metrics(self, name: str) -> None:
        """The row of metrics ``name``: its lead line, one column per metric shown, its
        caption."""
        row = self.lens.metrics[name]
        v = self.view
        lead = text(row.lead, v)
        if lead:
            st.markdown(lead)
        items = [m for m in row.items if m.when is None or m.when(v)]
        if not items:
            return
        box = views.equal_row(f"{self.lens.key}_{name}")
        for m in items:
            self._metric(box, m)
        caption = text(row.caption, v)
        if caption:
            st.caption(caption)

    def _metric(self, col, m: Metric) -> None:
        v = self.view
        if m.value is not None:
            value = m.value(v)
        else:
            raw = compare.lookup(v.f, m.path)
            value = (m.show or fmt)(raw) if not m.bound else raw
        help_text = BOUND_HELP.get(value) if m.bound else text(m.help, v)
        if m.delta and self.deltas and m.path:
            delta = self.deltas(m.path, m.better, m.unit)
        else:
            delta = m.alone(v) if m.alone is not None else {}
        col.metric(text(m.label, v), value, help=help_text, **delta)

    def figure(self, name: str, baseline: bool = False):
        """The chart ``name``'s figure for the scenario (or the baseline's; None if none)."""
        c = self.lens.chart(name)
        if baseline:
            return None if self.base is None else c.build(self.base)
        return c.build(self.view)

    def chart(self, name: str, where=None, share: float = 0.5) -> None:
        """The chart ``name`` with the session's measurements over it (where it takes them),
        the baseline's chart in it or beneath it, and its note under it; ``share``: the part
        of the page's width it is drawn over (its caption wraps to fit)."""
        c = self.lens.chart(name)
        fig = c.build(self.view)
        if c.measured is not None:
            fig = c.measured(fig, self.view)
        base = c.build(self.base) if self.base is not None and c.page_baseline else None
        chart(fig, c.name, base=base, where=where, share=share)
        note = text(c.note, self.view)
        if note:
            (where or st).caption(note)

    def table(self, name: str, where=None) -> None:
        """The table ``name`` as the page shows it: renamed, formatted columns."""
        t = self.lens.table(name)
        frame = t.build(self.view)
        if t.shown is not None:
            frame = t.shown(frame)
        frame = frame.rename(columns={k: c.label for k, c in t.columns.items()})
        where = where or st
        if t.static:
            where.table(frame, hide_index=True, width="stretch")
            return
        config = {}
        for c in t.columns.values():
            if c.link:
                config[c.label] = st.column_config.LinkColumn(display_text="open")
            elif c.width:
                config[c.label] = st.column_config.TextColumn(width=c.width)
            elif c.format or c.help:
                kw = {"help": c.help} if c.help else {}
                config[c.label] = st.column_config.NumberColumn(format=c.format, **kw)
        kw = {"column_config": config} if config else {}
        where.dataframe(frame, hide_index=True, width="stretch", **kw)

    def downloads(self) -> None:
        """The Breakdown table (when the lens has one) and the download buttons: the scenario
        as YAML, the breakdown as "Figures" and each of the lens's downloaded tables."""
        tables = {}
        if self.lens.breakdown:
            base = self.base and self.base.f
            tables["Figures"] = breakdown.breakdown(self.f, self.lens.breakdown, base)
        for name in self.lens.downloads:
            t = self.lens.table(name)
            tables[t.download] = t.build(self.view)
        breakdown.downloads(self.s, tables, self.lens.slug)


def page_config(page: Page) -> None:
    """The page's browser tab (title and icon) and layout, from its declaration."""
    st.set_page_config(page_title=page.title, page_icon=page.emoji, layout="wide")


def page_tabs(page: Page, labels: list[str] | None = None) -> list:
    """The page's lazy tabs (:func:`ui.views.lazy_tabs`) as it declares them; ``labels`` for
    a page whose tabs depend on what is loaded (Measurements)."""
    return views.lazy_tabs(list(page.tabs) if labels is None else labels, key=page.tab_key)
