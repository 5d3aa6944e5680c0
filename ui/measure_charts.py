"""Measured against modelled: the Measurements page's charts (plain functions, no streamlit).

Measured points are markers (filled), the model as configured a solid line, the model with the
fit applied a dashed line: colour is never the only cue. Inputs are
:class:`model.calibrate.Calibration` and :func:`model.calibrate.overlay_curves`.
"""

from __future__ import annotations

import numpy as np

from ui.chart_common import (
    BLUE,
    GREY,
    HOLLOW,
    INK,
    PALETTE,
    PAPER,
    VERMILLION,
    area_pattern,
    as_list,
    base_layout,
    extent,
    figure,
    log_axis,
    sparse_markers,
)
from ui.text import plotly_text

MEASURED = INK
MODEL = BLUE
FITTED = VERMILLION
GROUP_COLOURS = list(PALETTE)
#: one symbol per (context, graphs mode) group: on its measured points and on its curves
#: (twelve: the symbol alone tells twelve groups apart, with the colour more)
GROUP_SYMBOLS = [
    "circle",
    "square",
    "diamond",
    "triangle-up",
    "x",
    "star",
    "hexagon",
    "triangle-down",
    "cross",
    "pentagon",
    "hourglass",
    "star-diamond",
]
DASH = {"model": "solid", "fitted": "dash"}
WHICH = {"model": "model as configured", "fitted": "model with the fit"}


def _mode(graphs) -> str:
    return "eager" if graphs == "none" else (graphs or "as configured")


def decode_figure(cal, curves: dict, y: str = "step_ms"):
    """Step time (or tokens/s) against batch: measured points over the model's curves, one
    colour and one symbol per (context, graphs mode) group, solid = model, dashed = with the
    fit. The legend names each group once (its curves and points toggle together) and keys
    the three styles, so many groups do not crowd the plot out."""
    data = []
    groups = []
    for c in curves["decode"]:
        g = c["group"]
        if g not in groups:
            groups.append(g)
        k = groups.index(g)
        col = GROUP_COLOURS[k % len(GROUP_COLOURS)]
        marker = sparse_markers(c["batch"], GROUP_SYMBOLS[k % len(GROUP_SYMBOLS)] + "-open", n=8)
        first = c["which"] == "model" or not any(
            d.get("legendgroup") == str(g) and d.get("showlegend") for d in data
        )
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "x": as_list(c["batch"]),
                "y": as_list(c[y]),
                "name": f"context {c['context_tokens']:,}, {_mode(c['cuda_graphs'])}",
                "line": {"color": col, "dash": DASH[c["which"]], "width": 2},
                "marker": {**marker, "line": {"width": 1.5}},
                "legendgroup": str(g),
                "showlegend": first,
                "hovertemplate": "batch %{x:.0f}<br>%{y:.4g}<extra>"
                + WHICH[c["which"]]
                + "</extra>",
            }
        )
    pts = [p for p in cal.points if p.quantity in ("step_ms", "tpot_ms")]
    by_group: dict = {}
    for p in pts:
        by_group.setdefault((p.cond.get("context_tokens"), p.cond.get("cuda_graphs")), []).append(p)
    extra = 0
    for g, ps in by_group.items():
        if g in groups:
            k = groups.index(g)
        else:  # measured at conditions the model drew no curve for
            k, extra = len(groups) + extra, extra + 1
        xs = np.array([p.x for p in ps])
        ys = np.array([p.measured for p in ps])
        if y == "tokens_per_s":
            ys = xs / ys * 1000.0
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "x": as_list(xs),
                "y": as_list(ys),
                "name": f"measured: {plotly_text(ps[0].dataset)}"
                + (f", context {g[0]:,}" if g[0] is not None else "")
                + (f", {_mode(g[1])}" if g[1] is not None else ""),
                "legendgroup": str(g),
                "showlegend": g not in groups,  # a group with curves is named by them
                "marker": {  # the curve's colour, and its symbol as a second cue
                    "color": GROUP_COLOURS[k % len(GROUP_COLOURS)] if g in groups else MEASURED,
                    "symbol": GROUP_SYMBOLS[k % len(GROUP_SYMBOLS)],
                    "size": 10,
                    "line": {"width": 1.5, "color": MEASURED},
                },
                "text": [plotly_text(p.label) for p in ps],
                "hovertemplate": "%{text}<br>%{y:.4g}<extra>measured</extra>",
            }
        )
    # the styles' keys: what solid, dashed and filled mean
    drawn = {c["which"] for c in curves["decode"]}
    data += [
        {
            "type": "scatter",
            "x": [None],
            "y": [None],
            "mode": "lines",
            "name": WHICH[w],
            "line": {"color": INK, "dash": dash, "width": 2},
        }
        for w, dash in DASH.items()
        if w in drawn
    ]
    if pts:
        data.append(
            {
                "type": "scatter",
                "x": [None],
                "y": [None],
                "mode": "markers",
                "name": "measured (filled, edged)",
                "marker": {"color": GREY, "size": 10, "line": {"width": 1.5, "color": MEASURED}},
            }
        )
    entries = sum(1 for d in data if d.get("showlegend", True))
    rows = max(2, (entries + 1) // 2)
    title = "Decode step time against batch" if y == "step_ms" else "Tokens/s against batch"
    layout = base_layout(
        title,
        legend_rows=rows,
        height=360 + 20 * entries,  # the plot keeps its height however many groups
        xaxis=log_axis(
            *extent([p.x for p in pts], *(c["batch"] for c in curves["decode"])),
            title={"text": "batch (concurrent sequences)"},
        ),
        yaxis={
            "title": {"text": "step time [ms]" if y == "step_ms" else "aggregate tokens/s"},
            "rangemode": "tozero",
        },
    )
    layout["legend"]["traceorder"] = "normal"  # two a row (grouped: one group a row)
    return figure(data, layout)


def ttft_figure(cal, curves: dict):
    """TTFT against prompt tokens: measured (filled where fitted, open where only shown)."""
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "x": as_list(c["prompt_tokens"]),
            "y": as_list(c["ttft_ms"]),
            "name": WHICH[c["which"]],
            "line": {"color": MODEL if c["which"] == "model" else FITTED, "dash": DASH[c["which"]]},
        }
        for c in curves["ttft"]
    ]
    for fitted in (True, False):
        ps = [
            p
            for p in cal.points
            if p.quantity == "ttft_ms" and p.fitted == fitted and "prompt_tokens" in p.cond
        ]
        if ps:
            data.append(
                {
                    "type": "scatter",
                    "mode": "markers",
                    "x": [p.cond["prompt_tokens"] for p in ps],
                    "y": [p.measured for p in ps],
                    "name": "measured, concurrency 1 (fitted)"
                    if fitted
                    else "measured under load (shown, not fitted)",
                    "marker": {
                        "color": MEASURED,
                        "size": 9,
                        "symbol": "circle" if fitted else "circle-open",
                    },
                    "text": [plotly_text(p.label) for p in ps],
                    "hovertemplate": "%{text}<br>%{x:,} prompt tokens: %{y:.4g} ms<extra></extra>",
                }
            )
    layout = base_layout(
        "Time to first token against prompt length",
        xaxis=log_axis(
            *extent(
                [p.cond["prompt_tokens"] for p in cal.points if "prompt_tokens" in p.cond],
                *(c["prompt_tokens"] for c in curves["ttft"]),
            ),
            title={"text": "prompt tokens"},
        ),
        yaxis={"title": {"text": "TTFT [ms]"}, "rangemode": "tozero"},
    )
    return figure(data, layout)


def tpot_figure(cal):
    """TPOT against concurrency (or against the context when every point ran at one
    concurrency): measured and modelled at each measured point."""
    ps = [p for p in cal.points if p.quantity == "tpot_ms"]
    idx = [cal.points.index(p) for p in ps]
    by_context = len({p.x for p in ps}) == 1 and all("context_tokens" in p.cond for p in ps)
    xs = [p.cond["context_tokens"] if by_context else p.x for p in ps]
    data = [
        {
            "type": "scatter",
            "mode": "markers",
            "x": xs,
            "y": [p.measured for p in ps],
            "name": "measured",
            "marker": {"color": MEASURED, "size": 9},
        },
        {
            "type": "scatter",
            "mode": "markers",
            "x": xs,
            "y": as_list(cal.before[idx]),
            "name": "model as configured",
            "marker": {"color": MODEL, "size": 9, "symbol": "diamond-open"},
        },
    ]
    if cal.fits:
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "x": xs,
                "y": as_list(cal.after[idx]),
                "name": "model with the fit",
                "marker": {
                    "color": FITTED,
                    "size": 9,
                    "symbol": "x-thin-open",
                    "line": {"width": 2},
                },
            }
        )
    c = int(ps[0].x) if ps else 1
    layout = base_layout(
        f"Time per output token against context, at concurrency {c}"
        if by_context
        else "Time per output token against concurrency",
        xaxis=log_axis(
            *extent(xs),
            title={
                "text": "mean context of a decode step [tokens]"
                if by_context
                else "concurrency (decode batch)"
            },
        ),
        yaxis={"title": {"text": "TPOT [ms]"}, "rangemode": "tozero"},
    )
    return figure(data, layout)


def launch_figure(cal, curves: dict):
    """What graphs save (eager − graph) against the kernels launched: the slope is τ."""
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "x": as_list(c["kernels"]),
            "y": as_list(c["saving_ms"]),
            "name": f"{WHICH[c['which']]} (kernels × τ)",
            "line": {"color": MODEL if c["which"] == "model" else FITTED, "dash": DASH[c["which"]]},
        }
        for c in curves["launch"]
    ]
    ps = [p for p in cal.points if p.quantity == "launch_saving_ms"]
    data.append(
        {
            "type": "scatter",
            "mode": "markers",
            "x": [p.x for p in ps],
            "y": [p.measured for p in ps],
            "name": "measured eager − graph",
            "marker": {"color": MEASURED, "size": 9},
        }
    )
    layout = base_layout(
        "Launch time graphs remove: eager − graph against kernels",
        xaxis=log_axis(
            *extent([p.x for p in ps], *(c["kernels"] for c in curves["launch"])),
            title={"text": "kernels in the chain"},
        ),
        yaxis=log_axis(
            *extent([p.measured for p in ps], *(c["saving_ms"] for c in curves["launch"])),
            title={"text": "eager − graph [ms]"},
        ),
    )
    return figure(data, layout)


def is_startup(quantity: str) -> bool:
    """A start-up figure in seconds (the cold-start chart's bars)."""
    return quantity.startswith("item") or quantity in ("compile_s", "capture_s", "load_s")


def cold_figure(cal):
    """Start-up figures measured against modelled, one group of bars per figure."""
    qs = [p for p in cal.points if is_startup(p.quantity)]
    idx = [cal.points.index(p) for p in qs]
    labels = [plotly_text(p.label) for p in qs]
    bars = [("measured", [p.measured for p in qs], MEASURED, "")]
    bars.append(("model as configured", as_list(cal.before[idx]), MODEL, "/"))
    if cal.fits:
        bars.append(("model with the fit", as_list(cal.after[idx]), FITTED, "x"))
    data = [
        {
            "type": "bar",
            "x": labels,
            "y": ys,
            "name": name,
            "marker": {"color": col, "pattern": area_pattern(shape)},
            "texttemplate": "%{y:.3g} s",
            "textposition": "outside",
        }
        for name, ys, col, shape in bars
    ]
    layout = base_layout(
        "Cold start: measured against modelled",
        barmode="group",
        yaxis={"title": {"text": "seconds"}, "rangemode": "tozero"},
    )
    return figure(data, layout)


def residual_figure(rows: list[dict]):
    """Residual of every point before and after the fit [% of the measured value]."""
    names = [plotly_text(f"{r['point']} · {r['file']}") for r in rows]
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "y": names,
            "x": [r["residual_before_pct"] for r in rows],
            "name": "model as configured",
            "marker": {"color": MODEL, "pattern": area_pattern("/")},
        }
    ]
    if any(r["model_after"] != r["model_before"] for r in rows):
        data.append(
            {
                "type": "bar",
                "orientation": "h",
                "y": names,
                "x": [r["residual_after_pct"] for r in rows],
                "name": "model with the fit",
                "marker": {"color": FITTED},
            }
        )
    layout = base_layout(
        "Residuals: (model − measured) / measured",
        barmode="group",
        height=max(360, 28 * len(rows) + 180),
        xaxis={"title": {"text": "% of the measured value"}, "zeroline": True},
        yaxis={"automargin": True, "autorange": "reversed"},
    )
    return figure(data, layout)


def with_measured(fig, points, y_of=None, yaxis: str | None = None, x_of=None):
    """A lens chart with the session's measured points added as black-edged markers (the
    Measurements page's uploads): ``y_of(point)`` and ``x_of(point)`` give each marker's place
    in the chart's units (default: the point's x and measured value)."""
    if not points:
        return fig
    xs = [x_of(p) if x_of else p.x for p in points]
    ys = [y_of(p) if y_of else p.measured for p in points]
    trace = {
        "type": "scatter",
        "mode": "markers",
        "x": xs,
        "y": ys,
        "name": f"measured ({len(points)} points, Measurements page)",
        "marker": {
            "color": PAPER,
            "size": 10,
            "symbol": "diamond",
            "line": {"width": 2, "color": MEASURED},
        },
        "text": [plotly_text(f"{p.label} · {p.dataset}") for p in points],
        "hovertemplate": "%{text}<br>%{y:.4g}<extra>measured</extra>",
    }
    if yaxis:
        trace["yaxis"] = yaxis
    fig.spec["data"].append(trace)
    return fig


def measured_waterfall(fig, items: dict[int, float], modelled: dict[int, float]):
    """The cold-start waterfall with a third group: the measured items (an item not measured
    takes the model's value and says so in its label)."""
    if not items:
        return fig
    keys = ["process_init_s", "cuda_context_s", "allocator_s", "weights_s", "graphs_jit_s"]
    ys = [items.get(i + 1, modelled[k]) for i, k in enumerate(keys)]
    text = [f"{y:.1f}" if (i + 1) in items else f"{y:.1f} (model)" for i, y in enumerate(ys)] + [
        f"{sum(ys):.1f} s"
    ]
    x = list(fig.spec["data"][0]["x"])
    fig.spec["data"].append(
        {
            "type": "waterfall",
            "name": f"measured: {sum(ys):.1f} s",
            "orientation": "v",
            "x": x,
            "y": ys + [0.0],
            "measure": ["relative"] * len(keys) + ["total"],
            "text": text,
            "textposition": "outside",
            # hollow bars with a thick edge: the model's groups are filled
            "increasing": {"marker": {"color": HOLLOW, "line": {"color": MEASURED, "width": 2}}},
            "totals": {"marker": {"color": HOLLOW, "line": {"color": MEASURED, "width": 2}}},
            "connector": {"line": {"color": GREY, "dash": "dot"}},
            "hovertemplate": "%{x}: %{y:.2f} s<extra>measured</extra>",
        }
    )
    return fig
