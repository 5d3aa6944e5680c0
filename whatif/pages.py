"""The pages' addresses for the command line's links, read from the pages' own declarations.

Each module of :mod:`ui.lenses` declares its page once (``PAGE = Page(key=…, file=…, …)``,
:class:`ui.lens.Page`): the navigation, the URL path and the tabs come from there, and so do
the page names ``whatif url --page`` accepts. The command line reads those declarations
without importing the modules: importing them imports Streamlit and every view, and makes the
process a page server (:data:`model.serving.SERVER_BUDGET`), which a command line must not be.
``tests/test_lens_contract.py`` checks that what this reads equals the imported registry.
"""

from __future__ import annotations

import ast
import importlib.util
from functools import lru_cache
from pathlib import Path

from model.errors import ScenarioError
from ui.lens import Page


@lru_cache(maxsize=1)
def declared() -> dict[str, Page]:
    """Every declared page by its key, in the navigation's order."""
    spec = importlib.util.find_spec("ui.lenses")  # imports ``ui`` (no side effect), not this
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the ui.lenses package is not installed")
    pages: dict[str, Page] = {}
    for path in sorted(Path(spec.submodule_search_locations[0]).glob("*.py")):
        page = _page_in(path)
        if page is not None:
            pages[page.key] = page
    return dict(sorted(pages.items(), key=lambda kv: kv[1].order))


def _page_in(path: Path) -> Page | None:
    """The module's ``PAGE = Page(...)`` declaration, its arguments read as literals."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if (
            isinstance(node, ast.Assign)
            and [getattr(t, "id", None) for t in node.targets] == ["PAGE"]
            and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", None) == "Page"
        ):
            if node.value.args:
                raise RuntimeError(f"{path.name}: declare the page with keywords")
            return Page(**{kw.arg: ast.literal_eval(kw.value) for kw in node.value.keywords})
    return None


def page_url(page: str, base: str) -> str:
    """The address of the page ``page`` (a page's key) on the app at ``base``."""
    pages = declared()
    if page not in pages:
        raise ScenarioError("page", f"unknown page {page!r}; accepted: {', '.join(pages)}")
    return pages[page].url(base)
