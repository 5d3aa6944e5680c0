"""AppTest of the Measurements page: empty, examples loaded, a fit applied and reset, bad files
(SPEC 4.5 and 6). The uploader itself is driven in the browser suite; here files arrive through
the same session functions the uploader's callback calls."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from model.examples import examples
from model.presets import scenario_names

ROOT = Path(__file__).resolve().parent.parent
PAGE = str(ROOT / "pages" / "5_Measurements.py")


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def fresh(**query) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    return run(at)


def button(at, label):
    found = [b for b in at.button if b.label == label]
    assert found, [b.label for b in at.button]
    return found[0]


def metrics(at):
    return {m.label: m.value for m in at.metric}


def test_empty_page_explains_what_to_do_and_offers_templates_and_examples():
    at = fresh()
    assert metrics(at)["Data sets"] == "0"
    assert any("No measurements yet" in i.value for i in at.info)
    labels = [b.label for b in at.button]
    assert labels.count("Load") == len(examples())


@pytest.mark.parametrize("example_id", list(examples()))
def test_every_example_loads_and_is_overlaid(example_id):
    at = fresh()
    button_key = f"w_meas_ex_{example_id}"
    [b for b in at.button if b.key == button_key][0].click()
    run(at)
    shown = metrics(at)
    assert shown["Data sets"] == "1"
    assert int(shown["Points"]) >= 1
    assert not at.error, [e.value for e in at.error]


def test_gpt_oss_example_fit_applies_to_the_scenario_and_reset_drops_it():
    at = fresh(hardware="h100-sxm", gpus="8", model="gpt-oss-120b", weights_dtype="fp4")
    [b for b in at.button if b.key == "w_meas_ex_gptoss-h100x8-tpot"][0].click()
    run(at)
    before = metrics(at)
    after_fit = float(before["Error, with the fit"].rstrip(" %"))
    assert after_fit < float(before["Error, as configured"].rstrip(" %"))
    button(at, "Apply the fit").click()
    run(at)
    q = at.query_params
    assert "bw_efficiency" in q and "host_ms" in q
    listed = q["calibrated"] if isinstance(q["calibrated"], str) else q["calibrated"][0]
    assert set(listed.split(",")) >= {"bw_efficiency", "host_ms"}
    assert any("calibrated to measurements" in s.value for s in at.success)
    # the model is now the fit: its error is what the fit reached
    now = metrics(at)
    assert float(now["Error, as configured"].rstrip(" %")) == pytest.approx(after_fit, abs=0.2)
    button(at, "Reset the calibration").click()
    run(at)
    assert "calibrated" not in at.query_params and "bw_efficiency" not in at.query_params


def test_landing_page_says_when_a_calibration_is_applied():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["bw_efficiency"] = "0.61"
    at.query_params["calibrated"] = "bw_efficiency"
    run(at)
    shown = [i.value.replace("\\", "").replace("\u2060", "") for i in at.info]
    assert any("Calibrated to measurements: bandwidth efficiency = 0.61" in t for t in shown), shown


def test_a_bad_calibrated_key_in_a_link_is_named_and_the_page_still_works():
    at = fresh(calibrated="rm -rf")
    assert any("calibrated" in w.value for w in at.warning)
    assert metrics(at)["Data sets"] == "0"


@pytest.mark.parametrize(
    "name, data, needle",
    [
        ("empty.csv", b"", "empty"),
        ("header.csv", b"batch,step_ms\n", "header only"),
        ("bin.log", b"\x00\x01\x02binary", "binary"),
        ("notbench.json", b'{"a": 1}', "not a benchmark result"),
        ("nothing.log", b"hello\nworld\n", "no vLLM start-up timing line"),
    ],
)
def test_bad_files_are_refused_with_a_message_naming_the_file(name, data, needle):
    from model.errors import ScenarioError
    from model.importers import import_file

    with pytest.raises(ScenarioError) as err:
        import_file(name, data)
    assert err.value.key == name and needle in err.value.message


def test_pasted_text_without_measurements_is_named_and_the_page_keeps_working():
    at = fresh()
    at.text_area(key="w_meas_paste").input("hello\nthis is not a log\n")
    button(at, "Read pasted text").click()
    run(at)
    shown = [e.value.replace("\\", "") for e in at.error]
    assert any("pasted-1.txt" in t and "no vLLM start-up timing line" in t for t in shown), shown
    assert metrics(at)["Data sets"] == "0"
    [b for b in at.button if b.key == "w_meas_ex_launch-rtx5070ti"][0].click()
    run(at)
    assert metrics(at)["Data sets"] == "1" and not at.error


@pytest.mark.parametrize(
    "example_id, page, needle",
    [
        ("gptoss-h100x8-tpot", "pages/1_Roofline.py", "Diamonds: 11 measured steps"),
        ("vllm-085-warm-cache-log", "pages/3_Cold_start.py", "Grey: the items measured"),
    ],
)
def test_uploaded_points_appear_on_the_lens_pages_own_charts(example_id, page, needle):
    # AppTest resolves other pages from the main script: start at the landing page
    at = run(AppTest.from_file(str(ROOT / "app.py"), default_timeout=60))
    at.switch_page("pages/5_Measurements.py")
    run(at)
    [b for b in at.button if b.key == f"w_meas_ex_{example_id}"][0].click()
    run(at)
    at.switch_page(page)
    run(at)
    assert any(needle in c.value for c in at.caption), [c.value for c in at.caption]


@pytest.mark.parametrize("name", scenario_names())
def test_the_page_runs_every_named_scenario_with_an_example_loaded(name):
    at = fresh(scenario=name)
    [b for b in at.button if b.key == "w_meas_ex_launch-rtx5070ti"][0].click()
    run(at)
    assert metrics(at)["Data sets"] == "1"
    assert not at.error, [e.value for e in at.error]
