"""Review-ready exports in a real browser: the report downloaded from the sidebar opens offline
with every chart drawn and the link inside; a chart's camera button saves a PNG or SVG named
after the scenario, at the size asked for, with its title, caption and legend inside the image;
the CSV downloads are named after the scenario and carry clean numbers; printing drops the
sidebar and keeps charts whole."""

from __future__ import annotations

import re
import struct
from pathlib import Path

from .conftest import WAIT_MS, assert_no_exception, metrics, open_view, require_chromium, wait_idle

require_chromium()

ROOFLINE = "/Roofline?batch=8"
SLUG = re.compile(r"^llama-3\.1-70b-fp8-4xh100-sxm-b8-[0-9a-f]{6}-")


def sidebar(page):
    return page.locator('[data-testid="stSidebar"]')


def share_link(page) -> str:
    return sidebar(page).locator('[data-testid="stCode"]').first.inner_text().strip()


def first_chart(page):
    chart = page.locator(".js-plotly-plot").first
    chart.wait_for(state="visible", timeout=WAIT_MS)
    wait_idle(page)
    return chart


def download_chart(page, chart) -> tuple[str, bytes]:
    """Click the chart's camera button; the download's name and bytes."""
    chart.hover()
    button = chart.locator('.modebar-btn[data-title^="Download plot"]').first
    with page.expect_download(timeout=WAIT_MS) as info:
        button.click()
    download = info.value
    return download.suggested_filename, Path(download.path()).read_bytes()


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_report_from_the_sidebar_opens_offline_with_every_chart(browser, page, app_url, tmp_path):
    page.goto(f"{app_url}{ROOFLINE}&base.batch=64", wait_until="domcontentloaded")
    metrics(page)
    link = share_link(page)
    button = sidebar(page).get_by_role("button", name="Export report (HTML)")
    with page.expect_download(timeout=60_000) as info:
        button.click()
    download = info.value
    assert SLUG.match(download.suggested_filename), download.suggested_filename
    assert download.suggested_filename.endswith("-all-report.html")
    path = tmp_path / "report.html"
    download.save_as(path)
    text = path.read_text(encoding="utf-8")
    charts = text.count('<div class="chart"')
    assert charts > 17  # every lens's charts, and the baseline's where it cannot overlay

    context = browser.new_context(viewport={"width": 1300, "height": 900}, offline=True)
    fetched, errors = [], []

    def refuse(route):
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            fetched.append(route.request.url)
            route.abort()

    context.route("**/*", refuse)
    try:
        report = context.new_page()
        report.on("pageerror", lambda e: errors.append(str(e)))
        report.goto(path.as_uri())
        report.wait_for_function(
            f"document.querySelectorAll('div.chart .main-svg').length >= {charts}",
            timeout=WAIT_MS,
        )
        drawn = report.evaluate(
            """() => [...document.querySelectorAll('div.chart')].map(d =>
                d.querySelectorAll('.main-svg').length > 0 &&
                d.querySelectorAll('.plot-container').length === 1 &&
                d.getBoundingClientRect().height > 100)"""
        )
        assert drawn == [True] * charts
        assert report.locator(f'a[href="{link}"]').count() == 1
        assert "Baseline (pinned)" in report.inner_text("body")
        assert not errors, errors
        assert not fetched, fetched
    finally:
        context.close()


def test_chart_downloads_are_named_sized_and_not_clipped(page, app_url):
    page.goto(f"{app_url}{ROOFLINE}", wait_until="domcontentloaded")
    metrics(page)
    chart = first_chart(page)
    height = chart.evaluate("gd => gd.layout.height")
    name, data = download_chart(page, chart)
    assert SLUG.match(name) and name.endswith("-roofline-roofline.png"), name
    assert png_size(data) == (2 * 1200, 2 * height)

    sidebar(page).get_by_text("SVG", exact=True).click()
    wait_idle(page)
    page.wait_for_function(
        """() => { const gd = document.querySelector('.js-plotly-plot');
            return gd && gd._context.toImageButtonOptions.format === 'svg'; }""",
        timeout=WAIT_MS,
    )
    chart = first_chart(page)
    name, data = download_chart(page, chart)
    assert name.endswith("-roofline-roofline.svg"), name
    svg = data.decode("utf-8")
    # draw the downloaded file alone and measure its parts against its own frame
    page.set_content(f"<body style='margin:0'>{svg}</body>")
    parts = page.evaluate(
        """() => {
            const svg = document.querySelector('svg');
            const frame = svg.viewBox.baseVal;
            svg.setAttribute('width', frame.width);  // one unit = one pixel of the frame
            svg.setAttribute('height', frame.height);
            const box = el => { const b = el.getBBox(); const m = el.getCTM();
                return {x: b.x * m.a + m.e, y: b.y * m.d + m.f, w: b.width * m.a,
                        h: b.height * m.d, text: el.textContent}; };
            const pick = sel => [...svg.querySelectorAll(sel)].map(box);
            return {w: frame.width, h: frame.height, title: pick('.gtitle'),
                    caption: pick('.gtitle-subtitle'), legend: pick('.legendtext'), notes: pick('.annotation-text')};
        }"""
    )
    assert (parts["w"], parts["h"]) == (1200, height)
    assert [t["text"] for t in parts["title"]] == ["Roofline of decode and prefill"]
    caption = " ".join(t["text"] for t in parts["caption"])
    assert "Llama 3.1 70B" in caption and "batch 8" in caption and "/Roofline?" in caption
    # the legend (sweep, operating points, effective roofs) and the roofs' direct labels
    assert len(parts["legend"]) >= 5
    assert any("BF16" in n["text"] for n in parts["notes"]), parts["notes"]
    for item in parts["title"] + parts["caption"] + parts["legend"] + parts["notes"]:
        assert item["w"] > 0 and item["h"] > 0, item
        assert item["x"] >= 0 and item["x"] + item["w"] <= parts["w"] + 0.5, item
        assert item["y"] >= 0 and item["y"] + item["h"] <= parts["h"] + 0.5, item


def csv_download(page, url: str) -> tuple[str, str]:
    page.goto(url, wait_until="domcontentloaded")
    metrics(page)
    open_view(page, "Breakdown and downloads")
    button = page.get_by_role("button", name="Figures (CSV)")
    button.wait_for(state="visible", timeout=WAIT_MS)
    with page.expect_download(timeout=WAIT_MS) as info:
        button.click()
    download = info.value
    return download.suggested_filename, Path(download.path()).read_text(encoding="utf-8")


def test_downloads_are_named_after_the_scenario_and_carry_clean_numbers(page, app_url):
    name_a, text_a = csv_download(page, f"{app_url}{ROOFLINE}")
    link_a = share_link(page)
    name_b, _ = csv_download(page, f"{app_url}{ROOFLINE}&context_tokens=8192")
    assert name_a != name_b
    for name in (name_a, name_b):
        assert SLUG.match(name) and name.endswith("-roofline-figures.csv"), name
    first, header, row, *rest = text_a.splitlines()
    assert first.startswith("# Llama 3.1 70B · FP8") and first.endswith(link_a)
    assert not rest  # one row: no baseline pinned
    values = dict(zip(header.split(","), row.split(","), strict=True))
    assert values["decode.batch"] == "8" and values["memory.max_batch"].isdigit()
    assert not re.search(r"\d\.\d{7,}|e-0\d{2}", text_a)  # no float noise
    assert_no_exception(page)


def test_print_drops_the_sidebar_and_keeps_charts_whole(page, app_url):
    page.goto(f"{app_url}{ROOFLINE}", wait_until="domcontentloaded")
    metrics(page)
    first_chart(page)
    page.emulate_media(media="print")
    styles = page.evaluate(
        """() => {
            const css = sel => { const e = document.querySelector(sel);
                return e ? getComputedStyle(e) : null; };
            return {
                sidebar: css('[data-testid="stSidebar"]').display,
                header: css('[data-testid="stHeader"]').display,
                chart: css('[data-testid="stPlotlyChart"]').breakInside,
                main: css('[data-testid="stMain"]').overflow,
            };
        }"""
    )
    assert styles == {"sidebar": "none", "header": "none", "chart": "avoid", "main": "visible"}
    pdf = page.pdf(prefer_css_page_size=True)
    assert pdf[:5] == b"%PDF-"
    assert len(re.findall(rb"/Type\s*/Page\b", pdf)) >= 2  # the whole page, not one screen
