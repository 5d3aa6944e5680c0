"""The one-file HTML report: every lens's headline figures (with their change against the
pinned baseline), its charts as interactive Plotly (plotly.js inlined once), its breakdown and
its tables, then the assumptions and their sources, the scenario YAML and the link. It opens
offline; every piece of user text is escaped.

Nothing here names a lens's chart or table: the report draws each lens of
:data:`ui.lenses.LENSES` from its declaration (:mod:`ui.lens`), the same one its page draws,
applied once to the scenario and once to the baseline. :func:`sidebar_section` is the
sidebar's Export block that offers it.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import re

import numpy as np
import pandas as pd
import streamlit as st

from model import codecs
from model.compare import Row, change, lookup
from model.scenario import Scenario
from ui import baseline_charts, economics_view, state
from ui.assumptions import assumptions
from ui.chart_common import SpecFigure
from ui.export import (
    FORMAT_KEY,
    FORMATS,
    PRINT_STYLE,
    _is_number,
    _text,
    captioned,
    chart_config,
    compact_baseline,
    context,
    long_figures,
    make_context,
    shown,
    yaml_text,
)
from ui.lens import Lens, View
from ui.lenses import LENSES


def _value_text(value, unit: str = "", digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, (bool, np.bool_)) or not _is_number(value):
        return str(value)
    v = float(value)
    if isinstance(value, (int, np.integer)) or (v == round(v) and abs(v) >= 1000):
        text = f"{v:,.0f}"
    elif abs(v) >= 10**digits:
        text = f"{v:,.0f}"
    else:
        text = f"{v:.{digits}g}"
    if unit == "$":
        return f"${text}"
    if v == 1 and unit in _SINGULAR:  # "1 replica", not "1 replicas"
        unit = _SINGULAR[unit]
    return f"{text} {unit}".strip()


_SINGULAR = {"replicas": "replica", "GPUs": "GPU", "requests": "request", "graphs": "graph"}


def _change_text(change: float | None) -> str:
    if change is None:
        return ""
    if change == 0:
        return "="
    pct = f"{change:+.0%}" if abs(change) >= 0.01 else f"{change:+.1%}"
    return pct.replace("%", " %")


def _table_html(frame: pd.DataFrame, cls: str = "") -> str:
    """A frame as an HTML table: every cell escaped, numbers as :func:`shown` writes them."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = []
    for record in frame.itertuples(index=False):
        cells = []
        for v in record:
            num = _is_number(v)
            text = shown(v) if num or isinstance(v, (bool, np.bool_)) else _text(v)
            cells.append(f"<td{' class=num' if num else ''}>{html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    klass = f' class="{cls}"' if cls else ""
    return (
        f'<div class="table"><table{klass}><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _script_json(obj) -> str:
    """JSON safe inside a ``<script>`` element: ``<``, ``>``, ``&`` and the two JavaScript line
    separators as escapes, so no text can close the element."""
    from plotly.utils import PlotlyJSONEncoder

    text = json.dumps(obj, cls=PlotlyJSONEncoder)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(ch, esc)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _chart_html(index: int, fig: SpecFigure, filename: str) -> str:
    spec = fig.to_dict()
    config = {**chart_config(filename, "png", fig), "responsive": True}
    height = int(fig.spec["layout"].get("height") or 450)
    div = f"chart-{index}"
    return (
        f'<div class="chart" id="{div}" style="height:{height}px"></div>\n'
        f"<script>Plotly.newPlot({json.dumps(div)}, {_script_json(spec['data'])}, "
        f"{_script_json(spec['layout'])}, {_script_json(config)});</script>"
    )


def _md_plain(text: str) -> str:
    """The app's escaped markdown (``md_escape``, ``**bold**``) as plain text."""
    from ui.text import WORD_JOINER

    text = re.sub(r"\\([!-/:-@\[-`{-~])|\*\*", lambda m: m.group(1) or "", text)
    return text.replace(WORD_JOINER, "")


def _sources_html(s: Scenario) -> str:
    """The engine profile's, the hardware's and the model's sources, escaped."""
    profile, figures = s.engine_profile, s.engine_figures
    parts = [
        f"<h3>Engine profile: {html.escape(profile.name)}, version "
        f"{html.escape(s.engine_version)}</h3>"
    ]
    if profile.description:
        parts.append(f"<p>{html.escape(profile.description)}</p>")
    groups = [
        ("Engine", figures.sources),
        (f"Hardware: {s.hardware.name}", s.hardware.sources),
        (f"Model: {s.model.name}", s.model.sources),
    ]
    for title, sources in groups:
        if title != "Engine":
            parts.append(f"<h3>{html.escape(title)}</h3>")
        if not sources:
            parts.append("<p>No sources given (an inline or modified spec).</p>")
            continue
        items = "".join(
            f"<li><b>{html.escape(str(k))}</b>: {html.escape(str(v))}</li>"
            for k, v in sources.items()
        )
        parts.append(f"<ul>{items}</ul>")
    return "\n".join(parts)


REPORT_CSS = """
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328;
  max-width: 1240px; margin: 24px auto; padding: 0 20px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 21px; margin: 32px 0 8px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
h3 { font-size: 16px; margin: 18px 0 6px; }
.meta { color: #57606a; margin: 2px 0; overflow-wrap: anywhere; }
a { color: #0969da; }
.chart { width: 100%; margin: 12px 0 20px; break-inside: avoid; page-break-inside: avoid; }
.table { overflow-x: auto; margin: 8px 0 16px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; padding: 10px; font-size: 12px;
  white-space: pre-wrap; overflow-wrap: anywhere; }
nav ul { columns: 2; }
@page { size: A4 landscape; margin: 12mm; }
@media print {
  body { max-width: none; margin: 0; padding: 0; font-size: 12px; }
  nav, .modebar-container { display: none !important; }
  .chart, pre, tr, h2, h3 { break-inside: avoid; page-break-inside: avoid; }
  h2, h3 { break-after: avoid; page-break-after: avoid; }
  .table { overflow: visible; }
  table { width: 100%; table-layout: auto; }
  th, td { white-space: normal; overflow-wrap: anywhere; }
  td.num { white-space: nowrap; }
  a { color: inherit; }
}
"""


def _headline_rows(f: dict, base: dict | None, rows: tuple[Row, ...]) -> pd.DataFrame:
    out = []
    for row in rows:
        value = lookup(f, row.path)
        item = {"figure": row.label, "this scenario": _value_text(value, row.unit, row.digits)}
        if base is not None:
            other = lookup(base, row.path)
            item["baseline"] = _value_text(other, row.unit, row.digits)
            rel = change(value, other)
            same = value == other or (rel is not None and abs(rel) < 1e-9)
            item["change"] = "=" if same else _change_text(rel) or "differs"
        out.append(item)
    return pd.DataFrame(out)


def _lens_html(lens: Lens, v: View, ctx, link: str, index: int) -> tuple[list[str], int]:
    """One lens's section: its headline rows, each chart (the baseline dashed over it or
    beneath it), its breakdown and its tables; ``index`` numbers the charts of the report."""
    esc = html.escape
    b = v.base
    out = [f'<h2 id="{lens.key}">{esc(lens.title)}</h2>', "<h3>Headline figures</h3>"]
    out.append(_table_html(_headline_rows(v.f, b and b.f, lens.rows), "metrics"))
    overlaid = [ctx.label, f"dashed: baseline {ctx.base_label}"]
    for c in lens.charts:
        if c.report_name is None:
            continue
        fig = c.build(v)
        base = c.build(b) if b is not None else None
        filename = ctx.file(c.report_name, "png", lens.key)[: -len(".png")]
        if (
            base is not None
            and baseline_charts.can_overlay(fig)
            and baseline_charts.can_overlay(base)
        ):
            shown_figs = [
                (compact_baseline(baseline_charts.overlay(fig, base)), overlaid, filename)
            ]
        else:
            shown_figs = [(fig, ctx.label, filename)]
            if base is not None:
                shown_figs.append(
                    (
                        baseline_charts.titled_baseline(base),
                        f"Baseline: {ctx.base_label}",
                        filename + "-baseline",
                    )
                )
        for f, label, fname in shown_figs:
            out.append(_chart_html(index, captioned(f, label, link), fname))
            index += 1
    if lens.breakdown:
        out.append("<h3>Breakdown</h3>")
        out.append(_table_html(long_figures(v.f, lens.breakdown, b and b.f)))
    for t in lens.tables:
        if t.report is not None:
            out.append(f"<h3>{esc(t.report)}</h3>")
            out.append(_table_html(t.build(v)))
    return out, index


def build_report(
    s: Scenario,
    link: str,
    baseline: Scenario | None = None,
    trace=None,
    now: dt.datetime | None = None,
    plotly_js: str | None = None,
) -> str:
    """The whole report as one self-contained HTML file (see the module's text): title, the
    scenario and its link, the date, then each lens of :data:`ui.lenses.LENSES`; the
    assumptions and their sources; the scenario YAML.

    ``trace``: the Scale to zero page's uploaded trace (None: the scenario's traffic profile).
    ``plotly_js``: the plotly.js source to inline (default: the installed plotly package's).
    No session here: every input is an argument."""
    now = now or dt.datetime.now(dt.UTC)
    if plotly_js is None:
        from plotly.offline import get_plotlyjs

        plotly_js = get_plotlyjs()
    ctx = make_context(s, "report", link, baseline)

    esc = html.escape
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(ctx.label)} · What-If Explorer report</title>",
        f"<style>{REPORT_CSS}</style>",
        f"<script>{plotly_js}</script>",
        "</head><body>",
        "<h1>Inference What-If Explorer: report</h1>",
        f'<p class="meta"><b>Scenario:</b> {esc(ctx.label)}</p>',
        f'<p class="meta"><b>Link:</b> <a href="{esc(link, quote=True)}">{esc(link)}</a></p>',
    ]
    if baseline is not None:
        out.append(f'<p class="meta"><b>Baseline (pinned):</b> {esc(ctx.base_label)}</p>')
    out.append(f'<p class="meta"><b>Made:</b> {esc(now.strftime("%Y-%m-%d %H:%M %Z").strip())}</p>')
    nav = [f'<li><a href="#{lens.key}">{esc(lens.title)}</a></li>' for lens in LENSES]
    nav += ['<li><a href="#assumptions">Assumptions and sources</a></li>']
    nav += ['<li><a href="#yaml">Scenario YAML</a></li>']
    out.append(f"<nav><ul>{''.join(nav)}</ul></nav>")

    index = 0
    for lens in LENSES:
        base = lens.view(baseline, lens.compute(baseline, trace)) if baseline is not None else None
        part, index = _lens_html(lens, lens.view(s, lens.compute(s, trace), base), ctx, link, index)
        out += part

    out.append('<h2 id="assumptions">Assumptions and sources</h2>')
    out.append(f"<p><b>Decode and requests:</b> {esc(_md_plain(assumptions(s, 'decode')))}</p>")
    out.append(f"<p><b>Cold start:</b> {esc(_md_plain(assumptions(s, 'cold_start')))}</p>")
    out.append(_sources_html(s))
    out.append('<h2 id="yaml">Scenario YAML</h2>')
    out.append(f"<pre>{esc(yaml_text(s, ctx))}</pre>")
    if baseline is not None:
        out.append("<h3>Baseline YAML</h3>")
        out.append(f"<pre>{esc(codecs.to_yaml(baseline))}</pre>")
    out.append("</body></html>")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# The session (streamlit from here on)


def sidebar_section(s: Scenario, page: str) -> None:
    """The sidebar's Export block (``sidebar()`` ends with it): the report download, made only
    when clicked, and the charts' download format; and the page's print stylesheet."""
    st.html(PRINT_STYLE)  # a constant: no user text
    ctx = context(s, page)
    baseline = state.baseline()
    trace = economics_view.trace()  # the Scale to zero page's upload, if any
    sb = st  # the sidebar's kit (the caller's ``with``)
    sb.markdown("**Export**")
    sb.download_button(
        "Export report (HTML)",
        lambda: build_report(s, ctx.link, baseline, trace),
        file_name=ctx.file("report", "html", page="all"),
        mime="text/html",
        on_click="ignore",
        icon=":material/description:",
        width="stretch",
        help="One HTML file with every lens's figures, charts (interactive), tables, the "
        "assumptions and their sources, the scenario YAML and this link. It opens offline in "
        "any browser and prints cleanly.",
    )
    sb.radio(
        "Chart downloads",
        FORMATS,
        horizontal=True,
        key=FORMAT_KEY,
        help="What the camera button in a chart's toolbar saves: PNG (2400 px wide) or SVG. "
        "Every chart carries the scenario and this link under its legend.",
    )
