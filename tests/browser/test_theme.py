"""The app follows the browser's colour scheme, shows no Deploy button, and draws its chart axis
text at WCAG AA contrast (4.5:1) against the plot's background on both themes: colours measured
in Chromium as rendered (the SVG's computed fills), not as configured."""

from __future__ import annotations

import re

import pytest

from .conftest import WAIT_MS, wait_idle

AA = 4.5


def luminance(css: str) -> float:
    """WCAG relative luminance of a computed CSS colour ``rgb(r, g, b)`` / ``rgba(...)``."""
    r, g, b = (int(v) / 255 for v in re.findall(r"[\d.]+", css)[:3])

    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_by_hand():
    assert contrast("rgb(0, 0, 0)", "rgb(255, 255, 255)") == pytest.approx(21.0)
    # Streamlit's own axis grey on white: the 3.7:1 this file guards against
    assert contrast("rgb(128, 132, 149)", "rgb(255, 255, 255)") == pytest.approx(3.72, abs=0.01)


COLOURS = """() => {
    const fill = sel => {
        const e = document.querySelector(sel);
        return e ? getComputedStyle(e).fill : null;
    };
    const plot = document.querySelector('.js-plotly-plot .main-svg');
    return {
        app: getComputedStyle(document.querySelector('[data-testid="stApp"]')).backgroundColor,
        paper: plot ? getComputedStyle(plot).backgroundColor : null,
        plot: fill('.js-plotly-plot .bg'),
        xtick: fill('.js-plotly-plot .xtick text'),
        ytick: fill('.js-plotly-plot .ytick text'),
        xtitle: fill('.js-plotly-plot .xtitle'),
        ytitle: fill('.js-plotly-plot .ytitle'),
        note: fill('.js-plotly-plot .annotation-text'),
    };
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_app_follows_the_colour_scheme_with_readable_axes_and_no_deploy(
    browser, app_url, scheme
):
    context = browser.new_context(viewport={"width": 1440, "height": 900}, color_scheme=scheme)
    context.set_default_timeout(WAIT_MS)
    try:
        page = context.new_page()
        page.goto(f"{app_url}/Roofline", wait_until="domcontentloaded")
        page.locator(".js-plotly-plot .xtick text").first.wait_for(timeout=WAIT_MS)
        wait_idle(page)
        c = page.evaluate(COLOURS)

        app = luminance(c["app"])
        assert (app < 0.05) if scheme == "dark" else (app > 0.9), c["app"]
        # the chart sits on the app's own background (Streamlit's theme), not a white box
        assert contrast(c["plot"], c["app"]) < 1.1, c

        for key in ("xtick", "ytick", "xtitle", "ytitle", "note"):
            assert c[key], f"no {key} in the chart"
            ratio = contrast(c[key], c["plot"])
            assert ratio >= AA, f"{scheme}: {key} {c[key]} on {c['plot']} is {ratio:.2f}:1"

        # the toolbar keeps the viewer's menu but no Deploy button
        assert page.locator('[data-testid="stAppDeployButton"]').count() == 0
        assert page.get_by_role("button", name=re.compile("deploy", re.I)).count() == 0
        assert page.locator('[data-testid="stMainMenu"]').count() == 1
    finally:
        context.close()
