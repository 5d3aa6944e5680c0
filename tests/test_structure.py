"""The shape of the code: ``model/`` is pure (no streamlit, no plotly), and no project package has
an import circle, hidden or not.

One import graph over every project module: ``model/`` (with ``model/readers/``), ``ui/``,
``datastore/`` and ``tools/`` (every subpackage, recursively), and the scripts ``app.py`` and
``pages/*.py``, which nothing imports (leaves of the graph: they only import). An edge is every
``import`` or ``from … import`` at any depth of the file, so a lazy import inside a function
counts too. ``from pkg import name`` is an edge to the submodule ``pkg.name`` when there is one,
else to the package ``pkg`` (its ``__init__``: ``name`` is one of its attributes);
``import a.b.c`` is an edge to ``a.b.c``. Importing a submodule also runs its parents'
``__init__`` first, but that is no edge: a package may import its own submodules.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "model"
PACKAGES = (
    "model",
    "ui",
    "datastore",
    "tools",
    "whatif",
)  #: every project package, searched recursively
SCRIPTS = ("app.py", "pages")  #: Streamlit's scripts: they import the packages, nothing them


def _files() -> dict[str, Path]:
    """Every project module by its dotted name (``model.readers.csv_import``; a package by its
    own name, ``model.readers``), and the scripts as ``app`` and ``pages/1_Roofline``."""
    out: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if any(p.startswith(".") or p == "__pycache__" for p in parts):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    out["app"] = ROOT / SCRIPTS[0]
    for path in sorted((ROOT / SCRIPTS[1]).glob("*.py")):
        out[f"pages/{path.stem}"] = path
    return out


def _base_package(name: str, path: Path, level: int) -> str:
    """The package a relative import (``from .x``: level 1) in module ``name`` starts from."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    return package


def _edges(name: str, path: Path, modules: set[str]) -> set[str]:
    """The project modules that ``name`` imports, at any depth of its file (see the docstring)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                for n in range(len(parts), 0, -1):  # the module named, or its nearest parent
                    if ".".join(parts[:n]) in modules:
                        out.add(".".join(parts[:n]))
                        break
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = _base_package(name, path, node.level)
                source = f"{base}.{source}" if source else base
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                if sub in modules:
                    out.add(sub)  # a submodule
                elif source in modules:
                    out.add(source)  # an attribute of the module or package (its __init__)
    out.discard(name)
    return out


@cache
def _graph() -> dict[str, frozenset[str]]:
    files = _files()
    return {name: frozenset(_edges(name, path, set(files))) for name, path in files.items()}


def _groups(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or not (the strongly connected
    components of more than one module), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def strongconnect(v: str) -> None:  # Tarjan; the graph is small, recursion is fine
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return sorted(groups)


def _cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """One import circle for each group of :func:`_groups`: its shortest cycle through the
    group's first module, as ``[a, b, …, a]``."""
    cycles = []
    for group in _groups(graph):
        members, start = set(group), group[0]
        previous: dict[str, str] = {}
        frontier, seen = [start], {start}
        while frontier and start not in previous:  # breadth first, back to the start
            following = []
            for v in frontier:
                for w in sorted(graph[v] & members):
                    if w == start and start not in previous:
                        previous[start] = v
                    elif w not in seen:
                        seen.add(w)
                        previous[w] = v
                        following.append(w)
            frontier = following
        path, v = [start], previous[start]
        while v != start:
            path.append(v)
            v = previous[v]
        path.append(start)
        cycles.append(path[::-1])
    return cycles


def _in_package(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _assert_no_circle(package: str) -> None:
    graph = _graph()
    found = [
        (cycle, group)
        for cycle, group in zip(_cycles(graph), _groups(graph), strict=True)
        if any(_in_package(m, package) for m in group)
    ]
    assert not found, f"import circle(s) through {package}: " + "; ".join(
        " → ".join(cycle) + f" (modules that import each other: {', '.join(group)})"
        for cycle, group in found
    )


def test_the_graph_sees_every_package_and_resolves_submodules(tmp_path):
    """The graph itself: recursive (the readers' subpackage is in it), ``from pkg import
    submodule`` an edge to the submodule, ``from pkg import attribute`` one to ``pkg``, lazy
    imports counted, relative imports resolved."""
    graph = _graph()
    for name in ("model.readers", "model.readers.importers", "tools.capture.cli", "datastore"):
        assert name in graph, name
    assert {"model.readers.bench_import", "model.readers.registry"} <= graph[
        "model.readers.importers"
    ]
    assert "model.readers.csv_import" in graph["model.readers.registry"]  # a lazy import
    assert "model.readers.traces" in graph["whatif.cli"]  # imported inside a function
    assert "tools.capture.gpu" in graph["tools.capture.cli"]  # from tools.capture import gpu
    assert "datastore" in graph["ui.measure_data"]  # import datastore
    assert "datastore.sqlite" in graph["datastore"]  # opened lazily by open_store
    leaf = tmp_path / "leaf.py"
    leaf.write_text(
        "from pkg import sub, VERSION\n"  # a submodule and an attribute of pkg/__init__
        "from . import x\n"  # pkg.inner's attribute x
        "from .. import sub as s\n"
        "def f():\n"
        "    import pkg.inner.leaf.nothing\n",  # itself: no edge
        encoding="utf-8",
    )
    modules = {"pkg", "pkg.sub", "pkg.inner", "pkg.inner.leaf"}
    assert _edges("pkg.inner.leaf", leaf, modules) == {"pkg", "pkg.sub", "pkg.inner"}


def test_the_circle_finder_finds_a_circle():
    graph = {
        "a": frozenset({"b"}),
        "b": frozenset({"c"}),
        "c": frozenset({"a", "d"}),
        "d": frozenset(),
        "e": frozenset({"e2"}),
        "e2": frozenset({"e"}),
    }
    assert _cycles(graph) == [["a", "b", "c", "a"], ["e", "e2", "e"]]
    assert _cycles({"a": frozenset({"b"}), "b": frozenset()}) == []


@pytest.mark.parametrize("package", ["model", "datastore", "tools"])
def test_package_has_no_import_circle(package):
    _assert_no_circle(package)


def test_scripts_are_leaves():
    """``app.py`` and the pages are run by Streamlit, never imported, and no circle runs through
    them."""
    graph = _graph()
    scripts = {m for m in graph if m == "app" or m.startswith("pages/")}
    assert len(scripts) > 1
    importers = {m for m, deps in graph.items() if deps & scripts}
    assert not importers, importers
    _assert_no_circle("app")


def test_ui_has_no_import_circle():
    _assert_no_circle("ui")


def test_model_is_pure():
    for path in sorted(MODEL.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for banned in ("import streamlit", "import plotly", "from streamlit", "from plotly"):
            assert banned not in text, f"{path.relative_to(ROOT)}: {banned}"


def test_a_run_after_new_imports_freezes_them_and_a_run_without_freezes_nothing():
    # ui.refreeze_after_imports (issue 22): what a page's first run imports is frozen at the
    # next run's start, so Streamlit's post-run gc.collect(2) stops walking it; a run that
    # imported nothing freezes nothing (the permanent generation stays bounded)
    import gc
    import sys
    import types

    import ui

    ui.refreeze_after_imports()  # whatever earlier tests imported
    frozen = gc.get_freeze_count()
    ui.refreeze_after_imports()
    assert gc.get_freeze_count() == frozen  # nothing imported since: nothing frozen
    name = "_whatif_probe_module"
    module = types.ModuleType(name)
    module.payload = [[i] for i in range(1000)]  # 1,001 lists the collector would walk
    sys.modules[name] = module
    try:
        ui.refreeze_after_imports()
        assert gc.get_freeze_count() >= frozen + 1000
        assert not any(o is module.payload for o in gc.get_objects())  # no longer walked
    finally:
        del sys.modules[name]
