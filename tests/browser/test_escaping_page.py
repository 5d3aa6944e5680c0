"""User text in a real browser: a shared link that names the model and the hardware with
markdown, HTML and bare URLs shows the names literally, with no link, no bold text and no HTML
anywhere on the page (captions, sidebar, charts)."""

from __future__ import annotations

from urllib.parse import urlencode

from tests.test_escaping import HARDWARE_NAME, MODEL_NAME
from ui.text import WORD_JOINER

from .conftest import WAIT_MS, open_page, require_chromium

require_chromium()


def test_hostile_names_show_literally(page, app_url, tmp_path):
    query = urlencode(
        {"model.name": MODEL_NAME, "hardware.name": HARDWARE_NAME, "model.id": "evil-model"}
    )
    values = open_page(page, f"{app_url}/Roofline?{query}")
    assert values["Aggregate tok/s"]
    page.locator('[data-testid="stPlotlyChart"]').nth(1).wait_for(state="visible", timeout=WAIT_MS)
    # the page's first caption (the sidebar holds captions of its own)
    caption = page.locator('[data-testid="stMain"] [data-testid="stCaptionContainer"]').first
    text = caption.inner_text().replace(WORD_JOINER, "")
    assert MODEL_NAME in text and HARDWARE_NAME in text, text
    assert caption.locator("a, strong, b, em, span[role='img']").count() == 0
    # no link to the hostile address anywhere: captions, sidebar, alerts, charts
    assert page.locator("a[href*='evil'], a[href^='mailto:']").count() == 0
    # a chart's only link is its caption's share link: this app's, percent-encoded, and hidden
    # on screen (downloads and print carry it)
    links = page.evaluate(
        """() => [...document.querySelectorAll('svg a')].map(a => [
            a.getAttribute('xlink:href') || a.getAttribute('href') || '',
            getComputedStyle(a).display])"""
    )
    assert links, "the charts' captions carry the share link"
    for href, display in links:
        assert href.endswith("#") and display == "none", (href, display)
    # the Model selector shows the inline model's name as plain text (an input's value)
    model = page.locator('[data-testid="stSidebar"]').get_by_role("combobox", name="Model")
    assert model.input_value() == f"{MODEL_NAME} (inline)"
    page.screenshot(path=str(tmp_path / "roofline-hostile-names.png"), full_page=False)
