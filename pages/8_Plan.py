"""Plan: for every hardware preset, the cheapest configuration that holds the SLO at the rate
(issue 43, section 1). The search runs in the worker pool, one job per preset; the table fills
as they come back."""

import streamlit as st

from model import plan
from model.errors import ScenarioError
from ui import lens_view, plan_view, serving_view
from ui.lenses.plan_page import PAGE
from ui.page import draw_sidebar, page_scenario
from ui.scenario_caption import scenario_caption

lens_view.page_config(PAGE)
s = page_scenario(PAGE.key, defer=True)
st.title("Plan: which GPU, and how many")
scenario_caption(
    s,
    f"TTFT ≤ {s.ttft_slo_ms:g} ms",
    f"TPOT ≤ {s.tpot_slo_ms:g} ms",
    f"for {s.slo_attainment:.0%} of requests",
    f"lengths: {s.lengths}",
)
headline = st.container()
draw_sidebar()
serving_view.controls(s)
peak = plan_view.rate_choice(s)
overrides, errors = plan_view.price_editor(s)
for text in errors:
    st.warning(text)
try:
    rate, todo = plan_view.jobs(s, peak, overrides)
except ScenarioError as exc:
    plan_view.problem(exc)
    st.stop()

status, progress = st.empty(), st.empty()


def shown(rows: list[dict], running: list[str]) -> None:
    if running:
        status.caption(f"Still running ({len(running)}): {', '.join(running)}")
    else:
        status.empty()
    with progress.container():
        plan_view.table(plan.assemble(s, rate, rows))


rows = plan_view.run(todo, shown)
out = plan.assemble(s, rate, rows)
with headline:
    if out["plans"]:
        best = out["plans"][0]
        c = st.columns([2, 1, 1, 1])
        c[0].metric(
            "Cheapest GPU", plan_view.short_name(best["hardware_name"]), help=best["hardware_name"]
        )
        c[1].metric("GPUs", f"{best['gpus_total']:,}", help="replicas × GPUs per replica")
        c[2].metric("USD per hour", f"{best['usd_per_hour']:,.2f}")
        c[3].metric("USD per M output tokens", f"{best['usd_per_million_output_tokens']:,.3f}")
    else:
        st.error(
            f"No hardware preset holds this SLO at {rate:g} req/s; the closest configurations "
            "are listed below."
        )
if out["plans"]:
    st.plotly_chart(plan_view.chart(out), theme="streamlit")
plan_view.unfit(out)
st.caption(
    f"{out['searches']} capacity searches and {out['checks']} one-run checks over "
    f"{out['runs']} configurations (each GPU × tensor parallel 1–8, and data-parallel ranks "
    "with expert parallelism for a mixture of experts, × weights dtype × speculative decoding "
    "and disaggregation on and off); the rest "
    "were ruled out by analytic bounds before simulating (docs/plan.md)."
)
