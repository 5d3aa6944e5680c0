"""User text is never rendered as markup (SPEC 6): a model or hardware name from a link or a
YAML file shows literally in every caption, alert, metric, table and chart, and never as bold
text, a link or HTML.

Streamlit renders markdown (with GFM autolinks) in st.markdown, st.caption, the alerts, metric
labels and every ``help=``; Plotly renders a subset of HTML in titles, legend names, tick
labels, annotations and hover labels, and ``%{…}`` fields in hovertemplates.
"""

from __future__ import annotations

import html
import json
import re
import string
from pathlib import Path

import numpy as np
import pytest
from google.protobuf.descriptor import FieldDescriptor
from hypothesis import given, settings
from hypothesis import strategies as st

from model.cold_start import cold_start_lens
from model.overrides import resolve
from tests.helpers import every_figure
from tests.pages import open_page
from ui import cold_charts
from ui.chart_common import validated
from ui.text import WORD_JOINER, md_escape, plotly_text

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["app.py", "pages/1_Roofline.py", "pages/3_Launch_overhead.py", "pages/4_Cold_start.py"]
MODEL_NAME = "**URGENT** [click](https://evil.example) <b>x</b>"
HARDWARE_NAME = "<a href='https://evil.example'>GPU</a> %{x} www.evil.example a@evil.example"
#: what markup would look like if a name went through unescaped
RAW = re.compile(
    r"\*\*URGENT|\[click\]\(|(?<!\\)<b>x|(?<!\\)<a href|(?<!\\)https?://evil|(?<!\\)www\.evil"
    r"|@evil|(?<!\\)%\{x\} www"
)
#: markup in a chart's spec: Plotly renders a subset of HTML and ``%{…}`` fields, but no markdown
#: and no autolinks (a chart's caption names the scenario and carries its share link)
PLOTLY_RAW = re.compile(r"<b>x|<a href|%\{x\} www")
#: the one link a chart's spec may hold: the caption's hook for hiding its share link on
#: screen, an <a> to nowhere ("#") around the link's text
CAPTION_LINK = re.compile(r'<a href=\\?"#\\?">([^<]*)</a>')


def unescaped_punctuation(text: str) -> list[str]:
    """ASCII punctuation in ``text`` not preceded by an escaping backslash."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] in string.punctuation:
            out.append(text[i])
        i += 1
    return out


def shown(escaped: str) -> str:
    """What markdown shows for md_escape's output: the escapes and word joiners removed."""
    return re.sub(r"\\(.)", r"\1", escaped).replace(WORD_JOINER, "")


# --- the escapers -----------------------------------------------------------------------------


@pytest.mark.parametrize("text", [MODEL_NAME, HARDWARE_NAME, "Llama 3.1 70B", ":red[x] $x^2$"])
def test_md_escape_leaves_no_markup(text):
    out = md_escape(text)
    assert not unescaped_punctuation(out)
    assert shown(out) == text
    plain = out.replace("\\", "")
    assert "https://" not in plain and "www." not in plain.lower() and not re.search("@\\w", plain)


@settings(deadline=None)  # no wall-clock limit per example (issue 40)
@given(st.text(max_size=200))
def test_md_escape_is_literal_for_any_text(text):
    out = md_escape(text)
    assert not unescaped_punctuation(out)
    assert shown(out) == re.sub(r"[\r\n\v\f\u2028\u2029]+", " ", text).replace(WORD_JOINER, "")
    assert "\n" not in out


@settings(deadline=None)  # no wall-clock limit per example (issue 40)
@given(st.text(max_size=200))
def test_plotly_text_is_literal_for_any_text(text):
    out = plotly_text(text)
    assert "<" not in out and ">" not in out and "%" not in out
    assert html.unescape(out) == text


# --- the chart builders -----------------------------------------------------------------------


def figure_strings(fig) -> list[str]:
    """Every string in a figure's JSON (titles, names, texts, hovertemplates, annotations)."""
    out = []

    def walk(x):
        if isinstance(x, str):
            out.append(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
        elif isinstance(x, np.ndarray) and x.dtype.kind in "OUS":
            walk(x.tolist())

    walk(validated(fig).to_plotly_json())
    return out


def assert_no_markup(fig) -> None:
    for text in figure_strings(fig):
        assert "<a" not in text.lower() and "<b>" not in text.lower(), text
        for field in re.findall(r"%\{([^}]*)\}", text):
            assert re.fullmatch(r"(x|y|text|customdata(\[\d\])?)(:[^}]*)?", field), text


HOSTILE = resolve(
    [("model.name", MODEL_NAME), ("hardware.name", HARDWARE_NAME), ("batch", "8")], strict=True
)[0]


def test_no_figure_carries_markup_from_a_hostile_scenario():
    figures = list(every_figure(HOSTILE))
    assert len(figures) == 13
    for fig in figures:
        assert_no_markup(fig)


def test_labels_from_data_are_escaped_in_the_figures():
    # the builders that draw labels from their input: tier names and ids, column names
    lens = cold_start_lens(HOSTILE)
    tiers = {
        HARDWARE_NAME if tier_id == "nfs" else tier_id: {**tier, "name": MODEL_NAME}
        for tier_id, tier in lens["tiers"].items()
    }
    fig = validated(cold_charts.tier_figure(tiers, lens["concurrency"], "nvme", 1, 1.0))
    assert_no_markup(fig)
    assert html.unescape(fig.data[0].name) == MODEL_NAME
    assert any("&lt;a href" in t.hovertemplate for t in fig.data if t.hovertemplate)
    columns = {HARDWARE_NAME: lens["columns"]["this scenario"], **lens["columns"]}
    fig = validated(cold_charts.columns_figure(columns))
    assert_no_markup(fig)
    assert html.unescape(fig.data[0].y[-1]) == HARDWARE_NAME
    assert fig.layout.annotations[-1].y == fig.data[0].y[-1]  # the total sits on its bar


# --- the pages (AppTest) ----------------------------------------------------------------------


def proto_strings(msg) -> list[str]:
    out = []
    for field, value in msg.ListFields():
        if field.type == FieldDescriptor.TYPE_STRING:
            out.extend([value] if isinstance(value, str) else list(value))
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            for sub in [value] if hasattr(value, "ListFields") else list(value):
                if hasattr(sub, "ListFields"):  # map fields iterate over their keys
                    out.extend(proto_strings(sub))
    return out


def rendered(at) -> list[tuple[str, str]]:
    """(element type, string) for every string of every element on the page but code blocks
    (the share link, shown literally)."""
    out = []

    def walk(node):
        kids = getattr(node, "children", None)
        if kids:
            for kid in kids.values():
                walk(kid)
            return
        proto = getattr(node, "proto", None)
        if proto is None or type(node).__name__ == "Code":
            return
        for text in proto_strings(proto):
            if type(node).__name__ == "UnknownElement" and text.lstrip().startswith("{"):
                text = json.dumps(json.loads(text), ensure_ascii=False)  # a chart's spec
            out.append((type(node).__name__, text))

    walk(at._tree)
    return out


def raw_markup(kind: str, text: str):
    """Markup a name would make in this element: a chart's spec (JSON) by Plotly's rules, the
    rest by markdown's."""
    chart = kind == "UnknownElement" and text.lstrip().startswith("{")
    if chart:
        # the names reach the link's text percent-encoded: none of their markup survives
        joined = "".join(CAPTION_LINK.findall(text))
        assert not joined or ("'" not in joined and "<" not in joined and "3C" in joined), joined
        return PLOTLY_RAW.search(CAPTION_LINK.sub("", text))
    return RAW.search(text)


@pytest.mark.parametrize("page", PAGES)
def test_hostile_names_from_a_link_show_literally_on_every_page(page):
    at = open_page(
        page, pairs=[("model.name", MODEL_NAME), ("hardware.name", HARDWARE_NAME)], timeout=60
    )
    assert not at.warning  # both names are valid: nothing was dropped
    texts = rendered(at)
    for kind, text in texts:
        assert not raw_markup(kind, text), (kind, text)
    captions = [c.value for c in at.caption]
    assert any(md_escape(MODEL_NAME) in c and md_escape(HARDWARE_NAME) in c for c in captions)


@pytest.mark.parametrize("page", PAGES)
def test_hostile_names_of_inline_specs_show_literally(page):
    # inline specs under ids of their own (what a YAML file's hardware:/model: mapping gives):
    # the sidebar's selectors then show the names too
    at = open_page(
        page,
        pairs=[
            ("model.id", "evil-model"),
            ("model.name", MODEL_NAME),
            ("hardware.id", "evil-gpu"),
            ("hardware.name", HARDWARE_NAME),
        ],
        timeout=60,
    )
    for kind, text in rendered(at):
        if kind == "Selectbox":  # options are plain text (checked in Chromium)
            continue
        assert not raw_markup(kind, text), (kind, text)
    captions = [c.value for c in at.caption]
    assert any(md_escape(MODEL_NAME) in c and md_escape(HARDWARE_NAME) in c for c in captions)
    options = at.selectbox(key="w_model").options
    assert f"{MODEL_NAME} (inline)" in options
