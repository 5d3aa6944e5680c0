"""Review-ready exports (ui/export.py): file names after the scenario, clean CSV and YAML that
carry the share link, the wide figures table, chart captions and download settings, and the
one-file HTML report (the browser half is tests/browser/test_exports.py)."""

from __future__ import annotations

import datetime as dt
import html
import io
import re

import pandas as pd
import pytest
import yaml

from model import codecs
from model.overrides import resolve
from ui import baseline_charts, export
from ui.chart_common import figure, validated
from ui.lenses import LENSES, PAGE_OF
from ui.report import build_report

SAFE_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]*\.(csv|yaml|html|png)$")
HOSTILE_MODEL = '<script>alert(1)</script> & "Evil" **7B**'
HOSTILE_GPU = "</script><img src=x onerror=alert(2)>"


def scenario(*pairs):
    return resolve(list(pairs), strict=True)[0]


def link(s, page="roofline", extra=()):
    return codecs.to_url(s, PAGE_OF[page].url(codecs.DEFAULT_BASE_URL), extra=list(extra))


# --- names ------------------------------------------------------------------------------------


def test_file_names_name_the_scenario_and_differ_between_scenarios():
    a = scenario(("batch", "8"))
    b = scenario(("batch", "8"), ("context_tokens", "8192"))  # same model, dtype, GPUs, batch
    ca = export.make_context(a, "roofline", link(a))
    cb = export.make_context(b, "roofline", link(b))
    assert ca.slug.startswith("llama-3.1-70b-fp8-4xh100-sxm-b8-")
    assert ca.slug != cb.slug  # the link's hash tells them apart
    names = {ca.file("Figures", "csv", "roofline"), cb.file("Figures", "csv", "roofline")}
    assert len(names) == 2
    assert ca.file("Batch sweep", "csv", "roofline").endswith("-roofline-batch-sweep.csv")
    # the same scenario has the same name on every page and host
    other = export.make_context(a, "launch", codecs.to_url(a, PAGE_OF["launch"].url("http://x:1")))
    assert other.slug == ca.slug
    # a pinned baseline changes the link, so the name
    pinned = link(a, extra=[("base.batch", "64")])
    assert export.make_context(a, "roofline", pinned).slug != ca.slug


def test_file_names_are_safe_characters_whatever_the_names():
    s = scenario(
        ("model.id", "evil-model"),
        ("model.name", HOSTILE_MODEL),
        ("hardware.id", "evil-gpu"),
        ("hardware.name", "../../etc/passwd \\ C:"),
    )
    ctx = export.make_context(s, "cold_start", link(s, "cold_start"))
    for name in (
        ctx.file("Figures", "csv"),
        ctx.file("scenario", "yaml", "cold-start"),
        ctx.file("report", "html", "all"),
        ctx.chart_file("waterfall") + ".png",
    ):
        assert SAFE_NAME.match(name), name
        assert "/" not in name and ".." not in name
    assert ctx.chart_file("waterfall").endswith("-cold-start-waterfall")


# --- CSV and YAML ------------------------------------------------------------------------------


def test_csv_numbers_are_clean_and_integers_are_integers():
    frame = pd.DataFrame(
        {
            "batch": [1.0, 2.0, 4.0],  # integral floats: written as integers
            "t_ms": [6.784999999999999, 0.1 + 0.2, 1234567.891],
            "count": [1, 2, 3],
            "mode": ["none", "piecewise", "full"],
            "ok": [True, False, True],
            "mixed": [1, 2.5, None],
        }
    )
    text = export.csv_text(frame, "Llama · http://localhost:8501/Roofline?batch=8")
    first, *rest = text.splitlines()
    assert first == "# Llama · http://localhost:8501/Roofline?batch=8"
    body = "\n".join(rest)
    assert "6.784999999999999" not in body and "0.30000000000000004" not in body
    assert rest[0] == "batch,t_ms,count,mode,ok,mixed"
    assert rest[1] == "1,6.785,1,none,True,1.0"
    assert rest[2] == "2,0.3,2,piecewise,False,2.5"
    assert rest[3] == "4,1234570.0,3,full,True,"
    back = pd.read_csv(io.StringIO(text), comment="#")
    assert back["batch"].dtype.kind == "i" and back["count"].dtype.kind == "i"
    assert back["t_ms"].tolist() == [6.785, 0.3, 1234570.0]


def test_csv_comment_stays_on_one_line():
    text = export.csv_text(pd.DataFrame({"a": [1]}), "evil\nname,1\r\n# · link")
    assert text.splitlines()[0] == "# evil name,1 # · link"
    assert text.splitlines()[1:] == ["a", "1"]


def test_yaml_carries_the_link_in_comments_that_load_ignores():
    s = scenario(("batch", "8"), ("model.name", "Model: # not a comment\u2028x"))
    ctx = export.make_context(s, "roofline", link(s))
    text = export.yaml_text(s, ctx)
    lines = text.splitlines()
    assert lines[0].startswith("# Model: # not a comment x · FP8")
    assert lines[1] == f"# link: {ctx.link}"
    assert yaml.safe_load(text) == yaml.safe_load(codecs.to_yaml(s))
    assert codecs.from_yaml(text) == codecs.from_yaml(codecs.to_yaml(s))


def test_figures_table_is_wide_and_typed_with_a_baseline_row():
    from model.evaluate import evaluate

    a, b = scenario(("batch", "8")), scenario(("batch", "64"))
    sections = ("roofline", "decode", "request", "memory")
    wide = export.wide_figures(
        [("this scenario", "A", evaluate(a)), ("baseline", "B", evaluate(b))], sections
    )
    assert len(wide) == 2
    assert list(wide["scenario"]) == ["this scenario", "baseline"]
    assert list(wide.columns[:2]) == ["scenario", "label"]
    assert all(c.split(".")[0] in sections for c in wide.columns[2:])
    assert str(wide["decode.batch"].dtype) == "Int64"
    assert list(wide["decode.batch"]) == [8, 64]
    assert wide["decode.t_step_ms"].dtype == float
    assert str(wide["decode.bound"].dtype) == "string"
    assert str(wide["memory.weights_fit"].dtype) in ("bool", "boolean")
    text = export.csv_text(wide)
    header, row, _ = text.splitlines()
    assert "decode.batch" in header.split(",")
    values = dict(zip(header.split(","), row.split(","), strict=True))
    assert values["decode.batch"] == "8" and values["memory.max_batch"].isdigit()
    assert not re.search(r"\d\.\d{7,}", text)  # 6 significant digits at most


def test_long_figures_show_integers_as_integers():
    table = export.long_figures(
        {"decode": {"batch": 8, "t_ms": 6.784999999999999, "n": 3.0}}, ("decode",)
    )
    assert list(table["value"]) == ["8", "6.785", "3"]


# --- charts -------------------------------------------------------------------------------------


def small_figure():
    return figure(
        [{"type": "scatter", "x": [1, 2], "y": [3, 4], "name": "a"}],
        {
            "title": {"text": "T"},
            "height": 400,
            "margin": {"l": 60, "r": 30, "t": 50, "b": 80},
            "legend": {"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.01},
        },
    )


def test_caption_grows_the_figure_above_the_plot_and_is_escaped():
    fig = export.captioned(small_figure(), HOSTILE_MODEL, "http://h/R?model.name=%3Cx%3E")
    layout = fig.spec["layout"]
    sub = layout["title"]["subtitle"]["text"]
    assert "<script>" not in sub and "&lt;script&gt;" in sub
    assert "&#37;3Cx&#37;3E" in sub  # '%' escaped: no template field
    lines = sub.split("<br>")
    grow = export.CAPTION_LINE_PX * len(lines) + export.CAPTION_PAD_PX
    assert layout["height"] == 400 + grow
    assert layout["margin"]["t"] == 50 + grow and layout["margin"]["b"] == 80
    # the legend keeps its distance from the bottom of the figure
    assert layout["legend"]["y"] * layout["height"] == pytest.approx(0.01 * 400)
    validated(fig)  # Plotly accepts every property


def test_caption_wraps_a_long_link_and_bounds_it():
    long = "http://localhost:8501/Roofline?" + "&".join(f"k{i}=v{i}" for i in range(200))
    lines = export.caption_lines("label", long)
    assert lines[0] == "label"
    assert 1 + export.LINK_LINES == len(lines)
    shown = [html.unescape(re.sub(r"<[^>]+>", "", line)) for line in lines]
    assert all(len(line) <= export.CAPTION_CHARS for line in shown)
    assert shown[-1].endswith("…")


def test_the_captions_link_is_a_link_hidden_on_screen_and_kept_for_downloads():
    link = "http://localhost:8501/Roofline?scenario=seed-3b-4090&batch=4"
    lines = export.caption_lines("label", link)
    assert lines[0] == "label"
    assert lines[1:] == [f'<a href="#">{link.replace("&", "&amp;")}</a>']
    # the page's style hides the caption's links on screen only (a print keeps them)
    assert ".gtitle-subtitle a { display: none; }" in export.SCREEN_CSS
    assert "@media screen" in export.SCREEN_CSS
    # whatever the link holds, it is text inside the hook, never an address or markup
    odd = export.caption_lines("label", 'javascript:alert("x")<b>')
    assert odd[1:] == ['<a href="#">javascript:alert("x")&lt;b&gt;</a>']


def test_chart_config_names_the_download_and_fits_the_figure():
    fig = export.captioned(small_figure(), "label", "http://h/")
    config = export.chart_config("llama-roofline-roofline", "SVG", fig)
    opts = config["toImageButtonOptions"]
    assert opts == {
        "format": "svg",
        "filename": "llama-roofline-roofline",
        "width": export.CHART_WIDTH,
        "height": fig.spec["layout"]["height"],
        "scale": 2,
    }
    assert export.chart_config("x", "tiff", fig)["toImageButtonOptions"]["format"] == "png"


def test_compact_baseline_keeps_one_legend_entry():
    fig = figure(
        [
            {"type": "scatter", "x": [1, 2], "y": [1, 2], "name": "a", "stackgroup": "s"},
            {"type": "scatter", "x": [1, 2], "y": [1, 2], "name": "b", "stackgroup": "s"},
        ],
        {"title": {"text": "T"}},
    )
    both = export.compact_baseline(baseline_charts.overlay(fig, fig))
    data = both.spec["data"]
    shown = [t["name"] for t in data if t.get("showlegend", True)]
    assert shown == ["a", "b", "baseline (dashed)"]
    validated(both)


# --- the report ---------------------------------------------------------------------------------

#: the charts the lenses declare for the report (20 today: roofline 3, launch 5, cold start 5,
#: scale to zero 4, serving 3), read from their declarations so a new lens's charts count
REPORT_CHARTS = sum(1 for lens in LENSES for c in lens.charts if c.report_name is not None)
FAKE_JS = "/* plotly.js stand-in */ window.Plotly = {newPlot: function () {}};"


@pytest.fixture(scope="module")
def hostile_report():
    s = scenario(("model.name", HOSTILE_MODEL), ("hardware.name", HOSTILE_GPU), ("batch", "8"))
    url = link(s)
    when = dt.datetime(2026, 1, 2, 3, 4, tzinfo=dt.UTC)
    return s, url, build_report(s, url, now=when, plotly_js=FAKE_JS)


def test_report_has_the_link_the_yaml_the_date_and_every_chart(hostile_report):
    s, url, text = hostile_report
    assert text.startswith("<!DOCTYPE html>")
    assert f'<a href="{html.escape(url, quote=True)}">{html.escape(url)}</a>' in text
    assert html.escape(codecs.to_yaml(s)) in text
    assert "2026-01-02 03:04 UTC" in text
    assert text.count('<div class="chart"') == REPORT_CHARTS
    assert text.count("Plotly.newPlot(") == REPORT_CHARTS
    assert text.count(FAKE_JS) == 1  # plotly.js once
    assert "<script src" not in text and "<link" not in text  # nothing to fetch
    assert REPORT_CHARTS >= 20
    for lens in LENSES:
        assert f">{lens.title}</h2>" in text
    assert "Assumptions and sources" in text and "vLLM" in text
    assert "Headline figures" in text and "Time to first token" in text


def test_report_escapes_every_user_text(hostile_report):
    _, _, text = hostile_report
    assert "<script>alert" not in text
    assert "<img src=x" not in text and "</script><img" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text  # shown literally
    # the only script elements are plotly.js and one newPlot per chart
    scripts = re.findall(r"<script>(.*?)</script>", text, flags=re.S)
    assert len(scripts) == 1 + REPORT_CHARTS
    assert all(s.startswith("Plotly.newPlot(") for s in scripts[1:])


def test_report_with_a_baseline_shows_both():
    s, b = scenario(("batch", "8")), scenario(("batch", "64"))
    url = link(s, extra=[("base.batch", "64")])
    text = build_report(s, url, baseline=b, plotly_js=FAKE_JS)
    assert "Baseline (pinned):" in text and "batch 64" in text
    assert "<th>baseline</th>" in text and "<th>change</th>" in text
    assert "dashed: baseline" in text and "Baseline YAML" in text
    # each chart once, with its baseline over it or (stacked bars, timelines) beneath it
    assert REPORT_CHARTS < text.count("Plotly.newPlot(") < 2 * REPORT_CHARTS


def test_report_builds_with_the_real_plotly_js_once():
    s = scenario(("batch", "8"))
    text = build_report(s, link(s))
    assert text.count("plotly.js v") == 1
    assert len(text) < 8_000_000


def test_labels_read_as_a_reader_reads_them():
    """Issue 40, item 9: no "batch 1" on lenses that ignore the batch, a fraction's delta in
    percentage points, figures in words, "1 replica"."""
    from ui.compare import delta_text
    from ui.export import make_context
    from ui.report import _value_text
    from ui.text import figure_words

    s = resolve([])[0]
    assert "batch" not in make_context(s, "serving", "x").label
    assert "batch" not in make_context(s, "cold_start", "x").label
    assert "batch 1" in make_context(s, "roofline", "x").label
    assert delta_text(0.5, 0.45, "fraction") == "+5.0 pp"
    assert delta_text(0.1, 0.1, "fraction") is None
    assert figure_words("p99_ttft_ms") == "p99 TTFT [ms]"
    assert figure_words("peak_hour.replicas_needed") == "peak hour: replicas needed"
    assert figure_words("hbm_bandwidth_tb_s") == "HBM bandwidth [TB/s]"
    assert _value_text(1, "replicas") == "1 replica" and _value_text(3, "replicas") == "3 replicas"
