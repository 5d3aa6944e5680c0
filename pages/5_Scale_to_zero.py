"""Scale to zero lens: a day of traffic, warm replicas against scale to zero, pre-warm and sleep
mode (SPEC 4.4). Declared in :mod:`ui.lenses.scale_to_zero`; the traffic controls and the
trace upload are the page's own."""

import streamlit as st

from ui import economics_view as view
from ui import lens_view
from ui.formulas import economics_formulas
from ui.layout import assumption_line, lazy_tabs, scenario_caption
from ui.lenses.scale_to_zero import SCALE_TO_ZERO
from ui.sidebar import draw_sidebar, page_scenario
from ui.text import md_escape

st.set_page_config(page_title="Scale to zero · What-If Explorer", page_icon="💤", layout="wide")
s = page_scenario("scale_to_zero", defer=True)
tr = view.trace()
shown = lens_view.run(SCALE_TO_ZERO, s)
eco = shown.f["economics"]

st.title("Scale to zero: warm replicas, scale to zero, pre-warm or sleep")
source = f"trace {md_escape(tr.name)}" if tr is not None else f"traffic: {s.traffic}"
scenario_caption(s, source, f"{eco['requests_per_day']:,.0f} requests/day", f"SLA {s.sla_s:g} s")
shown.metrics("headline")
shown.caption("service")
shown.caption("penalty")
shown.caption("optimised")
shown.markdown("cold-range")
assumption_line(s, lens="scale_to_zero")
draw_sidebar()

view.controls(s)
view.trace_area()

tabs = lazy_tabs(
    ["Strategies", "Idle timeout", "The day", "Break-even", "Downloads"], key="t_economics"
)
if tabs[0].open:
    with tabs[0]:
        shown.chart("strategies")
        shown.table("strategies")
        shown.caption("rule")
if tabs[1].open:
    with tabs[1]:
        shown.chart("idle-timeout")
if tabs[2].open:
    with tabs[2]:
        shown.chart("the-day")
if tabs[3].open:
    with tabs[3]:
        shown.chart("break-even")
if tabs[4].open:
    with tabs[4]:
        shown.downloads()

economics_formulas()  # its own expander, built only while open
