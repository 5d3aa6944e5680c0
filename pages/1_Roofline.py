"""Roofline lens: is decode memory-, compute- or overhead-bound, and what do graphs, FP8/INT4
and batching buy? (SPEC 4.1) Declared in :mod:`ui.lenses.roofline`."""

import streamlit as st

from ui import lens_view
from ui.assumptions import assumption_line
from ui.cold_controls import decode_release_control
from ui.formulas import roofline_formulas
from ui.lenses.roofline import ROOFLINE
from ui.notices import fit_warning, parallel_notice, speculative_notice, weights_size_notice
from ui.page import draw_sidebar, page_scenario
from ui.scenario_caption import scenario_caption

lens_view.page_config(ROOFLINE.page)
s = page_scenario(ROOFLINE.page.key, defer=True)
shown = lens_view.run(ROOFLINE, s)

st.title("Roofline of decode and prefill")
scenario_caption(s, f"batch {s.batch}", f"context {s.context_tokens:,}", f"graphs: {s.cuda_graphs}")
fit_warning(shown.f["memory"], s)
shown.metrics("headline")
shown.metrics("request")
assumption_line(s, lens="roofline")
speculative_notice(shown.f["decode"], shown.f["memory"], s)
parallel_notice(s)
decode_release_control(s)  # DeepSeek on a profile with early-2025 bands only

# Lazy tabs: only the open tab's charts and tables are built, sent and redrawn on a change
# (benchmarks/NOTES-speed.md, lever 06); the headline metrics above stay on every tab.
draw_sidebar()  # after the headline metrics: their deltas leave first
tabs = lens_view.page_tabs(ROOFLINE.page)
if tabs[0].open:
    with tabs[0]:
        left, right = st.columns(2)
        shown.chart("roofline", where=left)
        shown.chart("step-time", where=right)
if tabs[1].open:
    with tabs[1]:
        shown.chart("hbm")
        weights_size_notice(
            shown.f["memory"],
            s,
            "the weights in this HBM bar, the memory time of the step and the max batch use it; the "
            "BF16/INT4 × CUDA graphs table sizes its rows in another dtype from params × bytes",
        )
if tabs[2].open:
    with tabs[2]:
        shown.table("seed-table")  # the page's width: every column in view at 1440 px
        shown.markdown("amdahl")
if tabs[3].open:
    with tabs[3]:
        shown.downloads()
roofline_formulas(shown.f["roofline"]["compute_dtype"], s.weights_dtype)
