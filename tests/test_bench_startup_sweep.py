"""``vllm bench startup`` and ``vllm bench sweep`` results come back (issue 43, section 3).

The inputs below are built from the format strings in vLLM's sources (0.13-0.34:
``vllm/benchmarks/startup.py``, ``vllm/benchmarks/sweep/serve.py``; transcribed in
docs/research/issue-43-bench-formats.md), not measured runs."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from model.calibrate import calibrate, points_of
from model.errors import ScenarioError
from model.overrides import resolve
from model.readers import importers

ROOT = Path(__file__).resolve().parent.parent
STARTUP = {
    "avg_cold_startup_time": 58.4,
    "cold_startup_times": [58.9, 57.9],
    "cold_startup_percentiles": {"10": 58.0, "50": 58.4, "99": 58.89},
    "avg_cold_compilation_time": 31.75,
    "cold_compilation_times": [32.1, 31.4],
    "cold_compilation_percentiles": {"10": 31.47, "50": 31.75, "99": 32.093},
    "avg_warm_startup_time": 24.1,
    "warm_startup_times": [24.2, 24.0],
    "warm_startup_percentiles": {"10": 24.02, "50": 24.1, "99": 24.198},
    "avg_warm_compilation_time": 6.85,
    "warm_compilation_times": [6.9, 6.8],
    "warm_compilation_percentiles": {"10": 6.81, "50": 6.85, "99": 6.899},
}

STDOUT = """Measuring cold startup time...

============================================================
STARTUP TIME BENCHMARK RESULTS
============================================================

COLD STARTUP:
{label}: 58.40 seconds
Avg compilation time: 31.75 seconds
Startup time percentiles:
  10%: 57.12 seconds
  99%: 59.51 seconds

WARM STARTUP:
{label}: 24.10 seconds
Avg compilation time: 6.85 seconds
============================================================
"""


def test_the_startup_json_is_read_in_seconds():
    ds = importers.import_file("startup.json", json.dumps(STARTUP).encode())
    assert ds.kind == "startup_bench" and ds.format == "vllm_bench_startup_json"
    assert ds.figures == {
        "cold_startup_s": 58.4,
        "warm_startup_s": 24.1,
        "cold_compile_s": 31.75,
        "warm_compile_s": 6.85,
        "cold_iterations": 2,
        "warm_iterations": 2,
    }


@pytest.mark.parametrize("label", ["Avg total startup time", "Avg startup time"])
def test_the_startup_stdout_of_either_release_is_read(label):
    ds = importers.import_file("startup.txt", STDOUT.format(label=label).encode())
    assert ds.format == "vllm_bench_startup_stdout"
    assert ds.figures == {
        "cold_startup_s": 58.4,
        "cold_compile_s": 31.75,
        "warm_startup_s": 24.1,
        "warm_compile_s": 6.85,
    }


def test_a_startup_result_calibrates_the_compile_times():
    ds = importers.import_file("startup.json", json.dumps(STARTUP).encode())
    pts, notes = points_of(ds)
    assert [(p.quantity, p.measured, p.cond["cached"]) for p in pts] == [
        ("compile_s", 31.75, False),
        ("compile_s", 6.85, True),
    ]
    assert any("shown as read" in n for n in notes)
    s = resolve([("model", "llama-3.1-8b"), ("gpus", "1")], strict=True)[0]
    fit = calibrate(s, [ds]).to_json()
    assert fit["keys"].get("compile_s") == pytest.approx(31.75, rel=0.05)
    assert fit["keys"].get("compile_cached_s") == pytest.approx(6.85, rel=0.05)


def test_an_eager_startup_run_has_no_compile_point():
    eager = {**STARTUP, "avg_cold_compilation_time": 0.0, "avg_warm_compilation_time": 0.0}
    pts, _ = points_of(importers.import_file("startup.json", json.dumps(eager).encode()))
    assert pts == []


@pytest.mark.parametrize(
    "bad",
    [
        {"avg_cold_startup_time": "soon"},
        {"avg_cold_startup_time": -3, "avg_warm_startup_time": None},
    ],
)
def test_a_startup_json_with_nothing_usable_is_refused_by_name(bad):
    with pytest.raises(ScenarioError) as err:
        importers.import_file("startup.json", json.dumps(bad).encode())
    assert err.value.key == "startup.json" and "startup" in err.value.message


def _sweep_runs() -> list[dict]:
    base = json.loads((ROOT / "tests" / "data" / "bench" / "serve_new.json").read_text())
    out = []
    for i, conc in enumerate((8, 32)):
        run = {k: v for k, v in base.items() if not isinstance(v, list | dict)}
        run.update(max_concurrency=conc, run_number=i, max_num_seqs=64)
        run["output_throughput"] = base["output_throughput"] * (1 + i)
        out.append(run)
    return out


def test_a_sweep_summary_csv_is_one_serve_result_a_row():
    runs = _sweep_runs()
    text = pd.DataFrame.from_records(runs).to_csv()  # as vllm bench sweep writes it
    ds = importers.import_file("summary.csv", text.encode())
    assert ds.format == "vllm_bench_sweep_csv" and ds.kind == "serving"
    assert len(ds.rows) == 2
    got = [r["output_throughput"] for r in ds.rows]
    assert got == pytest.approx([r["output_throughput"] for r in runs])
    assert [r["max_concurrency"] for r in ds.rows] == [8, 32]


def test_a_sweep_summary_json_is_read_as_its_runs():
    ds = importers.import_file("summary.json", json.dumps(_sweep_runs()).encode())
    assert ds.kind == "serving" and len(ds.rows) == 2


def test_sweep_runs_are_pareto_points_as_plot_pareto_places_them():
    from model.serving import benchmark_pareto_points

    runs = _sweep_runs()
    runs[1]["tensor_parallel_size"] = 2
    ds = importers.import_file("summary.json", json.dumps(runs).encode())
    pts = benchmark_pareto_points([ds], replica_gpus=4)
    assert len(pts) == 2
    a, b = pts
    assert a["tokens_per_s_per_user"] == pytest.approx(runs[0]["output_throughput"] / 8)
    assert a["tokens_per_s_per_gpu"] == pytest.approx(runs[0]["output_throughput"] / 4)
    assert "the scenario's" in a["label"]
    assert b["tokens_per_s_per_gpu"] == pytest.approx(runs[1]["output_throughput"] / 2)
    assert "(its)" in b["label"]


def test_the_serving_pareto_view_draws_uploaded_runs():
    from ui import measure_data
    from ui.lenses.serving import _pareto_runs_note

    ds = importers.import_file("summary.json", json.dumps(_sweep_runs()).encode())

    class _V:
        s = resolve([("model", "llama-3.1-8b"), ("gpus", "1")], strict=True)[0]
        r = {"fits": True}

    original = measure_data.datasets
    measure_data.datasets = lambda: [ds]
    try:
        assert "Diamonds: 2 serving runs" in _pareto_runs_note(_V())
    finally:
        measure_data.datasets = original
