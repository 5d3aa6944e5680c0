"""The Launch overhead page in a real browser: a share link reopens its exact view (figures
checked against the CLI's ``launch`` section), the bucket editor applies good sizes and names
bad ones, and a bad link warns by key while the page keeps working.

Expected figures: the CUDA graphs Q&A seed (5.5 GiB AWQ: eager 8.1 ms, graph 5.9 ms, 1.36×) and
the chef seed (800 launches, 4.0 ms, 250 tok/s), both also read from the CLI.
"""

from __future__ import annotations

import re

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from model.engines import normalise
from ui.text import step_ms

from .conftest import (
    WAIT_MS,
    assert_no_exception,
    cli_section,
    metrics,
    open_page,
    open_view,
    require_chromium,
    share_link,
    wait_idle,
    wait_metrics,
)

require_chromium()
IDEAL = normalise("ideal")  # the seeds' engine, as links name it (id@version)


def test_qa_share_link_reopens_the_view_and_matches_the_cli(page, app_url):
    values = open_page(page, f"{app_url}/Launch_overhead?scenario=seed-qa-awq-5.5gib")
    lf = cli_section("launch", "seed-qa-awq-5.5gib")
    assert values["Kernels / step"] == "430"
    assert values["Step, eager"] == step_ms(lf["t_step_eager_ms"]) == "8.056 ms"
    assert values["Step, graph"] == step_ms(lf["t_step_graph_ms"]) == "5.911 ms"
    assert values["Graph speed-up"] == "1.36×"
    # the first tab's charts drew (timeline, zoom, mode sweep); the others draw when opened
    charts = page.locator('[data-testid="stPlotlyChart"]')
    charts.nth(2).wait_for(state="visible", timeout=WAIT_MS)
    assert charts.count() == 3
    for tab, charts_in_tab in (("Quantised models gain more", 1), ("Capture buckets", 1)):
        open_view(page, tab)
        charts.first.wait_for(state="visible", timeout=WAIT_MS)
        # the run may not have started when the status is first read: the last view's stale
        # charts leave when it ends, so wait for the count (the assertion below says which)
        try:
            page.wait_for_function(
                "n => document.querySelectorAll('[data-testid=\"stPlotlyChart\"]').length === n",
                arg=charts_in_tab,
                timeout=WAIT_MS,
            )
        except PlaywrightTimeout:
            pass
        wait_idle(page)
        assert charts.count() == charts_in_tab, tab
    open_view(page, "The ten knobs")
    page.get_by_text("remove --enforce-eager").wait_for(timeout=WAIT_MS)
    path, pairs = share_link(page)
    assert path.endswith("/Launch_overhead")
    # the scenario, and the tab open (a reviewer lands on the knobs)
    assert pairs == [
        ("scenario", "seed-qa-awq-5.5gib"),
        ("engine", IDEAL),
        ("tab", "The ten knobs"),
    ]


def test_link_with_overrides_matches_the_cli(page, app_url):
    sets = ("kernels=430", "launch_us=7")
    values = open_page(
        page, f"{app_url}/Launch_overhead?scenario=seed-70b-eager-4xh100&" + "&".join(sets)
    )
    lf = cli_section("launch", "seed-70b-eager-4xh100", *sets)
    assert values["Kernels / step"] == "430"
    assert values["Eager launch time"] == step_ms(lf["t_launch_eager_ms"]) == "3.010 ms"
    assert values["Step, graph"] == step_ms(lf["t_step_graph_ms"])
    assert values["Launch ceiling"] == f"{lf['launch_ceiling_tokens_per_s']:.3g} tok/s"


def test_bucket_editor_in_the_browser(page, app_url):
    values = open_page(page, f"{app_url}/Launch_overhead?batch=33")
    assert values["Padded batch"] == "40"  # vLLM's sizes: 32, 40, …
    open_view(page, "Capture buckets")
    box = page.locator("textarea[aria-label^='Capture sizes']")
    box.fill("1, 2, 4, 8, 16, 32, 64")
    box.press("Control+Enter")
    page.wait_for_url(re.compile(r"capture_sizes=1(%2C|,)2(%2C|,)4"), timeout=WAIT_MS)
    after = wait_metrics(page, lambda v: v.get("Padded batch") == "64")
    assert after["Graphs captured"] == "14"  # 7 sizes × 2 (full_and_piecewise)
    box = page.locator("textarea[aria-label^='Capture sizes']")
    box.fill("64, 32")
    box.press("Control+Enter")
    error = page.locator('[data-testid="stAlertContainer"]', has_text="Not applied")
    error.first.wait_for(state="visible", timeout=WAIT_MS)
    assert "capture_sizes" in error.first.inner_text()
    assert "strictly increasing" in error.first.inner_text()
    kept = metrics(page)
    assert kept["Padded batch"] == "64" and kept["Graphs captured"] == "14"
    assert_no_exception(page)


def test_bad_link_warns_by_key_and_the_page_still_renders(page, app_url):
    values = open_page(
        page, f"{app_url}/Launch_overhead?capture_sizes=0,8&launch_us=-1&cuda_graphs=maybe"
    )
    alerts = page.locator('[data-testid="stAlertContainer"]')
    alerts.first.wait_for(state="visible", timeout=WAIT_MS)
    text = "\n".join(alerts.all_inner_texts())
    for key in ("capture_sizes", "launch_us", "cuda_graphs"):
        assert key in text, text
    assert values["Kernels / step"] == "800"
    assert values["Eager launch time"] == "4.000 ms"
