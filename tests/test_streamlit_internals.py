"""Streamlit's internals are reached from one module, :mod:`ui.streamlit_internals` (issue 41,
item 6), and the Streamlit they were checked against is pinned in ``pyproject.toml``."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import streamlit

from ui import streamlit_internals as internals

ROOT = Path(__file__).resolve().parent.parent
PRIVATE = re.compile(r"^\s*(from|import)\s+streamlit\.(runtime|web)\b", re.M)


@pytest.mark.parametrize("folder", ["ui", "pages", "benchmarks", "model", "datastore", "tools"])
def test_only_the_seam_imports_streamlits_internals(folder):
    found = [
        str(p.relative_to(ROOT))
        for p in sorted((ROOT / folder).rglob("*.py"))
        if p.name != "streamlit_internals.py" and PRIVATE.search(p.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_installed_streamlit_is_the_pinned_one():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pin = next(d for d in deps if d.startswith("streamlit"))
    lo, hi = re.fullmatch(r"streamlit>=([\d.]+),<([\d.]+)", pin).groups()

    def version(text):
        return tuple(int(x) for x in text.split(".")[:2])

    assert version(lo) <= version(streamlit.__version__) < version(hi)


def test_outside_a_run_every_internal_degrades_to_nothing():
    assert internals.run_context() is None
    assert internals.session_id() is None
    assert internals.run_flag("has_script_started", True) is True
    assert internals.session_moved_on() is False
    assert internals.browser_widget_keys() == frozenset()


def test_the_runner_internals_the_speed_measures_patch_are_there():
    r = internals.runner_internals()
    for name in ("_run_script", "_on_script_finished"):
        assert callable(getattr(r.ScriptRunner, name))
    assert callable(r.ScriptCache.get_bytecode)
    assert hasattr(r.app_test, "ScriptCache") and hasattr(r.local_script_runner, "ScriptCache")
    assert callable(r.cli_main)


def test_importing_ui_has_no_side_effect():
    """``import ui`` freezes nothing and imports no chart library: the first page run does
    (:func:`ui.refreeze_after_imports`)."""
    import subprocess
    import sys

    code = (
        "import gc, sys; import ui; "
        "print(gc.get_freeze_count(), 'plotly' in sys.modules, 'pandas' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["0", "False", "False"]
