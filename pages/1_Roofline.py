"""Roofline lens: is decode memory-, compute- or overhead-bound, and what do graphs, FP8/INT4
and batching buy? (SPEC 4.1)"""

import pandas as pd
import streamlit as st

from model.evaluate import roofline_lens
from ui import compare, measure_data, roofline_charts
from ui.chart_view import chart
from ui.formulas import roofline_formulas
from ui.layout import (
    assumption_line,
    bound_metric,
    downloads,
    fit_warning,
    fmt,
    lazy_tabs,
    request_metrics,
    scenario_caption,
    weights_size_notice,
)
from ui.layout import breakdown as breakdown_table
from ui.measure_charts import with_measured
from ui.sidebar import draw_sidebar, page_scenario
from ui.text import step_ms

st.set_page_config(page_title="Roofline · What-If Explorer", page_icon="📈", layout="wide")
s = page_scenario("roofline", defer=True)
lens = roofline_lens(s)
b, blens = compare.baseline(), compare.lens(roofline_lens)
d = compare.Deltas(lens["figures"], blens and blens["figures"])
fig, dec, mem, rf, req = (
    lens["figures"],
    lens["figures"]["decode"],
    lens["figures"]["memory"],
    lens["figures"]["roofline"],
    lens["figures"]["request"],
)

st.title("Roofline of decode and prefill")
scenario_caption(s, f"batch {s.batch}", f"context {s.context_tokens:,}", f"graphs: {s.cuda_graphs}")
fit_warning(mem, s)

c = st.columns(6)
c[0].metric("Aggregate tok/s", fmt(dec["tokens_per_s"]), **d("decode.tokens_per_s", "higher"))
c[1].metric(
    "Per-sequence tok/s",
    fmt(dec["tokens_per_s_per_seq"]),
    **d("decode.tokens_per_s_per_seq", "higher"),
)
c[2].metric(
    "Step time",
    step_ms(dec["t_step_ms"]),
    help=f"GPU {dec['t_gpu_ms']:.3f} ms (memory {dec['t_memory_ms']:.3f}, compute "
    f"{dec['t_compute_ms']:.3f}, all-reduce {dec['t_comm_ms']:.3f}) + launch "
    f"{dec['t_launch_ms']:.3f} ms + host {dec['t_host_ms']:.3f} ms",
    **d("decode.t_step_ms", "lower", "ms"),
)
bound_metric(c[3], dec["bound"], delta=d("decode.bound"))
c[4].metric(
    "AI vs ridge",
    f"{fmt(rf['arithmetic_intensity'])} / {rf['ridge_flop_per_byte']:.0f}",
    help="Arithmetic intensity (FLOPs per byte read) of this step against the ridge point of "
    f"the compute dtype ({rf['compute_dtype']}): below the ridge the step waits on memory, "
    "above it on the arithmetic.",
    **d("roofline.arithmetic_intensity", None, "FLOP/B"),
)
c[5].metric(
    "Max batch in HBM",
    f"{mem['max_batch']:,}",
    help=f"Sequences whose KV cache fits at {max(s.context_tokens, 1):,} context tokens, in "
    "the GPU memory left after the weights and the CUDA graphs.",
    **d("memory.max_batch", "higher"),
)
st.caption(
    f"Step split: memory {dec['t_memory_ms']:.3f} ms · compute {dec['t_compute_ms']:.3f} ms · "
    f"all-reduce {dec['t_comm_ms']:.3f} ms · launch {dec['t_launch_ms']:.3f} ms "
    f"({dec['launches']} launches) · host {dec['t_host_ms']:.3f} ms"
)
request_metrics(req, base=d.base and d.base["request"])
assumption_line(s)

table = pd.DataFrame(lens["seed_table"])
# Lazy tabs: only the open tab's charts and tables are built, sent and redrawn on a change
# (benchmarks/NOTES-speed.md, lever 06); the headline metrics above stay on every tab.
draw_sidebar()  # after the headline metrics: their deltas leave first
tabs = lazy_tabs(
    [
        "Roofline and step time",
        "HBM per GPU",
        "BF16/INT4 × CUDA graphs",
        "Breakdown and downloads",
    ],
    key="t_roofline",
)
if tabs[0].open:
    with tabs[0]:
        left, right = st.columns(2)
        chart(
            roofline_charts.roofline_figure(
                s,
                lens["sweep"],
                lens["current_index"],
                rf["ridge_flop_per_byte"],
                rf["compute_dtype"],
                req,
            ),
            "roofline",
            base=blens
            and roofline_charts.roofline_figure(
                b,
                blens["sweep"],
                blens["current_index"],
                blens["figures"]["roofline"]["ridge_flop_per_byte"],
                blens["figures"]["roofline"]["compute_dtype"],
                blens["figures"]["request"],
            ),
            where=left,
        )
        measured = measure_data.lens_points({"step_ms", "tpot_ms"})
        chart(
            with_measured(
                roofline_charts.step_composition_figure(
                    lens["sweep"],
                    s.batch,
                    lens["ridge_batch"],
                    mem["max_batch"],
                    None if s.cuda_graphs == "none" else max(s.capture_sizes),
                ),
                measured,
            ),
            "step-time",
            base=blens
            and roofline_charts.step_composition_figure(
                blens["sweep"],
                b.batch,
                blens["ridge_batch"],
                blens["figures"]["memory"]["max_batch"],
                None if b.cuda_graphs == "none" else max(b.capture_sizes),
            ),
            where=right,
        )
        if measured:
            right.caption(
                f"Diamonds: {len(measured)} measured steps uploaded on the Measurements page, at "
                "their own context and graphs mode (the curves are this scenario's)."
            )
if tabs[1].open:
    with tabs[1]:
        chart(
            roofline_charts.memory_figure(mem),
            "hbm",
            base=blens and roofline_charts.memory_figure(blens["figures"]["memory"]),
        )
        weights_size_notice(
            mem,
            s,
            "the weights in this HBM bar, the memory time of the step and the max batch use it; the "
            "BF16/INT4 × CUDA graphs table sizes its rows in another dtype from params × bytes",
        )
if tabs[2].open:
    with tabs[2]:
        a, b = st.columns([3, 2])
        a.dataframe(
            table.rename(
                columns={
                    "configuration": "configuration",
                    "t_hbm_ms": "HBM reads [ms]",
                    "t_fixed_ms": "launches + host [ms]",
                    "t_step_ms": "step [ms]",
                    "tokens_per_s": "tok/s",
                    "speedup": "vs BF16 eager",
                }
            ),
            hide_index=True,
            width="stretch",
            column_config={
                c: st.column_config.NumberColumn(format="%.3f")
                for c in ("HBM reads [ms]", "launches + host [ms]", "step [ms]", "vs BF16 eager")
            }
            | {"tok/s": st.column_config.NumberColumn(format="%.1f")},
        )
        am = lens["amdahl"]
        b.markdown(
            f"**Amdahl's estimate for INT4.** Reading the weights is f = {am['fraction']:.0%} of the "
            "BF16 eager "
            f"step; INT4 speeds them up {am['weights_speedup']:.3g}× (the table's weights), so "
            f"1 / ((1 − f) + f/{am['weights_speedup']:.3g}) = "
            f"**{am['estimate']:.2f}×**; the table's INT4 row gives {am['table']:.2f}×."
        )
if tabs[3].open:
    with tabs[3]:
        sweep = pd.DataFrame({k: v for k, v in lens["sweep"].items()})
        breakdown = breakdown_table(fig, ("roofline", "decode", "request", "memory"))
        downloads(s, {"Figures": breakdown, "Batch sweep": sweep, "INT4 table": table}, "roofline")
roofline_formulas(rf["compute_dtype"], s.weights_dtype)
