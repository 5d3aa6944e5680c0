"""Cold start lens: the five line items of an inference server's start-up, the loaders and
storage tiers, and what sleep mode and a warm replica turn it into. (SPEC 4.3) Declared in
:mod:`ui.lenses.cold_start`; the loader controls are the page's own."""

import streamlit as st

from model.presets import cold_start_presets
from ui import lens_view
from ui.assumptions import assumption_line
from ui.buckets import bucket_editor
from ui.cold_controls import cold_controls
from ui.formulas import cold_start_formulas
from ui.lenses.cold_start import COLD_START
from ui.notices import fit_warning, weights_size_notice
from ui.page import draw_sidebar, page_scenario
from ui.scenario_caption import scenario_caption
from ui.text import md_escape

lens_view.page_config(COLD_START.page)
s = page_scenario(COLD_START.page.key, defer=True)
shown = lens_view.run(COLD_START, s)
presets = cold_start_presets()

st.title("Cold start: five line items")
scenario_caption(
    s,
    f"{shown.f['cold_start']['weights_gb']:.1f} GB of weights",
    f"{md_escape(presets.loaders[s.loader].name)} from {md_escape(presets.storage[s.storage].name)}",
    f"graphs: {s.cuda_graphs}",
)
# the loader controls' place: they are drawn after the headline figures (below), as the
# sidebar is, so the browser's commit of the headline holds no widgets; where a widget is
# drawn in the script does not move it on screen (benchmarks/NOTES-speed.md)
controls = st.container()
if not shown.f["memory"]["weights_fit"]:
    fit_warning(shown.f["memory"], s, "the start-up figures below")
shown.metrics("totals")
shown.metrics("items")
# the seed's traps where they apply (warnings), then the views: the explanations are folded
# below them (issue 40, item 7: the views started 1.3 screens down)
context = st.container()

draw_sidebar()  # after the headline metrics: their deltas leave first
with controls:
    cold_controls(s)
with context:
    weights_size_notice(
        shown.f["memory"], s, "item 4, its read and copy times and the loading timeline use it"
    )
    shown.notice("warm-cache", "warning")
    shown.notice("pickle", "error")
    shown.notice("eager", "info")
    shown.notice("fp8-trap", "info")

# Lazy tabs: only the open tab's charts and tables are built, sent and redrawn on a change
# (benchmarks/NOTES-speed.md, lever 06); the headline metrics above stay on every tab.
tabs = lens_view.page_tabs(COLD_START.page)
if tabs[0].open:
    with tabs[0]:
        left, right = st.columns(2)
        shown.chart("waterfall", where=left)
        shown.chart("four-columns", where=right)
if tabs[1].open:
    with tabs[1]:
        st.markdown("**The four columns**, item by item")
        shown.table("columns")
        st.markdown("**Each optimisation alone** (what it saves from this scenario's start-up)")
        shown.table("savings")
if tabs[2].open:
    with tabs[2]:
        left, right = st.columns(2)
        shown.chart("weights-timeline", where=left)
        shown.chart("storage-tiers", where=right)
if tabs[3].open:
    with tabs[3]:
        left, right = st.columns([3, 2])
        shown.chart("sleep-and-warm", where=left)
        shown.markdown("sleep", where=right)
if tabs[4].open:
    with tabs[4]:
        st.markdown("**Capture sizes** (item 5: graphs captured × seconds per graph)")
        bucket_editor(s)
        st.markdown("**Loaders and storage tiers** (the presets, with their sources)")
        shown.table("loaders")  # static tables: the notes and sources are read whole
        shown.table("storage")
if tabs[5].open:
    with tabs[5]:
        shown.downloads()
why = st.expander(
    "Why the range is wide, what narrows it, and what this assumes",
    key="x_cold_why",
    on_change="rerun",
)
if why.open:  # built only while open
    with why:
        shown.markdown("ranges")
        shown.caption("mmap")
assumption_line(s, focus="cold_start", lens="cold_start")  # the engine, one click from ideal
cold_start_formulas()
