"""One contract over every registered page and lens (issue 41: a new lens is declared in one
place, :mod:`ui.lenses`, and a test says where it is still missing): a page file the
navigation lists, the URL path the share links use, tabs that the page draws, rows in the
Compare table that have values, a section in the HTML report and golden cases."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from model.overrides import resolve
from tools import golden
from ui.lenses import LENSES, PAGES, ROWS, compare

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def report() -> str:
    from ui.report import build_report

    s = resolve([])[0]
    return build_report(s, "http://localhost:8501/", plotly_js="")


def test_the_registry_holds_every_page_file_once_in_the_navigation_order():
    files = {"app.py", *(f"pages/{f.name}" for f in (ROOT / "pages").glob("*.py"))}
    assert sorted(p.file for p in PAGES) == sorted(files)
    assert [p.order for p in PAGES] == sorted({p.order for p in PAGES})
    assert PAGES[0].key == "home" and PAGES[0].order == 0


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.key)
def test_a_page_has_a_url_path_a_label_and_icons(page):
    want = re.fullmatch(r"pages/\d+_(\w+)\.py", page.file)
    assert page.url_path == (want.group(1) if want else "")  # Streamlit's rule, as it serves it
    assert page.url("http://h:1/") == f"http://h:1/{page.url_path}"
    assert page.label and page.icon.startswith(":material/") and page.emoji
    assert (ROOT / page.file).is_file()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.key)
def test_a_page_draws_its_declared_tabs(page):
    source = (ROOT / page.file).read_text(encoding="utf-8")
    assert ("page_tabs(" in source) == page.has_tabs
    assert len(set(page.tabs)) == len(page.tabs)


def test_model_holds_no_page_path():
    """The link language's page names live with the pages' declarations; :mod:`model` makes a
    link to whatever address an edge gives it (issue 41)."""
    paths = {p.url_path for p in PAGES if p.url_path}
    for path in sorted((ROOT / "model").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found = {
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
            if n.value.strip("/") in paths
        }
        assert not found, f"{path.relative_to(ROOT)}: {sorted(found)}"


@pytest.mark.parametrize("lens", LENSES, ids=lambda lens: lens.key)
def test_a_lens_has_compare_rows_with_values(lens):
    assert lens.rows, "a lens shows at least one row in Compare"
    rows = compare([resolve([])[0]])
    mine = {row.label for row in lens.rows}
    got = {r["label"]: r["values"][0] for r in rows if r["label"] in mine}
    assert set(got) == mine
    assert all(v is not None for v in got.values()), got


def test_the_compare_rows_are_the_lenses_rows_in_their_order():
    assert ROWS == tuple(row for lens in LENSES for row in lens.rows)
    assert [lens.order for lens in LENSES] == sorted({lens.order for lens in LENSES})


@pytest.mark.parametrize("lens", LENSES, ids=lambda lens: lens.key)
def test_a_lens_has_a_report_section(lens, report):
    assert f'<h2 id="{lens.key}">' in report


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.key)
def test_a_page_has_golden_cases(page):
    if page.has_tabs and not page.tabs:  # tabs that depend on what is loaded: its examples
        assert page.file == golden.MEASUREMENTS and golden.MEASURE_EXAMPLES
        return
    assert page.file in golden.PAGES
    assert golden.PAGES[page.file] == ((page.tab_key, list(page.tabs)) if page.tabs else None)


def _declared_figures() -> dict:
    """Every :class:`ui.lens.Figure` the modules under ``ui/lenses`` declare, by path."""
    import importlib
    import pkgutil

    import ui.lenses
    from ui.lens import Figure

    out: dict = {}
    for info in pkgutil.iter_modules(ui.lenses.__path__):
        module = importlib.import_module(f"ui.lenses.{info.name}")
        for value in vars(module).values():
            if isinstance(value, Figure):
                assert out.get(value.path, value) is value, f"{value.path} declared twice"
                out[value.path] = value
    return out


def test_no_figure_path_is_declared_twice():
    """Each figure's label, unit, direction, format and help are declared once (a
    :class:`ui.lens.Figure` or a lone metric); every metric and Compare row of it reads that."""
    from ui.lenses.home import HOME
    from ui.lenses.measurements import MEASUREMENTS

    figures = _declared_figures()
    seen: dict = {}
    for lens in (HOME, *LENSES, MEASUREMENTS):
        for metrics in lens.metrics.values():
            for m in metrics.items:
                if not m.path:
                    continue
                decl = (m.label, m.unit, m.better, m.show, m.help, m.bound)
                assert seen.setdefault(m.path, decl) == decl, f"{m.path} is declared twice"
                fig = figures.get(m.path)
                if fig is not None:
                    assert decl == (fig.label, fig.unit, fig.better, fig.show, fig.help, fig.bound)
    for row in ROWS:
        fig = figures.get(row.path)
        if fig is not None:
            assert row == fig.row(row.section), row.path
        elif row.path in seen:  # a row of a lone metric states the figure again
            raise AssertionError(f"{row.path}: declare it as a Figure and use .row()")


def test_the_command_line_reads_the_same_pages_without_importing_them():
    """``whatif url --page`` takes the pages' own declarations, read from their source
    (:mod:`whatif.pages`), so the command line neither imports Streamlit nor becomes a page
    server; what it reads is exactly the registry."""
    from whatif import pages

    assert list(pages.declared().values()) == list(PAGES)
