"""Scale to zero lens: a day of traffic, warm replicas against scale to zero, pre-warm and sleep
mode (SPEC 4.4)."""

import streamlit as st

from ui import compare
from ui import economics_charts as charts
from ui import economics_view as view
from ui.chart_view import chart
from ui.formulas import economics_formulas
from ui.layout import assumption_line, downloads, lazy_tabs, scenario_caption
from ui.sidebar import draw_sidebar, page_scenario
from ui.text import md_escape

st.set_page_config(page_title="Scale to zero · What-If Explorer", page_icon="💤", layout="wide")
s = page_scenario("scale_to_zero", defer=True)
tr = view.trace()
lens = view.lens(s)
b = compare.baseline()
blens = b and view.lens(b, baseline=True)
fig, svc = lens["figures"], lens["service"]
warm = fig["warm"]

st.title("Scale to zero: warm replicas, scale to zero, pre-warm or sleep")
source = f"trace {md_escape(tr.name)}" if tr is not None else f"traffic: {s.traffic}"
scenario_caption(s, source, f"{fig['requests_per_day']:,.0f} requests/day", f"SLA {s.sla_s:g} s")

view.headline(fig, base=blens and blens["figures"])
st.caption(
    f"Cold start {svc.cold_s:,.1f} s and optimised {svc.cold_optimised_s:,.1f} s (Cold start "
    f"lens); wake from sleep level {svc.sleep_level}: {svc.wake_s:,.2f} s; one replica serves "
    f"{svc.capacity_per_s:,.2f} requests/s (Roofline lens: TTFT {svc.ttft_s * 1000:,.0f} ms + "
    f"output tokens × TPOT {svc.tpot_s * 1000:,.1f} ms at batch {s.batch})."
)
assumption_line(s)
draw_sidebar()

view.controls(s)
view.trace_area()

tabs = lazy_tabs(
    ["Strategies", "Idle timeout", "The day", "Break-even", "Downloads"], key="t_economics"
)
if tabs[0].open:
    with tabs[0]:
        chart(
            charts.strategies_figure(fig),
            "strategies",
            base=blens and charts.strategies_figure(blens["figures"]),
        )
        st.dataframe(
            view.strategy_table(fig),
            hide_index=True,
            width="stretch",
            column_config={"strategy": st.column_config.TextColumn(width="large")},
        )
        st.caption(
            "The rule, from the cold-start runbook: keep warm when the idle GPU cost in the "
            "troughs is lower than the cost of missing the SLA at every start-up; scale to zero "
            "when troughs are long and the optimised cold start fits the tolerance."
        )
if tabs[1].open:
    with tabs[1]:
        chart(
            charts.timeout_figure(
                lens["timeout_sweep"], warm["total_usd_per_day"], s.idle_timeout_s
            ),
            "idle-timeout",
            base=blens
            and charts.timeout_figure(
                blens["timeout_sweep"],
                blens["figures"]["warm"]["total_usd_per_day"],
                b.idle_timeout_s,
            ),
        )
if tabs[2].open:
    with tabs[2]:
        chart(
            charts.timeline_figure(lens["timeline"]),
            "the-day",
            base=blens and charts.timeline_figure(blens["timeline"]),
        )
if tabs[3].open:
    with tabs[3]:
        chart(
            charts.break_even_figure(
                lens["break_even"],
                svc.cold_s,
                svc.cold_optimised_s,
                fig["break_even_cold_start_s"] or None,
            ),
            "break-even",
            base=blens
            and charts.break_even_figure(
                blens["break_even"],
                blens["service"].cold_s,
                blens["service"].cold_optimised_s,
                blens["figures"]["break_even_cold_start_s"] or None,
            ),
        )
if tabs[4].open:
    with tabs[4]:
        downloads(s, {"Strategies": view.strategy_table(fig)}, "scale-to-zero")

with st.expander("Formulas and sources"):
    economics_formulas()
