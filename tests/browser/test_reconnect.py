"""A server restart under an open page: the browser reconnects to a new, empty session, and
the first widget change after it is kept (the URL carries it and the figures follow), for a
sidebar widget and for a page's own control. Without the fix the widget snapped back to the
link's value and the URL did not change.

Expected figures come from the CLI (``python -m whatif eval --json``).
"""

from __future__ import annotations

import re

import pytest

from ui.text import step_ms

from .conftest import (
    WAIT_MS,
    assert_no_exception,
    browser_page,
    cli_section,
    open_page,
    require_chromium,
    restart_server_under,
    wait_metrics,
)

require_chromium()


@pytest.fixture()
def page(browser):
    """A page of its own (these tests use ``restartable_server``, not the shared one)."""
    with browser_page(browser) as pg:
        yield pg


def sig3(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def test_first_sidebar_change_after_a_restart_is_kept(page, restartable_server):
    seed = "seed-3b-4090"
    before = open_page(page, f"{restartable_server.base}/Roofline?scenario={seed}")
    assert before["Aggregate tok/s"] == "125"
    restart_server_under(page, restartable_server)

    batch = page.locator('[data-testid="stSidebar"]').get_by_label("Batch", exact=True)
    batch.fill("8")
    batch.press("Enter")
    page.wait_for_url(re.compile(rf"[?&]scenario={seed}(&.*)?&batch=8(&|$)"), timeout=WAIT_MS)
    dec = cli_section("decode", seed, "batch=8")
    after = wait_metrics(page, lambda v: v.get("Aggregate tok/s") != before["Aggregate tok/s"])
    assert after["Aggregate tok/s"] == sig3(dec["tokens_per_s"])
    assert after["Step time"] == step_ms(dec["t_step_ms"])
    assert batch.input_value() == "8"
    assert_no_exception(page)

    # the session now runs as usual: the next change is kept too, on top of the first
    batch.fill("16")
    batch.press("Enter")
    page.wait_for_url(re.compile(r"[?&]batch=16(&|$)"), timeout=WAIT_MS)
    dec16 = cli_section("decode", seed, "batch=16")
    wait_metrics(page, lambda v: v.get("Aggregate tok/s") == sig3(dec16["tokens_per_s"]))
    assert f"scenario={seed}" in page.url


def test_first_page_control_change_after_a_restart_is_kept(page, restartable_server):
    seed = "seed-70b-fp8-cold-start"
    before = open_page(page, f"{restartable_server.base}/Cold_start?scenario={seed}")
    assert before["Time to ready"] == "92.3 s"
    restart_server_under(page, restartable_server)

    page.get_by_text("Compile cache", exact=True).click()
    page.wait_for_url(
        re.compile(rf"[?&]scenario={seed}(&.*)?&compile_cache=true(&|$)"), timeout=WAIT_MS
    )
    warm = cli_section("cold_start", seed, "compile_cache=true")
    after = wait_metrics(page, lambda v: v.get("Time to ready") != before["Time to ready"])
    assert after["Time to ready"] == f"{warm['total_s']:.1f} s"
    assert_no_exception(page)
