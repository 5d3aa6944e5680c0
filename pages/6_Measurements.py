"""Measurements lens: upload what the cluster measured, see it against the model, calibrate in
one click (SPEC 4.5). The charts are declared in :mod:`ui.lenses.measurements`; the uploader,
the examples and the fit report are the page's own."""

import numpy as np
import streamlit as st

from model.calibrate import Calibration
from model.errors import ScenarioError
from model.readers.measurements import CSV_SCHEMAS, template_csv
from ui import lens_view
from ui import measure_data as data
from ui import measure_view as view
from ui.assumptions import assumption_line
from ui.lenses.measurements import MEASUREMENTS
from ui.measure_charts import is_startup
from ui.page import draw_sidebar, page_scenario
from ui.scenario_caption import scenario_caption

lens_view.page_config(MEASUREMENTS.page)
s = page_scenario(MEASUREMENTS.page.key, defer=True)
sets = data.datasets()
cal: Calibration | None = None
curves: dict = {}
problem = None
if sets:
    try:
        cal, curves = data.calibrated(s, sets)
    except ScenarioError as exc:
        problem = exc.message
    except (ArithmeticError, ValueError, np.linalg.LinAlgError) as exc:  # never the page
        problem = f"the fit failed on these data sets ({type(exc).__name__}); please report them"

st.title("Measurements: your cluster against the model")
scenario_caption(s, f"batch {s.batch}", f"context {s.context_tokens:,}", f"graphs: {s.cuda_graphs}")
view.headline(s, sets, cal)
view.linked_area(s, sets)  # a benchmark that names the scenario it was run for
view.mismatch_warning(s, sets)  # before any fit is offered
assumption_line(s)
draw_sidebar()

view.sharing_notice()
with st.expander("Add measurements", expanded=not sets):
    view.upload_area()
    st.markdown("**Templates** of the page's own CSV formats (columns carry their units):")
    cols = st.columns(len(CSV_SCHEMAS))
    for col, kind in zip(cols, CSV_SCHEMAS, strict=True):
        col.download_button(
            f"{kind} CSV",
            template_csv(kind),
            file_name=f"whatif-template-{kind}.csv",
            mime="text/csv",
            help=CSV_SCHEMAS[kind]["help"],
            key=f"w_tpl_{kind}",
        )
    view.examples_area()

view.errors_area(data.errors())
view.notices_area(data.notices())
if not sets:
    st.info(
        "No measurements yet. Upload your files above, paste a log, or load an example data "
        "set; the share link then shows them too."
    )
    st.stop()

view.read_area(s, sets)
if problem:
    st.warning(problem)
    st.stop()

shown = lens_view.show(MEASUREMENTS, s, {"cal": cal, "curves": curves})
labels = view.tab_labels(cal)
tabs = lens_view.page_tabs(MEASUREMENTS.page, labels)
for label, tab in zip(labels, tabs, strict=True):
    if not tab.open:
        continue
    with tab:
        if label == "Fit and apply":
            view.fit_report(s, cal)
        elif label == "Decode steps":
            left, right = st.columns(2)
            shown.chart("measured-step-time", where=left)
            shown.chart("measured-tokens", where=right)
        elif label == "Request latency":
            if curves["ttft"]:
                shown.chart("measured-ttft")
            if any(p.quantity == "tpot_ms" for p in cal.points):
                shown.chart("measured-tpot")
        elif label == "Launch overhead":
            shown.chart("measured-launch")
        elif label == "Start-up and rates":
            if any(is_startup(p.quantity) for p in cal.points):
                shown.chart("measured-startup")
            view.rates_table(cal)
        elif label == "Residuals":
            shown.chart("residuals")
            shown.table("residuals")
            view.downloads(s, cal)

box = st.expander("How the fit works: formulas and references", key="x_fit_how", on_change="rerun")
if box.open:  # built only while open
    with box:
        view.formulas()
