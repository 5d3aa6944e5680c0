"""Chart builders of the Roofline page: the roofline, the step composition across a batch
sweep, and one GPU's HBM (see :mod:`ui.chart_common` for how figures are built)."""

from __future__ import annotations

import numpy as np

from model.scenario import Scenario
from model.units import MS, TERA
from ui.chart_common import (
    COLORS,
    GREY,
    INK,
    LIGHT_GREY,
    PALETTE,
    PAPER,
    PATTERNS,
    add_marks,
    area_pattern,
    as_list,
    base_layout,
    figure,
    log_axis,
    pattern_key,
    right_axis,
    sparse_markers,
    unfit_band,
)
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

    roofs: dict[float, list[tuple[str, str]]] = {}  # peak -> (dtype label, colour)
    for i, (dtype, tflops) in enumerate(sorted(hw.peak_tflops.items(), key=lambda kv: kv[1])):
        mine = dtype == compute_dtype
        label = plotly_text(dtype)
        color = PALETTE[i % len(PALETTE)]
        roofs.setdefault(float(tflops), []).append((label.upper(), color))
        xs, ys = roof(tflops, bw)
        data.append(
            {
                "type": "scatter",
                "x": xs,
                "y": ys,
                "mode": "lines",
                "name": f"{label.upper()} roof ({tflops:g} TFLOPS)",
                "line": {
                    "color": color,
                    "width": 3 if mine else 1.2,
                    "dash": "solid" if mine else "dot",
                },
                "showlegend": False,  # named at its right end instead (roof_labels)
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
                "line": {"color": GREY, "dash": "dash"},
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
                "line": {"color": GREY, "dash": "dot"},
            }
        )
    whole = sw["flops"] / s.gpus / sw["t_step_s"] / TERA  # the whole step's operating points
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
            "marker": {
                "size": 6,
                "color": as_list(np.log2(sw["batch"])),
                "colorscale": "Viridis",  # the batch, small (purple) to large (yellow)
                "line": {"width": 0.5, "color": INK},  # the dark end shows on a dark theme
            },
            "hovertemplate": hover,
        }
    )
    data.append(
        {
            "type": "scatter",
            "x": as_list(ai),
            "y": as_list(whole),
            "mode": "markers",
            "name": "batch sweep (whole step)",
            "customdata": batch,
            "marker": {"size": 5, "symbol": "circle-open", "color": GREY},
            "hovertemplate": hover,
        }
    )
    b_now = int(sw["batch"][current])
    star_x, star_y = float(ai[current]), float(sw["attained_flops"][current] / TERA)
    data.append(
        {
            "type": "scatter",
            "x": [star_x],
            "y": [star_y],
            "mode": "markers",
            "name": f"batch {b_now}",
            "marker": {
                "size": 16,
                "symbol": "star",
                "color": COLORS["now"],
                "line": {"width": 1, "color": PAPER},
            },
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
                "mode": "markers",
                "name": label,
                "marker": {
                    "size": 15,
                    "symbol": "diamond",
                    "color": COLORS["compute"],
                    "line": {"width": 1, "color": PAPER},
                },
                "hovertemplate": "prefill of "
                + f"{tokens:,} tokens"
                + (f" in {chunks} chunks" if chunks > 1 else "")
                + "<br>AI %{x:.4g} FLOP/B<br>%{y:.4g} TFLOPS<extra></extra>",
            }
        )
    y_lo = max(min(bw * lo / TERA, float(np.min(whole))) / 2, 1e-6)
    y_hi = max(hw.peak_tflops.values()) * 2.5
    notes = roof_labels(roofs, y_lo, y_hi)
    # the current batch named away from the roofs: up-left of a point on the slope (above the
    # roofs there), down-right of one under the flat part (under the effective roofs)
    sloped = star_x < ridge
    notes.append(
        {
            "x": float(np.log10(star_x)),
            "y": float(np.log10(star_y)),
            "xref": "x",
            "yref": "y",
            "ax": -28 if sloped else 28,
            "ay": -34 if sloped else 44,
            "xanchor": "right" if sloped else "left",
            "text": f"batch {b_now}",
            "showarrow": True,
            "arrowhead": 0,
            "arrowcolor": GREY,
            "font": {"size": 11},
        }
    )
    layout = base_layout(
        "Roofline of decode and prefill" if request is not None else "Roofline of decode",
        legend_rows=3,
        xaxis=log_axis(
            lo,
            hi,
            title={"text": "arithmetic intensity [FLOP/byte]"},
            range=[float(np.log10(lo)), float(np.log10(hi))],
        ),
        yaxis=log_axis(
            y_lo,
            y_hi,
            title={"text": "attainable per GPU [TFLOPS]"},
            range=[float(np.log10(y_lo)), float(np.log10(y_hi))],
        ),
        annotations=notes,
    )
    # the roofs' names, whole: ~6.3 px per character at 11 px (the PNG cut "FP32/TF32 82.6")
    longest = max(len(f"{'/'.join(n for n, _ in v)} {k:g}") + len(v) + 1 for k, v in roofs.items())
    layout["margin"]["r"] = max(100, int(16 + 6.3 * longest))
    add_marks(
        layout,
        [
            (
                ridge,
                f"ridge {ridge:.0f} FLOP/B ({plotly_text(compute_dtype)})",
                {"color": INK, "dash": "dash", "width": 1},
            )
        ],
        log=True,
        span=(lo, hi),
    )
    return figure(data, layout)


def roof_labels(roofs: dict[float, list[tuple[str, str]]], y_lo: float, y_hi: float) -> list:
    """Each roof's name at its right end, in the right margin (outside the plot: never on a
    curve), one label for the dtypes that share a peak; labels closer than a text line (on a
    ~340 px plot) are pushed apart upwards, each keeping its roof's colour as a swatch."""
    span = np.log10(y_hi / y_lo)
    gap = 15 / 340 * span  # one label's height, in decades
    notes, last = [], -np.inf
    for peak in sorted(roofs):
        names = roofs[peak]
        y = max(float(np.log10(peak)), last + gap)
        last = y
        swatch = "".join(f"<span style='color:{color}'>━</span>" for _, color in names)
        notes.append(
            {
                "x": 1,
                "xref": "paper",
                "xanchor": "left",
                "xshift": 4,
                "y": y,
                "yref": "y",
                "yanchor": "middle",
                "text": f"{swatch} {'/'.join(n for n, _ in names)} {peak:g}",
                "showarrow": False,
                "font": {"size": 11},
            }
        )
    return notes


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
        ("memory (HBM)", np.where(mem_bound, roof, 0.0), COLORS["memory"], PATTERNS[0]),
        ("compute", np.where(mem_bound, 0.0, roof), COLORS["compute"], PATTERNS[1]),
        ("TP all-reduce", sw["t_comm_s"], COLORS["comm"], PATTERNS[2]),
        ("launch", launch_visible, COLORS["launch"], PATTERNS[3]),
    ]
    fixed = sw["t_layer_fixed_s"]
    parts.append(("host", sw["t_host_s"] - fixed, COLORS["host"], PATTERNS[4]))
    if np.any(fixed > 0):  # MoE routing, MLA's small kernels, GEMM floors: beside the host work
        parts.append(("fixed work per layer (MoE, MLA, GEMM floors)", fixed, GREY, PATTERNS[5]))
    # a fill pattern per part beside its colour (the legend swatches carry it too)
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
            "fillpattern": area_pattern(pattern),
            "legendgroup": name,
            "showlegend": False,  # pattern_key shows the pattern in the legend
            "hovertemplate": "batch %{x:.0f}<br>%{y:.3f} ms<extra>" + name + "</extra>",
        }
        for name, values, color, pattern in parts
        if np.any(values > 0)
    ]
    data += [
        pattern_key(name, color, pattern)
        for name, values, color, pattern in parts
        if np.any(values > 0)
    ]
    data.append(
        {
            "type": "scatter",
            "x": b,
            "y": as_list(sw["tokens_per_s"]),
            "name": "tok/s (aggregate)",
            "yaxis": "y2",
            "mode": "lines+markers",
            "line": {"color": COLORS["tps"], "width": 3},
            "marker": sparse_markers(sw["batch"], "circle", size=7),
            "hovertemplate": "batch %{x:.0f}<br>%{y:,.0f} tok/s<extra></extra>",
        }
    )
    lo, top = float(sw["batch"][0]), float(sw["batch"][-1])
    shapes, band = unfit_band(max_batch, top, lo)
    layout = base_layout(
        "Step time composition across a batch sweep",
        legend_rows=2,
        xaxis=log_axis(lo, top, title={"text": "batch (concurrent sequences)"}),
        yaxis={"title": {"text": "step time [ms]"}, "rangemode": "tozero"},
        yaxis2=right_axis("tokens/s"),
        shapes=shapes,
    )
    marks = [
        (current_batch, f"batch {current_batch}", {"color": COLORS["now"], "width": 1.5}),
        (
            ridge_batch,
            f"ridge ≈ batch {ridge_batch or 0:.0f}",
            {"color": INK, "dash": "dash", "width": 1},
        ),
        (
            largest_capture,
            f"largest capture size {largest_capture}",
            {"color": GREY, "dash": "dot", "width": 1},
        ),
        *band,
    ]
    return figure(data, add_marks(layout, marks, log=True, span=(lo, top)))


def memory_figure(mem: dict):
    """One GPU's HBM: weights, graph pool, KV cache at this batch, and what is left."""
    total = mem["hbm_per_gpu_gb"]
    usable = mem["usable_per_gpu_gb"]
    kv = mem["kv_per_gpu_gb"]
    reserve = mem.get("engine_reserve_gb", 0.0)
    free = max(usable - mem["weights_per_gpu_gb"] - mem["graph_memory_gb"] - reserve - kv, 0.0)
    parts = [
        ("weights", mem["weights_per_gpu_gb"], COLORS["memory"], PATTERNS[0]),
        ("CUDA graphs", mem["graph_memory_gb"], COLORS["launch"], PATTERNS[3]),
        ("engine (activations, non-torch)", reserve, COLORS["host"], PATTERNS[4]),
        ("KV cache (this batch)", kv, COLORS["compute"], PATTERNS[1]),
        ("free for more KV", free, LIGHT_GREY, PATTERNS[5]),
        ("reserved (1 − utilisation)", total - usable, GREY, PATTERNS[2]),
    ]
    parts = [part for part in parts if part[1] > 0 or part[0] in ("weights", "free for more KV")]
    # colour, a pattern and (where it fits) the part's name on it: never colour alone
    data = [
        {
            "type": "bar",
            "y": ["per GPU"],
            "x": [value],
            "name": name,
            "orientation": "h",
            "marker": {
                "color": color,
                "pattern": area_pattern(pattern),
            },
            "text": [name.split(" (")[0]],
            "textposition": "inside",
            "insidetextanchor": "middle",
            "hovertemplate": f"{name}: %{{x:.2f}} GB<extra></extra>",
        }
        for name, value, color, pattern in parts
    ]
    layout = {
        "barmode": "stack",
        "height": 220,
        "margin": {"l": 60, "r": 30, "t": 40, "b": 40},
        "xaxis": {"title": {"text": "GB"}},
        "legend": {"orientation": "h", "y": -0.6},
        "uniformtext": {"minsize": 10, "mode": "hide"},  # a name that does not fit is left out
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
                "line": {"color": INK, "width": 1},
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
                "xanchor": "right",
            }
        ],
    }
    return figure(data, layout)
