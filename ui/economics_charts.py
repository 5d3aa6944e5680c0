"""Scale to zero charts (plain functions from :func:`model.economics.economics_lens` results).

Every series has a second cue beside colour: a marker symbol per strategy (filled on the cost
lines, open on the SLA misses), a fill pattern, or a direct label. Data lines are solid (a
dash stays free for a pinned baseline); the dotted lines are vertical marks."""

from __future__ import annotations

import numpy as np

from model.economics import STRATEGIES, STRATEGY_NAMES
from model.ranges import is_point
from ui.chart_common import (
    BLUE,
    GREEN,
    INK,
    LIGHT_GREY,
    ORANGE,
    PURPLE,
    SKY,
    VERMILLION,
    add_marks,
    area_pattern,
    as_list,
    base_layout,
    figure,
    log_axis,
    right_axis,
)

COLOURS = {
    "warm": BLUE,
    "scale_to_zero": VERMILLION,
    "scale_to_zero_optimised": ORANGE,
    "prewarm": GREEN,
    "sleep": PURPLE,
}
#: each strategy's marker (filled: USD/day; open: SLA misses); the warm floor is the one line
#: without markers
SYMBOLS = {
    "scale_to_zero": "circle",
    "scale_to_zero_optimised": "square",
    "prewarm": "triangle-up",
    "sleep": "diamond",
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
            "marker": {"color": BLUE},
            "hovertemplate": "%{y}: GPU $%{x:,.2f}/day<extra></extra>",
        },
        {
            "type": "bar",
            "orientation": "h",
            "y": names,
            "x": penalty,
            "name": "SLA penalties",
            "marker": {"color": VERMILLION, "pattern": area_pattern("/")},
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
    """Total cost (left axis, lines with filled markers) and SLA misses (right axis, open
    markers) against the idle timeout; one symbol per strategy."""
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
                "line": {"color": COLOURS[k], "width": 2},
                "marker": {"symbol": SYMBOLS[k], "size": 7},
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
                "marker": {
                    "color": COLOURS[k],
                    "symbol": SYMBOLS[k] + "-open",
                    "size": 9,
                    "line": {"width": 2},
                },
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
    layout = base_layout(
        "Cost and SLA misses against the idle timeout",
        legend_rows=4,
        xaxis=log_axis(t[0], t[-1], title={"text": "idle timeout [s]"}),
        yaxis={"title": {"text": "total USD per day (GPU + penalties)"}, "rangemode": "tozero"},
        yaxis2=right_axis("SLA misses per day (×)"),
    )
    mark = (current_t, f"this scenario: {current_t:g} s", {"color": VERMILLION, "width": 1.5})
    return figure(data, add_marks(layout, [mark], log=True, span=(t[0], t[-1])))


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
            "marker": {"color": GREEN},
            "offset": 0,
            "width": tl["bin_s"] / 3600.0,
        },
        {
            "type": "bar",
            "x": hours,
            "y": as_list(starting),
            "name": "starting (cold start or wake)",
            "marker": {"color": ORANGE, "pattern": area_pattern("x")},
            "offset": 0,
            "width": tl["bin_s"] / 3600.0,
        },
        {
            "type": "bar",
            "x": hours,
            "y": as_list(tl[state_name]),
            "name": state_name,
            "marker": {"color": LIGHT_GREY, "pattern": area_pattern(".")},
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
            "line": {"color": INK, "width": 2, "shape": "hv"},
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
                "marker": {"color": VERMILLION, "symbol": "triangle-up", "size": 8},
            }
        )
    layout = base_layout(
        f"The day, strategy: {STRATEGY_NAMES[tl['strategy']]}",
        legend_rows=2,
        barmode="stack",
        xaxis={"title": {"text": "hours from the start"}},
        yaxis={"title": {"text": "replicas (time-averaged)"}, "rangemode": "tozero"},
        yaxis2=right_axis("requests per bin"),
    )
    return figure(data, layout)


def break_even_figure(
    be: dict, cold_s: float, optimised_s: float, break_even_s: float | None, cold_range=None
):
    """Scale-to-zero cost per day against the cold start; the warm floor flat; this scenario's
    and the optimised cold start marked, and the cold start's range (SPEC 4.3) as a band."""
    c = as_list(be["cold_start_s"])
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "x": c,
            "y": as_list(be["scale_to_zero_usd_per_day"]),
            "name": "scale to zero: USD/day",
            "line": {"color": COLOURS["scale_to_zero"], "width": 2},
            "marker": {"symbol": SYMBOLS["scale_to_zero"], "size": 7, "maxdisplayed": 12},
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
    shapes = []
    if cold_range is not None and not is_point(cold_range):
        shapes.append(
            {
                "type": "rect",
                "xref": "x",
                "yref": "paper",
                "x0": float(cold_range[0]),
                "x1": float(cold_range[1]),
                "y0": 0,
                "y1": 1,
                "fillcolor": VERMILLION,
                "opacity": 0.10,
                "line": {"width": 0},
                "layer": "below",
            }
        )
        data.append(  # the band's key in the legend
            {
                "type": "scatter",
                "mode": "markers",
                "x": [None],
                "y": [None],
                "marker": {"symbol": "square", "size": 12, "color": VERMILLION, "opacity": 0.3},
                "name": f"this cold start's range {cold_range[0]:.0f}–{cold_range[1]:.0f} s",
            }
        )
    layout = base_layout(
        "Break-even: what a cold start may cost before warm is cheaper",
        legend_rows=1,
        shapes=shapes,
        xaxis={"title": {"text": "cold start [s]"}, "rangemode": "tozero"},
        yaxis={"title": {"text": "USD per day"}, "rangemode": "tozero"},
    )
    marks = [
        (cold_s, f"this scenario {cold_s:.0f} s", {"color": VERMILLION, "width": 1.5}),
        (
            optimised_s,
            f"optimised {optimised_s:.0f} s",
            {"color": SKY, "width": 1.5, "dash": "dot"},
        ),
        (
            break_even_s or None,
            f"break-even {break_even_s or 0:.0f} s",
            {"color": INK, "width": 1, "dash": "dash"},
        ),
    ]
    return figure(data, add_marks(layout, marks, span=(min(c[0], 0.0), c[-1])))
