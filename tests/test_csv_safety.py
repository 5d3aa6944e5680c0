"""No text that reaches a CSV can become a formula cell when a spreadsheet opens the file
(issue 40, R6): every line, the ``# comment`` first line included, split as a spreadsheet
would at commas, semicolons or tabs, with CSV quoting."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.pages import open_page
from tools import golden
from ui import export
from ui.export import _NUMBER, FORMULA_START, csv_text

ROOT = Path(__file__).resolve().parent.parent
ATTACK = 'a,"=HYPERLINK(""http://evil.example"",""click"")",b'


def formula_cells(text: str) -> list[str]:
    bad = []
    for delimiter in (",", ";", "\t"):
        for row in csv.reader(io.StringIO(text), delimiter=delimiter):
            for cell in row:
                c = cell.strip()
                if c.startswith(FORMULA_START) and not _NUMBER.fullmatch(c):
                    bad.append(cell)
    return bad


def test_the_reported_model_name_stays_text_in_the_comment_line():
    text = csv_text(pd.DataFrame({"x": [1]}), f"Roofline · {ATTACK} on 1×H100")
    assert formula_cells(text) == []
    assert "HYPERLINK" in text.splitlines()[0]  # the name is still there, as text


@settings(max_examples=300, deadline=None)
@given(
    comment=st.text(alphabet=st.sampled_from(list("ab =+-@\",;\t\r()'")), max_size=40),
    cell=st.text(alphabet=st.sampled_from(list("ab =+-@\",;\t()'")), max_size=20),
)
def test_no_comment_or_cell_becomes_a_formula(comment, cell):
    text = csv_text(pd.DataFrame({"name": [cell], cell or "c": ["x"]}), comment)
    assert formula_cells(text) == []


def test_the_figures_csv_of_a_hostile_link_has_no_formula_cell():
    """The issue's reproducer, end to end: Roofline with that model name, its Figures CSV."""

    from tools import golden

    golden._record_deferred()
    golden._DEFERRED.clear()
    open_page(
        "pages/1_Roofline.py",
        pairs=[("scenario", "seed-3b-4090"), ("model.name", ATTACK)],
        state={"t_roofline": "Breakdown and downloads"},
    )
    figures = [
        e for e in golden._DEFERRED.values() if (e["filename"] or "").endswith("figures.csv")
    ]
    assert figures, "the page offers a Figures CSV"
    text = figures[0]["callable"]()
    assert "HYPERLINK" in text
    assert formula_cells(text) == []


def test_user_text_in_a_csv_never_starts_like_a_formula():
    frame = pd.DataFrame(
        {
            "=name": ['=HYPERLINK("http://x")', "+cmd|' /C calc'!A0", "@SUM(1)", "-2+3", "ok"],
            "number": [-1.5, 2.0, 3.0, -4.25, 5.0],
            "mixed": ["-1", 2.5, "x", "=1", None],
        }
    )
    text = export.csv_text(frame, "a label, =cmd · http://host/?capture_sizes=1,2,4")
    for cell in _cells(text):
        assert not cell.startswith(("=", "+", "@")), cell
        assert not cell.startswith("-") or cell.lstrip("-").replace(".", "").isdigit(), cell
    back = pd.read_csv(io.StringIO(text), comment="#")
    assert back["number"].tolist() == [-1.5, 2.0, 3.0, -4.25, 5.0]  # numbers stay numbers
    assert back["'=name"].tolist()[0] == '\'=HYPERLINK("http://x")'


def test_a_model_name_from_a_link_reaches_the_figures_csv_as_text():
    golden._record_deferred()
    golden._DEFERRED.clear()
    open_page(
        "pages/1_Roofline.py",
        pairs=[("model.name", '=HYPERLINK("http://evil","x")')],
        state={"t_roofline": "Breakdown and downloads"},
    )
    figures = [
        e for e in golden._DEFERRED.values() if (e["filename"] or "").endswith("figures.csv")
    ]
    assert figures
    text = figures[0]["callable"]()
    assert "=HYPERLINK" in text  # the name is there, as text
    for cell in _cells(text):
        assert not cell.startswith(("=", "+", "@")), cell


def _cells(text: str) -> list[str]:
    lines = text.splitlines()
    out = []
    for line in lines:
        out += [c.strip().strip('"') for c in line.split(",")]
    return out
