"""The shape of the core: ``model/`` is pure (no streamlit, no plotly) and has no import
circle, hidden or not (a lazy import inside a function counts as an edge too)."""

from __future__ import annotations

import ast
from pathlib import Path

MODEL = Path(__file__).resolve().parent.parent / "model"


def _imports(path: Path) -> set[str]:
    """Every ``model.X`` module that ``path`` imports, at any depth of the file."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "model":
                out.update(f"model.{a.name}" for a in node.names)
            elif node.module.startswith("model."):
                out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("model."))
    return out


def _graph() -> dict[str, set[str]]:
    modules = {f"model.{p.stem}": p for p in MODEL.glob("*.py") if p.stem != "__init__"}
    return {name: _imports(path) & set(modules) for name, path in modules.items()}


def test_model_has_no_import_circle():
    graph = _graph()
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                cycle = trail[trail.index(dep) :] + [dep] if dep in trail else [node, dep]
                raise AssertionError("import circle: " + " → ".join(cycle))
            if dep not in state:
                visit(dep, trail + [dep])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_model_is_pure():
    for path in MODEL.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        for banned in ("import streamlit", "import plotly", "from streamlit", "from plotly"):
            assert banned not in text, f"{path.name}: {banned}"
