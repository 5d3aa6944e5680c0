"""Landing page: the scenario picker and a one-screen summary of every lens."""

import streamlit as st

from model.evaluate import summary
from ui import compare
from ui.economics_view import headline as economics_headline
from ui.layout import (
    assumption_line,
    bound_metric,
    calibration_notice,
    fmt,
    glossary,
    latency,
    request_metrics,
    scenario_caption,
)
from ui.sidebar import draw_sidebar, page_scenario
from ui.text import step_ms

st.set_page_config(page_title="Inference What-If Explorer", page_icon="🧮", layout="wide")
s = page_scenario("home", defer=True)
figures = summary(s)
d = compare.Deltas(figures, compare.lens(summary))
dec, mem, rf, lf, cs, req = (
    figures["decode"],
    figures["memory"],
    figures["roofline"],
    figures["launch"],
    figures["cold_start"],
    figures["request"],
)

st.title("Inference What-If Explorer")
st.markdown(
    "What-if questions about LLM inference on your own GPUs, before you spend GPU hours. "
    "Pick a scenario in the sidebar, change anything, and share the link: it reopens exactly "
    "this view. Each lens is a page in the sidebar."
)
scenario_caption(s, f"batch {s.batch}", f"context {s.context_tokens:,}", f"graphs: {s.cuda_graphs}")
calibration_notice(s)

st.subheader("Roofline and decode")
if not mem["weights_fit"]:
    st.error(
        f"The weights ({fmt(mem['weights_per_gpu_gb'])} GB per GPU) do not fit in "
        f"{fmt(mem['usable_per_gpu_gb'])} GB usable HBM per GPU."
    )
c = st.columns(5)
c[0].metric("Aggregate tok/s", fmt(dec["tokens_per_s"]), **d("decode.tokens_per_s", "higher"))
c[1].metric("Step time", step_ms(dec["t_step_ms"]), **d("decode.t_step_ms", "lower", "ms"))
bound_metric(c[2], dec["bound"], delta=d("decode.bound"))
c[3].metric(
    "AI / ridge [FLOP/B]",
    f"{fmt(rf['arithmetic_intensity'])} / {rf['ridge_flop_per_byte']:.0f}",
    help="Arithmetic intensity (FLOPs per byte read) of this step / the ridge point of the "
    "GPU: below the ridge the step waits on memory, above it on the arithmetic.",
)
c[4].metric("Max batch in HBM", f"{mem['max_batch']:,}", **d("memory.max_batch", "higher"))
st.caption(
    f"One request of {req['prompt_tokens']:,} prompt and {req['output_tokens']:,} output tokens "
    f"at batch {s.batch:,}:"
)
request_metrics(req, full=False, base=d.base and d.base["request"])
assumption_line(s)
draw_sidebar()  # after the first metrics: their deltas leave first
st.page_link("pages/1_Roofline.py", label="Open the Roofline lens", icon=":material/show_chart:")

st.subheader("Launch overhead and CUDA graphs")
c = st.columns(6)
c[0].metric("Kernels / step", f"{lf['kernels']:,}", help="eager launches per decode step")
c[1].metric(
    "Eager launch time",
    latency(lf["t_launch_eager_ms"] / 1e3),
    help="Kernels per step × the CPU cost τ of one launch, paid when graphs are off.",
    **d("launch.t_launch_eager_ms", "lower", "ms"),
)
c[2].metric(
    "Step, eager",
    latency(lf["t_step_eager_ms"] / 1e3),
    **d("launch.t_step_eager_ms", "lower", "ms"),
)
c[3].metric(
    "Step, graph",
    latency(lf["t_step_graph_ms"] / 1e3),
    help=f"mode: {lf['graph_mode']}",
    **d("launch.t_step_graph_ms", "lower", "ms"),
)
c[4].metric(
    "Graph speed-up",
    f"{lf['graph_speedup']:.2f}×",
    help="Eager step time ÷ graph step time at this batch.",
    **d("launch.graph_speedup", "higher", "×"),
)
c[5].metric(
    "Graphs captured",
    f"{lf['graphs_captured']:,}",
    help=f"{lf['capture_s']:.1f} s of start-up, {lf['graph_memory_gb']:.2f} GB per GPU",
)
if lf["eager_fallback"]:
    st.warning(
        f"Batch {s.batch} is above the largest captured size ({lf['largest_capture_size']}): "
        "it runs eager."
    )
st.page_link(
    "pages/2_Launch_overhead.py", label="Open the Launch overhead lens", icon=":material/timer:"
)

st.subheader("Cold start")
best = figures["cold_start_optimised"]
c = st.columns(5)
c[0].metric("Time to ready", f"{cs['total_s']:,.1f} s", **d("cold_start.total_s", "lower", "s"))
c[1].metric(
    "Floor (items 1–3)",
    f"{cs['floor_s']:,.1f} s",
    help="Process init + CUDA context + allocator: what no loader crosses.",
    **d("cold_start.floor_s", "lower", "s"),
)
c[2].metric(
    "4 Weights → HBM",
    f"{cs['weights_s']:,.1f} s",
    help=f"{s.loader} from {s.storage}: read {cs['weights_read_s']:,.1f} s, "
    + (f"host pass {cs['weights_host_s']:,.1f} s, " if cs["weights_host_s"] else "")
    + f"host-to-device copy (H2D) {cs['weights_h2d_s']:.2f} s, "
    + ("overlapped" if cs["overlap"] else "in series"),
    **d("cold_start.weights_s", "lower", "s"),
)
c[3].metric(
    "5 Graphs + JIT",
    f"{cs['graphs_jit_s']:,.1f} s",
    help="torch.compile's just-in-time (JIT) compilation and the capture of the CUDA graphs.",
    **d("cold_start.graphs_jit_s", "lower", "s"),
)
c[4].metric(
    "Optimised",
    f"{best['total_s']:,.1f} s",
    help="overlapping loader, warm compile cache, bounded capture, lean environment",
    **d("cold_start_optimised.total_s", "lower", "s"),
)
st.page_link("pages/3_Cold_start.py", label="Open the Cold start lens", icon=":material/ac_unit:")

st.subheader("Scale to zero")
eco = figures["economics"]
economics_headline(eco, base=d.base and d.base["economics"])
st.caption(
    f"Traffic profile {s.traffic} × {s.rate_scale:g} ({eco['requests_per_day']:,.0f} requests a "
    f"day), idle timeout {s.idle_timeout_s:g} s, start-up SLA {s.sla_s:g} s."
)
st.page_link(
    "pages/4_Scale_to_zero.py", label="Open the Scale to zero lens", icon=":material/bedtime:"
)
glossary()
