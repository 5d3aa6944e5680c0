"""Launch overhead lens: is the GPU waiting for the CPU, and what do CUDA graphs buy and cost?
(SPEC 4.2) Declared in :mod:`ui.lenses.launch`."""

import streamlit as st

from ui import lens_view
from ui.assumptions import assumption_line
from ui.buckets import bucket_editor
from ui.cold_controls import release_control
from ui.formulas import launch_formulas
from ui.lenses.launch import LAUNCH
from ui.notices import fit_warning, parallel_notice, speculative_notice, weights_size_notice
from ui.page import draw_sidebar, page_scenario
from ui.scenario_caption import scenario_caption

lens_view.page_config(LAUNCH.page)
s = page_scenario(LAUNCH.page.key, defer=True)
shown = lens_view.run(LAUNCH, s)

st.title("Launch overhead and CUDA graphs")
scenario_caption(
    s,
    f"batch {s.batch}",
    f"τ = {s.launch_us:g} µs",
    f"graphs: {s.cuda_graphs}",
    f"{s.launch_model} launches",
)
fit_warning(shown.f["memory"], s)
shown.notice("eager", "info")
shown.notice("fallback", "warning")
shown.metrics("headline")
shown.metrics("second")
assumption_line(s, lens="launch")
speculative_notice(shown.f["decode"], shown.f["memory"], s)
parallel_notice(s)

# Lazy tabs: only the open tab's charts and tables are built, sent and drawn, so a widget
# change redraws one tab, not the whole page (benchmarks/NOTES-speed.md: lever 06).
draw_sidebar()  # after the headline metrics: their deltas leave first
tabs = lens_view.page_tabs(LAUNCH.page)
if tabs[0].open:
    with tabs[0]:
        left, right = st.columns([3, 2])
        shown.chart("step-timeline", where=left, share=0.6)
        shown.chart("step-timeline-zoom", where=right, share=0.4)
        shown.caption("timeline")
        shown.chart("graphs-modes")
        shown.table("modes")
if tabs[1].open:
    with tabs[1]:
        left, right = st.columns(2)
        shown.chart("graph-speedup-vs-weights", where=left)
        shown.markdown("same-tax", where=right)
        with right:
            weights_size_notice(
                shown.f["memory"],
                s,
                'the chart\'s "this model" mark and the row of this scenario use it; the rows in '
                "other dtypes are params × bytes",
            )
        shown.table("dtypes")
if tabs[2].open:
    with tabs[2]:
        left, right = st.columns(2)
        with left:
            bucket_editor(s)
            shown.metrics("buckets")
            shown.markdown("capture-ranges")
            release_control(s)
        shown.chart("capture-buckets", where=right)
if tabs[3].open:
    with tabs[3]:
        shown.markdown("knobs")
if tabs[4].open:
    with tabs[4]:
        shown.downloads()
launch_formulas()
