"""The Serving page in a real browser: a share link reopens the same figures in a fresh
context, a typed request rate changes them and joins the link, and a bad rate is refused by
name with the page still working (SPEC 4.6 and 7)."""

from __future__ import annotations

from .conftest import (
    WAIT_MS,
    assert_no_exception,
    choose_option,
    open_page,
    open_view,
    require_chromium,
    share_link,
    wait_metrics,
)

require_chromium()

QUERY = "scenario=llama-8b-1xh100&request_rate=4&num_requests=300&ttft_slo_ms=600"


def reopened(browser, app_url: str, path: str, pairs, shown: dict) -> dict:
    """The metrics the link ``path?pairs`` shows in a fresh browser context, once as many as
    ``shown`` have drawn: the simulation's figures come from a worker process and may land a
    run later than the first metrics on a loaded machine."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.set_default_timeout(WAIT_MS)
    try:
        other = ctx.new_page()
        query = "&".join(f"{k}={v}" for k, v in pairs)
        open_page(other, f"{app_url}{path}?{query}")
        return wait_metrics(other, lambda m: "Max rate within SLO" in m and len(m) == len(shown))
    finally:
        ctx.close()


def test_a_share_link_reopens_the_same_serving_figures(page, browser, app_url):
    shown = open_page(page, f"{app_url}/Serving?{QUERY}")
    assert "Max rate within SLO" in shown and "GPUs needed" in shown
    path, pairs = share_link(page)
    assert path.endswith("/Serving") and ("request_rate", "4.0") in pairs
    assert reopened(browser, app_url, path, pairs, shown) == shown


def test_a_typed_rate_changes_the_figures_and_a_bad_one_is_refused(page, app_url):
    before = open_page(page, f"{app_url}/Serving?{QUERY}")
    box = page.get_by_label("Request rate [req/s]", exact=True).and_(
        page.get_by_test_id("stTextInputField")
    )
    box.fill("12")
    box.press("Enter")
    after = wait_metrics(page, lambda m: m.get("p99 TTFT") != before.get("p99 TTFT"))
    assert after["Max rate within SLO"] == before["Max rate within SLO"]  # rate-independent
    _, pairs = share_link(page)
    assert ("request_rate", "12.0") in pairs
    box.fill("-1")
    box.press("Enter")
    alert = page.locator('[data-testid="stAlertContainer"], [data-testid="stAlert"]')
    alert.filter(has_text="request").first.wait_for(timeout=WAIT_MS)
    assert_no_exception(page)
    _, pairs = share_link(page)
    assert ("request_rate", "12.0") in pairs  # the scenario kept its value


def test_speculative_decoding_moves_the_figures_and_its_link_reopens(page, browser, app_url):
    # issue 42: the method chosen in its expander joins the link, lowers TPOT, and the tab's
    # crossover chart draws; a bad acceptance is refused by name with the page still working
    before = open_page(page, f"{app_url}/Serving?{QUERY}")
    page.locator("summary", has_text="Speculative decoding").first.click()
    method = page.get_by_role("combobox", name="Method")
    method.wait_for(timeout=WAIT_MS)
    choose_option(page, method, "eagle3: EAGLE-3")
    after = wait_metrics(page, lambda m: m.get("p99 TPOT") != before.get("p99 TPOT"))
    assert float(after["p99 TPOT"].split()[0]) < float(before["p99 TPOT"].split()[0])
    path, pairs = share_link(page)
    assert ("speculative", "eagle3") in pairs
    open_view(page, "Speculative decoding")
    page.locator(".js-plotly-plot").first.wait_for(timeout=WAIT_MS)
    page.get_by_text("tokens per sequence", exact=False).first.wait_for(timeout=WAIT_MS)
    box = page.get_by_label("Acceptance α", exact=True).and_(
        page.get_by_test_id("stNumberInputField")
    )
    box.fill("1.5")
    box.press("Enter")
    alert = page.locator('[data-testid="stAlertContainer"], [data-testid="stAlert"]')
    alert.filter(has_text="spec").first.wait_for(timeout=WAIT_MS)
    assert_no_exception(page)
    assert reopened(browser, app_url, path, pairs, after) == after


def test_disaggregation_moves_the_figures_and_its_link_reopens(page, browser, app_url):
    # issue 42 §2: the toggle in its expander joins the link, moves the GPUs a replica has and
    # the decode figures, the Disaggregation view draws its comparison, and a bad instance
    # count is refused by name with the page still working
    before = open_page(page, f"{app_url}/Serving?{QUERY}")
    page.locator("summary", has_text="Prefill/decode disaggregation").first.click()
    toggle = page.get_by_text("Disaggregated", exact=True).first
    toggle.wait_for(timeout=WAIT_MS)
    toggle.scroll_into_view_if_needed()
    toggle.click()
    after = wait_metrics(page, lambda m: m.get("p99 TPOT") != before.get("p99 TPOT"))
    assert float(after["p99 TPOT"].split()[0]) < float(before["p99 TPOT"].split()[0])
    path, pairs = share_link(page)
    assert ("disaggregated", "true") in pairs
    open_view(page, "Disaggregation")
    page.locator(".js-plotly-plot").first.wait_for(timeout=WAIT_MS)
    page.get_by_text("the best split is", exact=False).first.wait_for(timeout=WAIT_MS)
    assert reopened(browser, app_url, path, pairs, after) == after
    # the widget's bounds keep 0 out; a link can carry it, and is refused by name
    shown = open_page(page, f"{app_url}/Serving?{QUERY}&disaggregated=true&decode_instances=0")
    alert = page.locator('[data-testid="stAlertContainer"], [data-testid="stAlert"]')
    alert.filter(has_text="decode_instances").first.wait_for(timeout=WAIT_MS)
    assert_no_exception(page)
    assert "Max rate within SLO" in shown


def test_a_data_parallel_link_reopens_and_draws_its_layouts(page, browser, app_url):
    # issue 42 §3: a DP x EP link reopens the same figures in a fresh context, its caption
    # names the layout, and the Parallelism view draws the layouts of the replica's GPUs
    query = (
        "model=qwen3-30b-a3b&gpus=1&data_parallel=4&expert_parallel=true&request_rate=4"
        "&num_requests=200"
    )
    shown = open_page(page, f"{app_url}/Serving?{query}")
    page.get_by_text("TP 1 × DP 4, EP", exact=False).first.wait_for(timeout=WAIT_MS)
    path, pairs = share_link(page)
    assert ("data_parallel", "4") in pairs and ("expert_parallel", "true") in pairs
    open_view(page, "Parallelism")
    page.locator(".js-plotly-plot").first.wait_for(timeout=WAIT_MS)
    page.get_by_text("DP 4 · EP", exact=False).first.wait_for(timeout=WAIT_MS)
    assert_no_exception(page)
    assert reopened(browser, app_url, path, pairs, shown) == shown
