"""Charts that everyone can read: every builder's figure, for several scenarios and with the
Measurements page's example data, keeps to the colour-blind-safe palette, gives every series a
cue beside its colour, labels log axes with full values, keeps its labels apart and its text at
the theme's strong text colour; the app follows the browser's theme without a Deploy button.

The browser half (rendered colours, contrast, the dark theme) is tests/browser/test_theme.py.
"""

from __future__ import annotations

import re
import tomllib
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from model.calibrate import calibrate, overlay_curves
from model.cold_start import cold_start_lens
from model.economics import economics_lens
from model.overrides import resolve
from model.readers.examples import examples, load_example
from tests.helpers import every_figure
from ui import economics_charts, measure_charts
from ui.chart_common import (
    CHAR_PX,
    INK,
    NARROW_PLOT_PX,
    PAPER,
    ROW_PX,
    SAFE_COLORS,
    _tick_text,
    add_marks,
    base_layout,
    log_axis,
    validated,
)
from ui.cold_charts import waterfall_figure

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = [
    [("scenario", "default")],
    [("scenario", "seed-3b-4090")],
    [("scenario", "seed-70b-fp8-cold-start"), ("loader", "pickle")],
    [("batch", "2048"), ("weights_dtype", "bf16")],
]


def lens_figures(s) -> list:
    """Every figure of the four lens pages for ``s`` (Roofline, Launch, Cold start as the pages
    build them, and Scale to zero)."""
    figs = list(every_figure(s))
    lens = economics_lens(s)
    fig, svc = lens["figures"], lens["service"]
    figs += [
        economics_charts.strategies_figure(fig),
        economics_charts.timeout_figure(
            lens["timeout_sweep"], fig["warm"]["total_usd_per_day"], s.idle_timeout_s
        ),
        economics_charts.timeline_figure(lens["timeline"]),
        economics_charts.break_even_figure(
            lens["break_even"],
            svc.cold_s,
            svc.cold_optimised_s,
            fig["break_even_cold_start_s"] or None,
        ),
    ]
    return figs


def measurement_figures(s) -> list:
    """The Measurements page's figures with every example data set loaded, and the lens charts
    the measured points are drawn over."""
    sets = [load_example(i) for i in examples()]
    cal = calibrate(s, sets)
    curves = overlay_curves(s, cal)
    figs = [
        measure_charts.decode_figure(cal, curves),
        measure_charts.decode_figure(cal, curves, "tokens_per_s"),
        measure_charts.ttft_figure(cal, curves),
        measure_charts.tpot_figure(cal),
        measure_charts.launch_figure(cal, curves),
        measure_charts.cold_figure(cal),
        measure_charts.residual_figure(cal.residual_rows()),
    ]
    cl = cold_start_lens(s)
    figs.append(
        measure_charts.measured_waterfall(
            waterfall_figure(cl["figures"], cl["columns"]["optimised"]),
            {4: 3.0, 5: 20.0},
            cl["figures"],
        )
    )
    step = next(f for f in every_figure(s) if "composition" in f.spec["layout"]["title"]["text"])
    figs.append(
        measure_charts.with_measured(step, [p for p in cal.points if p.quantity == "step_ms"])
    )
    return figs


@pytest.fixture(scope="module", params=range(len(SCENARIOS)), ids=lambda i: SCENARIOS[i][0][1])
def figures(request):
    s = resolve(SCENARIOS[request.param])[0]
    figs = lens_figures(s)
    if request.param == 0:
        figs += measurement_figures(s)
    return figs


def title(fig) -> str:
    t = fig.spec["layout"].get("title", {})
    return t.get("text", "") if isinstance(t, dict) else str(t)


# --- the palette -------------------------------------------------------------------------------

COLOR_KEYS = {"color", "fillcolor", "bgcolor", "bordercolor", "arrowcolor", "fgcolor"}
GREY_RGBA = re.compile(r"rgba\((\d+),\s*\1,\s*\1,\s*[\d.]+\)")  # an achromatic grey


def colours(node, key: str | None = None):
    """Every colour string in a spec (numeric colour arrays map a colour scale: skipped)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "colorscale":
                continue
            yield from colours(v, k)
    elif isinstance(node, (list, tuple)):
        for v in node:
            yield from colours(v, key)
    elif isinstance(node, str):
        if key in COLOR_KEYS:
            yield node
        elif key == "text":  # rich-text colour swatches
            yield from re.findall(r"color:\s*([^;'\"]+)", node)


def test_every_colour_comes_from_the_safe_palette(figures):
    for fig in figures:
        for c in colours(fig.spec):
            assert c in SAFE_COLORS or GREY_RGBA.fullmatch(c), (title(fig), c)


def test_no_trace_falls_back_to_the_themes_colours(figures):
    # Streamlit's categorical colours are not the safe palette: every drawn trace names its own
    for fig in figures:
        for t in fig.spec["data"]:
            if isinstance(t.get("x"), list) and t["x"] == [None]:  # a legend key
                continue
            assert list(colours(t)), (title(fig), t.get("name"))


def test_the_theme_placeholders_are_streamlits():
    from streamlit.elements.lib import streamlit_plotly_theme as theme

    assert INK == theme.GRAY_90  # the frontend swaps it for the theme's strong text colour
    assert PAPER == theme.BG_COLOR  # ... and this one for the background


# --- a second cue beside colour ----------------------------------------------------------------


def _pattern(t) -> str:
    shape = (t.get("marker", {}).get("pattern") or t.get("fillpattern") or {}).get("shape", "")
    return shape if isinstance(shape, str) else tuple(shape)


def _edge(t) -> str:
    """A bar's outline: none, an edge, or only the edge (hollow)."""
    m = t.get("increasing", {}).get("marker") or t.get("marker", {})
    if m.get("color") == "rgba(0,0,0,0)":
        return "hollow"
    return "edge" if (m.get("line") or {}).get("width", 0) else "none"


def cue(t) -> tuple:
    """What tells a trace apart without its colour: its kind of mark, dash, symbol, pattern,
    outline."""
    mode = t.get("mode", "lines" if t.get("type") == "scatter" else "")
    symbol = t.get("marker", {}).get("symbol")
    return (
        t.get("type", "scatter"),
        "lines" in mode,
        "markers" in mode,
        bool(t.get("fill") or t.get("stackgroup")),
        (t.get("line") or {}).get("dash") or "solid",
        tuple(symbol) if isinstance(symbol, list) else symbol,
        _pattern(t),
        _edge(t),
    )


def on_lanes(fig) -> bool:
    """A timeline whose y axis names every lane: the lane says what a bar is."""
    y = fig.spec["layout"].get("yaxis", {})
    return y.get("tickmode") == "array" and bool(y.get("ticktext"))


def test_every_legend_entry_has_a_cue_beside_its_colour(figures):
    for fig in figures:
        if on_lanes(fig):
            continue
        shown = [t for t in fig.spec["data"] if t.get("showlegend", True) and t.get("name")]
        for a, b in combinations(shown, 2):
            assert cue(a) != cue(b), (title(fig), a["name"], b["name"])


def test_the_roofs_are_named_at_their_ends(figures):
    for fig in figures:
        if not title(fig).startswith("Roofline"):
            continue
        notes = " ".join(n["text"] for n in fig.spec["layout"]["annotations"])
        for t in fig.spec["data"]:
            if t["name"].endswith("TFLOPS)"):  # a dtype's roof: out of the legend, named
                assert t["showlegend"] is False
                assert t["name"].split()[0] in notes, t["name"]


def test_data_lines_stay_solid_so_a_dash_is_free(figures):
    # dashes are left for a pinned baseline; only reference lines (the roofs) and the
    # Measurements page's "model with the fit" are dashed
    for fig in figures:
        if title(fig).startswith(("Decode", "Tokens/s", "Time to first", "Launch time graphs")):
            continue
        for t in fig.spec["data"]:
            dash = (t.get("line") or {}).get("dash", "solid")
            assert dash == "solid" or "roof" in t.get("name", ""), (title(fig), t.get("name"))


# --- log axes ----------------------------------------------------------------------------------


def _value(text: str) -> float:
    scale = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}.get(text[-1], 1.0)
    return float(text[:-1] if scale != 1.0 else text) * scale


def axes(layout):
    return [(k, v) for k, v in layout.items() if re.fullmatch(r"[xy]axis\d*", k)]


def test_every_log_axis_labels_its_ticks_with_full_values(figures):
    seen = 0
    for fig in figures:
        layout = fig.spec["layout"]
        for name, ax in axes(layout):
            if ax.get("type") != "log":
                continue
            seen += 1
            assert ax.get("tickmode") == "array", (title(fig), name)
            vals, texts = ax["tickvals"], ax["ticktext"]
            assert len(vals) == len(texts)
            for v, text in zip(vals, texts, strict=True):
                np.testing.assert_allclose(_value(text), v, rtol=1e-9, err_msg=text)
            # at least two labelled ticks fall on the data the axis carries
            letter, ref = name[0], name[0] + name[5:]  # "yaxis2": traces on "y2"
            data = [
                np.asarray(t[letter], dtype=float)
                for t in fig.spec["data"]
                if t.get(f"{letter}axis", letter) == ref
                and t.get(letter) is not None
                and not isinstance(t[letter][0], str)
            ]
            if "range" in ax:
                lo, hi = 10.0 ** np.asarray(ax["range"], dtype=float)
            else:
                flat = np.concatenate([d.ravel() for d in data])
                flat = flat[np.isfinite(flat) & (flat > 0)]
                lo, hi = flat.min(), flat.max()
            inside = [v for v in vals if lo <= v <= hi]
            assert len(inside) >= 2, (title(fig), name, lo, hi, vals)
    assert seen


@pytest.mark.parametrize(
    ("lo", "hi", "expected"),
    [
        (1, 4096, ["1", "3", "10", "30", "100", "300", "1k", "3k"]),  # 3.6 decades: 1, 3
        (0.25, 12, ["0.5", "1", "2", "5", "10"]),  # 1.7 decades: 1, 2, 5
        (30, 14400, ["30", "100", "300", "1k", "3k", "10k"]),  # 2.7 decades: 1, 3
        (0.1, 1e7, ["0.1", "1", "10", "100", "1k", "10k", "100k", "1M", "10M"]),  # decades
        (1, 1e12, ["1", "100", "10k", "1M", "100M", "10G", "1T"]),  # 12 decades: every other
    ],
)
def test_log_ticks_by_hand(lo, hi, expected):
    ax = log_axis(lo, hi)
    shown = [t for v, t in zip(ax["tickvals"], ax["ticktext"], strict=True) if lo <= v <= hi]
    assert shown == expected


def test_tick_text_never_drops_the_decade():
    assert [_tick_text(v) for v in (0.02, 3, 30, 300, 3000, 2e4, 5e6, 2e9)] == [
        "0.02",
        "3",
        "30",
        "300",
        "3k",
        "20k",
        "5M",
        "2G",
    ]


# --- labels: apart from each other, above the curves -------------------------------------------


def _box(note, layout, plot_w: float, plot_h: float):
    """A label's box in plot pixels (origin bottom left), estimated: 6 px a character, 14 px a
    line; None for a label not placed by a known axis range or in paper units."""
    lines = note["text"].split("<br>")
    w = CHAR_PX * max(len(re.sub(r"<[^>]+>", "", line)) for line in lines)
    h = 14 * len(lines)
    if note.get("xref") == "paper":
        x = note["x"] * plot_w
    else:
        rng = layout.get("xaxis", {}).get("range")
        if rng is None:
            return None
        x = (note["x"] - rng[0]) / (rng[1] - rng[0]) * plot_w
    if note.get("yref") != "paper":
        return None
    y = note["y"] * plot_h + note.get("yshift", 0)
    x += note.get("xshift", 0)
    anchor = note.get("xanchor", "center")
    x0 = x - w if anchor == "right" else x - w / 2 if anchor == "center" else x
    y0 = y if note.get("yanchor") == "bottom" else y - h / 2
    return (x0, y0, x0 + w, y0 + h)


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_mark_labels_sit_above_the_plot_in_rows_of_their_own(figures):
    marked = 0
    for fig in figures:
        layout = fig.spec["layout"]
        header = [
            n
            for n in layout.get("annotations", [])
            if n.get("yref") == "paper" and n.get("y") == 1 and "yshift" in n
        ]
        if not header:
            continue
        marked += 1
        shifts = [n["yshift"] for n in header]
        assert len(set(shifts)) == len(shifts), title(fig)  # one row each
        assert all(s >= 0 for s in shifts)  # above the plot area: never over a curve
        # the top margin holds every row
        assert layout["margin"]["t"] >= 50 + ROW_PX * len(header) - 1, title(fig)
        plot_h = layout.get("height", 520) - layout["margin"]["t"] - layout["margin"]["b"]
        boxes = [_box(n, layout, NARROW_PLOT_PX, plot_h) for n in header]
        for a, b in combinations([b for b in boxes if b], 2):
            assert not _overlap(a, b), title(fig)
        for box in filter(None, boxes):  # each stays over the plot, even a half-width one
            assert box[0] >= -CHAR_PX and box[2] <= NARROW_PLOT_PX + 60, (title(fig), box)
    assert marked >= 4


def test_the_speed_up_labels_sit_above_both_curves(figures):
    for fig in figures:
        if not title(fig).startswith("Graph speed-up"):
            continue
        layout = fig.spec["layout"]
        top = layout["yaxis"]["range"][1]
        speedup = np.asarray(fig.spec["data"][0]["y"], dtype=float)
        share = np.asarray(fig.spec["data"][1]["y"], dtype=float)
        highest = max(np.nanmax(speedup) / top, np.nanmax(share) / layout["yaxis2"]["range"][1])
        tails = sorted(n["ay"] / top for n in layout["annotations"])
        assert tails[0] - 14 / 300 > highest  # a text line above the higher curve
        assert np.all(np.diff(tails) > 0.06)  # and a row apart


def test_roof_labels_are_a_line_apart(figures):
    for fig in figures:
        if not title(fig).startswith("Roofline"):
            continue
        layout = fig.spec["layout"]
        lo, hi = layout["yaxis"]["range"]
        ys = sorted(n["y"] for n in layout["annotations"] if n.get("xref") == "paper")
        assert np.all(np.diff(ys) >= (hi - lo) * 15 / 340 - 1e-9)
        assert all(n["x"] == 1 for n in layout["annotations"] if n.get("xref") == "paper")


def test_add_marks_grows_the_top_margin_and_fixes_the_axis():
    layout = add_marks(
        base_layout("t"),
        [(10, "a", {}), (None, "skipped", {}), (100, "b", {})],
        log=True,
        span=(1, 1000),
    )
    assert layout["margin"]["t"] == 50 + 2 * ROW_PX
    assert [n["yshift"] for n in layout["annotations"]] == [1, 1 + ROW_PX]
    assert layout["xaxis"]["range"] == pytest.approx([-0.06, 3.06])
    assert len(layout["shapes"]) == 4  # a line and a stem each


# --- text colour -------------------------------------------------------------------------------


def test_axis_text_is_the_themes_strong_text_colour(figures):
    for fig in figures:
        layout = validated(fig).layout  # every property checked by Plotly too
        assert layout.font.color == INK
        for name, ax in axes(fig.spec["layout"]):
            assert ax["tickfont"]["color"] == INK, (title(fig), name)
            assert ax["title"]["font"]["color"] == INK, (title(fig), name)


def test_annotation_backgrounds_follow_the_theme(figures):
    for fig in figures:
        for n in fig.spec["layout"].get("annotations", []):
            assert n.get("bgcolor", PAPER) == PAPER, title(fig)  # never a fixed white box


# --- the app's theme -----------------------------------------------------------------------------


def test_the_app_follows_the_browsers_theme_without_a_deploy_button():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    theme = config.get("theme", {})
    assert "base" not in theme  # no forced light or dark: the browser's setting wins
    assert set(theme) <= {"light", "dark"}  # per-theme sections only
    assert config["client"]["toolbarMode"] == "viewer"  # no Deploy, Rerun or Clear cache
