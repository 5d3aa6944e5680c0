"""Landing page: the scenario picker and a one-screen summary of every lens. Declared in
:mod:`ui.lenses.home`."""

import streamlit as st

from ui import lens_view
from ui.assumptions import accuracy_panel, assumption_line
from ui.lenses.home import HOME
from ui.notices import calibration_notice
from ui.page import draw_sidebar, page_scenario
from ui.scenario_caption import scenario_caption
from ui.views import glossary

lens_view.page_config(HOME.page)
s = page_scenario(HOME.page.key, defer=True)
shown = lens_view.run(HOME, s)

st.title("Inference What-If Explorer")
st.markdown(
    "What-if questions about LLM inference on your own GPUs, before you spend GPU hours. "
    "Pick a scenario in the sidebar, change anything, and share the link: it reopens exactly "
    "this view. Each lens is a page in the sidebar."
)
scenario_caption(s, f"batch {s.batch}", f"context {s.context_tokens:,}", f"graphs: {s.cuda_graphs}")
calibration_notice(s)

st.subheader("Roofline and decode")
shown.notice("fit", "error")
shown.metrics("decode")
shown.metrics("request")
assumption_line(s)
draw_sidebar()  # after the first metrics: their deltas leave first
st.page_link("pages/1_Roofline.py", label="Open the Roofline lens", icon=":material/show_chart:")

st.subheader("Serving under load")
shown.metrics("serving")
st.page_link("pages/2_Serving.py", label="Open the Serving lens", icon=":material/speed:")

st.subheader("Launch overhead and CUDA graphs")
shown.metrics("launch")
shown.notice("fallback", "warning")
st.page_link(
    "pages/3_Launch_overhead.py", label="Open the Launch overhead lens", icon=":material/timer:"
)

st.subheader("Cold start")
shown.metrics("cold_start")
st.page_link("pages/4_Cold_start.py", label="Open the Cold start lens", icon=":material/ac_unit:")

st.subheader("Scale to zero")
shown.metrics("scale_to_zero")
st.page_link(
    "pages/5_Scale_to_zero.py", label="Open the Scale to zero lens", icon=":material/bedtime:"
)
box = st.expander(
    "How far off can this be? The defaults against published measurements",
    key="x_accuracy_home",
    on_change="rerun",
)
if box.open:  # built only while open
    with box:
        accuracy_panel(expanded_note=True)
glossary()
