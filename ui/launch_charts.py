"""Chart builders of the Launch overhead page: one decode step's CPU/GPU timeline, the
step time per token per graphs mode, the graph speed-up against weight size, and the padding
waste of the capture buckets (see :mod:`ui.chart_common` for how figures are built)."""

from __future__ import annotations

import numpy as np

from model.units import MS
from ui.chart_common import COLORS, base_layout, figure, log_vline, segments, unfit_band
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
    host_x, host_y, notes = [], [], []
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
            host_x.extend([0.0, t_host / MS, np.nan])
            host_y.extend([LANE_Y[f"{kind} · CPU"]] * 2 + [np.nan])
        end = tl["end"]
        if zoom is None:
            notes.append(
                {
                    "x": end / MS,
                    "y": LANE_Y[f"{kind} · GPU"],
                    "text": f" {duration(end)} · {n:,} launch{'es' if n != 1 else ''} · "
                    f"GPU busy {tl['gpu_busy'] / end:.0%}",
                    "showarrow": False,
                    "xanchor": "left",
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
    if host_x:
        data.append(
            {
                "type": "scatter",
                "x": np.asarray(host_x),
                "y": np.asarray(host_y),
                "mode": "lines",
                "line": {"width": 22, "color": COLORS["host"]},
                "name": "host work",
                "hoverinfo": "skip",
            }
        )
    eager = timeline["eager"]
    if zoom is None:
        title = f"One decode step, eager against graph ({plotly_text(launch_model)} launches)"
        top = max(eager["end"], timeline["graph"]["end"]) / MS
        xrange = [0, top * 1.55]
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
        },
        annotations=notes,
        showlegend=zoom is None,
        legend_rows=1 if zoom is None else 0,
    )
    return figure(data, layout)


MODE_COLORS = {
    "none": "#E45756",
    "piecewise": "#F58518",
    "full_decode_only": "#4C78A8",
    "full_and_piecewise": "#54A24B",
}


def mode_sweep_figure(
    grid, modes: dict, current_batch: int, capture_sizes, waste, max_batch: int | None = None
):
    """Top: step time per generated token across the batch for every graphs mode (the padding
    steps and the eager fallback above the largest bucket show as jumps). Bottom: the padding
    waste of each batch under the scenario's buckets. The batches over ``max_batch`` (they do
    not fit in HBM) are shaded."""
    b = np.asarray(grid, dtype=float)
    data = []
    for mode, sw in modes.items():
        label = plotly_text(mode)
        data.append(
            {
                "type": "scatter",
                "x": b,
                "y": sw["t_step_s"] / sw["batch"] / MS * 1e3,
                "customdata": np.stack([sw["padded_batch"], sw["launches"]], axis=1),
                "mode": "lines",
                "name": label + (" (eager)" if mode == "none" else ""),
                "line": {"color": MODE_COLORS[mode], "width": 2},
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
            "line": {"color": "grey", "width": 1.5, "shape": "hv"},
            "fill": "tozeroy",
            "xaxis": "x",
            "yaxis": "y2",
            "hovertemplate": "batch %{x:.0f}<br>%{y:.1f} % padding<extra></extra>",
        }
    )
    shape, note = log_vline(current_batch, f"batch {current_batch}", {"color": "crimson"})
    largest = max(capture_sizes)
    shape2, note2 = log_vline(
        largest,
        f"largest bucket {largest}",
        {"color": "grey", "dash": "dot", "width": 1},
        yanchor="bottom",
    )
    band, band_notes = unfit_band(max_batch, float(b[-1]), float(b[0]))
    layout = base_layout(
        "Step time per generated token, per graphs mode",
        height=620,
        xaxis={"type": "log", "title": {"text": "batch (real sequences)"}, "anchor": "y2"},
        yaxis={
            "type": "log",
            "title": {"text": "µs per token (step / batch)"},
            "domain": [0.3, 1.0],
        },
        yaxis2={
            "title": {"text": "padding [%]"},
            "domain": [0.0, 0.22],
            "range": [0, 100],
            "anchor": "x",
        },
        shapes=[*band, shape, shape2],
        annotations=[*band_notes, note, note2],
        legend_rows=1,
    )
    return figure(data, layout)


def launch_share_figure(share: dict, kernels: int, launch_us: float, bandwidth_tb_s: float):
    """The Q&A's curve: across weight sizes at this N and τ, the graph speed-up and the launch
    tax (N·τ over the GPU time); the Q&A's 5.5 and 14.2 GiB and this model marked."""
    gib = share["weights_gib"]
    x = np.asarray(gib, dtype=float)
    data = [
        {
            "type": "scatter",
            "x": x,
            "y": share["speedup"],
            "mode": "lines",
            "name": "graph speed-up (eager / graph)",
            "line": {"color": COLORS["tps"], "width": 3},
            "hovertemplate": "%{x:.3g} GiB<br>%{y:.3f}×<extra></extra>",
        },
        {
            "type": "scatter",
            "x": x,
            "y": share["share"] * 100,
            "customdata": share["tax"] * 100,
            "mode": "lines",
            "name": "launches' share of the eager step [%]",
            "yaxis": "y2",
            "line": {"color": COLORS["launch"], "width": 2, "dash": "dash"},
            "hovertemplate": "%{x:.3g} GiB<br>%{y:.1f} % of the eager step<br>"
            "tax %{customdata:.1f} % of the GPU time<extra></extra>",
        },
    ]
    marks = [
        (5.5, "5.5 GiB (the Q&A post's AWQ)", -60, -45, "black"),
        (14.2, "14.2 GiB (the Q&A post's BF16)", 50, -70, "black"),
        (share["current_gib"], "this model", 40, 45, "crimson"),
    ]
    xs, ys, notes = [], [], []
    for g, label, ax, ay, color in marks:
        i = int(np.argmin(np.abs(gib - g)))
        xs.append(float(gib[i]))
        ys.append(float(share["speedup"][i]))
        notes.append(
            {
                "x": float(np.log10(gib[i])),  # annotations sit at log10(x) on a log axis
                "y": float(share["speedup"][i]),
                "xref": "x",
                "yref": "y",
                "text": f"{label}: {share['speedup'][i]:.2f}×, tax {share['tax'][i]:.0%}",
                "showarrow": True,
                "arrowhead": 0,
                "ax": ax,
                "ay": ay,
                "font": {"size": 11, "color": color},
                "bgcolor": "rgba(255,255,255,0.8)",
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
                "symbol": ["circle", "circle", "star"],
                "color": ["black", "black", "crimson"],
            },
            "name": "marked sizes",
            "hoverinfo": "skip",
        }
    )
    layout = base_layout(
        f"Graph speed-up against weight size (N = {kernels}, τ = {launch_us:g} µs, "
        f"{bandwidth_tb_s:.3g} TB/s)",
        legend_rows=2,
        xaxis={"type": "log", "title": {"text": "weights per GPU [GiB]"}},
        yaxis={"title": {"text": "graph speed-up [×]"}, "rangemode": "tozero"},
        yaxis2={
            "title": {"text": "launches' share of the eager step [%]"},
            "overlaying": "y",
            "side": "right",
            "range": [0, 100],
            "tickmode": "linear",
            "tick0": 0,
            "dtick": 20,
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
            "line": {"color": COLORS["launch"], "shape": "hv"},
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
            "marker": {"symbol": "line-ns-open", "size": 12, "color": "black"},
            "name": "captured sizes",
            "hovertemplate": "bucket %{x:.0f}<extra></extra>",
        },
    ]
    shapes, notes = [], []
    if current_batch <= b[-1]:
        shape, note = log_vline(current_batch, f"batch {current_batch}", {"color": "crimson"})
        shapes, notes = [shape], [note]
    layout = base_layout(
        "Padding waste per real batch under these buckets",
        legend_rows=1,
        height=360,
        xaxis={"type": "log", "title": {"text": "real batch"}},
        yaxis={"title": {"text": "padding [% of compute]"}, "range": [0, 100]},
        shapes=shapes,
        annotations=notes,
    )
    return figure(data, layout)
