"""The lens declarations (:mod:`ui.lens`, ``ui/lenses/``): each chart builder is named in one
declaration only, pages stay tables of contents, every name a page or the report asks for is
declared, every metric, row and breakdown figure exists for real scenarios, and the scenario
and its baseline are resolved once per page run."""

from __future__ import annotations

import ast
import collections
import re
from pathlib import Path

import pytest

from model.compare import lookup
from model.overrides import resolve
from model.scenario import Scenario
from tests.pages import open_page
from ui.lens import View
from ui.lenses import LENSES, ROWS, compare
from ui.lenses.home import HOME
from ui.lenses.measurements import MEASUREMENTS

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]
ALL = (HOME, *LENSES, MEASUREMENTS)


def _builders() -> dict[str, str]:
    """Every chart builder, ``module.name`` → the pattern that names it: the public
    ``*_figure`` functions of the ``ui/*_charts.py`` (a name two modules share is matched
    with its module, ``launch_charts.timeline_figure``)."""
    found = []
    for path in (ROOT / "ui").glob("*_charts.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and node.name.endswith("_figure"):
                if not node.name.startswith("_"):
                    found.append((path.stem, node.name))
    count = collections.Counter(name for _, name in found)
    return {
        f"{mod}.{name}": (rf"\b{mod}\.{name}\b" if count[name] > 1 else rf"\b{name}\b")
        for mod, name in found
    }


def test_each_chart_builder_is_named_in_one_declaration_only():
    builders = _builders()
    assert len(builders) >= 20
    where = collections.defaultdict(set)
    files = [*PAGES, *(ROOT / "ui").rglob("*.py")]
    for path in files:
        if path.name.endswith("_charts.py"):
            continue  # the builders' own module
        text = path.read_text(encoding="utf-8")
        for name, pattern in builders.items():
            if re.search(pattern, text):
                where[name].add(path.relative_to(ROOT).as_posix())
    for name in sorted(builders):
        assert len(where[name]) == 1, f"{name} is named in {sorted(where[name])}"
        (only,) = where[name]
        assert only.startswith("ui/lenses/"), f"{name} is named in {only}, not a declaration"


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_pages_are_short_tables_of_contents(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 120, f"{path.name}: {len(lines)} lines"


def test_declared_names_are_unique_and_downloads_name_tables():
    assert len({lens.key for lens in ALL}) == len(ALL)
    for lens in ALL:
        charts = [c.name for c in lens.charts]
        tables = [t.name for t in lens.tables]
        assert len(set(charts)) == len(charts), lens.key
        assert len(set(tables)) == len(tables), lens.key
        reported = [c.report_name for c in lens.charts if c.report_name]
        assert len(set(reported)) == len(reported), lens.key
        for name in lens.downloads:
            assert lens.table(name).download, f"{lens.key}: {name} has no download name"
        with pytest.raises(KeyError):
            lens.chart("no-such-chart")


def _calls(path: Path, method: str) -> list[str]:
    """The string names a page passes to ``shown.<method>(…)``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == method
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "shown"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            out.append(node.args[0].value)
    return out


def test_every_name_a_page_draws_is_declared():
    declared = {lens.key: lens for lens in ALL}
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        used = re.findall(r"from ui\.lenses\.(\w+) import", text)
        lenses = [declared[k] for k in used if k in declared]
        if not lenses:
            continue
        charts = {c.name for lens in lenses for c in lens.charts}
        tables = {t.name for lens in lenses for t in lens.tables}
        metrics = {m for lens in lenses for m in lens.metrics}
        texts = {t for lens in lenses for t in lens.texts}
        assert set(_calls(path, "chart")) <= charts, path.name
        assert set(_calls(path, "table")) <= tables, path.name
        assert set(_calls(path, "metrics")) <= metrics, path.name
        for method in ("markdown", "caption", "notice"):
            assert set(_calls(path, method)) <= texts, (path.name, method)


@pytest.fixture(scope="module")
def views() -> list[tuple[str, Scenario, object, View]]:
    out = []
    for name in ["default", "seed-3b-4090", "seed-70b-fp8-cold-start", "mixtral-fp8-2xh100"]:
        s = resolve([("scenario", name)], strict=True)[0]
        for lens in (HOME, *LENSES):
            out.append((name, s, lens, lens.view(s, lens.compute(s, None))))
    return out


def test_every_metric_row_and_breakdown_section_reads_a_figure(views):
    for name, _s, lens, v in views:
        for group, row in lens.metrics.items():
            for m in row.items:
                if m.path is not None and (m.when is None or m.when(v)):
                    assert lookup(v.f, m.path) is not None or m.path.endswith(
                        "break_even_cold_start_s"
                    ), (name, lens.key, group, m.path)
        for row in lens.rows:
            assert lookup(v.f, row.path) is not None, (name, lens.key, row.path)
        for section in lens.breakdown:
            assert isinstance(v.f[section], dict), (name, lens.key, section)


def test_every_declared_chart_and_table_builds(views):
    for name, _s, lens, v in views:
        for c in lens.charts:
            assert c.build(v).spec["data"], (name, lens.key, c.name)
        for t in lens.tables:
            if lens.key != "measurements":
                assert len(t.build(v)), (name, lens.key, t.name)


def test_compare_rows_are_the_lenses_rows_in_order():
    assert ROWS == tuple(r for lens in LENSES for r in lens.rows)
    s = resolve([("scenario", "seed-3b-4090")], strict=True)[0]
    table = compare([s, s])
    assert [r["label"] for r in table] == [r.label for r in ROWS]
    assert not any(r["differs"] for r in table)


def test_the_report_draws_each_lens_from_its_declaration():
    from ui.report import build_report

    s = resolve([("scenario", "default")], strict=True)[0]
    text = build_report(s, "http://localhost:8501/?scenario=default", plotly_js="")
    assert text.count("Plotly.newPlot(") == sum(
        1 for lens in LENSES for c in lens.charts if c.report_name
    )
    for lens in LENSES:
        assert f'<h2 id="{lens.key}">' in text
        for t in lens.tables:
            if t.report:
                assert f"<h3>{t.report}</h3>" in text


@pytest.mark.parametrize(
    "page",
    [
        "app.py",
        "pages/1_Roofline.py",
        "pages/3_Launch_overhead.py",
        "pages/4_Cold_start.py",
        "pages/5_Scale_to_zero.py",
        "pages/7_Compare.py",
    ],
)
def test_the_scenario_and_its_baseline_are_resolved_once_per_run(page, monkeypatch):
    """Where the link enters (``ui.state.load_scenario`` builds them), not again in each core
    function: the only other resolutions are of what-if variants the lenses build (other
    dtypes, other graphs modes), each a new scenario."""
    seen: list[str] = []
    depth: list[int] = []  # inside model_copy: a variant, not the scenario
    original = Scenario._fill_auto

    def fill_auto(self):
        if not depth:
            seen.append(self.scenario or "")
        return original(self)

    def model_copy(self, *, update=None, deep=False):
        depth.append(1)
        try:
            return original_copy(self, update=update, deep=deep)
        finally:
            depth.pop()

    original_copy = Scenario.model_copy
    monkeypatch.setattr(Scenario, "_fill_auto", fill_auto)
    monkeypatch.setattr(Scenario, "model_copy", model_copy)
    at = open_page(page, pairs=[("scenario", "default"), ("base.scenario", "seed-3b-4090")])
    seen.clear()
    at.run()  # a second run, as after a widget change
    assert not at.exception
    assert sorted(seen) == ["default", "seed-3b-4090"], seen
