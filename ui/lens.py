"""The vocabulary a lens is declared in: one :class:`Lens` per lens (``ui/lenses/``) names its
core call, its headline metrics, its charts, its tables, its downloads and its rows of the
Compare table; the page (:mod:`ui.lens_view`), the HTML report (:mod:`ui.report`), the Compare
table (:func:`ui.lenses.compare`) and the baseline's deltas and charts all render from it.

Every callable of a declaration reads one :class:`View`: the scenario as the core computed it
(``v.s``), the core call's whole result (``v.r``) and the lens's figures (``v.f``:
:attr:`Lens.figures` of the result, in the namespace of :func:`model.evaluate.summary`:
``decode.*``, ``cold_start.*``, ``economics.*``…), so a metric's path, its delta against the
baseline and its Compare row name one figure the same way; ``v.base`` is the pinned baseline's
view where a text depends on it.

No streamlit here: declarations are data, and the report renders them without a session.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from model.compare import Row
from model.scenario import Scenario


@dataclass(frozen=True)
class View:
    """A lens computed for one scenario: what every callable of a declaration reads."""

    s: Scenario
    r: dict
    f: dict
    base: View | None = None


Text = str | Callable[[View], str | None] | None


def text(value: Text, v: View) -> str | None:
    """A declaration's text: as it is, or computed from the view."""
    return value(v) if callable(value) else value


@dataclass(frozen=True)
class Figure:
    """One figure, declared once, in the lens that computes it: ``path`` (dotted, in the
    lens's figures), ``label`` (its name in a headline metric), ``name`` (in the Compare table
    and the report; the label where empty), ``unit`` (of the deltas and the table), ``better``
    (``lower``, ``higher`` or None), ``show`` (the metric's format), ``help``, ``bound`` (the
    value is a bound whose meaning is the help) and ``digits`` (significant digits in the
    table). Every metric and Compare row of the figure reads it (:meth:`Metric.of`,
    :meth:`row`), on whichever page it appears."""

    path: str
    label: Text
    name: str = ""
    unit: str = ""
    better: str | None = "lower"
    show: Callable[[Any], str] | None = None
    help: Text = None
    bound: bool = False
    digits: int = 3

    def row(self, section: str) -> Row:
        """The figure's row in the Compare table, under ``section``."""
        label = self.name or self.label
        return Row(section, label, self.path, self.unit, self.better, self.digits)


@dataclass(frozen=True)
class Metric:
    """One headline metric.

    ``path``: the figure it shows (dotted, in the lens's figures) and whose change against the
    pinned baseline is its delta; ``show`` formats that figure, or ``value`` computes the text
    from the view instead. ``better``: ``lower`` (times, costs), ``higher`` (throughput) or
    None (no colour); ``unit`` follows the delta's number. ``delta`` False shows no baseline
    delta; ``alone`` gives the delta shown when no baseline is pinned, or always where ``delta``
    is False (``st.metric`` keyword arguments). ``when``: the metric is shown only where it holds. ``bound``: the value is a
    bound (memory, compute…), its meaning is the help.
    """

    label: Text
    path: str | None = None
    show: Callable[[Any], str] | None = None
    value: Callable[[View], str] | None = None
    better: str | None = "lower"
    unit: str = ""
    help: Text = None
    delta: bool = True
    alone: Callable[[View], dict] | None = None
    when: Callable[[View], bool] | None = None
    bound: bool = False

    @classmethod
    def of(cls, figure: Figure, **presentation) -> Metric:
        """The headline metric of ``figure``, as it declares it; ``presentation``: what this
        place adds (``delta``, ``alone``, ``when``)."""
        return cls(
            label=figure.label,
            path=figure.path,
            show=figure.show,
            better=figure.better,
            unit=figure.unit,
            help=figure.help,
            bound=figure.bound,
            **presentation,
        )


@dataclass(frozen=True)
class Metrics:
    """A row of metrics, with a markdown line above it (``lead``) and a caption below."""

    items: tuple[Metric, ...]
    lead: Text = None
    caption: Text = None


@dataclass(frozen=True)
class Chart:
    """One chart: ``build(v)`` gives its figure (:class:`ui.chart_common.SpecFigure`), for
    the scenario and, the same call, for the pinned baseline.

    ``name``: the slug its downloads are named after on the page. ``report``: its slug in the
    HTML report (True: the same; False: not in the report). ``page_baseline``: the page draws
    the baseline's chart with it (the report always does). ``measured(fig, v)``: the page adds
    the session's uploaded measurements to it (never to the baseline or the report), and
    ``note`` is a caption the page draws under it."""

    name: str
    build: Callable[[View], Any]
    report: str | bool = True
    page_baseline: bool = True
    measured: Callable[[Any, View], Any] | None = None
    note: Text = None

    @property
    def report_name(self) -> str | None:
        if self.report is False:
            return None
        return self.name if self.report is True else self.report


@dataclass(frozen=True)
class Column:
    """How the page shows one column of a table: its label, a number format (``%.3f``,
    ``%.2f×``), a help and a width."""

    label: str
    format: str | None = None
    help: str | None = None
    width: str | None = None
    link: bool = False  # the cells are links (an app-relative share link)


@dataclass(frozen=True)
class Table:
    """One table: ``build(v)`` gives the data, which the downloads and the report use as it
    is. On the page it is shown through ``shown`` (a frame → frame view, e.g. shares as
    percentages) with its ``columns`` renamed and formatted, as a grid, or as a static table
    (``static``) where cells are read whole. ``report``: its title in the report (None: not in
    the report); ``download``: its name among the page's downloads (None: not downloaded)."""

    name: str
    build: Callable[[View], pd.DataFrame]
    columns: dict[str, Column] = field(default_factory=dict)
    shown: Callable[[pd.DataFrame], pd.DataFrame] | None = None
    report: str | None = None
    download: str | None = None
    static: bool = False


@dataclass(frozen=True)
class Page:
    """One page of the app, declared once: the navigation list, the URL path, the browser tab's
    title and icon, the tabs, the golden cases and the contract test all read it.

    ``file``: the script Streamlit discovers (``app.py`` or ``pages/<n>_<Path>.py``; the number
    orders the navigation, the rest is the URL path, Streamlit's own rule); ``label``: its name
    in the navigation; ``icon``: the navigation's Material icon; ``emoji``: the browser tab's
    icon; ``tabs``: the page's tab labels in order, under the widget key ``tab_key`` (a page
    whose tabs depend on what is loaded, such as Measurements, has a ``tab_key`` and no fixed
    ``tabs``; a page without tabs has neither); ``batch``: whether its figures depend on the
    batch (a file name then names it)."""

    key: str
    file: str
    label: str
    icon: str
    emoji: str
    tabs: tuple[str, ...] = ()
    tab_key: str = ""
    batch: bool = True

    @property
    def order(self) -> int:
        """The page's place in the navigation: the number its file name starts with (the
        landing page first)."""
        found = re.match(r"pages/(\d+)_", self.file)
        return int(found.group(1)) if found else 0

    @property
    def url_path(self) -> str:
        """The page's URL path as Streamlit derives it from the file name ("" for the landing
        page)."""
        found = re.match(r"pages/\d+_(.+)\.py$", self.file)
        return found.group(1) if found else ""

    def url(self, base: str) -> str:
        """The page's address on the app at ``base`` (``http://host:port``, or "" for a link
        relative to the app's root): what share links open."""
        return base.rstrip("/") + "/" + self.url_path

    @property
    def title(self) -> str:
        """The browser tab's title."""
        return f"{self.label} · What-If Explorer" if self.order else "Inference What-If Explorer"

    @property
    def has_tabs(self) -> bool:
        return bool(self.tab_key)


@dataclass(frozen=True)
class Lens:
    """One lens, declared once.

    ``compute(s, trace)``: the core call (one call, every figure, chart and table of the lens;
    ``trace`` is the Scale to zero page's uploaded trace or None; None for a lens whose result
    is its page's own, such as the fit of the uploaded measurements); ``page_compute(s, baseline)``
    the same on a page where the session keeps it (default: ``compute``, the baseline's kept
    while it is unchanged). ``figures(r)``: the figures its metrics, deltas, breakdown and rows
    read, in the summary's namespace. ``texts``: the lens's paragraphs and captions, by name. ``metrics``: named rows of headline metrics. ``charts`` and ``tables`` by name, in
    the order the report shows them. ``breakdown``: the figures' sections in the page's
    Breakdown table (the first download, "Figures"); ``downloads``: the tables downloaded beside
    it, by name. ``rows``: the lens's headline figures in the Compare table and the report.
    ``slug``: the page's name in file names; ``title``: its heading in the report; ``page``: its
    page (:class:`Page`); ``order``: its place in the report and the Compare table."""

    page: Page
    title: str
    slug: str
    compute: Callable[[Scenario, Any], dict] | None
    figures: Callable[[dict], dict]
    page_compute: Callable[[Scenario, bool], dict] | None = None
    metrics: dict[str, Metrics] = field(default_factory=dict)
    charts: tuple[Chart, ...] = ()
    tables: tuple[Table, ...] = ()
    breakdown: tuple[str, ...] = ()
    downloads: tuple[str, ...] = ()
    rows: tuple[Row, ...] = ()
    texts: dict[str, Text] = field(default_factory=dict)
    order: int = 0

    @property
    def key(self) -> str:
        """The lens's page key (``roofline``, ``serving``, …)."""
        return self.page.key

    def view(self, s: Scenario, r: dict, base: View | None = None) -> View:
        """The view of the result ``r`` of this lens's core call for ``s``."""
        return View(s, r, self.figures(r), base)

    def chart(self, name: str) -> Chart:
        return _named(self.charts, name, self.key)

    def table(self, name: str) -> Table:
        return _named(self.tables, name, self.key)


def _named(items, name: str, lens: str):
    for item in items:
        if item.name == name:
            return item
    raise KeyError(f"lens {lens!r} declares no {name!r}")
