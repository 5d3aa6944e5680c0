"""Chart builders: plain functions from core results to ``plotly.graph_objects.Figure``.

No streamlit here, so every chart can be built and checked in a plain test.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from model.scenario import Scenario
from model.units import MS, TERA

COLORS = {
    "memory": "#4C78A8",
    "compute": "#F58518",
    "comm": "#B279A2",
    "launch": "#E45756",
    "host": "#9D755D",
    "tps": "#54A24B",
}
_LAYOUT = dict(
    template="plotly_white",
    margin=dict(l=60, r=30, t=50, b=40),
    legend=dict(orientation="h", yanchor="top", y=-0.18, xanchor="left", x=0),
    height=520,
)


def _log_vline(fig, x: float, text: str, line: dict, yanchor: str = "top") -> None:
    """A vertical line on a log x axis: shapes take the value, annotations its log10."""
    fig.add_vline(x=x, line=line)
    fig.add_annotation(
        x=float(np.log10(x)),
        y=0.02 if yanchor == "bottom" else 0.98,
        yref="paper",
        text=text,
        showarrow=False,
        xanchor="left",
        yanchor=yanchor,
        font=dict(size=11),
        bgcolor="rgba(255,255,255,0.7)",
    )


def roofline_figure(s: Scenario, sw: dict, current: int, ridge: float, compute_dtype: str):
    """Log-log roofline: one roof per dtype the part has, the batch sweep's operating points
    (GPU time, and the whole step with launch + host), the current batch marked."""
    hw = s.hardware
    bw = hw.hbm_bandwidth_tb_s * 1e12
    ai = sw["arithmetic_intensity"]
    lo = max(min(float(np.min(ai)) / 3, 0.1), 1e-3)
    hi = max(float(np.max(ai)) * 3, ridge * 6, 1e3)
    x = np.geomspace(lo, hi, 200)
    fig = go.Figure()
    for dtype, tflops in sorted(hw.peak_tflops.items(), key=lambda kv: kv[1]):
        mine = dtype == compute_dtype
        fig.add_scatter(
            x=x,
            y=np.minimum(tflops * TERA, bw * x) / TERA,
            mode="lines",
            name=f"{dtype.upper()} roof ({tflops:g} TFLOPS)",
            line=dict(width=3 if mine else 1.2, dash=None if mine else "dot"),
            hovertemplate="AI %{x:.3g} FLOP/B<br>%{y:.4g} TFLOPS<extra>" + dtype + "</extra>",
        )
    if s.bw_efficiency < 1 or s.flops_efficiency < 1:
        peak = hw.peak_tflops[compute_dtype] * s.flops_efficiency
        fig.add_scatter(
            x=x,
            y=np.minimum(peak * TERA, bw * s.bw_efficiency * x) / TERA,
            mode="lines",
            name="effective roof (efficiencies)",
            line=dict(color="grey", dash="dash"),
        )
    step_tflops = sw["flops"] / s.gpus / sw["t_step_s"] / TERA
    fig.add_scatter(
        x=ai,
        y=sw["attained_flops"] / TERA,
        mode="markers",
        name="batch sweep (GPU time)",
        marker=dict(size=6, color=np.log2(sw["batch"]), colorscale="Viridis", showscale=False),
        customdata=sw["batch"],
        hovertemplate="batch %{customdata:.0f}<br>AI %{x:.3g}<br>%{y:.4g} TFLOPS<extra></extra>",
    )
    fig.add_scatter(
        x=ai,
        y=step_tflops,
        mode="markers",
        name="batch sweep (whole step)",
        marker=dict(size=5, symbol="circle-open", color="grey"),
        customdata=sw["batch"],
        hovertemplate="batch %{customdata:.0f}<br>AI %{x:.3g}<br>%{y:.4g} TFLOPS<extra></extra>",
    )
    fig.add_scatter(
        x=[ai[current]],
        y=[sw["attained_flops"][current] / TERA],
        mode="markers+text",
        name=f"batch {int(sw['batch'][current])}",
        text=[f"batch {int(sw['batch'][current])}"],
        textposition="top left",
        marker=dict(size=16, symbol="star", color="crimson"),
    )
    _log_vline(
        fig,
        ridge,
        f"ridge {ridge:.0f} FLOP/B ({compute_dtype})",
        dict(color="black", dash="dash", width=1),
        yanchor="bottom",
    )
    fig.update_xaxes(type="log", title="arithmetic intensity [FLOP/byte]")
    fig.update_yaxes(type="log", title="attainable per GPU [TFLOPS]")
    fig.update_layout(title="Roofline of decode", **_LAYOUT)
    return fig


def step_composition_figure(sw: dict, current_batch: int, ridge_batch: float | None):
    """Stacked step time per batch (memory / compute / all-reduce / launch / host), tok/s on a
    second axis, the ridge batch and the current batch marked."""
    b = sw["batch"]
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
    fig = go.Figure()
    for name, values, color in parts:
        if not np.any(values > 0):
            continue
        fig.add_scatter(
            x=b,
            y=values / MS,
            name=name,
            stackgroup="step",
            mode="lines",
            line=dict(width=0.5, color=color),
            fillcolor=color,
            hovertemplate="batch %{x:.0f}<br>%{y:.3f} ms<extra>" + name + "</extra>",
        )
    fig.add_scatter(
        x=b,
        y=sw["tokens_per_s"],
        name="tok/s (aggregate)",
        yaxis="y2",
        mode="lines",
        line=dict(color=COLORS["tps"], width=3),
        hovertemplate="batch %{x:.0f}<br>%{y:,.0f} tok/s<extra></extra>",
    )
    _log_vline(fig, current_batch, f"batch {current_batch}", dict(color="crimson", width=1.5))
    if ridge_batch is not None:
        _log_vline(
            fig,
            ridge_batch,
            f"ridge ≈ batch {ridge_batch:.0f}",
            dict(color="black", dash="dash", width=1),
        )
    fig.update_layout(
        title="Step time composition across a batch sweep",
        xaxis=dict(type="log", title="batch (concurrent sequences)"),
        yaxis=dict(title="step time [ms]", rangemode="tozero"),
        yaxis2=dict(
            title="tokens/s", overlaying="y", side="right", rangemode="tozero", showgrid=False
        ),
        **_LAYOUT,
    )
    return fig


def memory_figure(mem: dict):
    """One GPU's HBM: weights, graph pool, KV cache at this batch, and what is left."""
    total = mem["hbm_per_gpu_gb"]
    usable = mem["usable_per_gpu_gb"]
    kv = mem["kv_per_gpu_gb"]
    parts = [
        ("weights", mem["weights_per_gpu_gb"], COLORS["memory"]),
        ("CUDA graphs", mem["graph_memory_gb"], COLORS["launch"]),
        ("KV cache (this batch)", kv, COLORS["compute"]),
        (
            "free for more KV",
            max(usable - mem["weights_per_gpu_gb"] - mem["graph_memory_gb"] - kv, 0.0),
            "#D3D3D3",
        ),
        ("reserved (1 − utilisation)", total - usable, "#EEEEEE"),
    ]
    fig = go.Figure()
    for name, value, color in parts:
        fig.add_bar(
            y=["per GPU"],
            x=[value],
            name=name,
            orientation="h",
            marker_color=color,
            hovertemplate=f"{name}: %{{x:.2f}} GB<extra></extra>",
        )
    fig.add_vline(
        x=total,
        line=dict(color="black", width=1),
        annotation_text=f"{total:g} GB",
        annotation_position="top",
    )
    fig.update_layout(
        barmode="stack",
        height=200,
        template="plotly_white",
        margin=dict(l=60, r=30, t=40, b=40),
        xaxis_title="GB",
        legend=dict(orientation="h", y=-0.6),
        title="HBM per GPU",
    )
    return fig
