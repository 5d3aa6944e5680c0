"""Baseline in a real browser: pin, change, and the share link reopens the same comparison in a
fresh browser context, with the deltas the CLI's figures give (issue 12, part 1)."""

from __future__ import annotations

import re

from ui.text import step_ms

from .conftest import (
    WAIT_MS,
    assert_no_exception,
    browser_page,
    choose_option,
    cli_section,
    metrics,
    open_page,
    require_chromium,
    wait_idle,
    wait_metrics,
)

require_chromium()

SEED = "seed-3b-4090"


def _delta(page, label: str) -> str:
    return page.evaluate(
        """(label) => {
            for (const m of document.querySelectorAll('[data-testid="stMetric"]')) {
                const l = m.querySelector('[data-testid="stMetricLabel"]');
                const d = m.querySelector('[data-testid="stMetricDelta"]');
                if (l && l.innerText.trim() === label) return d ? d.innerText.trim() : '';
            }
            return null;
        }""",
        label,
    )


def test_pinned_baseline_survives_the_share_link_in_a_fresh_browser(page, browser, app_url):
    open_page(page, f"{app_url}/Roofline?scenario={SEED}")
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_role("button", name="Pin as baseline").click()
    page.wait_for_url(re.compile(r"[?&]base\.scenario=seed-3b-4090"), timeout=WAIT_MS)
    wait_idle(page)  # the kit above the widgets grows by the baseline's lines: let it settle
    dtype = sidebar.get_by_role("combobox", name="Weights dtype")
    choose_option(page, dtype, "int4", exact=True)  # below the kit, which has just grown
    page.wait_for_url(re.compile(r"[?&]weights_dtype=int4"), timeout=WAIT_MS)
    base = cli_section("decode", SEED)["t_step_ms"]
    now = cli_section("decode", SEED, "weights_dtype=int4")["t_step_ms"]
    wait_metrics(page, lambda v: v.get("Step time") == step_ms(now))
    expected = f"{now - base:+.3g} ms ({(now - base) / base:+.0%})".replace("%", " %")
    assert _delta(page, "Step time") == expected  # 3.5 ms against 8.0 ms: -4.5 ms (-56 %)

    link = page.locator('[data-testid="stSidebar"] [data-testid="stCode"]').first.inner_text()
    assert "base.scenario=seed-3b-4090" in link and "weights_dtype=int4" in link
    with browser_page(browser) as fresh:
        values = open_page(fresh, link.strip())
        assert values["Step time"] == step_ms(now)
        assert _delta(fresh, "Step time") == expected
        caption = fresh.locator('[data-testid="stSidebar"]').get_by_text("Baseline:").first
        assert "BF16" in caption.inner_text()
        # the Compare page of the same link: baseline first, then this scenario
        nav = fresh.locator(".st-key-whatif_nav")
        nav.get_by_role("link", name="Compare", exact=True).click()
        fresh.get_by_text("1 · Baseline").first.wait_for(timeout=WAIT_MS)
        fresh.get_by_text("2 · This scenario").first.wait_for(timeout=WAIT_MS)
        assert_no_exception(fresh)


def test_invalid_baseline_in_a_link_is_dropped_with_a_notice(page, app_url):
    values = open_page(page, f"{app_url}/Roofline?scenario={SEED}&base.batch=-3")
    assert values["Step time"] == "8.000 ms"
    notice = page.get_by_text("The baseline in the link was dropped").first
    notice.wait_for(timeout=WAIT_MS)
    assert _delta(page, "Step time") == ""
    assert metrics(page)["Aggregate tok/s"] == "125"
