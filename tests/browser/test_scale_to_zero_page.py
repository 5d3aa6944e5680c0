"""The Scale to zero page in a real browser: a share link reopens the same figures in a fresh
context, and a trace uploaded through the real uploader changes them (SPEC 4.4 and 7)."""

from __future__ import annotations

import re

from .conftest import (
    WAIT_MS,
    assert_no_exception,
    metrics,
    open_page,
    require_chromium,
    share_link,
    wait_metrics,
)

require_chromium()

QUERY = "traffic=spiky-internal&idle_timeout_s=900&sla_s=30&prewarm_hours=9-12"
TRACE = b"arrival_s,input_tokens,output_tokens\n" + b"".join(
    f"{t},{500},{100}\n".encode() for t in (0, 5, 9, 4000, 4003, 9000, 20000, 20001, 50000)
)


def test_a_share_link_reopens_the_same_figures_in_a_fresh_browser(page, browser, app_url):
    shown = open_page(page, f"{app_url}/Scale_to_zero?{QUERY}")
    path, pairs = share_link(page)
    assert path.endswith("/Scale_to_zero")
    assert ("idle_timeout_s", "900.0") in pairs or ("idle_timeout_s", "900") in pairs
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.set_default_timeout(WAIT_MS)
    try:
        other = ctx.new_page()
        query = "&".join(f"{k}={v}" for k, v in pairs)
        assert open_page(other, f"{app_url}{path}?{query}") == shown
    finally:
        ctx.close()


def _upload_trace(page, app_url) -> dict:
    before = open_page(page, f"{app_url}/Scale_to_zero?{QUERY}")
    main = page.locator('[data-testid="stMain"]')
    main.get_by_text("Replay a request trace").click()
    main.locator('input[type="file"]').first.set_input_files(
        files=[{"name": "day.csv", "mimeType": "text/csv", "buffer": TRACE}]
    )
    after = wait_metrics(page, lambda m: m != before)
    assert after != before
    main.get_by_text("trace day.csv").first.wait_for(timeout=WAIT_MS)
    assert_no_exception(page)
    return after


def test_an_uploaded_trace_changes_the_figures(page, app_url):
    _upload_trace(page, app_url)


def test_an_uploaded_trace_travels_with_the_share_link(page, browser, app_url):
    after = _upload_trace(page, app_url)
    page.wait_for_url(re.compile(r"[?&]trace=[0-9a-f]{64}(&|$)"), timeout=WAIT_MS)
    path, pairs = share_link(page)
    assert any(k == "trace" and len(v) == 64 for k, v in pairs), pairs
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.set_default_timeout(WAIT_MS)
    try:
        other = ctx.new_page()
        query = "&".join(f"{k}={v}" for k, v in pairs)
        assert open_page(other, f"{app_url}{path}?{query}") == after  # the uploader's figures
        main = other.locator('[data-testid="stMain"]')
        main.get_by_text("trace day.csv").first.wait_for(timeout=WAIT_MS)
        assert main.get_by_text("in this session only").count() == 0
        assert_no_exception(other)
    finally:
        ctx.close()


def test_a_bad_trace_is_refused_by_name_and_the_page_keeps_working(page, app_url):
    before = open_page(page, f"{app_url}/Scale_to_zero?{QUERY}")
    main = page.locator('[data-testid="stMain"]')
    main.get_by_text("Replay a request trace").click()
    main.locator('input[type="file"]').first.set_input_files(
        files=[{"name": "junk.csv", "mimeType": "text/csv", "buffer": b"when,what\n1,2\n"}]
    )
    alert = page.locator('[data-testid="stAlertContainer"], [data-testid="stAlert"]')
    alert.filter(has_text="junk.csv").first.wait_for(timeout=WAIT_MS)
    assert_no_exception(page)
    assert metrics(page) == before
