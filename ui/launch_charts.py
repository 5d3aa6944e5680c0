"""Chart builders of the Launch overhead page: one decode step's CPU/GPU timeline, the
step time per token per graphs mode, the graph speed-up against weight size, and the padding
waste of the capture buckets (see :mod:`ui.chart_common` for how figures are built)."""

from __future__ import annotations

import numpy as np

from model.units import MS
from ui.chart_common import (
    BLUE,
    COLORS,
    GREEN,
    GREY,
    INK,
    ORANGE,
    PAPER,
    SYMBOLS,
    VERMILLION,
    add_marks,
    area_pattern,
    base_layout,
    extent,
    figure,
    log_axis,
    segments,
    sparse_markers,
    unfit_band,
)
from ui.text import duration, plotly_text

LANES = ["graph · GPU", "graph · CPU", "eager · GPU", "eager · CPU"]
LANE_Y = {name: float(i) for i, name in enumerate(LANES)}


def _lane_end(tl: dict, lane: str) -> float:
    """Where a lane's last bar ends: the step's end for the GPU, the last launch for the CPU
    (the arrays may hold only the first launches of a long step)."""
    if lane == "GPU":
        return tl["end"] if tl["gpu_end"].size < tl["launches"] else float(tl["gpu_end"][-1])
    per = (tl["cpu_start"][1] - tl["cpu_start"][0]) if tl["cpu_start"].size > 1 else 0.0
    return float(
        tl["cpu_start"][0] + per * (tl["launches"] - 1) + (tl["cpu_end"][0] - tl["cpu_start"][0])
    )


def timeline_figure(timeline: dict, t_host: float, launch_model: str, zoom: int | None = None):
    """One decode step, eager above graph: the CPU lane (host work, then one bar per launch)
    and the GPU lane (one bar per kernel or replay); the gaps in the GPU lane are the bubbles.

    With ``zoom`` the x axis shows only the first ``zoom`` eager launches, where single kernels
    and bubbles are wide enough to see (a tick marks each start, for kernels shorter than a
    pixel). Without it, a lane with many sub-pixel kernels also gets a faint band over its
    span, so the whole step reads at a glance. Each kind of bar is one trace across all lanes
    (NaN-separated segments): fewer traces keep the figure cheap to validate."""
    parts = {"CPU": ([], [], []), "GPU": ([], [], [])}  # x, y, ticks per colour
    bands = {"CPU": ([], []), "GPU": ([], [])}
    host_x, notes = [], []
    for kind in ("graph", "eager"):
        tl = timeline[kind]
        n = tl["launches"]
        for lane, starts, ends in (
            ("CPU", tl["cpu_start"], tl["cpu_end"]),
            ("GPU", tl["gpu_start"], tl["gpu_end"]),
        ):
            y = LANE_Y[f"{kind} · {lane}"]
            if zoom is None and n > 40:
                bands[lane][0].extend([starts[0] / MS, _lane_end(tl, lane) / MS, np.nan])
                bands[lane][1].extend([y, y, np.nan])
            if zoom is not None:
                starts, ends = starts[:zoom], ends[:zoom]
                parts[lane][2].append(starts / MS)
            xs = segments(starts, ends)
            parts[lane][0].append(xs)
            parts[lane][1].append(np.full(xs.size, y))
        if t_host > 0:
            host_x.append(t_host / MS)
        end = tl["end"]
        if zoom is None:
            notes.append(
                {
                    "x": end / MS,
                    "y": LANE_Y[f"{kind} · GPU"],
                    # two short lines: one long line ran past a half-width chart's edge
                    "text": f" {duration(end)} · {n:,} launch{'es' if n != 1 else ''}<br>"
                    f" GPU busy {tl['gpu_busy'] / end:.0%}",
                    "showarrow": False,
                    "xanchor": "left",
                    "align": "left",
                    "font": {"size": 11},
                }
            )
    data = []
    for lane, color, name in (
        ("CPU", COLORS["launch"], "launch (τ each)"),
        ("GPU", COLORS["memory"], "GPU work"),
    ):
        bx, by = bands[lane]
        if bx:
            data.append(
                {
                    "type": "scatter",
                    "x": np.asarray(bx),
                    "y": np.asarray(by),
                    "mode": "lines",
                    "line": {"width": 22, "color": color},
                    "opacity": 0.3,
                    "showlegend": False,
                    "hoverinfo": "skip",
                }
            )
        xs, ys, ticks = parts[lane]
        data.append(
            {
                "type": "scatter",
                "x": np.concatenate(xs),
                "y": np.concatenate(ys),
                "mode": "lines",
                "line": {"width": 22, "color": color},
                "name": name,
                "hoverinfo": "skip",
            }
        )
        if ticks:
            tx = np.concatenate(ticks)
            ty = np.concatenate(
                [
                    np.full(len(tk), LANE_Y[f"{kind} · {lane}"])
                    for tk, kind in zip(ticks, ("graph", "eager"), strict=True)
                ]
            )
            data.append(
                {
                    "type": "scatter",
                    "x": tx,
                    "y": ty,
                    "mode": "markers",
                    "marker": {
                        "symbol": "line-ns",
                        "size": 22,
                        "line": {"width": 1.5, "color": color},
                    },
                    "showlegend": False,
                    "hoverinfo": "skip",
                }
            )
    if host_x:  # bars, so the host work carries a pattern beside its colour
        data.append(
            {
                "type": "bar",
                "orientation": "h",
                "x": [t_host / MS] * 2,
                "base": [0.0, 0.0],
                "y": [LANE_Y["graph · CPU"], LANE_Y["eager · CPU"]],
                "width": 0.5,
                "marker": {
                    "color": COLORS["host"],
                    "line": {"width": 0},
                    "pattern": area_pattern("/"),
                },
                "name": "host work",
                "hoverinfo": "skip",
            }
        )
    eager = timeline["eager"]
    if zoom is None:
        title = f"One decode step, eager against graph ({plotly_text(launch_model)} launches)"
        top = max(eager["end"], timeline["graph"]["end"]) / MS
        xrange = [0, top * 1.6]
    else:
        k = min(zoom, len(eager["gpu_end"])) - 1
        title = f"Zoom: the first {k + 1} eager launches"
        lo = max(t_host / MS - 0.002, 0.0)
        xrange = [lo, float(max(eager["gpu_end"][k], eager["cpu_end"][k])) / MS]
    layout = base_layout(
        title,
        height=340,
        xaxis={"title": {"text": "time in the step [ms]"}, "range": xrange},
        yaxis={
            "tickmode": "array",
            "tickvals": list(LANE_Y.values()),
            "ticktext": LANES,
            "range": [-0.6, len(LANES) - 0.4],
            "zeroline": False,
            "showgrid": False,
            "automargin": True,  # the lane names whole in any font (the report's: "ager · CPU")
        },
        annotations=notes,
        showlegend=zoom is None,
        legend_rows=1 if zoom is None else 0,
    )
    return figure(data, layout)


MODE_COLORS = {
    "none": VERMILLION,
    "piecewise": ORANGE,
    "full_decode_only": BLUE,
    "full_and_piecewise": GREEN,
}
#: each mode's marker (the second cue: full_decode_only and full_and_piecewise often coincide)
MODE_SYMBOLS = dict(zip(MODE_COLORS, SYMBOLS, strict=False))


def mode_sweep_figure(
    grid, modes: dict, current_batch: int, capture_sizes, waste, max_batch: int | None = None
):
    """Top: step time per generated token across the batch for every graphs mode (the padding
    steps and the eager fallback above the largest bucket show as jumps). Bottom: the padding
    waste of each batch under the scenario's buckets. The batches over ``max_batch`` (they do
    not fit in HBM) are shaded."""
    b = np.asarray(grid, dtype=float)
    data = []
    for k, (mode, sw) in enumerate(modes.items()):
        label = plotly_text(mode)
        data.append(
            {
                "type": "scatter",
                "x": b,
                "y": sw["t_step_s"] / sw["batch"] / MS * 1e3,
                "customdata": np.stack([sw["padded_batch"], sw["launches"]], axis=1),
                "mode": "lines+markers",
                "name": label + (" (eager)" if mode == "none" else ""),
                "line": {"color": MODE_COLORS[mode], "width": 2},
                # a few markers per line, side by side where the modes' lines coincide
                "marker": sparse_markers(b, MODE_SYMBOLS[mode], slot=k, slots=len(modes)),
                "hovertemplate": "batch %{x:.0f} → padded %{customdata[0]:.0f}<br>"
                "%{y:.4g} µs per token<br>%{customdata[1]:.0f} launches<extra>"
                + label
                + "</extra>",
            }
        )
    data.append(
        {
            "type": "scatter",
            "x": b,
            "y": np.asarray(waste) * 100,
            "mode": "lines",
            "name": "padding waste (these buckets)",
            "line": {"color": GREY, "width": 1.5, "shape": "hv"},
            "fill": "tozeroy",
            "xaxis": "x",
            "yaxis": "y2",
            "hovertemplate": "batch %{x:.0f}<br>%{y:.1f} % padding<extra></extra>",
        }
    )
    largest = max(capture_sizes)
    band, band_marks = unfit_band(max_batch, float(b[-1]), float(b[0]))
    per_token = [sw["t_step_s"] / sw["batch"] / MS * 1e3 for sw in modes.values()]
    layout = base_layout(
        "Step time per generated token, per graphs mode",
        height=620,
        xaxis=log_axis(b[0], b[-1], title={"text": "batch (real sequences)"}, anchor="y2"),
        yaxis=log_axis(
            *extent(*per_token), title={"text": "µs per token (step / batch)"}, domain=[0.3, 1.0]
        ),
        yaxis2={
            "title": {"text": "padding [%]"},
            "domain": [0.0, 0.22],
            "range": [0, 100],
            "anchor": "x",
        },
        shapes=band,
        legend_rows=1,
    )
    marks = [
        (current_batch, f"batch {current_batch}", {"color": COLORS["now"], "width": 1.5}),
        (largest, f"largest bucket {largest}", {"color": GREY, "dash": "dot", "width": 1}),
        *band_marks,
    ]
    return figure(data, add_marks(layout, marks, log=True, span=(float(b[0]), float(b[-1]))))


def launch_share_figure(share: dict, kernels: int, launch_us: float, bandwidth_tb_s: float):
    """The Q&A's curve: across weight sizes at this N and τ, the graph speed-up and the launch
    tax (N·τ over the GPU time); the Q&A's 5.5 and 14.2 GiB and this model marked. Both
    curves fall from the upper left, so the axes keep their top fifth free for the marks'
    labels, an arrow from each to its point."""
    gib = share["weights_gib"]
    x = np.asarray(gib, dtype=float)
    data = [
        {
            "type": "scatter",
            "x": x,
            "y": share["speedup"],
            "mode": "lines+markers",
            "name": "graph speed-up (eager / graph)",
            "line": {"color": COLORS["tps"], "width": 3},
            "marker": sparse_markers(x, "circle", n=10, slot=0, slots=2),
            "hovertemplate": "%{x:.3g} GiB<br>%{y:.3f}×<extra></extra>",
        },
        {
            "type": "scatter",
            "x": x,
            "y": share["share"] * 100,
            "customdata": share["tax"] * 100,
            "mode": "lines+markers",
            "name": "launches' share of the eager step [%]",
            "yaxis": "y2",
            "line": {"color": COLORS["launch"], "width": 2},
            "marker": sparse_markers(x, "square", n=10, slot=1, slots=2),
            "hovertemplate": "%{x:.3g} GiB<br>%{y:.1f} % of the eager step<br>"
            "tax %{customdata:.1f} % of the GPU time<extra></extra>",
        },
    ]
    marks = [
        (5.5, "5.5 GiB (AWQ weights, worked example)", "circle", INK),
        (14.2, "14.2 GiB (BF16 weights, worked example)", "circle", INK),
        (share["current_gib"], "this model", "star", COLORS["now"]),
    ]
    top = float(np.nanmax(share["speedup"])) * 1.45
    x_lo, x_hi = float(np.log10(x[0])), float(np.log10(x[-1]))
    xs, ys, notes = [], [], []
    for row, (g, label, _, _) in enumerate(marks):
        i = int(np.argmin(np.abs(gib - g)))
        xs.append(float(gib[i]))
        ys.append(float(share["speedup"][i]))
        notes.append(
            {
                "x": float(np.log10(gib[i])),  # annotations sit at log10(x) on a log axis
                "y": float(share["speedup"][i]),
                "xref": "x",
                "yref": "y",
                # the label's place in data units (log10 on the x axis), in the top right
                # where both curves have fallen away; one row each
                "axref": "x",
                "ayref": "y",
                "ax": x_lo + 0.98 * (x_hi - x_lo),
                "ay": top * (0.96 - 0.07 * row),
                "xanchor": "right",
                "text": f"{label}: {share['speedup'][i]:.2f}×, tax {share['tax'][i]:.0%}",
                "showarrow": True,
                "arrowhead": 0,
                "arrowcolor": GREY,
                "font": {"size": 11},
                "bgcolor": PAPER,
            }
        )
    data.append(
        {
            "type": "scatter",
            "x": xs,
            "y": ys,
            "mode": "markers",
            "marker": {
                "size": [10, 10, 16],
                "symbol": [m[2] for m in marks],
                "color": [m[3] for m in marks],
                "line": {"width": 1, "color": PAPER},
            },
            "name": "marked sizes",
            "hoverinfo": "skip",
        }
    )
    layout = base_layout(
        f"Graph speed-up against weight size (N = {kernels}, τ = {launch_us:g} µs, "
        f"{bandwidth_tb_s:.3g} TB/s)",
        legend_rows=2,
        xaxis=log_axis(x[0], x[-1], title={"text": "weights per GPU [GiB]"}, range=[x_lo, x_hi]),
        yaxis={"title": {"text": "graph speed-up [×]"}, "range": [0, top]},
        yaxis2={
            "title": {"text": "launches' share of the eager step [%]"},
            "overlaying": "y",
            "side": "right",
            "range": [0, 145],  # the same free top fifth as the speed-up's axis
            "tickmode": "array",
            "tickvals": [0, 20, 40, 60, 80, 100],
            "showgrid": False,
        },
        annotations=notes,
    )
    return figure(data, layout)


def bucket_figure(buckets: dict, capture_sizes, current_batch: int):
    """Padding waste of every real batch up to the largest bucket under these capture sizes,
    the buckets marked; the current batch marked."""
    b = buckets["batch"]
    waste = buckets["waste"]
    if b.size > 4096:  # keep the chart light: every bucket edge plus a log-spaced sample
        keep = np.unique(
            np.concatenate(
                [
                    np.round(np.geomspace(1, b[-1], 3000)) - 1,
                    np.asarray(capture_sizes, dtype=float) - 1,
                    np.asarray(capture_sizes, dtype=float),
                ]
            ).clip(0, b.size - 1)
        ).astype(int)
        b, waste = b[keep], waste[keep]
    data = [
        {
            "type": "scatter",
            "x": b,
            "y": waste * 100,
            "mode": "lines",
            "line": {"color": GREY, "shape": "hv"},
            "fill": "tozeroy",
            "name": "padding waste",
            "hovertemplate": "batch %{x:.0f}<br>%{y:.1f} % of the compute is padding"
            "<extra></extra>",
        },
        {
            "type": "scatter",
            "x": [float(c) for c in capture_sizes],
            "y": [0.0] * len(capture_sizes),
            "mode": "markers",
            "marker": {"symbol": "line-ns-open", "size": 12, "color": INK},
            "name": "captured sizes",
            "hovertemplate": "bucket %{x:.0f}<extra></extra>",
        },
    ]
    layout = base_layout(
        "Padding waste per real batch under these buckets",
        legend_rows=1,
        height=360,
        xaxis=log_axis(b[0], b[-1], title={"text": "real batch"}),
        yaxis={"title": {"text": "padding [% of compute]"}, "range": [0, 100]},
    )
    marks = []
    if current_batch <= b[-1]:
        marks = [(current_batch, f"batch {current_batch}", {"color": COLORS["now"], "width": 1.5})]
    return figure(data, add_marks(layout, marks, log=True, span=(float(b[0]), float(b[-1]))))
