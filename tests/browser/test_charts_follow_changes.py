"""Charts follow the scenario in a real browser: after a change, every chart on the page shows
the new scenario, not the one the page opened with.

Streamlit 1.67's Plotly element keeps its figure in component state, initialised once per
element id (and restored from the element's saved state for that id); a new spec under the
same id is not drawn. A chart whose id stayed the same across a change therefore kept showing
the old figure while the metrics above it moved on.
"""

from __future__ import annotations

from .conftest import WAIT_MS, assert_no_exception, open_page, require_chromium, wait_metrics

require_chromium()

# each chart's scenario line under its legend, and its "batch N" marker label
CHART_TEXT = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')]
    .map(p => [...p.querySelectorAll('text')].map(t => t.textContent).join(' | '))"""


def _charts_mention(page, text: str) -> bool:
    charts = page.evaluate(CHART_TEXT)
    return bool(charts) and all(text in c for c in charts)


def test_a_batch_change_redraws_every_chart(page, app_url):
    values = open_page(page, f"{app_url}/Roofline")
    assert values["Aggregate tok/s"]
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=\"stPlotlyChart\"] .js-plotly-plot')"
        ".length >= 2",
        timeout=WAIT_MS,
    )
    assert _charts_mention(page, "· batch 1")
    box = page.get_by_label("Batch", exact=True).first
    box.fill("9")
    box.press("Enter")
    wait_metrics(page, lambda v: v.get("Aggregate tok/s") != values["Aggregate tok/s"])
    page.wait_for_function(
        "(t) => { const c = (" + CHART_TEXT + ")(); "
        "return c.length >= 2 && c.every(x => x.includes(t)); }",
        arg="· batch 9",
        timeout=WAIT_MS,
    )
    assert_no_exception(page)
