"""Launch overhead lens: is the GPU waiting for the CPU, and what do CUDA graphs buy and cost?
(SPEC 4.2)"""

import pandas as pd
import streamlit as st

from model.evaluate import launch_lens
from ui import compare, launch_charts, measure_data
from ui.buckets import bucket_editor
from ui.chart_view import chart
from ui.formulas import launch_formulas
from ui.layout import (
    assumption_line,
    bound_metric,
    downloads,
    fit_warning,
    fmt,
    lazy_tabs,
    scenario_caption,
    share,
    weights_size_notice,
)
from ui.layout import breakdown as breakdown_table
from ui.measure_charts import with_measured
from ui.sidebar import draw_sidebar, page_scenario
from ui.text import step_ms

st.set_page_config(page_title="Launch overhead · What-If Explorer", page_icon="⏱️", layout="wide")
s = page_scenario("launch", defer=True)
lens = launch_lens(s)
b, blens = compare.baseline(), compare.lens(launch_lens)
d = compare.Deltas(lens["figures"], blens and blens["figures"])
fig = lens["figures"]
lf, dec, mem = fig["launch"], fig["decode"], fig["memory"]

st.title("Launch overhead and CUDA graphs")
scenario_caption(
    s,
    f"batch {s.batch}",
    f"τ = {s.launch_us:g} µs",
    f"graphs: {s.cuda_graphs}",
    f"{s.launch_model} launches",
)
fit_warning(mem, s)
if s.cuda_graphs == "none":
    st.info(
        f"This scenario runs eager (vLLM's `--enforce-eager`): every step pays {lf['kernels']:,} "
        f"launches. The graph figures show what `{lf['graph_mode']}` would give."
    )
elif lf["eager_fallback"]:
    st.warning(
        f"Batch {s.batch} is above the largest captured size ({lf['largest_capture_size']}): "
        "this step runs eager despite the graphs. Capture a larger size or cap the batch."
    )

c = st.columns(5)
c[0].metric(
    "Kernels / step",
    f"{lf['kernels']:,}",
    help=f"{s.model.layers} layers × {s.kernels_per_layer} per layer"
    if s.kernels is None
    else "set by the kernels override",
    **d("launch.kernels", None),
)
c[1].metric(
    "Eager launch time",
    f"{lf['t_launch_eager_ms']:.3f} ms",
    help="N × τ: kernels per step × the CPU cost τ of one launch.",
    **d("launch.t_launch_eager_ms", "lower", "ms"),
)
c[2].metric(
    "Step, eager", step_ms(lf["t_step_eager_ms"]), **d("launch.t_step_eager_ms", "lower", "ms")
)
c[3].metric(
    "Step, graph",
    step_ms(lf["t_step_graph_ms"]),
    help=f"{lf['graph_mode']}: {lf['launches_graph']} launch(es), batch padded to "
    f"{lf['padded_batch']}",
    **d("launch.t_step_graph_ms", "lower", "ms"),
)
c[4].metric(
    "Graph speed-up",
    f"{lf['graph_speedup']:.2f}×",
    help=f"Launch tax: {share(lf['launch_tax_of_gpu_time'])} of the GPU time, "
    f"{lf['launch_share_of_eager_step']:.0%} of the eager step.",
    **d("launch.graph_speedup", "higher", "×"),
)
c = st.columns(5)
c[0].metric(
    "Launch ceiling",
    f"{fmt(lf['launch_ceiling_tokens_per_s'])} tok/s",
    help="1 / (N·τ): tokens per second per sequence if the GPU took no time, eager. "
    f"At batch {s.batch}: {fmt(lf['launch_ceiling_aggregate_tokens_per_s'])} tok/s in all.",
    **d("launch.launch_ceiling_tokens_per_s", "higher", "tok/s"),
)
c[1].metric(
    "Padded batch",
    f"{lf['padded_batch']:,}",
    delta=f"{lf['padding_waste']:.0%} padding" if lf["padding_waste"] else None,
    delta_color="inverse",
    help="The captured bucket the real batch is padded up to; above the largest it runs eager.",
)
c[2].metric(
    "Graphs captured",
    f"{lf['graphs_captured']:,}",
    help=f"{lf['capture_s']:.1f} s of start-up at {s.capture_s_per_graph:g} s per graph; "
    f"{lf['graph_memory_gb']:.2f} GB per GPU.",
    **d("launch.graphs_captured", None),
)
c[3].metric(
    "Aggregate tok/s",
    fmt(dec["tokens_per_s"]),
    help="This scenario, as configured.",
    **d("decode.tokens_per_s", "higher"),
)
bound_metric(c[4], dec["bound"], delta=d("decode.bound"))
st.caption(
    f"Launch tax {share(lf['launch_tax_of_gpu_time'])} of the GPU time "
    f"({lf['launch_share_of_eager_step']:.0%} of the eager step) · capture "
    f"{lf['capture_s']:.1f} s and {lf['graph_memory_gb']:.2f} GB per GPU · max batch "
    f"{mem['max_batch']:,} with graphs, {lf['max_batch_without_graphs']:,} without"
)
assumption_line(s)

modes = pd.DataFrame(lens["mode_table"])
# Lazy tabs: only the open tab's charts and tables are built, sent and drawn, so a widget
# change redraws one tab, not the whole page (benchmarks/NOTES-speed.md: lever 06).
draw_sidebar()  # after the headline metrics: their deltas leave first
tabs = lazy_tabs(
    [
        "Step timeline and graphs modes",
        "Quantised models gain more",
        "Capture buckets",
        "The ten knobs",
        "Breakdown and downloads",
    ],
    key="t_launch",
)
if tabs[0].open:
    with tabs[0]:
        left, right = st.columns([3, 2])
        chart(
            launch_charts.timeline_figure(lens["timeline"], s.host_ms * 1e-3, s.launch_model),
            "step-timeline",
            where=left,
        )
        chart(
            launch_charts.timeline_figure(
                lens["timeline"], s.host_ms * 1e-3, s.launch_model, zoom=12
            ),
            "step-timeline-zoom",
            where=right,
        )
        st.caption(
            "Each bar on a CPU lane is one launch (τ), on a GPU lane one kernel (eager) or one replay "
            "(graph); the GPU's work is split evenly over the kernels. White gaps in a GPU lane are "
            "the bubbles where the GPU waits for the CPU. The faint band spans a lane whose kernels are "
            "too short to draw one by one; the right chart zooms on the first launches."
        )

        chart(
            with_measured(
                launch_charts.mode_sweep_figure(
                    lens["grid"],
                    lens["modes"],
                    s.batch,
                    s.capture_sizes,
                    lens["grid_waste"],
                    mem["max_batch"],
                ),
                measure_data.lens_points({"step_ms", "tpot_ms"}),
                y_of=lambda p: p.measured * 1000.0 / p.x,  # µs per token
            ),
            "graphs-modes",
            base=blens
            and launch_charts.mode_sweep_figure(
                blens["grid"],
                blens["modes"],
                b.batch,
                b.capture_sizes,
                blens["grid_waste"],
                blens["figures"]["memory"]["max_batch"],
            ),
        )
        st.dataframe(
            modes.rename(
                columns={
                    "mode": "graphs mode",
                    "launches": "launches",
                    "padded_batch": "padded batch",
                    "t_step_ms": "step [ms]",
                    "tokens_per_s": "tok/s",
                    "speedup_vs_eager": "vs eager",
                    "graphs_captured": "graphs",
                    "capture_s": "capture [s]",
                    "graph_memory_gb": "graph HBM [GB/GPU]",
                    "max_batch": "max batch",
                }
            ),
            hide_index=True,
            width="stretch",
            column_config={
                "step [ms]": st.column_config.NumberColumn(format="%.3f"),
                "tok/s": st.column_config.NumberColumn(format="%.1f"),
                "vs eager": st.column_config.NumberColumn(format="%.2f×"),
                "capture [s]": st.column_config.NumberColumn(format="%.1f"),
                "graph HBM [GB/GPU]": st.column_config.NumberColumn(format="%.3f"),
            },
        )
if tabs[1].open:
    with tabs[1]:
        left, right = st.columns(2)
        chart(
            launch_charts.launch_share_figure(
                lens["share"],
                lf["kernels"],
                s.launch_us,
                s.hardware.hbm_bandwidth_tb_s * s.bw_efficiency,
            ),
            "graph-speedup-vs-weights",
            base=blens
            and launch_charts.launch_share_figure(
                blens["share"],
                blens["figures"]["launch"]["kernels"],
                b.launch_us,
                b.hardware.hbm_bandwidth_tb_s * b.bw_efficiency,
            ),
            where=left,
        )
        right.markdown(
            "**Same launch tax, smaller compute.** N·τ does not depend on the weights, so shrinking "
            "them (FP8, INT4) makes the tax a bigger share and graphs pay more: this model per dtype "
            f"at batch {s.batch}. In Amdahl's terms graphs remove the share f = (N − n)·τ / T_eager of "
            "the step outright, so S = 1 / (1 − f), and f grows as T_gpu shrinks."
        )
        with right:
            weights_size_notice(
                mem,
                s,
                'the chart\'s "this model" mark and the row of this scenario use it; the rows in other '
                "dtypes are params × bytes",
            )
        st.dataframe(
            pd.DataFrame(lens["dtypes"])
            .assign(launch_tax_of_gpu_time=lambda f: f["launch_tax_of_gpu_time"] * 100)
            .rename(
                columns={
                    "weights_dtype": "weights",
                    "t_gpu_ms": "T_gpu [ms]",
                    "t_step_eager_ms": "eager [ms]",
                    "t_step_graph_ms": "graph [ms]",
                    "graph_speedup": "speed-up",
                    "launch_tax_of_gpu_time": "tax [%]",
                }
            ),
            hide_index=True,
            width="stretch",
            column_config={
                "T_gpu [ms]": st.column_config.NumberColumn(format="%.3f"),
                "eager [ms]": st.column_config.NumberColumn(format="%.3f"),
                "graph [ms]": st.column_config.NumberColumn(format="%.3f"),
                "speed-up": st.column_config.NumberColumn(format="%.2f×"),
                "tax [%]": st.column_config.NumberColumn(
                    format="%.1f", help="N·τ as a percentage of the GPU time"
                ),
            },
        )
if tabs[2].open:
    with tabs[2]:
        bk = lens["buckets"]
        left, right = st.columns(2)
        with left:
            bucket_editor(s)
            m = st.columns(3)
            m[0].metric(
                "Mean padding",
                f"{bk['mean_waste']:.1%}",
                help=f"Over real batches 1–{max(s.capture_sizes)}, each equally likely.",
            )
            m[1].metric(
                "Worst padding", f"{bk['worst_waste']:.0%}", help=f"at batch {bk['worst_batch']}"
            )
            m[2].metric(
                "Capture cost",
                f"{lf['capture_s']:.1f} s",
                help=f"{lf['graphs_captured']} graphs ({s.cuda_graphs}); {lf['graph_memory_gb']:.2f} GB "
                "per GPU",
            )
        chart(
            launch_charts.bucket_figure(bk, s.capture_sizes, s.batch),
            "capture-buckets",
            where=right,
        )
if tabs[3].open:
    with tabs[3]:
        mark = {
            True: ":green[**applies**]",
            False: ":gray[not here]",
            None: ":orange[not modelled]",
        }
        st.markdown(
            "\n".join(
                f"{k['number']}. **{k['knob']}** ({k['attacks']}; cost: {k['cost']}): "
                f"{mark[k['applies']]}. {k['here']}"
                for k in lens["knobs"]
            )
        )
if tabs[4].open:
    with tabs[4]:
        breakdown = breakdown_table(fig, ("launch", "decode"))
        sweep = pd.concat(
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
                for mode, sw in lens["modes"].items()
            ]
        )
        downloads(s, {"Figures": breakdown, "Mode sweep": sweep, "Modes": modes}, "launch")
launch_formulas()
