"""The Measurements lens, declared once (SPEC 4.5): the session's measured points over the
model's own curves, and the residual of each. Its result is the page's own fit of the uploaded
data sets (``{"cal": Calibration, "curves": …}`` from :func:`ui.measure_data.calibrated`), so it
has no core call of its own and no baseline; the uploader and the fit report stay on the page
(:mod:`ui.measure_view`)."""

from __future__ import annotations

import pandas as pd

from ui import measure_charts as charts
from ui.lens import Chart, Lens, Page, Table, View


def _cal(v: View):
    return v.r["cal"]


def _curves(v: View) -> dict:
    return v.r["curves"]


PAGE = Page(
    key="measurements",
    file="pages/6_Measurements.py",
    label="Measurements",
    icon=":material/straighten:",
    emoji="📏",
    tab_key="t_measure",
)


MEASUREMENTS = Lens(
    page=PAGE,
    title="Measurements",
    slug="measurements",
    compute=None,
    figures=lambda r: {},
    charts=(
        Chart(
            "measured-step-time", lambda v: charts.decode_figure(_cal(v), _curves(v)), report=False
        ),
        Chart(
            "measured-tokens",
            lambda v: charts.decode_figure(_cal(v), _curves(v), "tokens_per_s"),
            report=False,
        ),
        Chart("measured-ttft", lambda v: charts.ttft_figure(_cal(v), _curves(v)), report=False),
        Chart("measured-tpot", lambda v: charts.tpot_figure(_cal(v)), report=False),
        Chart("measured-launch", lambda v: charts.launch_figure(_cal(v), _curves(v)), report=False),
        Chart("measured-startup", lambda v: charts.cold_figure(_cal(v)), report=False),
        Chart("residuals", lambda v: charts.residual_figure(_cal(v).residual_rows()), report=False),
    ),
    tables=(Table("residuals", lambda v: pd.DataFrame(_cal(v).residual_rows())),),
)
