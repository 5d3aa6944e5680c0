"""What the chart builders of every lens share: the colour-blind-safe palette and the theme's
text colour, the common layout, log axes with full tick values, vertical marks labelled above
the plot, and array conversion.

Chart builders are plain functions from core results to ``plotly.graph_objects.Figure``, one
module per lens (:mod:`ui.roofline_charts`, :mod:`ui.launch_charts`, :mod:`ui.cold_charts`).
No streamlit here, so every chart can be built and checked in a plain test. Figures are built
as one dict and validated once (``go.Figure(dict)``): trace-by-trace ``add_*`` calls cost
tens of milliseconds per chart, which a page that reacts to every widget cannot afford. Builders
return a :class:`SpecFigure`, which hands that dict to Streamlit without a second pass. No
template is set: Streamlit's theme styles the charts, and a named Plotly template alone costs
~9 ms of validation per figure.

Readable by everyone (the issue "Charts that everyone can read"): colours come from
:data:`PALETTE` (Okabe-Ito) and never carry meaning alone; every series also has a marker
symbol, a fill pattern or a direct label. Data lines are drawn solid, so a dash stays free to
mean something else (a pinned baseline drawn as a dashed copy); the few dashed lines are
reference lines (roofs, vertical marks). Axis text is the theme's own text colour (INK) at AA
contrast on light and dark; log axes say 20, 50, 200, never a bare "2".
"""

from __future__ import annotations

import hashlib

import numpy as np
import plotly.graph_objects as go

from model.units import MS

# --- colours ----------------------------------------------------------------------------------
#
# The Okabe-Ito palette (Okabe & Ito 2008, "Color Universal Design"; Wong 2011, Nature Methods
# 8:441): eight colours told apart under the common colour-vision deficiencies. Yellow is left
# out (it does not show on white), and so is black (it does not show on the dark theme): INK
# stands in for it. Colour is never the only cue: every builder adds a marker symbol, a fill
# pattern or a direct label (or a dash, where a chart says so) to each series.
BLUE = "#0072B2"
ORANGE = "#E69F00"
GREEN = "#009E73"
VERMILLION = "#D55E00"
SKY = "#56B4E9"
PURPLE = "#CC79A7"
GREY = "#999999"
LIGHT_GREY = "#CCCCCC"
PALETTE = (BLUE, ORANGE, GREEN, VERMILLION, SKY, PURPLE)

#: Streamlit's placeholders for theme colours: its Plotly theme replaces these strings in the
#: figure's JSON with the colours of the theme on screen (streamlit.elements.lib
#: .streamlit_plotly_theme: GRAY_90 and BG_COLOR; the frontend's PlotlyChart swaps them when
#: ``theme="streamlit"``, the default). INK is the theme's strong text colour (near-black on
#: light, near-white on dark: 14.8:1 and 17.3:1 against the background, measured in
#: Chromium), PAPER its background. Outside Streamlit they render as near-black.
INK = "#000037"
PAPER = "#000038"
HOLLOW = "rgba(0,0,0,0)"  # a bar drawn as its outline only

#: every colour a builder may use (tests/test_a11y_charts.py checks each figure against it)
SAFE_COLORS = frozenset({*PALETTE, GREY, LIGHT_GREY, INK, PAPER, HOLLOW})

COLORS = {
    "memory": BLUE,
    "compute": ORANGE,
    "comm": PURPLE,
    "launch": VERMILLION,
    "host": SKY,
    "tps": GREEN,
    "now": VERMILLION,  # the scenario's own point or line (current batch, this model, ...)
}

#: marker symbols in the order series take them (the second cue of lines and points)
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "star-triangle-up", "cross")
#: fill patterns in the order stacked series take them
PATTERNS = ("", "/", ".", "x", "\\", "-", "+")

#: header rows above the plot area for the labels of vertical marks (one row each) [px]
ROW_PX = 17
TOP_PX = 50
#: a label's width per character at 11 px, and a half-width column's plot width at 1440 px
#: (measured in Chromium: ~5.6 px and ~330 px)
CHAR_PX = 6.0
NARROW_PLOT_PX = 330.0


def base_layout(title: str, legend_rows: int = 2, **extra) -> dict:
    """The common layout: title, and a horizontal legend at the very bottom of the figure
    (in the container's coordinates) with room kept under the x-axis title, so the two never
    overlap; ``legend_rows`` is how many legend lines to make room for. The title sits at the
    very top, so the labels of vertical marks (:func:`add_marks`) fit between it and the
    plot."""
    return {
        "title": {"text": title, "yref": "container", "y": 1, "yanchor": "top", "pad": {"t": 12}},
        "margin": {"l": 60, "r": 30, "t": TOP_PX, "b": 58 + 22 * legend_rows},
        "legend": {
            "orientation": "h",
            "yref": "container",
            "yanchor": "bottom",
            "y": 0.01,
            "xanchor": "left",
            "x": 0,
            "itemsizing": "constant",  # sparse markers (size 0 between) still show in the key
        },
        "height": 520,
        **extra,
    }


def vline(
    x: float,
    text: str,
    line: dict,
    log: bool = False,
    row: int = 0,
    span: tuple[float, float] | None = None,
) -> tuple[list, dict]:
    """A vertical line at ``x`` over the plot and its label in header row ``row`` above the
    plot area, joined to it by a short stem: labels in distinct rows never overlap each other,
    and above the plot they never cover a curve. The label runs right of the line where it
    fits before the end of the axis ``span`` (data units; the plot taken as narrow as in a
    half-width column), else left of it, so it stays over the plot. The figure's top margin
    must make room for the rows (:func:`add_marks` does)."""
    lx = float(np.log10(x)) if log else float(x)
    right_side = False
    if span is not None:
        lo, hi = (np.log10(span[0]), np.log10(span[1])) if log else span
        frac = (lx - lo) / (hi - lo) if hi > lo else 0.0
        need = CHAR_PX * len(text) / NARROW_PLOT_PX  # the label's width, in plot widths
        right_side = 1 - frac < need and frac > 1 - frac
    stem = 4 + ROW_PX * row + 7  # up to the middle of the label's row [px]
    shapes = [
        {
            "type": "line",
            "xref": "x",
            "yref": "paper",
            "x0": x,
            "x1": x,
            "y0": 0,
            "y1": 1,
            "line": line,
        },
        {
            "type": "line",
            "xref": "x",
            "yref": "paper",
            "ysizemode": "pixel",
            "yanchor": 1,
            "x0": x,
            "x1": x,
            "y0": 0,
            "y1": stem,
            "line": {**line, "dash": "solid"},
        },
    ]
    note = {
        "x": lx,
        "y": 1,
        "xref": "x",
        "yref": "paper",
        "yanchor": "bottom",
        "yshift": 4 + ROW_PX * row - 3,
        "xanchor": "right" if right_side else "left",
        "xshift": -2 if right_side else 2,
        "text": text,
        "showarrow": False,
        "font": {"size": 11, "color": INK},
    }
    return shapes, note


def add_marks(
    layout: dict, marks: list, log: bool = False, span: tuple[float, float] | None = None
) -> dict:
    """Vertical marks ``(x, text, line)`` (``x`` None: skipped) on ``layout``'s x axis, one
    header row each above the plot (:func:`vline`), the top margin grown to hold the rows.
    With ``span`` the x axis is fixed to it (2 % padding): Plotly's autorange would otherwise
    widen the axis to make room for the labels' text."""
    if span is not None:
        lo, hi = (float(np.log10(span[0])), float(np.log10(span[1]))) if log else span
        pad = 0.02 * (hi - lo)
        layout.setdefault("xaxis", {}).setdefault("range", [lo - pad, hi + pad])
    shapes = layout.setdefault("shapes", [])
    notes = layout.setdefault("annotations", [])
    row = 0
    for x, text, line in marks:
        if x is None:
            continue
        sh, note = vline(x, text, line, log=log, row=row, span=span)
        shapes.extend(sh)
        notes.append(note)
        row += 1
    margin = layout.setdefault("margin", {})
    margin["t"] = margin.get("t", TOP_PX) + ROW_PX * row
    return layout


def right_axis(title: str) -> dict:
    """A second y axis on the right over the first (a rate beside a time or a cost), its own
    scale from zero, no grid of its own. Its ticks are its own (``tickmode`` auto): the theme
    otherwise puts them where the first axis has its ticks, which over a log first axis reads
    as a dense column of odd values."""
    return {
        "title": {"text": title},
        "tickmode": "auto",
        "overlaying": "y",
        "side": "right",
        "rangemode": "tozero",
        "showgrid": False,
    }


def unfit_band(max_batch: int | None, top: float, lo: float = 1.0) -> tuple[list, list]:
    """A grey band over the batches that do not fit in memory (batch > ``max_batch``) on a
    log batch axis that ends at ``top``, and its mark for :func:`add_marks` (its label in a
    header row, never over the curves); nothing when every batch fits."""
    if max_batch is None or max_batch >= top:
        return [], []
    x0 = max(float(max_batch), lo)
    shape = {
        "type": "rect",
        "xref": "x",
        "yref": "paper",
        "x0": x0,
        "x1": float(top),
        "y0": 0,
        "y1": 1,
        "fillcolor": "rgba(153,153,153,0.25)",
        "line": {"width": 0},
        "layer": "below",
    }
    text = f"batch > {max_batch:,}: does not fit in HBM" if max_batch else "nothing fits in HBM"
    return [shape], [(x0, text, {"color": GREY, "width": 1, "dash": "dot"})]


def sparse_markers(x, symbol: str, n: int = 12, slot: int = 0, slots: int = 4, size=8) -> dict:
    """A line's marker: ``symbol`` at about ``n`` points evenly spaced on a log x axis (sizes
    0 elsewhere), shifted by ``slot`` of ``slots`` so the markers of lines that coincide sit
    side by side instead of on top of each other. The legend shows the symbol (base_layout
    sizes legend items constantly)."""
    x = np.asarray(x, dtype=float)
    sizes = np.zeros(x.size)
    ok = np.isfinite(x) & (x > 0)
    if ok.any():
        lo, hi = np.log10(x[ok].min()), np.log10(x[ok].max())
        step = (hi - lo) / max(n, 1)
        targets = lo + step * (np.arange(n) + (slot + 0.5) / slots)
        logs = np.where(ok, np.log10(np.where(ok, x, 1.0)), np.inf)
        idx = np.unique([int(np.argmin(np.abs(logs - t))) for t in targets])
        sizes[idx] = size
    return {"symbol": symbol, "size": sizes}


def pattern_key(name: str, color: str, pattern: str) -> dict:
    """A legend entry showing a fill pattern (Plotly's key draws a filled area's colour but not
    its pattern; a bar's key draws both): an empty bar trace in the legend group ``name``,
    so clicking it shows or hides the area too. Give the area ``legendgroup=name`` and
    ``showlegend=False``."""
    return {
        "type": "bar",
        "x": [None],
        "y": [None],
        "name": name,
        "legendgroup": name,
        "marker": {"color": color, "pattern": area_pattern(pattern)},
        "hoverinfo": "skip",
    }


def area_pattern(shape: str) -> dict:
    """A fill pattern drawn in the theme's background colour over a fill (stripes, dots)."""
    return {
        "shape": shape,
        "fillmode": "overlay",  # over the fill's colour (the default replaces it)
        "fgcolor": PAPER,
        "fgopacity": 0.5,
        "size": 9,
        "solidity": 0.2,
    }


# --- log axes -------------------------------------------------------------------------------


def _tick_text(v: float) -> str:
    """A tick's full value: 0.02, 5, 200, 2k, 50k, 1M (never a bare mantissa)."""
    for scale, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= scale:
            return f"{v / scale:g}{suffix}"
    return f"{v:g}"


def log_axis(lo: float, hi: float, **extra) -> dict:
    """A log axis whose ticks carry their full values: 1, 2, 5, 10, 20, 50 over a short span,
    1, 10, 100 (every decade) over a long one, every other decade over a very long one; never
    Plotly's bare "2", "5" minor labels, where "3" on a seconds axis may mean 30 s.
    ``lo`` and ``hi`` bound the data (the autorange pads them; ticks are laid a decade past
    both ends, and Plotly draws only those inside the range)."""
    lo, hi = float(lo), float(hi)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo > 0 and hi > 0):
        lo, hi = 1.0, 10.0
    lo, hi = min(lo, hi), max(lo, hi)
    decades = np.log10(hi / lo)
    steps = (1, 2, 5) if decades <= 2.6 else (1, 3) if decades <= 4.2 else (1,)
    every = 2 if decades > 9 else 1
    first, last = int(np.floor(np.log10(lo))) - 1, int(np.ceil(np.log10(hi))) + 1
    vals = [float(m * 10.0**d) for d in range(first, last + 1) if d % every == 0 for m in steps]
    return {
        "type": "log",
        "tickmode": "array",
        "tickvals": vals,
        "ticktext": [_tick_text(v) for v in vals],
        **extra,
    }


def extent(*arrays) -> tuple[float, float]:
    """The positive finite extent of the values in ``arrays`` (for :func:`log_axis`)."""
    vals = np.concatenate([np.ravel(np.asarray(a, dtype=float)) for a in arrays] or [[1.0]])
    vals = vals[np.isfinite(vals) & (vals > 0)]
    return (float(vals.min()), float(vals.max())) if vals.size else (1.0, 10.0)


def as_list(a) -> list:
    return np.asarray(a, dtype=float).round(9).tolist()


def segments(starts, ends, unit: float = MS) -> np.ndarray:
    """x values of one line trace drawing [start, end] segments (in ``unit``, default ms), NaN
    between them (a float array with NaN gaps validates and serialises far faster than a list
    with None)."""
    out = np.full(3 * len(starts), np.nan)
    out[0::3] = np.asarray(starts) / unit
    out[1::3] = np.asarray(ends) / unit
    return out


class SpecFigure(go.Figure):
    """A figure handed to ``st.plotly_chart`` as its finished spec.

    ``st.plotly_chart(fig)`` calls ``fig.to_dict()`` (a deep copy and a walk of every trace),
    and ``go.Figure(spec)`` validates every property first: together 3–16 ms per chart, 121 ms
    for the 13 charts of the three lenses (benchmarks/NOTES-speed.md). This figure skips both:
    ``to_dict`` returns the spec with its arrays as plain lists and ``layout.datarevision`` set
    to a digest of the traces. The plain dict stays in ``spec``; :func:`validated` (used by the
    tests, which check every builder's spec) turns it into an ordinary, validated ``go.Figure``.

    Why plain lists and a data revision: Streamlit's frontend hands a chart to
    ``Plotly.react`` again whenever the page re-renders it (the run's end re-renders every
    element), with freshly parsed arrays; without a data revision Plotly takes new arrays as
    new data and redraws every trace, and with typed arrays (``bdata``) it does so even with
    one. With lists and an unchanged revision the second pass changes nothing: a Batch change
    on the Roofline page went from ~17,400 DOM mutations to ~12,900, its last one 0.2–0.4 s
    sooner (benchmarks/NOTES-speed.md, "Charts drawn once per change").
    """

    def __init__(self, spec: dict):
        # an empty template keeps Plotly from copying its default template into a layout that
        # is never used (to_dict hands Streamlit the spec): 0.65 → 0.12 ms a figure
        super().__init__(layout={"template": {}}, _validate=False)
        object.__setattr__(self, "spec", spec)

    def to_dict(self) -> dict:
        digest = hashlib.blake2b(digest_size=8)
        data = [_plain(t, digest) for t in self.spec["data"]]
        return {"data": data, "layout": {**self.spec["layout"], "datarevision": digest.hexdigest()}}

    def to_plotly_json(self) -> dict:
        return self.to_dict()


def _plain(value, digest):
    """``value`` with its numpy arrays as lists (NaN as None, which Plotly reads as a gap), its
    content fed to ``digest``."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            digest.update(key.encode())
            out[key] = _plain(item, digest)
        return out
    if isinstance(value, np.ndarray):
        digest.update(value.dtype.str.encode() + value.tobytes())
        if value.dtype.kind == "f" and not np.isfinite(value).all():
            return np.where(np.isfinite(value), value, None).tolist()
        return value.tolist()
    if isinstance(value, (list, tuple)):
        if any(isinstance(v, (dict, list, tuple, np.ndarray)) for v in value):
            return [_plain(v, digest) for v in value]
        digest.update(repr(value).encode())  # a flat list (as_list's numbers, labels) at once
        return value
    digest.update(repr(value).encode())
    return value


def readable(layout: dict) -> dict:
    """Axis text at WCAG AA on either theme: tick labels, axis titles and the figure's other
    text (annotations, bar labels) in INK, the theme's strong text colour. Streamlit's own
    Plotly theme draws them in a grey that reads 3.7:1 on the light background (measured in
    Chromium: rgb(128, 132, 149) on white); AA asks 4.5:1."""
    layout.setdefault("font", {}).setdefault("color", INK)
    layout.setdefault("xaxis", {})
    layout.setdefault("yaxis", {})
    for key, axis in layout.items():
        if key.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            axis.setdefault("tickfont", {}).setdefault("color", INK)
            title = axis.setdefault("title", {})
            if isinstance(title, dict):
                title.setdefault("font", {}).setdefault("color", INK)
    return layout


def _few_markers(trace: dict) -> np.ndarray | None:
    """The points a line-and-markers trace marks, when it marks only some of them (a
    :func:`sparse_markers` size array with zeros), else None."""
    mode = trace.get("mode") or ""
    size = (trace.get("marker") or {}).get("size")
    if "lines" not in mode or "markers" not in mode or isinstance(size, (int, float, type(None))):
        return None
    size = np.asarray(size, dtype=float)
    if size.ndim != 1 or not (size == 0).any():
        return None
    return np.flatnonzero(size > 0)


def split_sparse_markers(data: list) -> list:
    """Each line that marks only a few of its points drawn as three traces: the line (all its
    points, its hover), the few markers (no hover) and a legend key showing both, grouped so
    they show and hide together. Plotly draws an SVG node for every point of a trace whose mode
    has markers, size 0 or not: the Launch overhead's mode sweep (four 700-point lines with a
    dozen markers each) held 2,668 nodes and took 197 ms per re-plot in Chromium, 42 ms split
    (48 nodes); what is drawn is the same."""
    out = []
    for t in data:
        idx = _few_markers(t)
        if idx is None:
            out.append(t)
            continue
        marker = dict(t["marker"])
        sizes = np.asarray(marker.pop("size"), dtype=float)
        colour = (t.get("line") or {}).get("color")
        if colour is not None:
            marker.setdefault("color", colour)
        group = t.get("legendgroup") or t.get("name") or f"marked-{len(out)}"
        axes = {k: t[k] for k in ("xaxis", "yaxis") if k in t}
        line = {k: v for k, v in t.items() if k != "marker"}
        line.update(mode="lines", legendgroup=group, showlegend=False)
        out.append(line)
        out.append(
            {
                "type": t.get("type", "scatter"), **axes, "name": t.get("name", ""),
                "x": np.asarray(t["x"])[idx], "y": np.asarray(t["y"], dtype=float)[idx],
                "mode": "markers", "marker": {**marker, "size": sizes[idx]},
                "legendgroup": group, "showlegend": False, "hoverinfo": "skip",
            }
        )  # fmt: skip
        if t.get("showlegend", True) is not False and t.get("name"):
            out.append(
                {
                    "type": t.get("type", "scatter"), **axes, "name": t["name"],
                    "x": [None], "y": [None], "mode": "lines+markers",
                    "line": t.get("line", {}), "marker": {**marker, "size": float(sizes.max())},
                    "legendgroup": group,
                }
            )  # fmt: skip
    return out


def figure(data: list, layout: dict) -> SpecFigure:
    """Every chart builder's return: the traces and the layout as one spec, its text made
    readable on both themes (:func:`readable`), a line's few markers drawn apart from the line
    (:func:`split_sparse_markers`)."""
    return SpecFigure({"data": split_sparse_markers(data), "layout": readable(layout)})


def validated(fig) -> go.Figure:
    """An ordinary ``go.Figure`` of a builder's result, every property checked by Plotly."""
    return go.Figure(fig.spec) if isinstance(fig, SpecFigure) else fig
