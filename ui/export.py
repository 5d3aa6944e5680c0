"""Review-ready exports: file names after the scenario, clean CSV and YAML downloads that carry
the share link, chart captions and download settings, the one-file HTML report, and the print
stylesheet.

Pure functions first (no streamlit: tests call them directly); the few that read or draw the
session are at the end (:func:`remember`, :func:`context`, :func:`chart_format`,
:func:`sidebar_section`).

- **Names.** Every file is ``<scenario>-<page>-<what>.<ext>``; ``<scenario>`` is the model,
  dtype, GPUs × hardware and batch, plus six hex digits of a hash of the share link's query, so
  two scenarios that differ anywhere else (context, engine, a baseline) never collide.
- **CSV.** The first line is a comment, ``# <scenario label> · <share link>``; floats keep 6
  significant digits (``6.785``, not ``6.784999999999999``) and integral columns are written as
  integers (pandas ``Int64``). The figures table is wide: one row per scenario (and one for the
  pinned baseline), one typed column per ``section.figure``.
- **Charts.** Each chart carries a caption under its legend (the scenario and the link, small
  and grey) and downloads from its camera button as PNG or SVG at a fixed size that fits the
  title, legend and caption.
- **Report.** :func:`build_report` writes one self-contained HTML file: every lens's headline
  figures (with their change against the baseline), the lenses' main charts as interactive
  Plotly (plotly.js inlined once), the tables, the assumptions and their sources, the scenario
  YAML and the link. It opens offline; every piece of user text is escaped.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import html
import io
import json
import math
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

import numpy as np
import pandas as pd

from model import codecs
from model.cold_start import columns_rows
from model.scenario import Scenario
from ui.chart_common import SpecFigure, figure
from ui.text import plotly_text, scenario_label

# ---------------------------------------------------------------------------------------------
# Names

#: characters a file name keeps (everything else becomes '-')
_UNSAFE = re.compile(r"[^a-z0-9.]+")
HASH_DIGITS = 6


def slug(text: object, limit: int = 40) -> str:
    """Lower-case letters, digits, '.' and '-' only; no leading or trailing '-' or '.'."""
    out = _UNSAFE.sub("-", str(text).lower()).strip("-.")
    return out[:limit].strip("-.") or "x"


def link_hash(link: str) -> str:
    """Six hex digits of the link's query (the scenario and what the link carries beside it,
    not the host or the page), so the same scenario gets the same name on every page."""
    query = urlsplit(link).query
    return hashlib.sha256(query.encode("utf-8")).hexdigest()[:HASH_DIGITS]


def scenario_slug(s: Scenario, link: str) -> str:
    """``llama-3.1-70b-fp8-4xh100-sxm-b1-3fa2c1``: model, dtype, GPUs × hardware, batch and the
    link's hash. An inline model or part (id ``custom``) is named by its name."""
    s = s.effective()
    model = s.model.id if s.model.id != "custom" else s.model.name
    hardware = s.hardware.id if s.hardware.id != "custom" else s.hardware.name
    parts = [
        slug(model),
        slug(s.weights_dtype),
        f"{s.gpus}x{slug(hardware)}",
        f"b{s.batch}",
        link_hash(link),
    ]
    return "-".join(parts)


def file_name(scenario: str, page: str, what: str, ext: str) -> str:
    """``<scenario>-<page>-<what>.<ext>``, every part made safe."""
    return f"{scenario}-{slug(page)}-{slug(what)}.{slug(ext)}"


def one_line(text: object) -> str:
    """Text on one line (a comment line of a CSV or YAML file must not break)."""
    return re.sub(r"[\x00-\x1f\x7f\u2028\u2029]+", " ", str(text)).strip()


@dataclass(frozen=True)
class Context:
    """What every export of a page run names: the page key, the scenario's label and share
    link, and the scenario's file-name slug."""

    page: str
    label: str
    link: str
    slug: str
    base_label: str | None = None  #: the pinned baseline's label, or None

    @property
    def comment(self) -> str:
        """``<scenario label> · <share link>`` on one line."""
        return one_line(f"{self.label} · {self.link}")

    def file(self, what: str, ext: str, page: str | None = None) -> str:
        return file_name(self.slug, page or self.page, what, ext)

    def chart_file(self, name: str) -> str:
        """A chart's download name without its extension (Plotly adds ``.png``/``.svg``)."""
        return f"{self.slug}-{slug(self.page)}-{slug(name)}"


def make_context(s: Scenario, page: str, link: str, baseline: Scenario | None = None) -> Context:
    return Context(
        page=page,
        label=scenario_label(s),
        link=link,
        slug=scenario_slug(s, link),
        base_label=None if baseline is None else scenario_label(baseline),
    )


# ---------------------------------------------------------------------------------------------
# Numbers and CSV

SIG_DIGITS = 6


def clean_float(x: float) -> float:
    """``x`` with :data:`SIG_DIGITS` significant digits: its shortest repr has no float noise
    (6.784999999999999 → 6.785); NaN and infinities stay."""
    if not math.isfinite(x) or x == 0:
        return x
    return float(f"{x:.{SIG_DIGITS}g}")


def _integral(values: np.ndarray) -> bool:
    finite = values[~np.isnan(values)]
    return (
        bool(finite.size)
        and bool(np.all(np.isfinite(finite)) and np.all(finite == np.round(finite)))
        and bool(np.all(np.abs(finite) < 2**53))
    )


def _clean_column(col: pd.Series) -> pd.Series:
    """One column typed: integral numbers as ``Int64``, other numbers rounded to
    :data:`SIG_DIGITS` significant digits, booleans as ``boolean``, the rest as text."""
    if pd.api.types.is_bool_dtype(col):
        return col
    if pd.api.types.is_integer_dtype(col):
        return col.astype("Int64")
    if pd.api.types.is_float_dtype(col):
        values = col.to_numpy(dtype=float, na_value=np.nan)
        if _integral(values):
            return col.astype("Int64")
        return pd.Series([clean_float(v) for v in values], index=col.index, dtype=float)
    # object or text: numbers hide in it (a list of dicts), so type it by its values
    values = [v for v in col.tolist() if not _missing(v)]
    if values and all(isinstance(v, (bool, np.bool_)) for v in values):
        return col.astype("boolean")
    if values and all(_is_number(v) for v in values):
        return _clean_column(pd.Series(col.tolist(), index=col.index, dtype=float))
    return col.map(lambda v: v if _missing(v) else _text(v)).astype("string")


def _missing(v) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(
        v, (bool, np.bool_)
    )


def _text(v) -> str:
    if isinstance(v, float):
        return f"{clean_float(v)!r}"
    if isinstance(v, (list, tuple)):
        return ", ".join(_text(x) for x in v)
    return str(v)


def clean_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Every column typed and rounded (see :func:`_clean_column`)."""
    return pd.DataFrame({c: _clean_column(frame[c]) for c in frame.columns}, index=frame.index)


def csv_text(frame: pd.DataFrame, comment: str | None = None) -> str:
    """The frame as CSV, numbers clean; the first line ``# <comment>`` when one is given
    (``pandas.read_csv(..., comment="#")`` or ``skiprows=1`` reads it back)."""
    buf = io.StringIO()
    if comment:
        buf.write(f"# {one_line(comment)}\n")
    clean_frame(frame).to_csv(buf, index=False)
    return buf.getvalue()


def yaml_text(s: Scenario, ctx: Context) -> str:
    """The scenario YAML after two comment lines: the scenario's label and ``# link: <share
    link>`` (``yaml.safe_load`` ignores both)."""
    return f"# {one_line(ctx.label)}\n# link: {one_line(ctx.link)}\n" + codecs.to_yaml(s)


def _flat(prefix: str, value) -> dict:
    if isinstance(value, dict):
        out: dict = {}
        for k, v in value.items():
            out.update(_flat(f"{prefix}.{k}", v))
        return out
    return {prefix: value}


def flat_figures(figures: dict, sections: tuple[str, ...]) -> dict:
    """``{"section.figure": value}`` of the named sections (nested dicts flattened further,
    ``cold_start.sublines.weights``); a section the figures lack is skipped."""
    out: dict = {}
    for sec in sections:
        if isinstance(figures.get(sec), dict):
            out.update(_flat(sec, figures[sec]))
    return out


def wide_figures(rows: list[tuple[str, str, dict]], sections: tuple[str, ...]) -> pd.DataFrame:
    """One row per ``(role, label, figures)`` (this scenario, the baseline), columns ``scenario``
    (the role), ``label`` and one per ``section.figure``, typed (:func:`clean_frame`)."""
    records = [
        {"scenario": role, "label": label, **flat_figures(figs, sections)}
        for role, label, figs in rows
    ]
    return clean_frame(pd.DataFrame(records))


def long_figures(
    figures: dict, sections: tuple[str, ...], base: dict | None = None
) -> pd.DataFrame:
    """The figures as rows (section, figure, value; and the baseline's value when ``base`` is
    given), values as text with 6 significant digits: the on-screen breakdown table."""
    mine = flat_figures(figures, sections)
    theirs = flat_figures(base, sections) if base is not None else {}
    rows = []
    for key, value in mine.items():
        sec, _, fig = key.partition(".")
        row = {"section": sec, "figure": fig, "value": shown(value)}
        if base is not None:
            row["baseline"] = shown(theirs.get(key))
        rows.append(row)
    return pd.DataFrame(rows, columns=["section", "figure", "value"] + (["baseline"] * bool(base)))


def shown(value) -> str:
    """A figure as text: floats with 6 significant digits, integers as integers, lists joined."""
    if value is None:
        return "–"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isfinite(v) and v == round(v) and abs(v) < 1e15:
            return f"{int(v):,}"
        return f"{v:.6g}"
    return _text(value)


# ---------------------------------------------------------------------------------------------
# Charts

CHART_WIDTH = 1200  #: a downloaded chart's width [px] (at scale 2: 2400 px)
CHART_SCALE = 2
CAPTION_LINE_PX = 14
CAPTION_PAD_PX = 8
CAPTION_CHARS = 90  #: characters per caption line (fits a half-width chart)
LINK_LINES = 6  #: at most this many lines of link (a longer one ends with '…')
CAPTION_FONT_PX = 10
CAPTION_COLOR = "#6b6b6b"
EXPORT_FONT = "Arial, 'Liberation Sans', Helvetica, sans-serif"
FORMATS = ("PNG", "SVG")


def _wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken after a space or a URL's
    separator where one is near the end of a line, else at the width."""
    lines = []
    while len(text) > width:
        cut = max(text.rfind(ch, width // 2, width) for ch in " &?/·")
        cut = cut + 1 if cut > 0 else width
        lines.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    return lines + [text]


def caption_lines(label: str | list[str], link: str) -> list[str]:
    """The caption's lines as Plotly text (escaped): ``label`` (the scenario; a list: one line
    each) then the link, each wrapped at :data:`CAPTION_CHARS` characters, the link at most
    :data:`LINK_LINES` lines (a longer one ends with '…')."""
    labels = [label] if isinstance(label, str) else list(label)
    lines = [line for text in labels for line in _wrap(one_line(text), CAPTION_CHARS)]
    chunks = _wrap(one_line(link), CAPTION_CHARS)
    if len(chunks) > LINK_LINES:
        chunks = chunks[:LINK_LINES]
        chunks[-1] = chunks[-1][:-1] + "…"
    return [plotly_text(c) for c in lines + chunks if c]


def captioned(fig: SpecFigure, label: str | list[str], link: str) -> SpecFigure:
    """``fig`` with the caption (:func:`caption_lines`) in small grey text under its title
    (Plotly's subtitle): the figure grows by the caption's height, the top margin with it, so
    the plot, the axes and the legend keep their places and sizes. Under the title the caption
    never meets the legend, whose rows depend on the width the chart is drawn at."""
    spec = fig.spec
    layout = dict(spec["layout"])
    lines = caption_lines(label, link)
    extra = CAPTION_LINE_PX * len(lines) + CAPTION_PAD_PX
    height = int(layout.get("height") or 450)
    margin = {"l": 80, "r": 80, "t": 100, "b": 80, **(layout.get("margin") or {})}
    margin["t"] = int(margin["t"]) + extra
    title = layout.get("title") or {}
    title = dict(title) if isinstance(title, dict) else {"text": str(title)}
    title["font"] = {"family": EXPORT_FONT, **(title.get("font") or {})}
    title["subtitle"] = {
        "text": "<br>".join(lines),
        "font": {"family": EXPORT_FONT, "size": CAPTION_FONT_PX, "color": CAPTION_COLOR},
    }
    layout["title"] = title
    layout["margin"] = margin
    # a font every browser and image viewer has: a downloaded image is drawn without the page's
    # web fonts, and text measured in one font and drawn in another overruns the legend
    layout["font"] = {"family": EXPORT_FONT, **(layout.get("font") or {})}
    layout["height"] = height + extra
    legend = dict(layout.get("legend") or {})
    if legend.get("yref") == "container" and legend.get("yanchor", "auto") in ("bottom", "auto"):
        # a legend placed in the figure's coordinates keeps its distance from the bottom
        legend["y"] = float(legend.get("y", 0.0)) * height / (height + extra)
        layout["legend"] = legend
    return figure(spec["data"], layout)


def compact_baseline(fig: SpecFigure) -> SpecFigure:
    """A figure with the baseline overlaid (:func:`ui.baseline_charts.overlay`) with one legend
    entry for the baseline instead of one per trace (a dozen dashed twins push the legend past
    the figure): the baseline's traces leave the legend, and one line-only entry, "baseline
    (dashed)", shows and hides them all (the group toggles together)."""
    from ui.baseline_charts import BASELINE_GROUP

    data, seen = [], False
    for tr in fig.spec["data"]:
        if tr.get("legendgroup") == BASELINE_GROUP:
            tr = {k: v for k, v in tr.items() if k != "legendgrouptitle"}
            tr["showlegend"] = False
            seen = True
        data.append(tr)
    if not seen:
        return fig
    data.append(
        {
            "type": "scatter",
            "x": [None],
            "y": [None],
            "mode": "lines",
            "name": "baseline (dashed)",
            "legendgroup": BASELINE_GROUP,
            "showlegend": True,
            "hoverinfo": "skip",
            "line": {"dash": "dash", "color": "#888888", "width": 2},
        }
    )
    return figure(data, fig.spec["layout"])


def chart_config(filename: str, fmt: str, fig: SpecFigure) -> dict:
    """Plotly's ``config`` for a chart: the camera button downloads ``filename`` as ``fmt``
    (PNG or SVG) at :data:`CHART_WIDTH` × the figure's height, scale 2."""
    fmt = fmt.lower() if fmt and fmt.upper() in FORMATS else "png"
    height = int(fig.spec["layout"].get("height") or 450)
    return {
        "displaylogo": False,
        "toImageButtonOptions": {
            "format": fmt,
            "filename": filename,
            "width": CHART_WIDTH,
            "height": height,
            "scale": CHART_SCALE,
        },
    }


# ---------------------------------------------------------------------------------------------
# Print

#: the print stylesheet of every page: only this constant, never user text
PRINT_CSS = """
@page { size: A4 landscape; margin: 12mm; }
@media print {
  [data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
  [data-testid="stHeader"], header, [data-testid="stToolbar"], [data-testid="stDecoration"],
  [data-testid="stStatusWidget"], [data-testid="stDownloadButton"], [data-testid="stButton"],
  [data-testid="stPopover"], [data-testid="stFileUploader"], [data-testid="stPageLink"],
  [data-testid="stElementToolbar"], [data-testid="stChatInput"], .modebar-container, .modebar,
  [data-testid="stFileUploaderDropzone"], [data-testid="stBaseButton-headerNoPadding"] {
    display: none !important;
  }
  html, body, #root, .stApp, [data-testid="stApp"], [data-testid="stAppViewContainer"],
  [data-testid="stMain"], [data-testid="stMainBlockContainer"], section.main {
    height: auto !important; min-height: 0 !important; max-height: none !important;
    overflow: visible !important; position: static !important;
  }
  [data-testid="stAppViewContainer"] { inset: auto !important; }
  [data-testid="stMainBlockContainer"] {
    padding: 0 !important; max-width: 100% !important; width: 100% !important;
  }
  [data-testid="stPlotlyChart"], .stPlotlyChart, .js-plotly-plot, [data-testid="stMetric"],
  [data-testid="stImage"], [data-testid="stAlert"], [data-testid="stCode"], pre, figure {
    break-inside: avoid; page-break-inside: avoid;
  }
  [data-testid="stDataFrame"] { max-width: 100% !important; break-inside: avoid; }
  [data-testid="stTable"], [data-testid="stTable"] > div {
    max-width: 100% !important; overflow: visible !important;
  }
  [class*="st-key-screen_only"] { display: none !important; }
  [class*="st-key-print_only"] { display: block !important; }
  table { display: table !important; width: 100% !important; table-layout: auto !important; }
  tr { break-inside: avoid; }
  th, td { white-space: normal !important; overflow-wrap: anywhere; }
  [data-testid="stExpander"] details > div { display: block !important; }
  a[href] { color: inherit; text-decoration: underline; }
}
"""
#: on screen, a table's printable twin stays hidden (see :data:`PRINT_CSS`)
SCREEN_CSS = '[class*="st-key-print_only"] { display: none; }'
PRINT_STYLE = f"<style>{SCREEN_CSS}\n{PRINT_CSS}</style>"
#: keys of the containers of a table drawn twice: a scrolling grid on screen (the grid prints
#: only the rows in view) and its full HTML twin on paper
SCREEN_ONLY, PRINT_ONLY = "screen_only", "print_only"


# ---------------------------------------------------------------------------------------------
# Report


def _lens_charts(s: Scenario, lenses: dict) -> dict[str, list[tuple[str, SpecFigure]]]:
    """Each lens's main charts, as the pages draw them (without the uploaded measurements)."""
    from ui import cold_charts, economics_charts, launch_charts, roofline_charts

    rl, ll, cl, el = lenses["roofline"], lenses["launch"], lenses["cold_start"], lenses["economics"]
    rf, mem, req = rl["figures"]["roofline"], rl["figures"]["memory"], rl["figures"]["request"]
    lf = ll["figures"]["launch"]
    cs, opt = cl["figures"], cl["columns"]["optimised"]
    eco, svc = el["figures"], el["service"]
    host_s = s.host_ms * 1e-3
    return {
        "roofline": [
            (
                "roofline",
                roofline_charts.roofline_figure(
                    s,
                    rl["sweep"],
                    rl["current_index"],
                    rf["ridge_flop_per_byte"],
                    rf["compute_dtype"],
                    req,
                ),
            ),
            (
                "step-time",
                roofline_charts.step_composition_figure(
                    rl["sweep"],
                    s.batch,
                    rl["ridge_batch"],
                    mem["max_batch"],
                    None if s.cuda_graphs == "none" else max(s.capture_sizes),
                ),
            ),
            ("hbm", roofline_charts.memory_figure(mem)),
        ],
        "launch": [
            ("timeline", launch_charts.timeline_figure(ll["timeline"], host_s, s.launch_model)),
            (
                "timeline-zoom",
                launch_charts.timeline_figure(ll["timeline"], host_s, s.launch_model, zoom=12),
            ),
            (
                "graphs-modes",
                launch_charts.mode_sweep_figure(
                    ll["grid"],
                    ll["modes"],
                    s.batch,
                    s.capture_sizes,
                    ll["grid_waste"],
                    ll["figures"]["memory"]["max_batch"],
                ),
            ),
            (
                "quantised-gain",
                launch_charts.launch_share_figure(
                    ll["share"],
                    lf["kernels"],
                    s.launch_us,
                    s.hardware.hbm_bandwidth_tb_s * s.bw_efficiency,
                ),
            ),
            ("buckets", launch_charts.bucket_figure(ll["buckets"], s.capture_sizes, s.batch)),
        ],
        "cold_start": [
            ("waterfall", cold_charts.waterfall_figure(cs, opt)),
            ("columns", cold_charts.columns_figure(cl["columns"])),
            (
                "weights-timeline",
                cold_charts.weights_timeline_figure(cl["timeline"], cs["overlap"]),
            ),
            (
                "tiers",
                cold_charts.tier_figure(
                    cl["tiers"], cl["concurrency"], s.storage, cs["concurrency"], cs["weights_s"]
                ),
            ),
            ("wake", cold_charts.wake_figure(cs)),
        ],
        "scale_to_zero": [
            ("strategies", economics_charts.strategies_figure(eco)),
            (
                "idle-timeout",
                economics_charts.timeout_figure(
                    el["timeout_sweep"], eco["warm"]["total_usd_per_day"], s.idle_timeout_s
                ),
            ),
            ("day", economics_charts.timeline_figure(el["timeline"])),
            (
                "break-even",
                economics_charts.break_even_figure(
                    el["break_even"],
                    svc.cold_s,
                    svc.cold_optimised_s,
                    eco["break_even_cold_start_s"] or None,
                ),
            ),
        ],
    }


def _lenses(s: Scenario, trace=None) -> dict:
    from model.cold_start import cold_start_lens
    from model.economics import economics_lens
    from model.evaluate import launch_lens, roofline_lens

    return {
        "roofline": roofline_lens(s),
        "launch": launch_lens(s),
        "cold_start": cold_start_lens(s),
        "economics": economics_lens(s, trace),
    }


def _headline_figures(lenses: dict) -> dict:
    """The figures the headline rows (:data:`model.compare.ROWS`) read, from the lenses."""
    from model import compare

    figs = {
        **lenses["roofline"]["figures"],
        "cold_start": lenses["cold_start"]["figures"],
        "cold_start_optimised": lenses["cold_start"]["columns"]["optimised"],
        "economics": lenses["economics"]["figures"],
    }
    return compare._with_best(figs)  # noqa: SLF001 - the compare table's own figures


#: which headline rows (``model.compare.ROWS`` sections) belong to which lens
_HEADLINE_SECTIONS = {
    "roofline": ("Decode", "Request"),
    "launch": ("Launch",),
    "cold_start": ("Cold start",),
    "scale_to_zero": ("Scale to zero",),
}
_TITLES = {
    "roofline": "Roofline",
    "launch": "Launch overhead",
    "cold_start": "Cold start",
    "scale_to_zero": "Scale to zero",
}
#: the breakdown sections each lens's page shows
_BREAKDOWN = {
    "roofline": ("roofline", "decode", "request", "memory"),
    "launch": ("launch", "decode"),
    "cold_start": ("cold_start",),
}


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
    return f"{text} {unit}".strip()


def _change_text(change: float | None) -> str:
    if change is None:
        return ""
    if change == 0:
        return "="
    pct = f"{change:+.0%}" if abs(change) >= 0.01 else f"{change:+.1%}"
    return pct.replace("%", " %")


def _headline_rows(figs: dict, base: dict | None, sections: tuple[str, ...]) -> pd.DataFrame:
    from model import compare

    rows = []
    for row in compare.ROWS:
        if row.section not in sections:
            continue
        value = compare.lookup(figs, row.path)
        item = {"figure": row.label, "this scenario": _value_text(value, row.unit, row.digits)}
        if base is not None:
            other = compare.lookup(base, row.path)
            item["baseline"] = _value_text(other, row.unit, row.digits)
            change = compare.change(value, other)
            same = value == other or (change is not None and abs(change) < 1e-9)
            item["change"] = "=" if same else _change_text(change) or "differs"
        rows.append(item)
    return pd.DataFrame(rows)


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


def build_report(
    s: Scenario,
    link: str,
    baseline: Scenario | None = None,
    trace=None,
    now: dt.datetime | None = None,
    plotly_js: str | None = None,
) -> str:
    """The whole report as one self-contained HTML file (see the module's text): title, the
    scenario and its link, the date, then for each lens its headline figures (and the
    baseline's, with the change), its main charts (interactive; the baseline dashed over them or
    beneath), its tables; the assumptions and their sources; the scenario YAML.

    ``trace``: the Scale to zero page's uploaded trace (None: the scenario's traffic profile).
    ``plotly_js``: the plotly.js source to inline (default: the installed plotly package's).
    No streamlit here: every input is an argument."""
    from ui import baseline_charts
    from ui.economics_view import strategy_table
    from ui.layout import assumptions

    s = s.effective()
    b = baseline.effective() if baseline is not None else None
    now = now or dt.datetime.now(dt.UTC)
    if plotly_js is None:
        from plotly.offline import get_plotlyjs

        plotly_js = get_plotlyjs()
    ctx = make_context(s, "report", link, b)
    lenses = _lenses(s, trace)
    base_lenses = _lenses(b, trace) if b is not None else None
    charts = _lens_charts(s, lenses)
    base_charts = _lens_charts(b, base_lenses) if b is not None else None
    figs = _headline_figures(lenses)
    base_figs = _headline_figures(base_lenses) if base_lenses is not None else None
    overlaid = [ctx.label, f"dashed: baseline {ctx.base_label}"]

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
    if b is not None:
        out.append(f'<p class="meta"><b>Baseline (pinned):</b> {esc(ctx.base_label)}</p>')
    out.append(f'<p class="meta"><b>Made:</b> {esc(now.strftime("%Y-%m-%d %H:%M %Z").strip())}</p>')
    nav = [f'<li><a href="#{key}">{esc(title)}</a></li>' for key, title in _TITLES.items()]
    nav += ['<li><a href="#assumptions">Assumptions and sources</a></li>']
    nav += ['<li><a href="#yaml">Scenario YAML</a></li>']
    out.append(f"<nav><ul>{''.join(nav)}</ul></nav>")

    tables = _lens_tables(s, lenses, strategy_table)
    index = 0
    for key, title in _TITLES.items():
        out.append(f'<h2 id="{key}">{esc(title)}</h2>')
        out.append("<h3>Headline figures</h3>")
        out.append(_table_html(_headline_rows(figs, base_figs, _HEADLINE_SECTIONS[key]), "metrics"))
        for i, (name, fig) in enumerate(charts[key]):
            filename = ctx.file(name, "png", key)[: -len(".png")]
            base = base_charts[key][i][1] if base_charts is not None else None
            if (
                base is not None
                and baseline_charts.can_overlay(fig)
                and baseline_charts.can_overlay(base)
            ):
                both = compact_baseline(baseline_charts.overlay(fig, base))
                shown_figs = [(both, overlaid, filename)]
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
        if key in _BREAKDOWN:
            base_figures = base_lenses[key]["figures"] if base_lenses is not None else None
            if key == "cold_start":
                mine = {"cold_start": lenses[key]["figures"]}
                base_figures = base_figures and {"cold_start": base_figures}
            else:
                mine = lenses[key]["figures"]
            out.append("<h3>Breakdown</h3>")
            out.append(_table_html(long_figures(mine, _BREAKDOWN[key], base_figures)))
        for name, frame in tables[key]:
            out.append(f"<h3>{esc(name)}</h3>")
            out.append(_table_html(frame))

    out.append('<h2 id="assumptions">Assumptions and sources</h2>')
    out.append(f"<p><b>Decode and requests:</b> {esc(_md_plain(assumptions(s, 'decode')))}</p>")
    out.append(f"<p><b>Cold start:</b> {esc(_md_plain(assumptions(s, 'cold_start')))}</p>")
    out.append(_sources_html(s))
    out.append('<h2 id="yaml">Scenario YAML</h2>')
    out.append(f"<pre>{esc(yaml_text(s, ctx))}</pre>")
    if b is not None:
        out.append("<h3>Baseline YAML</h3>")
        out.append(f"<pre>{esc(codecs.to_yaml(b))}</pre>")
    out.append("</body></html>")
    return "\n".join(out)


def _lens_tables(s: Scenario, lenses: dict, strategy_table) -> dict[str, list]:
    cl = lenses["cold_start"]
    columns = pd.DataFrame(columns_rows(cl["columns"]))
    return {
        "roofline": [
            (
                "BF16/INT4 × CUDA graphs",
                pd.DataFrame(lenses["roofline"]["seed_table"]),
            )
        ],
        "launch": [("Graphs modes at this batch", pd.DataFrame(lenses["launch"]["mode_table"]))],
        "cold_start": [
            ("The four columns, item by item [s]", columns),
            ("Each optimisation alone", pd.DataFrame(cl["savings"])),
        ],
        "scale_to_zero": [("Strategies", strategy_table(lenses["economics"]["figures"]))],
    }


# ---------------------------------------------------------------------------------------------
# The session (streamlit from here on)

_RUN = "_whatif_export_run"  #: this run's (scenario, page, Context or None)
FORMAT_KEY = "w_chart_format"


def remember(s: Scenario, page: str) -> None:
    """Keep this run's scenario and page (``page_scenario`` calls it): the charts and the
    downloads name their files after them."""
    import streamlit as st

    st.session_state[_RUN] = [s, page, None]


def context(s: Scenario | None = None, page: str = "home") -> Context | None:
    """This run's :class:`Context` (made once per run), or one for ``s`` on ``page`` when no
    page has called :func:`remember`; None when there is neither."""
    import streamlit as st

    from ui import state

    run = st.session_state.get(_RUN)
    if run is None:
        if s is None:
            return None
        run = [s, page, None]
    if run[2] is None:
        scenario, key = run[0], run[1]
        run[2] = make_context(scenario, key, state.share_link(scenario, key), state.baseline())
    return run[2]


def chart_format() -> str:
    """The format the charts' camera button downloads (the sidebar's choice; PNG by default)."""
    import streamlit as st

    value = st.session_state.get(FORMAT_KEY)
    return value if value in FORMATS else "PNG"


def sidebar_section(s: Scenario, page: str) -> None:
    """The sidebar's Export block (``sidebar()`` ends with it): the report download, made only
    when clicked, and the charts' download format; and the page's print stylesheet."""
    import streamlit as st

    from ui import state

    st.html(PRINT_STYLE)  # a constant: no user text
    ctx = context(s, page)
    baseline = state.baseline()
    from ui import economics_view

    trace = economics_view.trace()  # the Scale to zero page's upload, if any
    sb = st.sidebar
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
