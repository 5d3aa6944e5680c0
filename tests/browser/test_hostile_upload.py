"""A hostile YAML upload in one session never stalls another (hardening issue, part 1).

Session A uploads a "billion laughs" through the sidebar's real uploader; while the server
handles it, session B opens a page. B's load time must stay near its time alone, and A must see
one clear refusal (not a traceback) with its page still working.
"""

from __future__ import annotations

import time

from .conftest import WAIT_MS, assert_no_exception, metrics, open_page, require_chromium

require_chromium()


def _laughs(levels: int = 10, width: int = 10) -> bytes:
    lines = [f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]")
    lines.append(f"hardware: {{name: x, sources: {{a: *l{levels - 1}}}}}")
    return ("\n".join(lines) + "\n").encode()


def _upload(page, name: str, data: bytes) -> None:
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("Load a scenario YAML").click()
    page.locator('[data-testid="stSidebar"] input[type="file"]').set_input_files(
        files=[{"name": name, "mimeType": "application/x-yaml", "buffer": data}]
    )


def _timed_open(page, url: str) -> float:
    start = time.perf_counter()
    open_page(page, url)
    return time.perf_counter() - start


def test_a_bomb_upload_is_refused_and_does_not_stall_another_session(browser, app_url):
    ctx_a = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx_b = browser.new_context(viewport={"width": 1400, "height": 1000})
    for ctx in (ctx_a, ctx_b):
        ctx.set_default_timeout(WAIT_MS)
    try:
        a, b = ctx_a.new_page(), ctx_b.new_page()
        url_b = f"{app_url}/Roofline?scenario=seed-3b-4090"
        _timed_open(b, url_b)  # warm the page's imports once
        alone = _timed_open(b, url_b)

        before = open_page(a, f"{app_url}/Roofline?scenario=seed-3b-4090&batch=8")
        _upload(a, "bomb.yaml", _laughs())
        during = _timed_open(b, url_b)  # at once, while A's upload is being handled

        alerts = a.locator('[data-testid="stAlertContainer"], [data-testid="stAlert"]')
        alerts.first.wait_for(state="visible", timeout=WAIT_MS)
        text = "\n".join(alerts.all_inner_texts())
        assert "expands to more than" in text, text
        assert "Traceback" not in a.content()
        assert_no_exception(a)
        assert metrics(a) == before  # the refused file changed nothing
        assert during < alone + 3.0, f"B took {during:.2f} s during the upload, {alone:.2f} s alone"
    finally:
        ctx_a.close()
        ctx_b.close()
