"""Data sets shared by link, in a real browser: a CSV uploaded through the real uploader is
stored on the server, the sidebar's share link carries ``data=<sha256>``, and a fresh browser
context opening that link shows the same data set, points and fit. A link naming a data set
that is not stored opens the scenario with a notice naming it.

The server here is this module's own, with its data-set store in a temporary folder."""

from __future__ import annotations

import hashlib
import os
from urllib.parse import urlencode

import pytest

from .conftest import (
    WAIT_MS,
    _serve,
    assert_no_exception,
    browser_page,
    metrics,
    open_view,
    require_chromium,
    share_link,
    wait_idle,
    wait_metrics,
)

require_chromium()

SCENARIO = "hardware=h100-sxm&model=llama-3.1-8b&gpus=1&weights_dtype=bf16"
CSV = b"# a decode sweep\nbatch,step_ms\n1,8.4\n4,8.6\n16,9.3\n64,12.5\n256,25.9\n"


@pytest.fixture(scope="module")
def store_server(tmp_path_factory):
    """``streamlit run app.py`` with its data-set store (SQLite) in a folder of its own."""
    folder = tmp_path_factory.mktemp("datastore")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("WHATIF_DATABASE_URL", raising=False)
        mp.setenv("WHATIF_DATA_DIR", str(folder))
        with _serve(tmp_path_factory) as server:
            mp.undo()  # the server has its environment; the tests keep theirs
            yield server.base, folder


def _upload(page, name: str, data: bytes) -> None:
    main = page.locator('[data-testid="stMain"]')
    main.locator('input[type="file"]').first.set_input_files(
        files=[{"name": name, "mimeType": "text/csv", "buffer": data}]
    )
    wait_idle(page)


def _decode_tab_chart(page) -> None:
    main = page.locator('[data-testid="stMain"]')
    open_view(main, "Decode steps")
    main.locator('[data-testid="stPlotlyChart"]').first.wait_for(timeout=WAIT_MS)
    wait_idle(page)


def test_an_uploaded_csv_opens_from_the_share_link_in_a_fresh_browser(
    browser, store_server, tmp_path
):
    base, folder = store_server
    data_id = hashlib.sha256(CSV).hexdigest()
    with browser_page(browser) as page:
        page.goto(f"{base}/Measurements?{SCENARIO}", wait_until="domcontentloaded")
        metrics(page)
        page.get_by_text("kept on this server under their content hash").wait_for()
        _upload(page, "my-sweep.csv", CSV)
        before = wait_metrics(page, lambda m: m.get("Data sets") == "1")
        assert before["Points"] == "5"
        path, pairs = share_link(page)
        assert path.endswith("/Measurements")
        assert ("data", data_id) in pairs, pairs
        _decode_tab_chart(page)
        page.screenshot(path=str(tmp_path / "uploader.png"), full_page=True)
        link = page.locator('[data-testid="stSidebar"] [data-testid="stCode"]').first
        url = link.inner_text().strip()
    assert (folder / "datasets.sqlite3").exists()

    # the reviewer: a fresh browser context (no cookies, no session) opens the link
    with browser_page(browser) as fresh:
        fresh.goto(url, wait_until="domcontentloaded")
        after = wait_metrics(fresh, lambda m: m.get("Data sets") == "1")
        assert after == before
        assert_no_exception(fresh)
        main = fresh.locator('[data-testid="stMain"]')
        main.get_by_text("my-sweep.csv — decode steps").wait_for(timeout=WAIT_MS)
        assert not main.locator('[data-testid="stAlertContentWarning"]').count()
        _, again = share_link(fresh)
        assert ("data", data_id) in again
        _decode_tab_chart(fresh)
        fresh.screenshot(path=str(tmp_path / "reviewer.png"), full_page=True)
        if os.environ.get("WHATIF_SHOTS"):
            fresh.screenshot(path=os.environ["WHATIF_SHOTS"] + "/reviewer.png", full_page=True)

        # the same link on the Roofline lens draws the measured points on its own chart
        fresh.goto(url.replace("/Measurements", "/Roofline"), wait_until="domcontentloaded")
        metrics(fresh)
        assert_no_exception(fresh)


def test_a_link_to_a_data_set_no_longer_stored_opens_with_a_notice(browser, store_server):
    base, _ = store_server
    gone = "0" * 64
    query = urlencode({"data": f"{gone},ex-launch-rtx5070ti"})
    with browser_page(browser) as page:
        page.goto(f"{base}/Measurements?{SCENARIO}&{query}", wait_until="domcontentloaded")
        shown = wait_metrics(page, lambda m: m.get("Data sets") == "1")
        assert shown["Points"] != "0"
        assert_no_exception(page)
        main = page.locator('[data-testid="stMain"]')
        note = main.get_by_text("is no longer stored; the scenario opens without it")
        note.wait_for(timeout=WAIT_MS)
        assert gone in note.inner_text()
        _, pairs = share_link(page)
        assert ("data", "ex-launch-rtx5070ti") in pairs and all(v != gone for _, v in pairs)
