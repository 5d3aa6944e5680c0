"""Scale to zero lens: a day of traffic, warm replicas against scale to zero, pre-warm and sleep
mode (SPEC 4.4). Declared in :mod:`ui.lenses.scale_to_zero`; the traffic controls and the
trace upload are the page's own."""

import streamlit as st

from ui import economics_view as view
from ui import lens_view
from ui.assumptions import assumption_line
from ui.formulas import economics_formulas
from ui.lenses.scale_to_zero import SCALE_TO_ZERO
from ui.page import draw_sidebar, page_scenario
from ui.scenario_caption import scenario_caption
from ui.text import md_escape

lens_view.page_config(SCALE_TO_ZERO.page)
s = page_scenario(SCALE_TO_ZERO.page.key, defer=True)
tr = view.trace()
shown = lens_view.run(SCALE_TO_ZERO, s)
eco = shown.f["economics"]

st.title("Scale to zero: warm replicas, scale to zero, pre-warm or sleep")
source = f"trace {md_escape(tr.name)}" if tr is not None else f"traffic: {s.traffic}"
per_day = f"{eco['requests_per_day']:,.0f} requests/day"
replayed = eco.get("trace")  # the figures of a replayed trace (None: the traffic profile's)
if replayed and 0 < replayed["span_s"] < 86_400:  # a shorter trace is scaled up to a day
    per_day += f" (extrapolated from {replayed['requests']:,} in {replayed['span_s'] / 3600:.3g} h)"
scenario_caption(s, source, per_day, f"SLA {s.sla_s:g} s")
# controls first, then the headline and the views; the explanations are folded below them
# (issue 40, item 7). The controls' place is kept and filled after the headline, as the
# sidebar is, so the browser's commit of the headline holds no widgets
controls = st.container()
shown.metrics("headline")
unusual = eco["replica_capacity_basis"] != "slo"  # a stand-in replica: said up front
if unusual:
    shown.caption("service")
shown.markdown("cold-range")
draw_sidebar()
with controls:
    view.controls(s)
    view.trace_area()

tabs = lens_view.page_tabs(SCALE_TO_ZERO.page)
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

why = st.expander(
    "What a replica and a cold start are taken to be, and when the answer flips",
    key="x_economics_why",
    on_change="rerun",
)
if why.open:  # built only while open
    with why:
        if not unusual:
            shown.caption("service")
        shown.caption("penalty")
        shown.caption("optimised")
assumption_line(s, lens="scale_to_zero")  # the engine, one click from ideal
economics_formulas()  # its own expander, built only while open
