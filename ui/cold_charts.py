"""Chart builders of the Cold start page: plain functions from core results to figures.

Built as one dict per figure with numpy arrays (see :mod:`ui.chart_common` for why)."""

from __future__ import annotations

import numpy as np

from model.ranges import is_point
from ui.chart_common import (
    BLUE,
    COLORS,
    GREEN,
    GREY,
    INK,
    ORANGE,
    PALETTE,
    PAPER,
    PURPLE,
    SKY,
    SYMBOLS,
    VERMILLION,
    area_pattern,
    base_layout,
    extent,
    figure,
    log_axis,
    segments,
    sparse_markers,
)
from ui.text import plotly_text

ITEMS = [
    ("process_init_s", "1 process init", SKY),
    ("cuda_context_s", "2 CUDA context", GREY),
    ("allocator_s", "3 allocator", PURPLE),
    ("weights_s", "4 weights → HBM", BLUE),
    ("graphs_jit_s", "5 graphs + JIT", VERMILLION),
]
#: each item's fill pattern, its second cue beside the colour
ITEM_PATTERNS = [".", "x", "-", "", "/"]


def waterfall_figure(current: dict, optimised: dict):
    """The five items as a waterfall, this scenario beside its optimised counterpart; where the
    scenario's items carry ranges (SPEC 4.3), error bars on its bars from each item's low to
    high and on the total from the sum of the ranges."""
    data = []
    # colour and outline: this scenario plain, the optimised one outlined (waterfall bars take
    # no pattern), the measured one (measure_charts.measured_waterfall) grey with a thick edge
    for name, fig, color, edge in (
        ("this scenario", current, BLUE, {"width": 0}),
        ("optimised", optimised, GREEN, {"color": INK, "width": 1.5}),
    ):
        data.append(
            {
                "type": "waterfall",
                "name": f"{name}: {fig['total_s']:.1f} s",
                "orientation": "v",
                "x": [label for _, label, _ in ITEMS] + ["ready"],
                "y": [fig[key] for key, _, _ in ITEMS] + [0.0],
                "measure": ["relative"] * len(ITEMS) + ["total"],
                "text": [f"{fig[key]:.1f}" for key, _, _ in ITEMS] + [f"{fig['total_s']:.1f} s"],
                "textposition": "outside",
                # one readable size: Plotly shrank a label to its narrow bar ("138.7 s" tiny)
                "textfont": {"size": 10},
                "constraintext": "none",
                "cliponaxis": False,
                # explicit places (the error bars below sit on this scenario's bars)
                "width": 0.38,
                "offset": -0.39 if name == "this scenario" else 0.01,
                "increasing": {"marker": {"color": color, "line": edge}},
                "totals": {"marker": {"color": color, "line": {"color": INK, "width": 1.5}}},
                "connector": {"line": {"color": GREY, "dash": "dot"}},
                "hovertemplate": "%{x}: %{y:.2f} s<extra>" + name + "</extra>",
            }
        )
    bars = _range_bars(current)
    if bars:
        data.append(bars)
    floor = current["floor_s"]
    layout = base_layout(
        "Cold start, item by item (waterfall)",
        legend_rows=1,
        waterfallmode="group",
        xaxis2={
            "overlaying": "x",
            "range": [-0.5, len(ITEMS) + 0.5],
            "visible": False,
            "fixedrange": True,
        },
        yaxis={"title": {"text": "seconds to ready"}, "rangemode": "tozero"},
        shapes=[
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "yref": "y",
                "y0": floor,
                "y1": floor,
                "line": {"color": INK, "dash": "dash", "width": 1},
            }
        ],
        annotations=[
            {  # in the right margin, at the line's end: over the plot it covered the bars
                "xref": "paper",
                "x": 1,
                "xshift": 4,
                "y": floor,
                "yref": "y",
                "text": f"floor (items 1–3):<br>{floor:.0f} s",
                "showarrow": False,
                "xanchor": "left",
                "yanchor": "middle",
                "align": "left",
                "font": {"size": 11},
            }
        ],
    )
    layout["margin"]["r"] = 105
    return figure(data, layout)


def _range_bars(current: dict) -> dict | None:
    """Error bars from each ranged item's low to high, at its bar's top (the bars before it
    at their points), and on the total from the sum of the ranges; None when every figure is
    a point."""
    keys = [key for key, _, _ in ITEMS]
    lo_hi = [current.get(f"{k}_range", [current[k], current[k]]) for k in keys]
    lo_hi.append(current.get("total_s_range", [current["total_s"]] * 2))
    if all(is_point(r) for r in lo_hi):
        return None
    tops, before = [], 0.0
    for k in keys:
        before += current[k]
        tops.append(before)
    tops.append(current["total_s"])
    points = [current[k] for k in keys] + [current["total_s"]]
    plus = [hi - p for (lo, hi), p in zip(lo_hi, points, strict=True)]
    minus = [p - lo for (lo, hi), p in zip(lo_hi, points, strict=True)]
    labels = [label for _, label, _ in ITEMS] + ["ready"]
    return {
        "type": "scatter",
        "xaxis": "x2",
        "x": np.arange(len(tops), dtype=float) - 0.2,
        "y": np.array(tops),
        "mode": "markers",
        "marker": {"size": 1, "color": INK},
        "error_y": {
            "type": "data",
            "symmetric": False,
            "array": np.array(plus),
            "arrayminus": np.array(minus),
            "color": INK,
            "thickness": 1.5,
            "width": 6,
        },
        "name": "range (published spread)",
        "customdata": np.array([[lo, hi] for lo, hi in lo_hi]),
        "text": labels,
        "hovertemplate": "%{text}: %{customdata[0]:.1f}–%{customdata[1]:.1f} s<extra>range</extra>",
    }


def columns_figure(columns: dict[str, dict]):
    """The seed's columns as stacked horizontal bars: this scenario, only weights optimised,
    only item 5 optimised, everything optimised; the floor (items 1–3) marked."""
    keys = list(columns)[::-1]
    names = [plotly_text(k) for k in keys]  # the category labels Plotly draws
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "y": names,
            "x": [columns[k][key] for k in keys],
            "name": label,
            "marker": {
                "color": color,
                "pattern": area_pattern(pattern),
            },
            "text": [f"{columns[k][key]:.1f}" for k in keys],
            "textposition": "inside",
            "textangle": 0,
            "insidetextanchor": "middle",
            "hovertemplate": "%{y}<br>" + label + ": %{x:.2f} s<extra></extra>",
        }
        for (key, label, color), pattern in zip(ITEMS, ITEM_PATTERNS, strict=True)
    ]
    notes = [
        {
            "x": columns[k]["total_s"],
            "y": n,
            "text": f" {columns[k]['total_s']:.1f} s",
            "showarrow": False,
            "xanchor": "left",
            "font": {"size": 12},
        }
        for k, n in zip(keys, names, strict=True)
    ]
    floor = max(c["floor_s"] for c in columns.values())
    top = max(c["total_s"] for c in columns.values())
    layout = base_layout(
        "Which items to attack: this start, one fix at a time, all fixes",
        legend_rows=2,
        barmode="stack",
        uniformtext={"minsize": 10, "mode": "hide"},  # a value that does not fit is left out
        height=380,
        xaxis={"title": {"text": "seconds to ready"}, "range": [0, top * 1.15]},
        annotations=notes,
        shapes=[
            {
                "type": "line",
                "xref": "x",
                "x0": floor,
                "x1": floor,
                "yref": "paper",
                "y0": 0,
                "y1": 1,
                "line": {"color": INK, "dash": "dash", "width": 1},
            }
        ],
    )
    return figure(data, layout)


#: the lanes of the weights timeline, bottom to top, and what each draws
LANE_KINDS = (
    ("read", "read", "storage read", BLUE),
    ("host", "host pass", "host-memory pass", SKY),
    ("h2d", "H2D", "host → device copy", ORANGE),
)


def weights_timeline_figure(timeline: dict, loader_overlaps: bool, weights_range=None):
    """Item 4 chunk by chunk: the read lane, the host-memory pass lane (only for a loader that
    makes one: pickle) and the host→device lane, in series (read, pass, then copy) and
    overlapped (the copy streams beside the reading side). The scenario's loader's lanes are
    drawn solid, the others faint; each kind's lanes end where its formula does, so the solid
    ones end at item 4."""
    passes = bool(np.any(timeline["series"]["host_end"] > timeline["series"]["host_start"]))
    kinds = [k for k in LANE_KINDS if passes or k[0] != "host"]
    lanes = [f"{kind} · {k[1]}" for kind in ("overlapped", "series") for k in kinds[::-1]]
    data = []
    notes = []
    for kind in ("series", "overlapped"):
        tl = timeline[kind]
        mine = (kind == "overlapped") == loader_overlaps
        for key, name, label, color in kinds:
            y = float(lanes.index(f"{kind} · {name}"))
            xs = segments(tl[f"{key}_start"], tl[f"{key}_end"], unit=1.0)
            data.append(
                {
                    "type": "scatter",
                    "x": xs,
                    "y": np.full(xs.size, y),
                    "mode": "lines",
                    "line": {"width": 20, "color": color},
                    "opacity": 1.0 if mine else 0.35,
                    "name": label,
                    "legendgroup": key,
                    "showlegend": kind == "series",
                    "hoverinfo": "skip",
                }
            )
            # a tick at each chunk start, so chunks shorter than a pixel still show
            data.append(
                {
                    "type": "scatter",
                    "x": tl[f"{key}_start"],
                    "y": np.full(len(tl[f"{key}_start"]), y),
                    "mode": "markers",
                    "marker": {
                        "symbol": "line-ns",
                        "size": 22,
                        "line": {"width": 2, "color": color},
                    },
                    "opacity": 1.0 if mine else 0.35,
                    "showlegend": False,
                    "hovertemplate": "%{x:.3f} s<extra>" + name + " chunk</extra>",
                }
            )
        notes.append(
            {
                "x": tl["end"],
                "y": float(lanes.index(f"{kind} · H2D")),
                "text": f" {tl['end']:.2f} s" + (" = item 4" if mine else ""),
                "showarrow": False,
                "xanchor": "left",
                "font": {"size": 11},
            }
        )
    top = max(timeline["series"]["end"], timeline["overlapped"]["end"])
    shapes = []
    if weights_range is not None and not is_point(weights_range):
        # the band where item 4 ends across the spread of published cold reads (SPEC 4.3)
        lo, hi = (float(x) for x in weights_range)
        shapes.append(
            {
                "type": "rect",
                "xref": "x",
                "yref": "paper",
                "x0": lo,
                "x1": hi,
                "y0": 0,
                "y1": 1,
                "fillcolor": GREY,
                "opacity": 0.18,
                "line": {"width": 0},
                "layer": "below",
            }
        )
        notes.append(
            {
                "x": (lo + hi) / 2,
                "xref": "x",
                "y": 1,
                "yref": "paper",
                "yanchor": "bottom",
                "text": f"item 4 ends in {lo:.1f}–{hi:.1f} s (published spread)",
                "showarrow": False,
                "font": {"size": 11},
            }
        )
        top = max(top, hi / 1.25)
    layout = base_layout(
        "Loading the weights: read and copy, in series and overlapped",
        legend_rows=1,
        height=250 + 20 * len(lanes),
        shapes=shapes,
        xaxis={"title": {"text": "seconds into item 4"}, "range": [0, top * 1.4]},
        yaxis={
            "tickmode": "array",
            "tickvals": list(range(len(lanes))),
            "ticktext": lanes,
            "range": [-0.6, len(lanes) - 0.4],
            "showgrid": False,
            "zeroline": False,
        },
        annotations=notes,
    )
    return figure(data, layout)


TIER_COLORS = list(PALETTE)


def tier_figure(tiers: dict, concurrency, storage: str, current_concurrency: int, weights_s: float):
    """Item 4 against read streams for every storage tier (the scenario's loader, weights and
    GPUs); the scenario's tier bold and its point marked."""
    x = np.asarray(concurrency, dtype=float)
    data = []
    n = len(tiers)
    for i, (tier_id, tier) in enumerate(tiers.items()):
        mine = tier_id == storage
        data.append(
            {
                "type": "scatter",
                "x": x,
                "y": tier["weights_s"],
                "mode": "lines+markers",
                "name": plotly_text(tier["name"]),
                "line": {"color": TIER_COLORS[i % len(TIER_COLORS)], "width": 3.5 if mine else 1.5},
                # a symbol per tier (tiers coincide where the GPUs' copy, not the read, limits)
                "marker": sparse_markers(x, SYMBOLS[i % len(SYMBOLS)], n=8, slot=i, slots=n),
                "hovertemplate": "%{x:.0f} streams<br>%{y:.2f} s<extra>"
                + plotly_text(tier_id)
                + "</extra>",
            }
        )
    data.append(
        {
            "type": "scatter",
            "x": [float(current_concurrency)],
            "y": [weights_s],
            "mode": "markers",
            "marker": {
                "size": 16,
                "symbol": "star",
                "color": COLORS["now"],
                "line": {"width": 1, "color": PAPER},
            },
            "name": "this scenario",
        }
    )
    layout = base_layout(
        "Item 4 against read streams, per storage tier",
        legend_rows=3,
        height=460,
        xaxis=log_axis(x[0], x[-1], title={"text": "concurrency (read streams)"}),
        yaxis=log_axis(
            *extent(weights_s, *(t["weights_s"] for t in tiers.values())),
            title={"text": "item 4: weights → HBM [s]"},
        ),
    )
    return figure(data, layout)


def wake_figure(figures: dict):
    """Time to serve again: a full cold start, sleep level 2 (reload from storage), sleep
    level 1 (copy back from host RAM), a warm replica (zero)."""
    rows = [
        ("full cold start", figures["total_s"], None, VERMILLION),
        ("sleep level 2 wake", figures["wake_level2_s"], figures["wake_level2_speedup"], ORANGE),
        ("sleep level 1 wake", figures["wake_level1_s"], figures["wake_level1_speedup"], GREEN),
        ("warm replica", figures["warm_replica_s"], None, BLUE),
    ]
    total = figures["total_s"]
    texts = [
        f"{v:.2f} s" + (f" ({speedup:.0f}× faster)" if speedup and speedup > 1 else "")
        if v > 0
        else "0 s (already serving)"
        for _, v, speedup, _ in rows
    ]
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "y": [r[0] for r in rows][::-1],
            "x": [max(r[1], 0.011) for r in rows][::-1],
            "marker": {"color": [r[3] for r in rows][::-1]},
            "text": texts[::-1],
            "textposition": "outside",
            "hovertemplate": "%{y}: %{x:.3g} s<extra></extra>",
            "showlegend": False,
        }
    ]
    layout = base_layout(
        "Time to serve again",
        legend_rows=0,
        height=300,
        xaxis=log_axis(
            0.01,
            max(total, 1.0) * 6,
            title={"text": "seconds (log)"},
            range=[-2, np.log10(max(total, 1.0)) + 0.8],
        ),
    )
    return figure(data, layout)
