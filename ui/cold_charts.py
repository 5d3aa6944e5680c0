"""Chart builders of the Cold start page: plain functions from core results to figures.

Built as one dict per figure with numpy arrays (see :mod:`ui.chart_common` for why)."""

from __future__ import annotations

import numpy as np

from ui.chart_common import base_layout, figure, segments
from ui.text import plotly_text

ITEMS = [
    ("process_init_s", "1 process init", "#9D755D"),
    ("cuda_context_s", "2 CUDA context", "#BAB0AC"),
    ("allocator_s", "3 allocator", "#79706E"),
    ("weights_s", "4 weights → HBM", "#4C78A8"),
    ("graphs_jit_s", "5 graphs + JIT", "#E45756"),
]


def waterfall_figure(current: dict, optimised: dict):
    """The five items as a waterfall, this scenario beside its optimised counterpart."""
    data = []
    for name, fig, color in (
        ("this scenario", current, "#4C78A8"),
        ("optimised", optimised, "#54A24B"),
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
                "increasing": {"marker": {"color": color}},
                "totals": {"marker": {"color": color, "line": {"color": "black", "width": 1}}},
                "connector": {"line": {"color": "#999", "dash": "dot"}},
                "hovertemplate": "%{x}: %{y:.2f} s<extra>" + name + "</extra>",
            }
        )
    floor = current["floor_s"]
    layout = base_layout(
        "Cold start, item by item (waterfall)",
        legend_rows=1,
        waterfallmode="group",
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
                "line": {"color": "black", "dash": "dash", "width": 1},
            }
        ],
        annotations=[
            {
                "xref": "paper",
                "x": 0,
                "y": floor,
                "yref": "y",
                "text": f"floor (items 1–3): {floor:.0f} s",
                "showarrow": False,
                "xanchor": "left",
                "yanchor": "bottom",
                "font": {"size": 11},
                "bgcolor": "rgba(255,255,255,0.8)",
            }
        ],
    )
    return figure(data, layout)


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
            "marker": {"color": color},
            "text": [f"{columns[k][key]:.1f}" if columns[k][key] >= 2 else "" for k in keys],
            "textposition": "inside",
            "hovertemplate": "%{y}<br>" + label + ": %{x:.2f} s<extra></extra>",
        }
        for key, label, color in ITEMS
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
        "Which items to attack: the runbook's optimisations on this scenario",
        legend_rows=2,
        barmode="stack",
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
                "line": {"color": "black", "dash": "dash", "width": 1},
            }
        ],
    )
    return figure(data, layout)


#: the lanes of the weights timeline, bottom to top, and what each draws
LANE_KINDS = (
    ("read", "read", "storage read", "#4C78A8"),
    ("host", "host pass", "host-memory pass", "#9D755D"),
    ("h2d", "H2D", "host → device copy", "#F58518"),
)


def weights_timeline_figure(timeline: dict, loader_overlaps: bool):
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
    layout = base_layout(
        "Loading the weights: read and copy, in series and overlapped",
        legend_rows=1,
        height=250 + 20 * len(lanes),
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


TIER_COLORS = ["#4C78A8", "#54A24B", "#F58518", "#B279A2", "#BAB0AC"]


def tier_figure(tiers: dict, concurrency, storage: str, current_concurrency: int, weights_s: float):
    """Item 4 against read streams for every storage tier (the scenario's loader, weights and
    GPUs); the scenario's tier bold and its point marked."""
    x = np.asarray(concurrency, dtype=float)
    data = []
    for (tier_id, tier), color in zip(tiers.items(), TIER_COLORS, strict=False):
        mine = tier_id == storage
        data.append(
            {
                "type": "scatter",
                "x": x,
                "y": tier["weights_s"],
                "mode": "lines",
                "name": plotly_text(tier["name"]),
                "line": {"color": color, "width": 3.5 if mine else 1.5},
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
            "marker": {"size": 14, "symbol": "star", "color": "crimson"},
            "name": "this scenario",
        }
    )
    layout = base_layout(
        "Item 4 against read streams, per storage tier",
        legend_rows=3,
        height=460,
        xaxis={"type": "log", "title": {"text": "concurrency (read streams)"}},
        yaxis={"type": "log", "title": {"text": "item 4: weights → HBM [s]"}},
    )
    return figure(data, layout)


def wake_figure(figures: dict):
    """Time to serve again: a full cold start, sleep level 2 (reload from storage), sleep
    level 1 (copy back from host RAM), a warm replica (zero)."""
    rows = [
        ("full cold start", figures["total_s"], None, "#E45756"),
        ("sleep level 2 wake", figures["wake_level2_s"], figures["wake_level2_speedup"], "#F58518"),
        ("sleep level 1 wake", figures["wake_level1_s"], figures["wake_level1_speedup"], "#54A24B"),
        ("warm replica", figures["warm_replica_s"], None, "#4C78A8"),
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
        xaxis={
            "type": "log",
            "title": {"text": "seconds (log)"},
            "range": [-2, np.log10(max(total, 1.0)) + 0.8],
        },
    )
    return figure(data, layout)
