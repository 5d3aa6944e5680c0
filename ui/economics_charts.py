"""Scale to zero charts (plain functions from :func:`model.economics.economics_lens` results).

Every series has a second cue beside colour (dash, marker or direct label)."""

from __future__ import annotations

import numpy as np

from model.economics import STRATEGIES, STRATEGY_NAMES
from ui.chart_common import as_list, base_layout, figure, log_vline, vline

COLOURS = {
    "warm": "#4C78A8",
    "scale_to_zero": "#E45756",
    "scale_to_zero_optimised": "#F58518",
    "prewarm": "#54A24B",
    "sleep": "#B279A2",
}
DASHES = {
    "warm": "solid",
    "scale_to_zero": "dash",
    "scale_to_zero_optimised": "dot",
    "prewarm": "dashdot",
    "sleep": "longdash",
}


def strategies_figure(fig: dict):
    """Cost per day of each strategy: GPU time and SLA penalties stacked, the recommended one
    labelled."""
    names = [STRATEGY_NAMES[k] for k in STRATEGIES]
    gpu = [fig[k]["cost_usd_per_day"] for k in STRATEGIES]
    penalty = [fig[k]["total_usd_per_day"] - fig[k]["cost_usd_per_day"] for k in STRATEGIES]
    text = [
        f"${fig[k]['total_usd_per_day']:,.2f}"
        + ("  ◀ recommended" if k == fig["recommended"] else "")
        for k in STRATEGIES
    ]
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "y": names,
            "x": gpu,
            "name": "GPU time",
            "marker": {"color": "#4C78A8"},
            "hovertemplate": "%{y}: GPU $%{x:,.2f}/day<extra></extra>",
        },
        {
            "type": "bar",
            "orientation": "h",
            "y": names,
            "x": penalty,
            "name": "SLA penalties",
            "marker": {"color": "#E45756", "pattern": {"shape": "/"}},
            "text": text,
            "textposition": "outside",
            "cliponaxis": False,
            "hovertemplate": "%{y}: penalties $%{x:,.2f}/day<extra></extra>",
        },
    ]
    layout = base_layout(
        "Cost per day by strategy",
        legend_rows=1,
        barmode="stack",
        height=360,
        xaxis={"title": {"text": "USD per day"}, "rangemode": "tozero"},
        yaxis={"autorange": "reversed", "automargin": True},
        margin={"l": 60, "r": 160, "t": 50, "b": 80},
    )
    return figure(data, layout)


def timeout_figure(sweep: dict, warm_total: float, current_t: float):
    """Total cost (solid axis) and SLA misses (right axis, markers) against the idle timeout."""
    t = as_list(sweep["idle_timeout_s"])
    data = []
    for k in ("scale_to_zero", "scale_to_zero_optimised", "sleep"):
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "x": t,
                "y": as_list(sweep[k]["total_usd_per_day"]),
                "name": f"{STRATEGY_NAMES[k]}: USD/day",
                "line": {"color": COLOURS[k], "dash": DASHES[k], "width": 2},
                "marker": {"symbol": "circle", "size": 6},
            }
        )
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "x": t,
                "y": as_list(sweep[k]["sla_misses_per_day"]),
                "name": f"{STRATEGY_NAMES[k]}: SLA misses/day",
                "yaxis": "y2",
                "marker": {"color": COLOURS[k], "symbol": "x", "size": 8},
            }
        )
    data.append(
        {
            "type": "scatter",
            "mode": "lines",
            "x": [t[0], t[-1]],
            "y": [warm_total, warm_total],
            "name": "warm floor: USD/day",
            "line": {"color": COLOURS["warm"], "width": 2},
        }
    )
    mark = log_vline(
        current_t, f"this scenario: {current_t:g} s", {"color": "crimson", "width": 1.5}
    )
    layout = base_layout(
        "Cost and SLA misses against the idle timeout",
        legend_rows=4,
        xaxis={"type": "log", "title": {"text": "idle timeout [s]"}},
        yaxis={"title": {"text": "total USD per day (GPU + penalties)"}, "rangemode": "tozero"},
        yaxis2={
            "title": {"text": "SLA misses per day (×)"},
            "overlaying": "y",
            "side": "right",
            "rangemode": "tozero",
            "showgrid": False,
        },
        shapes=[mark[0]],
        annotations=[mark[1]],
    )
    return figure(data, layout)


def timeline_figure(tl: dict):
    """The day (or the trace) of the strategy shown: the replica's state stacked (up, starting,
    down or asleep) and the requests per bin on the right axis."""
    hours = as_list(np.asarray(tl["t_s"]) / 3600.0)
    state_name = "asleep" if "asleep" in tl else "down"
    up = np.asarray(tl["up"], float)
    starting = np.minimum(np.asarray(tl["starting"], float), up)
    data = [
        {
            "type": "bar",
            "x": hours,
            "y": as_list(up - starting),
            "name": "replicas up (serving)",
            "marker": {"color": "#54A24B"},
            "offset": 0,
            "width": tl["bin_s"] / 3600.0,
        },
        {
            "type": "bar",
            "x": hours,
            "y": as_list(starting),
            "name": "starting (cold start or wake)",
            "marker": {"color": "#F58518", "pattern": {"shape": "x"}},
            "offset": 0,
            "width": tl["bin_s"] / 3600.0,
        },
        {
            "type": "bar",
            "x": hours,
            "y": as_list(tl[state_name]),
            "name": state_name,
            "marker": {"color": "#BBBBBB", "pattern": {"shape": "."}},
            "offset": 0,
            "width": tl["bin_s"] / 3600.0,
        },
        {
            "type": "scatter",
            "mode": "lines",
            "x": hours,
            "y": as_list(tl["requests"]),
            "name": "requests per bin",
            "yaxis": "y2",
            "line": {"color": "#222222", "width": 2, "shape": "hv"},
        },
    ]
    if tl.get("delayed") is not None:
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "x": hours,
                "y": as_list(tl["delayed"]),
                "name": "delayed requests per bin",
                "yaxis": "y2",
                "marker": {"color": "#E45756", "symbol": "triangle-up", "size": 8},
            }
        )
    layout = base_layout(
        f"The day, strategy: {STRATEGY_NAMES[tl['strategy']]}",
        legend_rows=2,
        barmode="stack",
        xaxis={"title": {"text": "hours from the start"}},
        yaxis={"title": {"text": "replicas (time-averaged)"}, "rangemode": "tozero"},
        yaxis2={
            "title": {"text": "requests per bin"},
            "overlaying": "y",
            "side": "right",
            "rangemode": "tozero",
            "showgrid": False,
        },
    )
    return figure(data, layout)


def break_even_figure(be: dict, cold_s: float, optimised_s: float, break_even_s: float | None):
    """Scale-to-zero cost per day against the cold start; the warm floor flat; this scenario's
    and the optimised cold start marked."""
    c = as_list(be["cold_start_s"])
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "x": c,
            "y": as_list(be["scale_to_zero_usd_per_day"]),
            "name": "scale to zero: USD/day",
            "line": {"color": COLOURS["scale_to_zero"], "dash": "dash", "width": 2},
        },
        {
            "type": "scatter",
            "mode": "lines",
            "x": [c[0], c[-1]],
            "y": [be["warm_usd_per_day"]] * 2,
            "name": "warm floor: USD/day",
            "line": {"color": COLOURS["warm"], "width": 2},
        },
    ]
    shapes, notes = [], []
    marks = [
        (cold_s, f"this scenario {cold_s:.0f} s", "crimson", 0.98),
        (optimised_s, f"optimised {optimised_s:.0f} s", "#F58518", 0.88),
    ]
    if break_even_s:
        marks.append((break_even_s, f"break-even {break_even_s:.0f} s", "black", 0.78))
    for x, text, colour, y in marks:
        shape, note = vline(x, text, {"color": colour, "width": 1.5, "dash": "dot"}, y=y)
        shapes.append(shape)
        notes.append(note)
    layout = base_layout(
        "Break-even: what a cold start may cost before warm is cheaper",
        legend_rows=1,
        xaxis={"title": {"text": "cold start [s]"}, "rangemode": "tozero"},
        yaxis={"title": {"text": "USD per day"}, "rangemode": "tozero"},
        shapes=shapes,
        annotations=notes,
    )
    return figure(data, layout)
