"""Serving lens: a server under load, the largest rate one replica holds within the SLO, and
the replicas and GPUs a rate needs (SPEC 4.6). Declared in :mod:`ui.lenses.serving`; the
clients' and objectives' controls are the page's own."""

import streamlit as st

from ui import lens_view, serving_view
from ui.assumptions import assumption_line
from ui.formulas import serving_formulas
from ui.lenses.serving import PARETO_SHOW, SERVING, pareto_groups, pareto_points
from ui.page import draw_sidebar, page_scenario
from ui.scenario_caption import scenario_caption

lens_view.page_config(SERVING.page)
s = page_scenario(SERVING.page.key, defer=True)
shown = lens_view.run(SERVING, s)

st.title("Serving under load: latency, capacity and GPUs")
rate = "all at once" if s.request_rate == "inf" else f"{s.request_rate:g} req/s"
conc = "no concurrency limit" if s.max_concurrency is None else f"≤ {s.max_concurrency:,} in flight"
scenario_caption(s, rate, conc, f"{s.num_requests:,} requests", f"lengths: {s.lengths}")
shown.notice("does_not_fit", "error")
shown.metrics("headline")
shown.metrics("run")
shown.metrics("prefix")
shown.notice("saturated", "warning")
shown.notice("near_capacity", "warning")
assumption_line(s, lens="serving")
draw_sidebar()

serving_view.controls(s)

if shown.r.get("fits"):
    tabs = lens_view.page_tabs(SERVING.page)
    if tabs[0].open:
        with tabs[0]:
            shown.chart("load")
            shown.table("sweep")
    if tabs[1].open:
        with tabs[1]:
            shown.table("percentiles")
            shown.chart("timeline")
    if tabs[2].open:
        with tabs[2]:
            groups = pareto_groups(pareto_points(shown.view))
            st.multiselect(
                "Show layout × dtype",
                groups,
                key=PARETO_SHOW,
                placeholder="all of them",
                help="Which layouts (tensor parallel; for a mixture of experts data-parallel "
                "ranks with expert parallelism; disaggregated pools) and weight dtypes the chart "
                "draws (empty: all); a legend entry also hides its line.",
            )
            shown.chart("pareto")
            shown.caption("pareto_note")
            shown.table("pareto")
    # the levers' views: a chart and its note each (issue 42)
    for tab, chart, note in (
        (tabs[3], "speculative", "speculative_note"),
        (tabs[4], "disaggregation", "disagg_note"),
        (tabs[5], "parallelism", "parallel_note"),
    ):
        if tab.open:
            with tab:
                shown.chart(chart)
                shown.caption(note)
    if tabs[6].open:
        with tabs[6]:
            shown.downloads()

    capacity = shown.r.get("capacity") or {}
    serving_view.run_on_cluster(s, capacity.get("replicas_needed"))

serving_formulas()
