"""Fixtures for the real-browser tests: a live ``streamlit run`` server and headless Chromium.

Every test under ``tests/browser`` is marked ``browser``. Without ``/usr/bin/chromium`` the
tests are skipped, except on CI (``CI=true``), where a missing browser is a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
REPO_ROOT = Path(__file__).resolve().parents[2]
BROWSER_DIR = Path(__file__).resolve().parent
#: how long a wait for the page may last before the test fails: a hang guard, not a speed
#: check (a wait ends as soon as its condition holds), so generous enough for a loaded machine
#: (issue 40: 30 s waits failed there); WHATIF_BROWSER_WAIT_S overrides it
WAIT_MS = int(float(os.environ.get("WHATIF_BROWSER_WAIT_S", "120")) * 1000)
SERVER_START_S = max(180.0, WAIT_MS / 1000)
SERVER_STOP_S = 10.0
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if BROWSER_DIR in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.browser)


def require_chromium() -> None:
    """Skip (or, with ``CI=true``, fail) when Debian's Chromium is missing."""
    if os.path.exists(CHROMIUM):
        return
    reason = f"{CHROMIUM} not found: the real-browser tests need Debian's chromium"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason + " (CI=true, where it must be installed)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


@pytest.fixture(scope="module", autouse=True)
def _chromium_present() -> None:
    require_chromium()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.status == 200 and resp.read().decode().strip() == "ok"
    except (urllib.error.URLError, OSError, ValueError):
        return False


class StreamlitServer:
    """``streamlit run app.py`` on one loopback port; can be stopped and started again on the
    same port (a server restart under an open page)."""

    def __init__(self, port: int, log_path: Path) -> None:
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.log_path = log_path
        self._log = open(log_path, "ab")  # noqa: SIM115 - closed in stop(final=True)
        self._proc: subprocess.Popen | None = None

    def start(self) -> None:
        """Start the server and wait (bounded) until it answers its health check."""
        cmd = [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.port",
            str(self.port),
            "--server.headless",
            "true",
            "--server.address",
            "127.0.0.1",
            "--browser.gatherUsageStats",
            "false",
        ]
        proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=self._log, stderr=subprocess.STDOUT)
        self._proc = proc
        deadline = time.monotonic() + SERVER_START_S
        while not _healthy(f"{self.base}/_stcore/health"):
            if proc.poll() is not None:
                pytest.fail(
                    f"streamlit exited with {proc.returncode} before answering; "
                    f"see {self.log_path}",
                    pytrace=False,
                )
            if time.monotonic() > deadline:
                pytest.fail(
                    f"streamlit did not answer {self.base}/_stcore/health within "
                    f"{SERVER_START_S:.0f} s; see {self.log_path}",
                    pytrace=False,
                )
            time.sleep(0.25)

    def stop(self, final: bool = False) -> None:
        """Stop the server (terminate, then kill after ``SERVER_STOP_S``)."""
        proc, self._proc = self._proc, None
        try:
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(timeout=SERVER_STOP_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=SERVER_STOP_S)
        finally:
            if final:
                self._log.close()


@contextlib.contextmanager
def _serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StreamlitServer]:
    require_chromium()
    log_path = tmp_path_factory.mktemp("streamlit") / "server.log"
    server = StreamlitServer(_free_port(), log_path)
    try:
        server.start()
        yield server
    finally:
        server.stop(final=True)


@pytest.fixture(scope="session")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Run ``streamlit run app.py`` on a free loopback port; yield its base URL."""
    with _serve(tmp_path_factory) as server:
        yield server.base


@pytest.fixture()
def restartable_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StreamlitServer]:
    """A server of this test's own, which the test may stop and start again."""
    with _serve(tmp_path_factory) as server:
        yield server


@pytest.fixture(scope="session")
def browser():
    """Headless Debian Chromium through Playwright's sync API."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@contextlib.contextmanager
def browser_page(browser):
    """A fresh browser context and page (viewport 1400x1000), closed afterwards."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(WAIT_MS)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture()
def page(browser, app_url):
    """A fresh browser context and page per test, for the shared server at ``app_url``."""
    with browser_page(browser) as pg:
        yield pg


def choose_option(
    page, combobox, name: str, exact: bool = False, tries: int = 5, open_ms: int = 5000
) -> None:
    """Open ``combobox`` and click its option ``name``. A list opened while the page
    still moves (an expander unfolding, a scroll, a run that lands a moment later and redraws)
    closes again at once, so the list is opened again until the option shows, at most
    ``tries`` times, each waiting ``open_ms``."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    option = page.get_by_role("option", name=name, exact=exact)
    for _ in range(tries):
        wait_idle(page)
        combobox.scroll_into_view_if_needed()  # a click while scrolling closes the list
        page.wait_for_timeout(300)
        combobox.click()
        try:
            option.wait_for(state="visible", timeout=open_ms)
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
            continue
        option.click()
        return
    raise AssertionError(f"the option {name!r} never showed in {tries} openings of its list")


def wait_idle(page, timeout_ms: int = WAIT_MS) -> None:
    """Wait until Streamlit shows no 'Running' status (the script run has finished)."""
    page.wait_for_function(
        """() => {
            const w = document.querySelector('[data-testid="stStatusWidget"]');
            return !w || !/Running/i.test(w.innerText || '');
        }""",
        timeout=timeout_ms,
    )


def _read_metrics(page) -> dict[str, str]:
    return page.evaluate(
        """() => {
            const out = {};
            for (const m of document.querySelectorAll('[data-testid="stMetric"]')) {
                const l = m.querySelector('[data-testid="stMetricLabel"]');
                const v = m.querySelector('[data-testid="stMetricValue"]');
                if (l && v) out[l.innerText.trim()] = v.innerText.trim();
            }
            return out;
        }"""
    )


def metrics(page, timeout_ms: int = WAIT_MS, settle_ms: int = 300) -> dict[str, str]:
    """The page's ``st.metric`` values by label, once the run has finished and they are stable.

    Waits for at least one metric, for the status widget to stop showing 'Running', and for
    two reads ``settle_ms`` apart to agree; all bounded by ``timeout_ms``.
    """
    deadline = time.monotonic() + timeout_ms / 1000
    page.locator('[data-testid="stMetric"]').first.wait_for(state="visible", timeout=timeout_ms)
    previous: dict[str, str] | None = None
    while True:
        remaining = max(1, int((deadline - time.monotonic()) * 1000))
        wait_idle(page, remaining)
        current = _read_metrics(page)
        if current and current == previous:
            return current
        if time.monotonic() > deadline:
            raise AssertionError(f"metrics did not settle within {timeout_ms} ms: {current}")
        previous = current
        page.wait_for_timeout(settle_ms)


def wait_metrics(page, predicate, timeout_ms: int = WAIT_MS) -> dict[str, str]:
    """Poll :func:`metrics` until ``predicate(values)`` holds; bounded by ``timeout_ms``."""
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        remaining = max(1000, int((deadline - time.monotonic()) * 1000))
        current = metrics(page, remaining)
        if predicate(current):
            return current
        if time.monotonic() > deadline:
            raise AssertionError(
                f"metrics never met the condition within {timeout_ms} ms: {current}"
            )
        page.wait_for_timeout(300)


def assert_no_exception(page) -> None:
    """No Streamlit exception box anywhere on the page."""
    boxes = page.locator('[data-testid="stException"]')
    assert boxes.count() == 0, f"{page.url} shows an exception: {boxes.first.inner_text()}"


def cli_section(section: str, scenario: str, *overrides: str) -> dict:
    """One section of ``python -m whatif eval --scenario NAME --json`` with ``--set`` overrides."""
    cmd = [sys.executable, "-m", "whatif", "eval", "--scenario", scenario, "--json"]
    for item in overrides:
        cmd += ["--set", item]
    done = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)[section]


def open_page(page, url: str) -> dict[str, str]:
    """Go to ``url``, wait for the run to finish, check for exceptions, return the metrics."""
    page.goto(url, wait_until="domcontentloaded")
    values = metrics(page)
    assert_no_exception(page)
    return values


def restart_server_under(page, server: StreamlitServer, timeout_ms: int = WAIT_MS) -> None:
    """Stop ``server`` and start it again on the same port while ``page`` stays open: wait
    until the page shows the lost connection (its sidebar widgets disabled), then until it has
    reconnected (enabled again). Every wait is bounded."""
    from playwright.sync_api import expect

    probe = page.locator('[data-testid="stSidebar"]').get_by_label("Batch", exact=True)
    expect(probe).to_be_enabled(timeout=timeout_ms)
    server.stop()
    expect(probe).to_be_disabled(timeout=timeout_ms)
    server.start()
    expect(probe).to_be_enabled(timeout=timeout_ms)


def share_link(page) -> tuple[str, list[tuple[str, str]]]:
    """The sidebar's share link as its path and its decoded key=value pairs, in order (the
    link always names the engine as ``id@version``, percent-encoded or not)."""
    from urllib.parse import parse_qsl, urlsplit

    text = page.locator('[data-testid="stSidebar"] [data-testid="stCode"]').first.inner_text()
    parts = urlsplit(text.strip())
    return parts.path, parse_qsl(parts.query, keep_blank_values=True)


def view(page_or_locator, label: str):
    """The picker button of a page's view ``label`` (``ui.views.lazy_tabs``: a segmented
    control labelled "View", each view a radio button)."""
    group = page_or_locator.get_by_role("radiogroup", name="View")
    return group.get_by_role("radio", name=label, exact=True)


def open_view(page_or_locator, label: str) -> None:
    """Open the page's view ``label``."""
    view(page_or_locator, label).click()


def view_open(page) -> str:
    """The label of the view the page shows."""
    group = page.get_by_role("radiogroup", name="View")
    return group.locator('[role="radio"][aria-checked="true"]').first.inner_text()
