"""Issue 40, what a new user tripped on: a measurement file of another model or GPU is
flagged with the settings it states (page and CLI), a one-point fit is refused, and benchmark
files that no fit uses say where they are shown instead."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from model import calibrate
from model.cli import main
from model.overrides import resolve
from model.readers import importers
from model.readers.setup import match_gpu, match_model, setup_mismatch, stated_setup

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "tests" / "data" / "bench"


@pytest.mark.parametrize(
    "name, preset",
    [
        ("meta-llama/Llama-3.2-3B-Instruct", "llama-3.2-3b"),
        ("meta-llama/Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b"),
        ("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", "llama-3.3-70b"),
        ("Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"),
        ("Qwen/Qwen3-8B", "qwen3-8b"),
        ("openai/gpt-oss-120b", "gpt-oss-120b"),
        ("deepseek-ai/DeepSeek-R1", "deepseek-r1"),
        ("google/gemma-3-27b-it", "gemma-3-27b"),
        ("facebook/opt-125m", None),
        ("", None),
    ],
)
def test_a_stated_model_is_matched_to_its_preset(name, preset):
    assert match_model(name) == preset


@pytest.mark.parametrize(
    "label, preset, count",
    [
        ("8xNVIDIA_H200", "h200", 8),
        ("NVIDIA H100 80GB HBM3", "h100-sxm", None),
        ("NVIDIA H100 PCIe", "h100-pcie", None),
        ("NVIDIA L40S", "l40s", None),
        ("NVIDIA L4", "l4", None),
        ("NVIDIA A100-SXM4-40GB", "a100-40gb", None),
        ("AMD Instinct MI300X", "mi300x", None),
        ("2x NVIDIA GeForce RTX 4090", "rtx-4090", 2),
        ("a toaster", None, None),
    ],
)
def test_a_stated_gpu_is_matched_to_its_preset(label, preset, count):
    assert match_gpu(label) == (preset, count)


def test_a_file_of_another_model_and_gpu_says_what_to_set():
    s = resolve([])[0].effective()  # the default: Llama 3.1 70B on 4 H100s
    cond = {"model": "meta-llama/Llama-3.2-3B-Instruct", "gpu": "1xNVIDIA_L40S"}
    why, keys = setup_mismatch(s, cond)
    assert keys == [("model", "llama-3.2-3b"), ("hardware", "l40s"), ("gpus", "1")]
    assert len(why) == 3 and "Llama-3.2-3B" in why[0] and "L40S" in why[1]
    same = resolve([(k, v) for k, v in keys])[0].effective()
    assert setup_mismatch(same, cond) == ([], [])
    assert stated_setup({"tensor_parallel_size": 2})["gpus"] == 2
    unknown, none = setup_mismatch(s, {"model": "facebook/opt-125m"})
    assert "matches no model preset" in unknown[0] and none == []


def test_calibrate_flags_the_mismatch_and_refuses_a_one_point_fit(capsys):
    s = resolve([])[0].effective()
    ds = importers.import_file("serve_new.json", (BENCH / "serve_new.json").read_bytes())
    out = calibrate.calibrate(s, ds if isinstance(ds, list) else [ds]).to_json()
    entry = out["data_sets"][0]
    assert entry["set_scenario"] == {"model": "qwen3-8b", "hardware": "h200", "gpus": "8"}
    assert "bw_efficiency" not in out["fit"]  # one TPOT point: not offered
    assert "1 point(s) for 1 parameter(s)" in out["refused"]["bw_efficiency"]
    assert main(["calibrate", str(BENCH / "serve_new.json")]) == 0
    text = capsys.readouterr().out
    assert "warning: " in text and "--set model=qwen3-8b --set hardware=h200" in text


def test_serving_benchmarks_no_fit_uses_say_where_they_are_shown():
    s = resolve([])[0].effective()
    ds = importers.import_file("serve_new.json", (BENCH / "serve_new.json").read_bytes())
    ds = ds[0] if isinstance(ds, list) else ds
    ds.figures, ds.rows = {}, []  # a serving benchmark with nothing a fit uses
    ds.conditions = {"max_concurrency": 64}
    with pytest.raises(calibrate.ScenarioError) as err:
        calibrate.calibrate(s, [ds])
    assert "Serving page's latency-against-rate chart" in err.value.message


def test_the_measurements_page_offers_to_set_the_scenario_from_the_file(tmp_path, monkeypatch):
    import datastore

    monkeypatch.delenv(datastore.ENV_URL, raising=False)
    monkeypatch.setenv(datastore.ENV_DIR, str(tmp_path / "store"))
    at = AppTest.from_file(str(ROOT / "pages" / "6_Measurements.py"), default_timeout=120)
    at.run()
    at.text_area(key="w_meas_paste").input((BENCH / "serve_new.json").read_text())
    [b for b in at.button if b.label == "Read pasted text"][0].click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    warned = " ".join(w.value for w in at.warning)
    assert "Qwen" in warned and "H200" in warned
    assert [b for b in at.button if b.key == "w_meas_setup_top_0"]  # beside the warning too
    [b for b in at.button if b.label == "Set the scenario to what this file states"][0].click()
    at.run()
    assert not at.exception
    params = {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert params.get("model") == "qwen3-8b" and params.get("hardware") == "h200"
    assert params.get("gpus") == "8"


def test_every_eval_has_the_serving_sections(capsys):
    assert main(["eval", "--scenario", "seed-3b-4090", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert {"serving", "capacity"} <= set(got) and got["scenario"] == "seed-3b-4090"


def _cold(**query) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / "4_Cold_start.py"), default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _params(at) -> dict:
    return {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}


def test_cold_start_applies_the_optimised_settings_in_one_click():
    """Issue 40, item 8: the button sets what the Optimised figure assumes, and the page's
    Time to ready becomes that figure."""
    at = _cold(concurrency="2")
    optimised = next(m.value for m in at.metric if m.label == "Optimised")
    at.button(key="w_apply_optimised").click().run()
    assert not at.exception
    p = _params(at)
    assert p["loader"] == "runai_streamer" and p["compile_cache"] == "true"
    assert "concurrency" not in p and p["capture_sizes"].startswith("1,2,4,8")
    assert next(m.value for m in at.metric if m.label == "Time to ready") == optimised
    assert at.button(key="w_apply_optimised").disabled  # nothing left to apply


def test_cold_start_has_the_capture_size_lever_among_its_knobs():
    at = _cold()
    before = next(m.value for m in at.metric if m.label == "5 Graphs + JIT")
    at.selectbox(key="w_capture_lever").set_value("bounded (1 to 64)").run()
    assert not at.exception
    assert _params(at)["capture_sizes"] == "1,2,4,8,16,24,32,64"
    assert next(m.value for m in at.metric if m.label == "5 Graphs + JIT") != before


def test_labels_read_as_a_reader_reads_them():
    """Issue 40, item 9: no "batch 1" on lenses that ignore the batch, a fraction's delta in
    percentage points, figures in words, "1 replica"."""
    from ui.compare import delta_text
    from ui.export import make_context
    from ui.report import _value_text
    from ui.text import figure_words

    s = resolve([])[0].effective()
    assert "batch" not in make_context(s, "serving", "x").label
    assert "batch" not in make_context(s, "cold_start", "x").label
    assert "batch 1" in make_context(s, "roofline", "x").label
    assert delta_text(0.5, 0.45, "fraction") == "+5.0 pp"
    assert delta_text(0.1, 0.1, "fraction") is None
    assert figure_words("p99_ttft_ms") == "p99 TTFT [ms]"
    assert figure_words("peak_hour.replicas_needed") == "peak hour: replicas needed"
    assert figure_words("hbm_bandwidth_tb_s") == "HBM bandwidth [TB/s]"
    assert _value_text(1, "replicas") == "1 replica" and _value_text(3, "replicas") == "3 replicas"


def test_the_pareto_view_has_a_line_per_group_a_read_off_and_a_filter():
    """Issue 40, item 5."""
    from model import serving
    from ui import serving_charts
    from ui.lens import View  # noqa: F401 - the lens's own view type
    from ui.lenses.serving import SERVING, pareto_groups

    s = resolve([("seed", "5")])[0].effective()
    points = serving.pareto(s)
    groups = pareto_groups(points)
    fig = serving_charts.pareto_figure(points, {"gpus": 4, "weights_dtype": "fp8",
                                                "max_num_seqs": 1024}, 25.0)  # fmt: skip
    lines = [d for d in fig.spec["data"] if d["name"] in groups]
    assert len(lines) == len(groups) and all("lines" in d["mode"] for d in lines)
    assert fig.spec["layout"]["xaxis"]["type"] == "log"
    assert fig.spec["layout"]["xaxis"]["dtick"] == 1
    best = serving.pareto_best(points, 25.0)
    fast = [p for p in points if p["tokens_per_s_per_user"] >= 25.0]
    assert best["tokens_per_s_per_gpu"] == max(p["tokens_per_s_per_gpu"] for p in fast)
    assert serving.pareto_best(points, 1e9) is None
    v = SERVING.view(s, serving.serving_lens(s))
    note = SERVING.texts["pareto_note"](v)
    assert "same for one replica or several" in note and f"{25.0:.3g} tok/s per user" in note
    at = AppTest.from_file(str(ROOT / "pages" / "2_Serving.py"), default_timeout=120)
    at.query_params["tab"] = "Pareto front"
    at.session_state["w_pareto_show"] = [groups[0]]
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.multiselect(key="w_pareto_show").value == [groups[0]]
