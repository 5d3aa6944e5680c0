"""One contract over every registered lens (issue 41: a new lens is registered in one place,
and a test says where it is still missing): a page with a navigation entry, an icon and a URL
path; rows in the Compare table that have values; a section in the HTML report; golden cases
of its page."""

from __future__ import annotations

from pathlib import Path

import pytest

from model import codecs
from model.overrides import resolve
from tests import golden
from ui import sidebar
from ui.lenses import LENSES, compare

ROOT = Path(__file__).resolve().parent.parent
NAV = {key: path for key, path, _ in sidebar.NAV}


@pytest.fixture(scope="module")
def report() -> str:
    from ui.report import build_report

    s = resolve([])[0]
    return build_report(s, "http://localhost:8501/", plotly_js="")


@pytest.mark.parametrize("lens", LENSES, ids=lambda lens: lens.key)
def test_a_lens_has_a_page_a_nav_entry_an_icon_and_a_url_path(lens):
    assert lens.key in NAV, "ui.sidebar.NAV"
    assert (ROOT / NAV[lens.key]).is_file()
    assert lens.key in sidebar.NAV_ICONS
    assert lens.key in codecs.PAGES


@pytest.mark.parametrize("lens", LENSES, ids=lambda lens: lens.key)
def test_a_lens_has_compare_rows_with_values(lens):
    assert lens.rows, "a lens shows at least one row in Compare"
    rows = compare([resolve([])[0].effective()])
    mine = {row.label for row in lens.rows}
    got = {r["label"]: r["values"][0] for r in rows if r["label"] in mine}
    assert set(got) == mine
    assert all(v is not None for v in got.values()), got


@pytest.mark.parametrize("lens", LENSES, ids=lambda lens: lens.key)
def test_a_lens_has_a_report_section(lens, report):
    assert f'<h2 id="{lens.key}">' in report


@pytest.mark.parametrize("lens", LENSES, ids=lambda lens: lens.key)
def test_a_lens_has_golden_cases(lens):
    assert NAV[lens.key] in golden.PAGES
