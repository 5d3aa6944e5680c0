"""Review-ready exports: file names after the scenario, clean CSV and YAML downloads that carry
the share link, chart captions and download settings, and the print stylesheet (the one-file
HTML report that uses them is :mod:`ui.report`).

Pure functions first (no streamlit: tests call them directly); the few that read the session
are at the end (:func:`remember`, :func:`context`, :func:`chart_format`).

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
"""

from __future__ import annotations

import hashlib
import io
import math
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

import numpy as np
import pandas as pd

from model import codecs
from model.scenario import Scenario
from ui.chart_common import SpecFigure, figure
from ui.text import figure_words, plotly_text, scenario_label

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
    from ui.lenses import PAGE_OF  # the declarations import the chart builders, which import this

    page_of = PAGE_OF.get(page)
    batch = page_of is None or page_of.batch  # a lens that ignores the batch does not name it
    return Context(
        page=page,
        label=scenario_label(s, batch),
        link=link,
        slug=scenario_slug(s, link),
        base_label=None if baseline is None else scenario_label(baseline, batch),
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
    return col.map(
        lambda v: v if _missing(v) else _text(v) if _is_number(v) else neutral(_text(v))
    ).astype("string")


#: how a spreadsheet recognises a formula (or a DDE call): a cell starting with one of these
#: (OWASP, "CSV Injection"); user text starting so is written with a leading apostrophe, which
#: every spreadsheet shows as text and drops from the cell's value
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_CELL_BREAK = re.compile(r"([,;\t][\s'\"]*)(?=[=+\-@])")


_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def neutral(text: str) -> str:
    """Text that a spreadsheet cannot take for a formula: ``'=1+1`` for ``=1+1`` (and for
    `` =1+1``: some spreadsheets trim a cell before reading it); other text, and a plain number
    written as text (``-0.5``), as it is."""
    if text.lstrip(" ").startswith(FORMULA_START) and not _NUMBER.fullmatch(text.strip()):
        text = "'" + text
    # a spreadsheet set to split at semicolons or tabs (a comma-decimal locale) sees a cell
    # after each of them: none of those may start like a formula either
    return _CELL_BREAK.sub(lambda m: m.group(1) + "'", text)


def neutral_line(text: str) -> str:
    """A comment line a spreadsheet may split at commas, semicolons or tabs: its double quotes
    become single ones (a quoted field could otherwise hold a formula past any check, as
    ``a,"=HYPERLINK(…)",b`` does), and every piece after a break that would start like a formula
    starts with an apostrophe instead."""
    return neutral(text.replace('"', "'"))


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
    """Every column typed and rounded (see :func:`_clean_column`), text cells and column names
    that would start like a formula neutralised (:func:`neutral`)."""
    return pd.DataFrame(
        {neutral(str(c)): _clean_column(frame[c]) for c in frame.columns}, index=frame.index
    )


def csv_text(frame: pd.DataFrame, comment: str | None = None) -> str:
    """The frame as CSV, numbers clean, user text safe to open in a spreadsheet; the first line
    ``# <comment>`` when one is given (``pandas.read_csv(..., comment="#")`` or ``skiprows=1``
    reads it back)."""
    buf = io.StringIO()
    if comment:
        buf.write(f"# {neutral_line(one_line(comment))}\n")
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
    """The figures as rows (section, the figure in words, its key as the JSON and CSV name it,
    value; and the baseline's value when ``base`` is given), values as text with 6 significant
    digits: the on-screen breakdown table."""
    mine = flat_figures(figures, sections)
    theirs = flat_figures(base, sections) if base is not None else {}
    rows = []
    for key, value in mine.items():
        sec, _, fig = key.partition(".")
        row = {"section": sec, "figure": figure_words(fig), "key": fig, "value": shown(value)}
        if base is not None:
            row["baseline"] = shown(theirs.get(key))
        rows.append(row)
    columns = ["section", "figure", "key", "value"] + (["baseline"] * bool(base))
    return pd.DataFrame(rows, columns=columns)


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


def caption_chars(share: float) -> int:
    """Characters per caption line for a chart drawn over ``share`` of the page's width
    (:data:`CAPTION_CHARS` fits a half; a narrower column gets fewer, none more)."""
    return max(40, min(CAPTION_CHARS, int(CAPTION_CHARS * share / 0.5 * 0.92)))


def caption_lines(label: str | list[str], link: str, chars: int = CAPTION_CHARS) -> list[str]:
    """The caption's lines as Plotly text (escaped): ``label`` (the scenario; a list: one line
    each) then the link, each wrapped at :data:`CAPTION_CHARS` characters, the link at most
    :data:`LINK_LINES` lines (a longer one ends with '…')."""
    labels = [label] if isinstance(label, str) else list(label)
    lines = [line for text in labels for line in _wrap(one_line(text), chars)]
    chunks = _wrap(one_line(link), chars)
    if len(chunks) > LINK_LINES:
        chunks = chunks[:LINK_LINES]
        chunks[-1] = chunks[-1][:-1] + "…"
    # the link's lines are wrapped in <a href="#">, only as the hook by which :data:`SCREEN_CSS`
    # hides them on screen (the sidebar has the link); a downloaded or printed chart carries
    # them as text. Not the link itself as the href: Plotly re-encodes an href
    # (encodeURI(decodeURI(…))), which double-encodes a share link's %3D, %2F and the like.
    link_lines = [f'<a href="#">{plotly_text(c)}</a>' for c in chunks if c]
    return [plotly_text(c) for c in lines if c] + link_lines


def captioned(
    fig: SpecFigure, label: str | list[str], link: str, chars: int = CAPTION_CHARS
) -> SpecFigure:
    """``fig`` with the caption (:func:`caption_lines`) in small grey text under its title
    (Plotly's subtitle): the figure grows by the caption's height, the top margin with it, so
    the plot, the axes and the legend keep their places and sizes. Under the title the caption
    never meets the legend, whose rows depend on the width the chart is drawn at."""
    spec = fig.spec
    layout = dict(spec["layout"])
    lines = caption_lines(label, link, chars)
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
#: the key prefix of a row whose items share its width equally (:data:`SCREEN_CSS`)
EQUAL_ROW = "equal_row"
#: on screen, a table's printable twin stays hidden (see :data:`PRINT_CSS`), the items of an
#: equal row (:func:`ui.views.equal_row`) share its width as ``st.columns`` would share it
#: (stacked under 640 px, as columns stack), and a chart's caption keeps its share link for
#: downloads and paper (the sidebar shows it)
SCREEN_CSS = (
    '[class*="st-key-print_only"] { display: none; }\n'
    f'[class*="st-key-{EQUAL_ROW}_"] > div {{ flex: 1 1 0 !important; min-width: 0; }}\n'
    "@media (max-width: 640px) {\n"
    f"  [class*='st-key-{EQUAL_ROW}_'] > div {{ flex: 1 1 100% !important; }}\n}}\n"
    "@media screen { .stPlotlyChart .gtitle-subtitle a { display: none; } }"
)
PRINT_STYLE = f"<style>{SCREEN_CSS}\n{PRINT_CSS}</style>"
#: keys of the containers of a table drawn twice: a scrolling grid on screen (the grid prints
#: only the rows in view) and its full HTML twin on paper
SCREEN_ONLY, PRINT_ONLY = "screen_only", "print_only"


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
