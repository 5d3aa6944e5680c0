"""Opening a page under AppTest, shared by the page tests (issue 41, item 8: one way to open a
page, not one helper per file). The ``app_page`` fixture in ``conftest.py`` hands it out."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent


def page_test(
    path: str | Path,
    *,
    pairs: list[tuple[str, str]] = (),
    state: dict | None = None,
    timeout: float = 120,
    **query,
) -> AppTest:
    """The page at ``path`` (relative to the repository, or absolute) under AppTest, not yet
    run, with the link query ``pairs`` and ``query`` and the session state ``state`` set: for a
    test that acts before the first run or checks what it raises."""
    at = AppTest.from_file(str(ROOT / path), default_timeout=timeout)
    for key, value in [*pairs, *query.items()]:
        at.query_params[key] = value
    for key, value in (state or {}).items():
        at.session_state[key] = value
    return at


def open_page(
    path: str | Path,
    *,
    pairs: list[tuple[str, str]] = (),
    state: dict | None = None,
    timeout: float = 120,
    **query,
) -> AppTest:
    """Run the page at ``path`` (relative to the repository, or absolute) once, with the link
    query ``pairs`` and ``query`` and the session state ``state`` set first, and check that it
    raised nothing."""
    at = page_test(path, pairs=pairs, state=state, timeout=timeout, **query)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at
