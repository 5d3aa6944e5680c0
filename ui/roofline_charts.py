"""Chart builders of the Roofline page: the roofline, the step composition across a batch
sweep, and one GPU's HBM (see :mod:`ui.chart_common` for how figures are built)."""

from __future__ import annotations

import numpy as np

from model.scenario import Scenario
from model.units import MS, TERA
from ui.chart_common import COLORS, as_list, base_layout, figure, log_vline, unfit_band
from ui.text import plotly_text


def roofline_figure(
    s: Scenario,
    sw: dict,
    current: int,
    ridge: float,
    compute_dtype: str,
    request: dict | None = None,
):
    """Log-log roofline: one roof per dtype the part has, the batch sweep's operating points
    (GPU time, and the whole step with launch + host), the current batch marked, and the
    prefill of one prompt as its own operating point (``request``: the ``request`` section)."""
    s = s.effective()  # the efficiencies may be 'auto' (the engine's) in a raw scenario
    hw = s.hardware
    bw = hw.hbm_bandwidth_tb_s * 1e12
    ai = sw["arithmetic_intensity"]
    points = [float(np.min(ai)), float(np.max(ai))]
    if request is not None:
        points.append(float(request["prefill_arithmetic_intensity"]))
    lo = max(min(min(points) / 3, 0.1), 1e-3)
    hi = max(max(points) * 3, ridge * 6, 1e3)
    data = []

    def roof(peak_tflops: float, bandwidth: float) -> tuple[list, list]:
        knee = peak_tflops * TERA / bandwidth
        xs = [lo, min(max(knee, lo), hi), hi]
        return xs, [min(peak_tflops, bandwidth * x / TERA) for x in xs]

    for dtype, tflops in sorted(hw.peak_tflops.items(), key=lambda kv: kv[1]):
        mine = dtype == compute_dtype
        label = plotly_text(dtype)
        xs, ys = roof(tflops, bw)
        data.append(
            {
                "type": "scatter",
                "x": xs,
                "y": ys,
                "mode": "lines",
                "name": f"{label.upper()} roof ({tflops:g} TFLOPS)",
                "line": {"width": 3 if mine else 1.2, "dash": "solid" if mine else "dot"},
                "hovertemplate": "AI %{x:.3g} FLOP/B<br>%{y:.4g} TFLOPS<extra>"
                + label
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
                "name": "effective roof, decode (efficiencies)",
                "line": {"color": "grey", "dash": "dash"},
            }
        )
    if request is not None and s.prefill_efficiency != s.flops_efficiency:
        xs, ys = roof(hw.peak_tflops[compute_dtype] * s.prefill_efficiency, bw * s.bw_efficiency)
        data.append(
            {
                "type": "scatter",
                "x": xs,
                "y": ys,
                "mode": "lines",
                "name": "effective roof, prefill",
                "line": {"color": "grey", "dash": "dot"},
            }
        )
    batch = as_list(sw["batch"])
    hover = "batch %{customdata:.0f}<br>AI %{x:.3g}<br>%{y:.4g} TFLOPS<extra></extra>"
    data.append(
        {
            "type": "scatter",
            "x": as_list(ai),
            "y": as_list(sw["attained_flops"] / TERA),
            "mode": "markers",
            "name": "batch sweep (GPU time)",
            "customdata": batch,
            "marker": {"size": 6, "color": as_list(np.log2(sw["batch"])), "colorscale": "Viridis"},
            "hovertemplate": hover,
        }
    )
    data.append(
        {
            "type": "scatter",
            "x": as_list(ai),
            "y": as_list(sw["flops"] / s.gpus / sw["t_step_s"] / TERA),
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
    if request is not None:
        tokens = int(request["prompt_tokens"])
        chunks = int(request["prefill_chunks"])
        label = f"prefill ({tokens:,} tokens)"
        data.append(
            {
                "type": "scatter",
                "x": [float(request["prefill_arithmetic_intensity"])],
                "y": [float(request["prefill_attained_tflops"])],
                "mode": "markers+text",
                "name": label,
                "text": [label],
                "textposition": "bottom left",
                "marker": {"size": 15, "symbol": "diamond", "color": COLORS["compute"]},
                "hovertemplate": "prefill of "
                + f"{tokens:,} tokens"
                + (f" in {chunks} chunks" if chunks > 1 else "")
                + "<br>AI %{x:.4g} FLOP/B<br>%{y:.4g} TFLOPS<extra></extra>",
            }
        )
    shape, note = log_vline(
        ridge,
        f"ridge {ridge:.0f} FLOP/B ({plotly_text(compute_dtype)})",
        {"color": "black", "dash": "dash", "width": 1},
        yanchor="bottom",
    )
    layout = base_layout(
        "Roofline of decode and prefill" if request is not None else "Roofline of decode",
        legend_rows=3,
        xaxis={"type": "log", "title": {"text": "arithmetic intensity [FLOP/byte]"}},
        yaxis={"type": "log", "title": {"text": "attainable per GPU [TFLOPS]"}},
        shapes=[shape],
        annotations=[note],
    )
    return figure(data, layout)


def step_composition_figure(
    sw: dict,
    current_batch: int,
    ridge_batch: float | None,
    max_batch: int | None = None,
    largest_capture: int | None = None,
):
    """Stacked step time per batch (memory / compute / all-reduce / launch / host), tok/s on a
    second axis, the ridge batch and the current batch marked; the batches over ``max_batch``
    (they do not fit in HBM) shaded, and the largest captured size marked (above it the step
    runs eager)."""
    b = as_list(sw["batch"])
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
            "y": as_list(values / MS),
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
            "y": as_list(sw["tokens_per_s"]),
            "name": "tok/s (aggregate)",
            "yaxis": "y2",
            "mode": "lines",
            "line": {"color": COLORS["tps"], "width": 3},
            "hovertemplate": "batch %{x:.0f}<br>%{y:,.0f} tok/s<extra></extra>",
        }
    )
    shapes, notes = unfit_band(max_batch, float(sw["batch"][-1]), float(sw["batch"][0]))
    for x, text, line, anchor in [
        (current_batch, f"batch {current_batch}", {"color": "crimson", "width": 1.5}, "top"),
        (
            ridge_batch,
            f"ridge ≈ batch {ridge_batch or 0:.0f}",
            {"color": "black", "dash": "dash", "width": 1},
            "top",
        ),
        (
            largest_capture,
            f"largest capture size {largest_capture}",
            {"color": "grey", "dash": "dot", "width": 1},
            "bottom",
        ),
    ]:
        if x is not None:
            shape, note = log_vline(x, text, line, yanchor=anchor)
            shapes.append(shape)
            notes.append(note)
    layout = base_layout(
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
    return figure(data, layout)


def memory_figure(mem: dict):
    """One GPU's HBM: weights, graph pool, KV cache at this batch, and what is left."""
    total = mem["hbm_per_gpu_gb"]
    usable = mem["usable_per_gpu_gb"]
    kv = mem["kv_per_gpu_gb"]
    reserve = mem.get("engine_reserve_gb", 0.0)
    free = max(usable - mem["weights_per_gpu_gb"] - mem["graph_memory_gb"] - reserve - kv, 0.0)
    parts = [
        ("weights", mem["weights_per_gpu_gb"], COLORS["memory"]),
        ("CUDA graphs", mem["graph_memory_gb"], COLORS["launch"]),
        ("engine (activations, non-torch)", reserve, COLORS["host"]),
        ("KV cache (this batch)", kv, COLORS["compute"]),
        ("free for more KV", free, "#D3D3D3"),
        ("reserved (1 − utilisation)", total - usable, "#EEEEEE"),
    ]
    parts = [part for part in parts if part[1] > 0 or part[0] in ("weights", "free for more KV")]
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
                "text": f"{mem['hbm_per_gpu_gib']:g} GiB = {total:.1f} GB"
                if "hbm_per_gpu_gib" in mem
                else f"{total:g} GB",
                "yanchor": "bottom",
            }
        ],
    }
    return figure(data, layout)
