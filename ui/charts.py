"""Chart builders: plain functions from core results to ``plotly.graph_objects.Figure``.

No streamlit here, so every chart can be built and checked in a plain test. Figures are built
as one dict and validated once (``go.Figure(dict)``): trace-by-trace ``add_*`` calls cost
tens of milliseconds per chart, which a page that reacts to every widget cannot afford. No
template is set: Streamlit's theme styles the charts, and a named Plotly template alone costs
~9 ms of validation per figure.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from model.scenario import Scenario
from model.units import MS, TERA
from ui.text import duration

COLORS = {
    "memory": "#4C78A8",
    "compute": "#F58518",
    "comm": "#B279A2",
    "launch": "#E45756",
    "host": "#9D755D",
    "tps": "#54A24B",
}


def _layout(title: str, legend_rows: int = 2, **extra) -> dict:
    """The common layout: title, and a horizontal legend at the very bottom of the figure
    (in the container's coordinates) with room kept under the x-axis title, so the two never
    overlap; ``legend_rows`` is how many legend lines to make room for."""
    return {
        "title": {"text": title},
        "margin": {"l": 60, "r": 30, "t": 50, "b": 58 + 22 * legend_rows},
        "legend": {
            "orientation": "h",
            "yref": "container",
            "yanchor": "bottom",
            "y": 0.01,
            "xanchor": "left",
            "x": 0,
        },
        "height": 520,
        **extra,
    }


def _log_vline(x: float, text: str, line: dict, yanchor: str = "top") -> tuple[dict, dict]:
    """A vertical line and its label on a log x axis. Plotly places shapes at the data value
    and annotations at its log10 (checked in Chromium)."""
    lx = float(np.log10(x))
    shape = {
        "type": "line",
        "xref": "x",
        "yref": "paper",
        "x0": x,
        "x1": x,
        "y0": 0,
        "y1": 1,
        "line": line,
    }
    note = {
        "x": lx,
        "y": 0.02 if yanchor == "bottom" else 0.98,
        "xref": "x",
        "yref": "paper",
        "text": text,
        "showarrow": False,
        "xanchor": "left",
        "yanchor": yanchor,
        "font": {"size": 11},
        "bgcolor": "rgba(255,255,255,0.7)",
    }
    return shape, note


def _list(a) -> list:
    return np.asarray(a, dtype=float).round(9).tolist()


def roofline_figure(s: Scenario, sw: dict, current: int, ridge: float, compute_dtype: str):
    """Log-log roofline: one roof per dtype the part has, the batch sweep's operating points
    (GPU time, and the whole step with launch + host), the current batch marked."""
    hw = s.hardware
    bw = hw.hbm_bandwidth_tb_s * 1e12
    ai = sw["arithmetic_intensity"]
    lo = max(min(float(np.min(ai)) / 3, 0.1), 1e-3)
    hi = max(float(np.max(ai)) * 3, ridge * 6, 1e3)
    data = []

    def roof(peak_tflops: float, bandwidth: float) -> tuple[list, list]:
        knee = peak_tflops * TERA / bandwidth
        xs = [lo, min(max(knee, lo), hi), hi]
        return xs, [min(peak_tflops, bandwidth * x / TERA) for x in xs]

    for dtype, tflops in sorted(hw.peak_tflops.items(), key=lambda kv: kv[1]):
        mine = dtype == compute_dtype
        xs, ys = roof(tflops, bw)
        data.append(
            {
                "type": "scatter",
                "x": xs,
                "y": ys,
                "mode": "lines",
                "name": f"{dtype.upper()} roof ({tflops:g} TFLOPS)",
                "line": {"width": 3 if mine else 1.2, "dash": "solid" if mine else "dot"},
                "hovertemplate": "AI %{x:.3g} FLOP/B<br>%{y:.4g} TFLOPS<extra>"
                + dtype
                + "</extra>",
            }
        )
    if s.bw_efficiency < 1 or s.flops_efficiency < 1:
        xs, ys = roof(hw.peak_tflops[compute_dtype] * s.flops_efficiency, bw * s.bw_efficiency)
        data.append(
            {
                "type": "scatter",
                "x": xs,
                "y": ys,
                "mode": "lines",
                "name": "effective roof (efficiencies)",
                "line": {"color": "grey", "dash": "dash"},
            }
        )
    batch = _list(sw["batch"])
    hover = "batch %{customdata:.0f}<br>AI %{x:.3g}<br>%{y:.4g} TFLOPS<extra></extra>"
    data.append(
        {
            "type": "scatter",
            "x": _list(ai),
            "y": _list(sw["attained_flops"] / TERA),
            "mode": "markers",
            "name": "batch sweep (GPU time)",
            "customdata": batch,
            "marker": {"size": 6, "color": _list(np.log2(sw["batch"])), "colorscale": "Viridis"},
            "hovertemplate": hover,
        }
    )
    data.append(
        {
            "type": "scatter",
            "x": _list(ai),
            "y": _list(sw["flops"] / s.gpus / sw["t_step_s"] / TERA),
            "mode": "markers",
            "name": "batch sweep (whole step)",
            "customdata": batch,
            "marker": {"size": 5, "symbol": "circle-open", "color": "grey"},
            "hovertemplate": hover,
        }
    )
    b_now = int(sw["batch"][current])
    data.append(
        {
            "type": "scatter",
            "x": [float(ai[current])],
            "y": [float(sw["attained_flops"][current] / TERA)],
            "mode": "markers+text",
            "name": f"batch {b_now}",
            "text": [f"batch {b_now}"],
            "textposition": "top left",
            "marker": {"size": 16, "symbol": "star", "color": "crimson"},
        }
    )
    shape, note = _log_vline(
        ridge,
        f"ridge {ridge:.0f} FLOP/B ({compute_dtype})",
        {"color": "black", "dash": "dash", "width": 1},
        yanchor="bottom",
    )
    layout = _layout(
        "Roofline of decode",
        legend_rows=3,
        xaxis={"type": "log", "title": {"text": "arithmetic intensity [FLOP/byte]"}},
        yaxis={"type": "log", "title": {"text": "attainable per GPU [TFLOPS]"}},
        shapes=[shape],
        annotations=[note],
    )
    return go.Figure({"data": data, "layout": layout})


def step_composition_figure(sw: dict, current_batch: int, ridge_batch: float | None):
    """Stacked step time per batch (memory / compute / all-reduce / launch / host), tok/s on a
    second axis, the ridge batch and the current batch marked."""
    b = _list(sw["batch"])
    roof = sw["t_gpu_s"] - sw["t_comm_s"]
    mem_bound = sw["t_memory_s"] >= sw["t_compute_s"]
    launch_visible = np.maximum(sw["t_step_s"] - sw["t_gpu_s"] - sw["t_host_s"], 0.0)
    parts = [
        ("memory (HBM)", np.where(mem_bound, roof, 0.0), COLORS["memory"]),
        ("compute", np.where(mem_bound, 0.0, roof), COLORS["compute"]),
        ("TP all-reduce", sw["t_comm_s"], COLORS["comm"]),
        ("launch", launch_visible, COLORS["launch"]),
        ("host", sw["t_host_s"], COLORS["host"]),
    ]
    data = [
        {
            "type": "scatter",
            "x": b,
            "y": _list(values / MS),
            "name": name,
            "stackgroup": "step",
            "mode": "lines",
            "line": {"width": 0.5, "color": color},
            "fillcolor": color,
            "hovertemplate": "batch %{x:.0f}<br>%{y:.3f} ms<extra>" + name + "</extra>",
        }
        for name, values, color in parts
        if np.any(values > 0)
    ]
    data.append(
        {
            "type": "scatter",
            "x": b,
            "y": _list(sw["tokens_per_s"]),
            "name": "tok/s (aggregate)",
            "yaxis": "y2",
            "mode": "lines",
            "line": {"color": COLORS["tps"], "width": 3},
            "hovertemplate": "batch %{x:.0f}<br>%{y:,.0f} tok/s<extra></extra>",
        }
    )
    shapes, notes = [], []
    for x, text, line in [
        (current_batch, f"batch {current_batch}", {"color": "crimson", "width": 1.5}),
        (
            ridge_batch,
            f"ridge ≈ batch {ridge_batch or 0:.0f}",
            {"color": "black", "dash": "dash", "width": 1},
        ),
    ]:
        if x is not None:
            shape, note = _log_vline(x, text, line)
            shapes.append(shape)
            notes.append(note)
    layout = _layout(
        "Step time composition across a batch sweep",
        legend_rows=2,
        xaxis={"type": "log", "title": {"text": "batch (concurrent sequences)"}},
        yaxis={"title": {"text": "step time [ms]"}, "rangemode": "tozero"},
        yaxis2={
            "title": {"text": "tokens/s"},
            "overlaying": "y",
            "side": "right",
            "rangemode": "tozero",
            "showgrid": False,
        },
        shapes=shapes,
        annotations=notes,
    )
    return go.Figure({"data": data, "layout": layout})


def memory_figure(mem: dict):
    """One GPU's HBM: weights, graph pool, KV cache at this batch, and what is left."""
    total = mem["hbm_per_gpu_gb"]
    usable = mem["usable_per_gpu_gb"]
    kv = mem["kv_per_gpu_gb"]
    free = max(usable - mem["weights_per_gpu_gb"] - mem["graph_memory_gb"] - kv, 0.0)
    parts = [
        ("weights", mem["weights_per_gpu_gb"], COLORS["memory"]),
        ("CUDA graphs", mem["graph_memory_gb"], COLORS["launch"]),
        ("KV cache (this batch)", kv, COLORS["compute"]),
        ("free for more KV", free, "#D3D3D3"),
        ("reserved (1 − utilisation)", total - usable, "#EEEEEE"),
    ]
    data = [
        {
            "type": "bar",
            "y": ["per GPU"],
            "x": [value],
            "name": name,
            "orientation": "h",
            "marker": {"color": color},
            "hovertemplate": f"{name}: %{{x:.2f}} GB<extra></extra>",
        }
        for name, value, color in parts
    ]
    layout = {
        "barmode": "stack",
        "height": 220,
        "margin": {"l": 60, "r": 30, "t": 40, "b": 40},
        "xaxis": {"title": {"text": "GB"}},
        "legend": {"orientation": "h", "y": -0.6},
        "title": {"text": "HBM per GPU"},
        "shapes": [
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": total,
                "x1": total,
                "y0": 0,
                "y1": 1,
                "line": {"color": "black", "width": 1},
            }
        ],
        "annotations": [
            {
                "x": total,
                "y": 1,
                "xref": "x",
                "yref": "paper",
                "showarrow": False,
                "text": f"{total:g} GB",
                "yanchor": "bottom",
            }
        ],
    }
    return go.Figure({"data": data, "layout": layout})


LANES = ["graph · GPU", "graph · CPU", "eager · GPU", "eager · CPU"]
LANE_Y = {name: float(i) for i, name in enumerate(LANES)}


def _segments(starts, ends, unit: float = MS) -> np.ndarray:
    """x values of one line trace drawing [start, end] segments (in ``unit``, default ms), NaN
    between them (a float array with NaN gaps validates and serialises far faster than a list
    with None)."""
    out = np.full(3 * len(starts), np.nan)
    out[0::3] = np.asarray(starts) / unit
    out[1::3] = np.asarray(ends) / unit
    return out


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
            xs = _segments(starts, ends)
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
        title = f"One decode step, eager against graph ({launch_model} launches)"
        top = max(eager["end"], timeline["graph"]["end"]) / MS
        xrange = [0, top * 1.55]
    else:
        k = min(zoom, len(eager["gpu_end"])) - 1
        title = f"Zoom: the first {k + 1} eager launches"
        lo = max(t_host / MS - 0.002, 0.0)
        xrange = [lo, float(max(eager["gpu_end"][k], eager["cpu_end"][k])) / MS]
    layout = _layout(
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
    return go.Figure({"data": data, "layout": layout})


MODE_COLORS = {
    "none": "#E45756",
    "piecewise": "#F58518",
    "full_decode_only": "#4C78A8",
    "full_and_piecewise": "#54A24B",
}


def mode_sweep_figure(grid, modes: dict, current_batch: int, capture_sizes, waste):
    """Top: step time per generated token across the batch for every graphs mode (the padding
    steps and the eager fallback above the largest bucket show as jumps). Bottom: the padding
    waste of each batch under the scenario's buckets."""
    b = np.asarray(grid, dtype=float)
    data = []
    for mode, sw in modes.items():
        data.append(
            {
                "type": "scatter",
                "x": b,
                "y": sw["t_step_s"] / sw["batch"] / MS * 1e3,
                "customdata": np.stack([sw["padded_batch"], sw["launches"]], axis=1),
                "mode": "lines",
                "name": mode + (" (eager)" if mode == "none" else ""),
                "line": {"color": MODE_COLORS[mode], "width": 2},
                "hovertemplate": "batch %{x:.0f} → padded %{customdata[0]:.0f}<br>"
                "%{y:.4g} µs per token<br>%{customdata[1]:.0f} launches<extra>" + mode + "</extra>",
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
    shape, note = _log_vline(current_batch, f"batch {current_batch}", {"color": "crimson"})
    largest = max(capture_sizes)
    shape2, note2 = _log_vline(
        largest,
        f"largest bucket {largest}",
        {"color": "grey", "dash": "dot", "width": 1},
        yanchor="bottom",
    )
    layout = _layout(
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
        shapes=[shape, shape2],
        annotations=[note, note2],
        legend_rows=1,
    )
    return go.Figure({"data": data, "layout": layout})


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
        (5.5, "5.5 GiB (the Q&A's AWQ)", -60, -45, "black"),
        (14.2, "14.2 GiB (the Q&A's BF16)", 50, -70, "black"),
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
    layout = _layout(
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
    return go.Figure({"data": data, "layout": layout})


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
        shape, note = _log_vline(current_batch, f"batch {current_batch}", {"color": "crimson"})
        shapes, notes = [shape], [note]
    layout = _layout(
        "Padding waste per real batch under these buckets",
        legend_rows=1,
        height=360,
        xaxis={"type": "log", "title": {"text": "real batch"}},
        yaxis={"title": {"text": "padding [% of compute]"}, "range": [0, 100]},
        shapes=shapes,
        annotations=notes,
    )
    return go.Figure({"data": data, "layout": layout})
