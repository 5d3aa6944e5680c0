"""The golden set (:mod:`tools.golden`): every page, tab, download, report and ``whatif eval``
of its cases shows and writes what was recorded. A change meant to change what users see
records it anew (``python -m tools.golden --update``) and says so in its commit."""

from __future__ import annotations

import pytest

from tools import golden


def test_the_golden_set_is_unchanged():
    want = golden.load()
    if want["versions"] != golden.versions():
        pytest.skip(
            f"recorded with {want['versions']}, installed {golden.versions()}: another version "
            "of these packages may render differently; record the set anew on main first"
        )
    bad = golden.differences(golden.record(), want["cases"])
    assert not bad, "\n".join(bad)
