"""The Launch overhead lens, declared once (SPEC 4.2): is the GPU waiting for the CPU, and what
do CUDA graphs buy and cost?"""

from __future__ import annotations

import pandas as pd

from model.evaluate import launch_lens
from model.ranges import is_point
from ui import launch_charts, measure_data
from ui.lens import Chart, Column, Figure, Lens, Metric, Metrics, Page, Table, View
from ui.lenses import roofline
from ui.measure_charts import with_measured
from ui.text import fmt, release_product, share, step_ms


def _lf(v: View) -> dict:
    return v.f["launch"]


LAUNCH_KERNELS = Figure(
    "launch.kernels",
    "Kernels / step",
    name="Kernels per step",
    show=lambda x: f"{x:,}",
    better=None,
    help=lambda v: (
        f"{v.s.model.layers} layers × {v.s.kernels_per_layer} per layer"
        if v.s.kernels is None
        else "set by the kernels override"
    ),
)


LAUNCH_T_LAUNCH_EAGER_MS = Figure(
    "launch.t_launch_eager_ms",
    "Eager launch time",
    show=lambda x: f"{x:.3f} ms",
    unit="ms",
    help="N × τ: kernels per step × the CPU cost τ of one launch.",
)


LAUNCH_T_STEP_EAGER_MS = Figure(
    "launch.t_step_eager_ms",
    "Step, eager",
    show=step_ms,
    unit="ms",
)


LAUNCH_T_STEP_GRAPH_MS = Figure(
    "launch.t_step_graph_ms",
    "Step, graph",
    name="Step, with graphs",
    show=step_ms,
    unit="ms",
    help=lambda v: (
        f"{_lf(v)['graph_mode']}: {_lf(v)['launches_graph']} launch(es), batch "
        f"padded to {_lf(v)['padded_batch']}"
    ),
)


LAUNCH_GRAPH_SPEEDUP = Figure(
    "launch.graph_speedup",
    "Graph speed-up",
    show=lambda x: f"{x:.2f}×",
    better="higher",
    unit="×",
    help=lambda v: (
        f"Launch tax: {share(_lf(v)['launch_tax_of_gpu_time'])} of the GPU "
        f"time, {_lf(v)['launch_share_of_eager_step']:.0%} of the eager step."
    ),
)


HEADLINE = Metrics(
    (
        Metric.of(LAUNCH_KERNELS),
        Metric.of(LAUNCH_T_LAUNCH_EAGER_MS),
        Metric.of(LAUNCH_T_STEP_EAGER_MS),
        Metric.of(LAUNCH_T_STEP_GRAPH_MS),
        Metric.of(LAUNCH_GRAPH_SPEEDUP),
    )
)


def _padding(v: View) -> dict:
    waste = _lf(v)["padding_waste"]
    return {"delta": f"{waste:.0%} padding" if waste else None, "delta_color": "inverse"}


def _span(lo_hi, digits: str) -> str:
    lo, hi = lo_hi
    return "" if is_point(lo_hi) else f" ({lo:{digits}}–{hi:{digits}})"


def _second_caption(v: View) -> str:
    lf, mem = _lf(v), v.f["memory"]
    return (
        f"Launch tax {share(lf['launch_tax_of_gpu_time'])} of the GPU time "
        f"({lf['launch_share_of_eager_step']:.0%} of the eager step) · capture "
        f"{lf['capture_s']:.1f} s{_span(lf['capture_s_range'], '.1f')} and "
        f"{lf['graph_memory_gb']:.2f} GB{_span(lf['graph_memory_gb_range'], '.2f')} per GPU · "
        f"max batch {mem['max_batch']:,} with graphs, {lf['max_batch_without_graphs']:,} without"
    )


def _capture_ranges(v: View) -> str | None:
    """The capture cost's ranges and the fact that narrows them (SPEC 4.3)."""
    lf = _lf(v)
    if not lf["graphs_captured"]:
        return None
    cap, mem = lf["capture_s_range"], lf["graph_memory_gb_range"]
    if is_point(cap) and is_point(mem):
        return (
            "Capture time and graph memory are points here: ideal physics, or the scenario "
            "states its own seconds and MB per graph."
        )
    return (
        f"**Where the world is wide.** Published capture times run 0.03–0.5 s per graph and "
        f"graph memory 1–50 MB per graph between servers: this start-up's capture is "
        f"{cap[0]:.1f}–{cap[1]:.1f} s around {lf['capture_s']:.1f} s and its graphs hold "
        f"{mem[0]:.2f}–{mem[1]:.2f} GB per GPU around {lf['graph_memory_gb']:.2f} GB. The "
        "engine release narrows both most (vLLM 0.8–0.10 captured piecewise graphs at ~0.4 s "
        f"each, 0.11 and later ~10× faster): set *{release_product(v.s.engine_id)} release*, "
        "or measure one start-up and "
        "upload its log on the Measurements page; fewer, smaller capture sizes shrink both."
    )


LAUNCH_GRAPHS_CAPTURED = Figure(
    "launch.graphs_captured",
    "Graphs captured",
    show=lambda x: f"{x:,}",
    better=None,
    help=lambda v: (
        f"{_lf(v)['capture_s']:.1f} s of start-up at "
        f"{v.s.capture_s_per_graph:g} s per graph; {_lf(v)['graph_memory_gb']:.2f} GB per GPU."
    ),
)


SECOND = Metrics(
    (
        Metric(
            "Launch ceiling",
            "launch.launch_ceiling_tokens_per_s",
            show=lambda x: f"{fmt(x)} tok/s",
            better="higher",
            unit="tok/s",
            help=lambda v: (
                "1 / (N·τ): tokens per second per sequence if the GPU took no time, "
                f"eager. At batch {v.s.batch}: "
                f"{fmt(_lf(v)['launch_ceiling_aggregate_tokens_per_s'])} tok/s in all."
            ),
        ),
        Metric(
            "Padded batch",
            "launch.padded_batch",
            show=lambda x: f"{x:,}",
            delta=False,
            alone=_padding,
            help="The captured bucket the real batch is padded up to; above the largest it runs "
            "eager.",
        ),
        Metric.of(LAUNCH_GRAPHS_CAPTURED),
        Metric.of(roofline.DECODE_TOKENS_PER_S),
        Metric.of(roofline.DECODE_BOUND),
    ),
    caption=_second_caption,
)


def _buckets(v: View) -> dict:
    return v.r["buckets"]


BUCKETS = Metrics(
    (
        Metric(
            "Mean padding",
            value=lambda v: f"{_buckets(v)['mean_waste']:.1%}",
            delta=False,
            help=lambda v: f"Over real batches 1–{max(v.s.capture_sizes)}, each equally likely.",
        ),
        Metric(
            "Worst padding",
            value=lambda v: f"{_buckets(v)['worst_waste']:.0%}",
            delta=False,
            help=lambda v: f"at batch {_buckets(v)['worst_batch']}",
        ),
        Metric(
            "Capture cost",
            value=lambda v: f"{_lf(v)['capture_s']:.1f} s",
            delta=False,
            help=lambda v: (
                f"{_lf(v)['graphs_captured']} graphs ({v.s.cuda_graphs}); "
                f"{_lf(v)['graph_memory_gb']:.2f} GB per GPU. Range "
                f"{_lf(v)['capture_s_range'][0]:.1f}–{_lf(v)['capture_s_range'][1]:.1f} s and "
                f"{_lf(v)['graph_memory_gb_range'][0]:.2f}–"
                f"{_lf(v)['graph_memory_gb_range'][1]:.2f} GB: the spread of published "
                "measurements."
            ),
        ),
    )
)


def _timeline(zoom: int | None):
    def build(v: View):
        return launch_charts.timeline_figure(
            v.r["timeline"],
            v.s.host_ms * 1e-3,
            v.s.launch_model,
            **({"zoom": zoom} if zoom else {}),
        )

    return build


def _modes(v: View):
    return launch_charts.mode_sweep_figure(
        v.r["grid"],
        v.r["modes"],
        v.s.batch,
        v.s.capture_sizes,
        v.r["grid_waste"],
        v.f["memory"]["max_batch"],
    )


def _measured_modes(fig, v: View):
    return with_measured(
        fig,
        measure_data.lens_points({"step_ms", "tpot_ms"}),
        y_of=lambda p: p.measured * 1000.0 / p.x,  # µs per token
    )


def _share(v: View):
    return launch_charts.launch_share_figure(
        v.r["share"],
        _lf(v)["kernels"],
        v.s.launch_us,
        v.s.hardware.hbm_bandwidth_tb_s * v.s.bw_efficiency,
    )


def _mode_sweep(v: View) -> pd.DataFrame:
    return pd.concat(
        [
            pd.DataFrame(
                {
                    "cuda_graphs": mode,
                    "batch": sw["batch"],
                    "padded_batch": sw["padded_batch"],
                    "launches": sw["launches"],
                    "t_step_ms": sw["t_step_s"] * 1e3,
                    "tokens_per_s": sw["tokens_per_s"],
                }
            )
            for mode, sw in v.r["modes"].items()
        ]
    )


MARK = {True: ":green[**applies**]", False: ":gray[not here]", None: ":orange[not modelled]"}


def _knobs(v: View) -> str:
    return "\n".join(
        f"{k['number']}. **{k['knob']}** ({k['attacks']}; cost: {k['cost']}): "
        f"{MARK[k['applies']]}. {k['here']}"
        for k in v.r["knobs"]
    )


PAGE = Page(
    key="launch",
    file="pages/3_Launch_overhead.py",
    label="Launch overhead",
    icon=":material/timer:",
    emoji="⏱️",
    tabs=(
        "Step timeline and graphs modes",
        "Quantised models gain more",
        "Capture buckets",
        "The ten knobs",
        "Breakdown and downloads",
    ),
    tab_key="t_launch",
)


LAUNCH = Lens(
    page=PAGE,
    order=2,
    title="Launch overhead",
    slug="launch",
    compute=lambda s, trace=None: launch_lens(s),
    figures=lambda r: r["figures"],
    metrics={"headline": HEADLINE, "second": SECOND, "buckets": BUCKETS},
    charts=(
        Chart("step-timeline", _timeline(None), report="timeline", page_baseline=False),
        Chart("step-timeline-zoom", _timeline(12), report="timeline-zoom", page_baseline=False),
        Chart("graphs-modes", _modes, measured=_measured_modes),
        Chart("graph-speedup-vs-weights", _share, report="quantised-gain"),
        Chart(
            "capture-buckets",
            lambda v: launch_charts.bucket_figure(_buckets(v), v.s.capture_sizes, v.s.batch),
            report="buckets",
            page_baseline=False,
        ),
    ),
    tables=(
        Table(
            "modes",
            lambda v: pd.DataFrame(v.r["mode_table"]),
            columns={
                "mode": Column("graphs mode"),
                "launches": Column("launches"),
                "padded_batch": Column("padded batch"),
                "t_step_ms": Column("step [ms]", "%.3f"),
                "tokens_per_s": Column("tok/s", "%.1f"),
                "speedup_vs_eager": Column("vs eager", "%.2f×"),
                "graphs_captured": Column("graphs"),
                "capture_s": Column("capture [s]", "%.1f"),
                "graph_memory_gb": Column("graph HBM [GB/GPU]", "%.3f"),
                "max_batch": Column("max batch"),
            },
            report="Graphs modes at this batch",
            download="Modes",
        ),
        Table(
            "dtypes",
            lambda v: pd.DataFrame(v.r["dtypes"]),
            shown=lambda f: f.assign(launch_tax_of_gpu_time=f["launch_tax_of_gpu_time"] * 100),
            columns={
                "weights_dtype": Column("weights"),
                "t_gpu_ms": Column("T_gpu [ms]", "%.3f"),
                "t_step_eager_ms": Column("eager [ms]", "%.3f"),
                "t_step_graph_ms": Column("graph [ms]", "%.3f"),
                "graph_speedup": Column("speed-up", "%.2f×"),
                "launch_tax_of_gpu_time": Column(
                    "tax [%]", "%.1f", help="N·τ as a percentage of the GPU time"
                ),
            },
        ),
        Table("mode-sweep", _mode_sweep, download="Mode sweep"),
    ),
    breakdown=("launch", "decode"),
    downloads=("mode-sweep", "modes"),
    rows=(
        LAUNCH_KERNELS.row("Launch"),
        LAUNCH_T_STEP_EAGER_MS.row("Launch"),
        LAUNCH_T_STEP_GRAPH_MS.row("Launch"),
        LAUNCH_GRAPH_SPEEDUP.row("Launch"),
    ),
    texts={
        "capture-ranges": _capture_ranges,
        "timeline": "Each bar on a CPU lane is one launch (τ), on a GPU lane one kernel (eager) or "
        "one replay (graph); the GPU's work is split evenly over the kernels (for a mixture of "
        "experts, latent attention or an MI300X it includes the fixed work per layer: routing, "
        "the small MLA kernels, the GEMM floors). White gaps in a GPU lane are the bubbles where the GPU waits for the CPU. "
        "The faint band spans a lane whose kernels are too short to draw one by one; the right "
        "chart zooms on the first launches.",
        "same-tax": lambda v: (
            "**Same launch tax, smaller compute.** N·τ does not depend on the "
            "weights, so shrinking them (FP8, INT4) makes the tax a bigger share and graphs pay more: "
            f"this model per dtype at batch {v.s.batch}. In Amdahl's terms graphs remove the share "
            "f = (N − n)·τ / T_eager of the step outright, so S = 1 / (1 − f), and f grows as T_gpu "
            "shrinks."
        ),
        "knobs": _knobs,
        "eager": lambda v: (
            f"This scenario runs eager (vLLM's `--enforce-eager`): every step pays "
            f"{_lf(v)['kernels']:,} launches. The graph figures show what `{_lf(v)['graph_mode']}` "
            "would give."
            if v.s.cuda_graphs == "none"
            else None
        ),
        "fallback": lambda v: (
            f"Batch {v.s.batch} is above the largest captured size "
            f"({_lf(v)['largest_capture_size']}): this step runs eager despite the graphs. Capture a "
            "larger size or cap the batch."
            if v.s.cuda_graphs != "none" and _lf(v)["eager_fallback"]
            else None
        ),
    },
)
