"""AppTest: every page with every named scenario, the URL binding, and bad links (SPEC 5–7)."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from model.presets import scenario_names

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["app.py", "pages/1_Roofline.py"]


def open_page(page, **query):
    at = AppTest.from_file(str(ROOT / page), default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metrics(at):
    return {m.label: m.value for m in at.metric}


@pytest.mark.parametrize("name", scenario_names())
@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_every_named_scenario(page, name):
    at = open_page(page, scenario=name)
    shown = metrics(at)
    assert "Aggregate tok/s" in shown and "Bound" in shown
    assert shown["Bound"] in {"memory", "compute", "overhead"}
    assert not at.warning


def test_roofline_shows_the_seed_figures():
    # seed "The roofline flips": BF16 eager 6 + 2 = 8 ms → 125 tok/s
    shown = metrics(open_page("pages/1_Roofline.py", scenario="seed-3b-4090"))
    assert shown["Step time"] == "8.000 ms"
    assert shown["Aggregate tok/s"] == "125"
    assert shown["Bound"] == "memory"
    shown = metrics(
        open_page(
            "pages/1_Roofline.py",
            scenario="seed-3b-4090",
            weights_dtype="int4",
            cuda_graphs="full_decode_only",
        )
    )
    assert shown["Step time"] == "2.005 ms"


def test_weights_that_do_not_fit_warn_but_still_show_figures():
    at = open_page("pages/1_Roofline.py", scenario="seed-70b-bf16-1xh100")
    assert any("do not fit" in e.value for e in at.error)
    assert metrics(at)["Aggregate tok/s"]


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"batch": "-3"}, ["batch"]),
        ({"batch": "abc", "weights_dtype": "fp3"}, ["batch", "weights\\_dtype"]),
        ({"batch": "1e309"}, ["batch"]),
        ({"batch": "NaN"}, ["batch"]),
        ({"hardware": "nope"}, ["hardware", "h100\\-sxm"]),
        ({"model.layers": "0"}, ["model\\.layers"]),
        ({"what": "ever"}, ["unknown key"]),
        ({"scenario": "nope"}, ["scenario"]),
        ({"x": "a" * 10_000}, ["4096"]),
        ({"capture_sizes": "8,4,4"}, ["capture\\_sizes"]),
    ],
)
@pytest.mark.parametrize("page", PAGES)
def test_bad_links_warn_and_the_page_keeps_working(page, query, named):
    at = open_page(page, **query)
    text = " ".join(w.value for w in at.warning)
    for word in named:
        assert word in text, text
    assert metrics(at)["Aggregate tok/s"]


def test_good_keys_survive_beside_bad_ones():
    at = open_page(
        "pages/1_Roofline.py", scenario="seed-3b-4090", batch="abc", weights_dtype="int4"
    )
    assert metrics(at)["Step time"] == "3.500 ms"  # INT4 eager, batch left at the preset's 1
    assert any("batch" in w.value for w in at.warning)


def test_changing_the_batch_writes_the_url_and_the_figures():
    at = open_page("pages/1_Roofline.py", scenario="seed-3b-4090")
    before = metrics(at)["Aggregate tok/s"]
    at.number_input(key="w_batch").set_value(8).run()
    assert not at.exception
    assert at.query_params["batch"] in ("8", ["8"])
    assert at.query_params["scenario"] in ("seed-3b-4090", ["seed-3b-4090"])
    assert metrics(at)["Aggregate tok/s"] != before


def test_picking_hardware_drops_that_kinds_overrides():
    at = open_page("pages/1_Roofline.py", scenario="seed-3b-4090")
    at.selectbox(key="w_hardware").set_value("h100-sxm").run()
    assert at.query_params["hardware"] in ("h100-sxm", ["h100-sxm"])
    assert "hardware.hbm_bandwidth_tb_s" not in at.query_params


def test_picking_a_scenario_resets_the_overrides():
    at = open_page("pages/1_Roofline.py", scenario="seed-3b-4090", batch="4")
    at.selectbox(key="w_scenario").set_value("llama-8b-1xh100").run()
    assert {k: at.query_params[k] for k in at.query_params} in (
        {"scenario": "llama-8b-1xh100"},
        {"scenario": ["llama-8b-1xh100"]},
    )


def test_share_link_reproduces_the_view():
    at = open_page("pages/1_Roofline.py", scenario="seed-3b-4090", weights_dtype="int4")
    link = at.sidebar.code[0].value
    assert link.endswith("/Roofline?scenario=seed-3b-4090&weights_dtype=int4")
