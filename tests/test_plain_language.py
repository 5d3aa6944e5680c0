"""Plain language: every page, in every tab and with its formulas open, for a few scenarios and
with a measurement example loaded, shows no project-internal words (the spec's section numbers,
"seed" for the source posts, CLI hints, issue talk); sources are named by what they are; jargon
labels carry a one-line help; the sidebar says how a scenario was modified from its preset."""

from __future__ import annotations

import ast
import html
import re
from pathlib import Path

import pytest
from google.protobuf.message import Message
from pandas.api.types import is_numeric_dtype
from streamlit.testing.v1 import AppTest

from model.overrides import resolve
from model.readers.examples import examples
from tests.pages import page_test
from tools.golden import view_labels
from ui import text
from ui.lenses import PAGES as REGISTERED_PAGES
from ui.text import SOURCE_NAMES, SOURCE_TITLES

ROOT = Path(__file__).resolve().parent.parent

#: each lens page's formulas expander key
FORMULAS = {
    "roofline": "x_formulas_roofline",
    "launch": "x_formulas_launch",
    "cold_start": "x_formulas_cold",
    "scale_to_zero": "x_formulas_economics",
    "serving": "x_formulas_serving",
}
#: page → (its lazy-tab key, every tab label, its formulas expander key), from the registry
PAGES = {
    p.file: (p.tab_key, list(p.tabs), FORMULAS[p.key])
    if p.key in FORMULAS
    else (None, [None], None)
    for p in REGISTERED_PAGES
}
MEASUREMENT_TABS = [
    "Fit and apply",
    "Decode steps",
    "Request latency",
    "Launch overhead",
    "Start-up and rates",
    "Residuals",
]

#: words a user should not meet: the spec's name, "seed(s)" for the source posts (a preset id
#: such as seed-3b-4090 is an id: the hyphen excludes it), issue talk (a URL's /issues/ is a
#: citation: the slash excludes it), CLI flags and commands, a bare "the Q&A"
INTERNAL = re.compile(
    r"(?<![-\w/])(?:seeds?|issues?)(?![-\w/])"
    r"|(?-i:\bSPEC\b)"
    r"|--set\b|\bwhatif (?:eval|yaml|import|calibrate|presets|parse-log|url)\b"
    r"|\bCLI\b"
    r"|Q&A(?! post)",
    re.IGNORECASE,
)
#: jargon that, in a label, needs a one-line help beside it
JARGON = re.compile(
    r"\b(?:ridge|AI|TTFT|TPOT|TP|KV|H2D|[Bb]ound|Amdahl|[Bb]reak-even|p99|piecewise)\b|τ"
)


def _strings(msg: Message, where: str, out: list) -> None:
    for field, value in msg.ListFields():
        items = value if isinstance(value, (list, tuple)) or _repeated(value) else [value]
        for item in items:
            if isinstance(item, Message):
                _strings(item, f"{msg.DESCRIPTOR.name}", out)
            elif isinstance(item, str):
                out.append((f"{msg.DESCRIPTOR.name}.{field.name}", item))


def _repeated(value) -> bool:
    return hasattr(value, "__len__") and not isinstance(value, (str, bytes, Message))


def _walk(node, out: list, labelled: list) -> None:
    proto = getattr(node, "proto", None)
    if isinstance(proto, Message):
        _strings(proto, "", out)
        names = {f.name for f in proto.DESCRIPTOR.fields}
        if {"label", "help"} <= names and proto.label:
            labelled.append((proto.DESCRIPTOR.name, proto.label, proto.help))
    if getattr(node, "type", None) == "dataframe":
        frame = node.value
        out.append(("dataframe.columns", " | ".join(map(str, frame.columns))))
        for column in frame.columns:
            if not is_numeric_dtype(frame[column]):
                out.append(("dataframe.cells", " | ".join(map(str, frame[column]))))
    for child in (getattr(node, "children", None) or {}).values():
        _walk(child, out, labelled)


def visible(at: AppTest) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """Every string the page sent (markdown, labels, help, options, chart specs, table headers
    and cells), with markdown escapes and word joiners taken out; and every (element, label,
    help) of the elements that take a help."""
    out: list = []
    labelled: list = []
    _walk(at._tree, out, labelled)  # noqa: SLF001 - the whole tree, not one element type
    clean = [(w, t.replace("\\", "").replace(text.WORD_JOINER, "")) for w, t in out]
    return clean, labelled


def internal_words(strings) -> list[str]:
    found = []
    for where, t in strings:
        for m in INTERNAL.finditer(t):
            found.append(f"{where}: …{t[max(0, m.start() - 60) : m.end() + 40]}…")
    return found


def jargon_without_help(labelled) -> list[str]:
    return [
        f"{kind} {label!r}"
        for kind, label, help_text in labelled
        if JARGON.search(label) and not help_text.strip()
    ]


def run(page: str, scenario: str | None = None, tab: str | None = None) -> AppTest:
    at = page_test(page, timeout=120)
    if scenario:
        at.query_params["scenario"] = scenario
    key, _, formulas = PAGES[page]
    if tab and key:
        at.session_state[key] = tab
    if formulas:
        at.session_state[formulas] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def check(at: AppTest) -> None:
    strings, labelled = visible(at)
    assert not internal_words(strings)
    assert not jargon_without_help(labelled)


@pytest.mark.parametrize(
    "page, tab",
    [(page, tab) for page, (_, tabs, _) in PAGES.items() for tab in tabs],
)
def test_every_tab_of_every_page_speaks_plainly(page, tab):
    check(run(page, tab=tab))


@pytest.mark.parametrize(
    "scenario", ["seed-3b-4090", "seed-70b-fp8-cold-start", "seed-qa-awq-5.5gib"]
)
@pytest.mark.parametrize("page", list(PAGES))
def test_named_scenarios_speak_plainly(page, scenario):
    check(run(page, scenario))


@pytest.mark.parametrize("example_id", list(examples()))
def test_measurements_with_an_example_loaded_speak_plainly(example_id):
    at = run("pages/6_Measurements.py")
    [b for b in at.button if b.key == f"w_meas_ex_{example_id}"][0].click()
    at.run()
    shown = set(view_labels(at, "t_measure"))
    for tab in MEASUREMENT_TABS:
        if tab not in shown:
            continue
        at.session_state["t_measure"] = tab
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        check(at)


def test_the_detector_catches_what_it_should_and_spares_ids_and_urls():
    bad = [
        "the seed's table",
        "Seeds: τ ≈ 5 µs",
        "(SPEC 4.3)",
        "run `whatif eval --trace`",
        "--set batch=8",
        "the Q&A's AWQ",
        "see issue 12",
    ]
    good = [
        "scenario seed-3b-4090",
        "https://github.com/vllm-project/vllm/issues/20264",
        "the CUDA graphs Q&A post",
        "a specific spectrum",
        "the chart's spec",
    ]
    assert all(internal_words([("x", t)]) for t in bad)
    assert not any(internal_words([("x", t)]) for t in good)
    assert jargon_without_help([("Metric", "AI vs ridge", "")])
    assert not jargon_without_help([("Metric", "AI vs ridge", "FLOPs per byte…")])
    assert not jargon_without_help([("Metric", "Aggregate tok/s", "")])


def test_sources_have_one_plain_name_and_a_title_each():
    assert set(SOURCE_NAMES) == set(SOURCE_TITLES)
    for key, name in SOURCE_NAMES.items():
        assert name.startswith("the ") and not internal_words([(key, name)])
        assert not internal_words([(key, SOURCE_TITLES[key])])


def test_modified_keys_name_what_differs_from_the_preset_in_plain_words():
    plain, _ = resolve([("scenario", "seed-3b-4090")])
    assert text.modified_keys(plain) == []
    assert text.modified_caption(plain) == ""
    changed, _ = resolve(
        [("scenario", "seed-3b-4090"), ("batch", "8"), ("weights_dtype", "int4"), ("gpus", "2")]
    )
    assert text.modified_keys(changed) == ["GPUs", "weights dtype", "batch"]
    assert text.modified_caption(changed) == (
        "Modified from seed-3b-4090: GPUs, weights dtype, batch."
    )
    hbm, _ = resolve([("scenario", "seed-3b-4090"), ("hardware.hbm_bandwidth_tb_s", "2")])
    assert text.modified_keys(hbm) == ["HBM bandwidth"]
    engine, _ = resolve([("scenario", "seed-3b-4090"), ("engine", "vllm")])
    assert text.modified_keys(engine) == ["engine"]
    defaults, _ = resolve([("batch", "4"), ("launch_us", "7")])
    assert text.modified_caption(defaults) == (
        "Modified from the built-in defaults: batch, launch cost τ."
    )
    # another model opens in its checkpoint's dtype (BF16 here, the defaults' FP8 before)
    model, _ = resolve([("model", "llama-3.2-3b")])
    assert text.modified_keys(model) == ["model", "weights dtype"]
    model, _ = resolve([("model", "llama-3.2-3b"), ("weights_dtype", "fp8")])
    assert text.modified_keys(model) == ["model"]


def _literals(path: Path):
    """The string literals of a Python file other than docstrings (comments are not in the
    tree): the text a page or a chart builder may show."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                yield node.lineno, node.value


@pytest.mark.parametrize(
    "path",
    [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "ui").glob("*.py"))],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_no_string_a_page_or_chart_builder_holds_speaks_internally(path):
    from model.overrides import known_keys

    keys = set(known_keys())  # a literal that is a scenario key (SPEC 4.6's ``seed``) is an id
    found = [
        f"{path.name}:{line}: {value[:80]!r}"
        for line, value in _literals(path)
        if value not in keys
    ]
    assert not [f for f in found if INTERNAL.search(f.split(": ", 1)[1])]


def _chart_strings(fig) -> list[tuple[str, str]]:
    spec = fig.spec if hasattr(fig, "spec") else fig.to_dict()
    out: list[tuple[str, str]] = []

    def walk(value, where):
        if isinstance(value, str):
            out.append((where, html.unescape(value)))
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{where}.{k}")
        elif isinstance(value, (list, tuple)):
            for v in value:
                walk(v, where)

    walk({"data": spec["data"], "layout": spec["layout"]}, "figure")
    return out


@pytest.mark.parametrize(
    "name", ["default", "seed-3b-4090", "seed-qa-awq-5.5gib", "seed-70b-fp8-cold-start"]
)
def test_chart_titles_axes_legends_and_annotations_speak_plainly(name):
    from model.economics import economics_lens
    from tests.helpers import every_figure
    from ui import economics_charts

    s, _ = resolve([("scenario", name), ("loader", "pickle")])
    figures = list(every_figure(s))
    lens = economics_lens(s)
    fig = lens["figures"]
    figures += [
        economics_charts.strategies_figure(fig),
        economics_charts.timeout_figure(
            lens["timeout_sweep"], fig["warm"]["total_usd_per_day"], s.idle_timeout_s
        ),
        economics_charts.timeline_figure(lens["timeline"]),
        economics_charts.break_even_figure(
            lens["break_even"],
            lens["service"].cold_s,
            lens["service"].cold_optimised_s,
            fig["break_even_cold_start_s"] or None,
        ),
    ]
    strings = [item for f in figures for item in _chart_strings(f)]
    assert strings and not internal_words(strings)
    # a worked example is named by what it is, not by a document the reader may not have
    shown = " ".join(t for _, t in strings)
    if name.startswith("seed-qa") or name == "default":
        assert "5.5 GiB (AWQ weights, worked example)" in shown
    for phrase in ("runbook", "Q&A post", "the seed"):
        assert phrase not in shown


def test_preset_text_the_pages_show_speaks_plainly():
    from model.engines import engine_profiles
    from model.presets import (
        cold_start_presets,
        hardware_presets,
        model_presets,
        scenario_description,
        scenario_names,
    )
    from model.traffic import traffic_profiles

    shown = []
    for p in engine_profiles().values():
        shown += [("engine", p.name), ("engine", p.description or "")]
        for version in p.versions:
            shown += [("engine source", t) for t in p.figures(version).sources.values()]
    presets = cold_start_presets()
    for lo in presets.loaders.values():
        shown += [("loader", lo.name), ("loader", lo.notes or "")]
    for tier in presets.storage.values():
        shown += [("storage", tier.name), *(("storage source", t) for t in tier.sources.values())]
    shown += [("hardware", h.name) for h in hardware_presets().values()]
    shown += [("model", m.name) for m in model_presets().values()]
    shown += [("scenario", scenario_description(n)) for n in scenario_names()]
    shown += [("traffic", t.name) for t in traffic_profiles().values()]
    shown += [(e.id, f"{e.title} {e.what}") for e in examples().values()]
    assert not internal_words(shown)


def test_keys_and_fields_have_plain_names():
    from model.overrides import known_keys

    assert text.key_name("launch_us") == "launch cost τ"
    assert text.key_name("hardware.hbm_bandwidth_tb_s") == "HBM bandwidth"
    assert text.key_name("hardware.peak_tflops.bf16") == "peak TFLOPS"
    assert text.key_name("model.layers") == "model details"
    assert text.field_name("params_b") == "parameters [B]"
    assert text.field_name("peak_tflops.fp8") == "peak FP8 [TFLOPS]"
    # every top-level key a link may carry has a name of its own, none a raw key
    top = [k for k in known_keys() if "." not in k and k != "scenario"]
    assert all(k in text.KEY_NAMES for k in top), [k for k in top if k not in text.KEY_NAMES]
    assert all("_" not in name for name in text.KEY_NAMES.values())
