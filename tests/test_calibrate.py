"""Calibration recovers known parameters from synthetic noisy data and refuses what the data
cannot identify (SPEC 4.5). Synthetic points come from the model itself with known values, then
noise; the fit must find the values again within its own stated uncertainty."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model import decode
from model.calibrate import calibrate, model_values
from model.cold_start import cold_start
from model.errors import ScenarioError
from model.overrides import resolve
from model.readers import importers
from model.readers.measurements import Dataset
from model.request import batch_e2e_s, request_figures
from whatif.cli import main

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "tests" / "data" / "bench"

BASE = {"hardware": "h100-sxm", "model": "llama-3.1-8b", "gpus": 1, "weights_dtype": "bf16"}
BATCHES = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256])


def scenario(**extra):
    s, _ = resolve({**BASE, **extra})
    return s


def sweep_rows(s, batches, noise=0.0, seed=0, graphs=None):
    t = decode.sweep(s, batches)["t_step_s"] * 1000
    t = t * (1 + noise * np.random.default_rng(seed).standard_normal(len(t)))
    rows = [{"batch": int(b), "step_ms": float(v)} for b, v in zip(batches, t, strict=True)]
    for r in rows:
        if graphs is not None:
            r["cuda_graphs"] = graphs
    return rows


def decode_ds(rows, name="sweep.csv"):
    return Dataset(name, "decode_csv", "decode", rows=rows)


def test_decode_sweep_recovers_bandwidth_and_host_work_within_its_uncertainty():
    truth = scenario(bw_efficiency=0.62, host_ms=2.7)
    rows = sweep_rows(truth, BATCHES, noise=0.02, seed=1)
    cal = calibrate(scenario(), [decode_ds(rows)])
    bw, host = cal.fits["bw_efficiency"], cal.fits["host_ms"]
    assert abs(bw.value - 0.62) <= 3 * bw.uncertainty
    assert abs(host.value - 2.7) <= 3 * host.uncertainty
    assert bw.uncertainty < 0.05 and host.uncertainty < 0.5
    assert bw.points == 9 and bw.r2 > 0.99
    out = cal.to_json()
    # four significant digits: what a measurement supports, and short in a link
    assert out["keys"] == {
        "bw_efficiency": float(f"{bw.value:.4g}"),
        "host_ms": float(f"{host.value:.4g}"),
    }
    assert out["median_abs_error_pct"]["after"] < 2.5 < out["median_abs_error_pct"]["before"]
    assert out["refused"] == {}


def test_applying_the_keys_reproduces_the_points_it_was_fitted_to():
    truth = scenario(bw_efficiency=0.55, host_ms=4.0)
    rows = sweep_rows(truth, BATCHES)  # noiseless: the fit is exact
    cal = calibrate(scenario(), [decode_ds(rows)])
    applied = scenario(**cal.keys)
    model = model_values(applied, cal.points)
    measured = np.array([p.measured for p in cal.points])
    assert np.allclose(model, measured, rtol=2e-3)


def test_one_batch_size_cannot_separate_bandwidth_from_host_work():
    rows = sweep_rows(scenario(bw_efficiency=0.6, host_ms=3.0), np.array([8, 8, 8]), 0.01)
    cal = calibrate(scenario(), [decode_ds(rows)])
    assert "host_ms" in cal.refused and "one batch size (8)" in cal.refused["host_ms"]
    assert "host_ms" not in cal.keys
    fit = cal.fits["bw_efficiency"]  # fitted with host_ms held, and says so
    assert "held at" in fit.note


def test_eager_and_graph_steps_identify_the_launch_cost():
    truth = scenario(bw_efficiency=0.7, host_ms=2.0, launch_us=9.0)
    b = np.array([1, 4, 16, 64])
    rows = sweep_rows(truth.model_copy(update={"cuda_graphs": "none"}), b, graphs="none")
    rows += sweep_rows(
        truth.model_copy(update={"cuda_graphs": "full_and_piecewise"}),
        b,
        graphs="full_and_piecewise",
    )
    cal = calibrate(scenario(), [decode_ds(rows)])
    assert cal.fits["launch_us"].value == pytest.approx(9.0, rel=0.01)
    assert cal.fits["host_ms"].value == pytest.approx(2.0, rel=0.02)


def test_launch_micro_benchmark_slope_is_tau():
    k = np.array([10, 100, 1000, 10, 100, 1000])
    rng = np.random.default_rng(3)
    eager = k * 4.5e-3 + 0.01 + rng.normal(0, 0.002, len(k))  # ms: 4.5 µs per launch
    rows = [
        {"kernels": int(n), "eager_ms": float(e), "graph_ms": 0.01 + n * 0.0008}
        for n, e in zip(k, eager, strict=True)
    ]
    cal = calibrate(scenario(), [Dataset("launch.csv", "launch_csv", "launch", rows=rows)])
    fit = cal.fits["launch_us"]
    assert abs(fit.value - (4.5 - 0.8)) <= 3 * fit.uncertainty + 0.05
    assert "intercept" in fit.note


def test_ttft_at_concurrency_one_gives_prefill_efficiency_and_loaded_runs_are_not_fitted():
    base = scenario()
    truth = base.model_copy(update={"prefill_efficiency": 0.45})
    rows = []
    for p in (2048, 4096, 8192):
        t = request_figures(truth.model_copy(update={"prompt_tokens": p}))["ttft_ms"]
        rows.append({"concurrency": 1, "prompt_tokens": p, "output_tokens": 64, "ttft_ms": t})
    rows.append({"concurrency": 16, "prompt_tokens": 2048, "output_tokens": 64, "ttft_ms": 900.0})
    cal = calibrate(base, [Dataset("req.csv", "request_csv", "request", rows=rows)])
    assert cal.fits["prefill_efficiency"].value == pytest.approx(0.45, rel=0.01)
    loaded = [p for p in cal.points if p.x == 16]
    assert loaded and not loaded[0].fitted and "queueing" in loaded[0].note


def test_serving_run_without_a_stated_concurrency_is_not_placed():
    ds = Dataset(
        "run.json",
        "vllm_bench_json",
        "serving",
        figures={"mean_ttft_ms": 120.0, "mean_tpot_ms": 20.0},
        conditions={"request_rate": "inf"},
    )
    with pytest.raises(ScenarioError):
        calibrate(scenario(), [ds])


def test_start_up_log_gives_compile_capture_and_read_rate():
    s = scenario()
    log = Dataset(
        "server.log",
        "vllm_log",
        "startup_log",
        figures={
            "loading_weights_s": 4.0,
            "model_loading_gib": 14.99,
            "torch_compile_total_s": 31.5,
            "graph_capture_s": 17.0,
            "graphs_captured": 67,
        },
        extra={"ranks": 1},
    )
    cal = calibrate(s, [log])
    assert cal.fits["compile_s"].value == pytest.approx(31.5)
    assert cal.fits["capture_s_per_graph"].value == pytest.approx(17 / 67)
    # 14.99 GiB in 4 s less one rank's host→device copy at the H100's h2d_gb_s
    t_h2d = 14.99 * 2**30 / (s.hardware.h2d_gb_s * 1e9)
    assert cal.fits["storage_gb_s"].value == pytest.approx(14.99 * 2**30 / (4.0 - t_h2d) / 1e9)
    applied = scenario(**cal.keys)
    cs = cold_start(applied)
    assert cs["compile_s"] == pytest.approx(31.5)
    assert cs["read_gb_s"] == pytest.approx(cal.fits["storage_gb_s"].value, rel=1e-3)


def test_warm_cache_log_calibrates_the_cached_compile_only():
    log = Dataset(
        "warm.log",
        "vllm_log",
        "startup_log",
        figures={"torch_compile_total_s": 7.5, "compile_cache_hit": True},
    )
    cal = calibrate(scenario(), [log])
    assert "compile_s" not in cal.fits
    assert cal.fits["compile_cached_s"].value == pytest.approx(7.5)


def test_cold_start_items_are_read_off_less_the_engines_sub_lines():
    s = scenario()
    sub = cold_start(s)["sublines"]
    items = {"item1_s": 3.0, "item2_s": 7.0, "item3_s": 12.0}
    ds = Dataset("items.csv", "cold_start_csv", "cold_start", figures=items)
    cal = calibrate(s, [ds])
    assert cal.fits["process_init_s"].value == pytest.approx(3.0)
    assert cal.fits["allocator_s"].value == pytest.approx(12.0 - sum(sub["allocator_s"].values()))
    assert cold_start(scenario(**cal.keys))["allocator_s"] == pytest.approx(12.0)


def test_capture_kit_bandwidth_and_h2d():
    bw = Dataset(
        "bandwidth.csv",
        "bandwidth_csv",
        "bandwidth",
        rows=[{"batch": b, "bytes": 1e9, "ms": 1e9 / (2.9e12) * 1e3} for b in (1, 2, 4)],
    )
    h2d = Dataset(
        "h2d.csv",
        "h2d_csv",
        "h2d",
        rows=[
            {"mode": "pinned", "bytes": 1e9, "ms": 1e9 / 53e9 * 1e3},
            {"mode": "pageable", "bytes": 1e9, "ms": 1e9 / 12e9 * 1e3},
        ],
    )
    s = scenario()
    cal = calibrate(s, [bw, h2d])
    assert cal.fits["bw_efficiency"].value == pytest.approx(
        2900 / (s.hardware.hbm_bandwidth_tb_s * 1000)
    )
    assert cal.fits["hardware.h2d_gb_s"].value == pytest.approx(53.0)
    assert scenario(**cal.keys).hardware.h2d_gb_s == pytest.approx(53.0)


def test_steps_faster_than_the_datasheet_peak_are_refused_not_clipped_to_100_percent():
    rows = sweep_rows(scenario(bw_efficiency=1.0, host_ms=0.0), BATCHES)
    for r in rows:
        r["step_ms"] *= 0.5  # twice as fast as the peak allows: another GPU or model
    cal = calibrate(scenario(), [decode_ds(rows)])
    assert "bw_efficiency" not in cal.keys
    assert "faster than the model allows" in cal.refused["bw_efficiency"]


def test_no_usable_point_is_an_error_not_an_empty_fit():
    with pytest.raises(ScenarioError, match="none of the files"):
        calibrate(scenario(), [Dataset("x.txt", "vllm_throughput_stdout", "throughput")])


@settings(max_examples=25, deadline=None)
@given(eff=st.floats(0.15, 0.98), host=st.floats(0.0, 12.0))
def test_noiseless_sweeps_are_recovered(eff, host):
    truth = scenario(bw_efficiency=eff, host_ms=host)
    cal = calibrate(scenario(), [decode_ds(sweep_rows(truth, BATCHES))])
    assert cal.fits["bw_efficiency"].value == pytest.approx(eff, rel=5e-3, abs=1e-3)
    assert cal.fits["host_ms"].value == pytest.approx(host, rel=5e-3, abs=2e-2)


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.integers(1, 10**6),
            st.floats(1e-6, 1e6),
            st.sampled_from([None, "none", "full_and_piecewise", "piecewise"]),
            st.one_of(st.none(), st.integers(0, 10**6)),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_any_decode_table_gives_a_fit_or_a_refusal_never_a_crash(rows):
    data = []
    for b, t, g, ctx in rows:
        r = {"batch": b, "step_ms": t}
        if g is not None:
            r["cuda_graphs"] = g
        if ctx is not None:
            r["context_tokens"] = ctx
        data.append(r)
    cal = calibrate(scenario(), [decode_ds(data)])
    out = cal.to_json()
    for key, value in out["keys"].items():
        assert np.isfinite(value), key
        applied = scenario(**{key: value})  # every fitted key is a valid scenario value
        assert applied is not None
    assert set(out["keys"]).isdisjoint(out["refused"])


def test_latency_benchmark_runs_place_a_batch_and_calibrate_decode():
    truth = scenario(bw_efficiency=0.5, host_ms=2.0)
    rows = []
    for b in (1, 8, 64):
        v = truth.model_copy(
            update={
                "batch": b,
                "prompt_tokens": 128,
                "output_tokens": 128,
                "context_tokens": 192,
            }
        )
        rows.append(
            {
                "bench": "latency",
                "batch_size": b,
                "input_len": 128,
                "output_len": 128,
                "avg_latency_s": batch_e2e_s(v, b),
            }
        )
    rows.append({"bench": "latency", "avg_latency_s": 1.0})  # no conditions: not placed
    ds = Dataset("lat.txt", "vllm_latency_stdout", "latency", rows=rows)
    cal = calibrate(scenario(), [ds])
    assert cal.fits["bw_efficiency"].value == pytest.approx(0.5, rel=0.01)
    assert cal.fits["host_ms"].value == pytest.approx(2.0, rel=0.03)
    assert cal.fits["host_ms"].data == "batch latency"
    assert any("does not state its batch size" in n for n in cal.notes)


def test_batches_on_the_compute_roof_also_fit_flops_efficiency():
    # weights only (no KV reads, as the seeds count): large batches reach the compute roof
    truth = scenario(bw_efficiency=0.7, host_ms=1.5, flops_efficiency=0.35, context_tokens=0)
    b = np.array([1, 4, 16, 64, 256, 1024, 2048, 4096])
    rows = sweep_rows(truth, b, noise=0.01, seed=4)
    for r in rows:
        r["context_tokens"] = 0
    cal = calibrate(scenario(), [decode_ds(rows)])
    assert cal.fits["flops_efficiency"].value == pytest.approx(0.35, rel=0.05)
    assert cal.fits["bw_efficiency"].value == pytest.approx(0.7, rel=0.05)


def test_a_weak_parameter_is_held_and_the_others_are_fitted_again_without_it():
    # small batches only: the launch cost (eager vs graphs) is clear, host work barely moves
    truth = scenario(bw_efficiency=0.7, host_ms=0.0, launch_us=7.0)
    b = np.array([1, 2])
    rows = sweep_rows(truth.model_copy(update={"cuda_graphs": "none"}), b, 0.03, 5, "none")
    rows += sweep_rows(truth, b, 0.03, 6, "full_and_piecewise")
    cal = calibrate(scenario(), [decode_ds(rows)])
    for key, fit in cal.fits.items():
        assert key not in cal.refused
        for held in cal.refused:
            assert f"{held} held at" in fit.note


def test_a_crafted_latency_run_is_refused_by_name_not_computed():
    # a pasted benchmark_latency run of a million prompts of 10^12 tokens: refused by name
    from model.readers.importers import import_text

    text = (
        "python benchmarks/benchmark_latency.py --model x --batch-size 1000000 "
        "--input-len 1000000000000 --output-len 10\nAvg latency: 1.5 seconds\n"
    )
    ds = import_text(text, "lat.txt")
    with pytest.raises(ScenarioError, match="prompt length .* outside what a scenario accepts"):
        calibrate(scenario(), [ds])


def test_calibrate_flags_the_mismatch_and_refuses_a_one_point_fit(capsys):
    s = resolve([])[0]
    ds = importers.import_file("serve_new.json", (BENCH / "serve_new.json").read_bytes())
    out = calibrate(s, ds if isinstance(ds, list) else [ds]).to_json()
    entry = out["data_sets"][0]
    assert entry["set_scenario"] == {"model": "qwen3-8b", "hardware": "h200", "gpus": "8"}
    assert "bw_efficiency" not in out["fit"]  # one TPOT point: not offered
    assert "1 point(s) for 1 parameter(s)" in out["refused"]["bw_efficiency"]
    assert main(["calibrate", str(BENCH / "serve_new.json")]) == 0
    text = capsys.readouterr().out
    assert "warning: " in text and "--set model=qwen3-8b --set hardware=h200" in text


def test_an_exact_fits_standard_error_is_reported_as_zero_not_rounding_noise():
    """The launch example's three points lie on a line: its s.e. came out as 2.5e-15 µs and the
    Measurements table showed "0.000000000000002". Reported as 0; a real one is kept."""
    from model.readers.examples import load_example

    s = resolve([("scenario", "seed-3b-4090")])[0]
    cal = calibrate(s, [load_example("launch-rtx5070ti")])
    assert cal.fits["launch_us"].uncertainty < 1e-12  # what the arithmetic gave
    assert cal.to_json()["fit"]["launch_us"]["uncertainty"] == 0.0
    noisy = calibrate(s, [load_example("launch-rtx5070ti")])
    fit = noisy.fits["launch_us"]
    fit.uncertainty = 0.25
    assert noisy.to_json()["fit"]["launch_us"]["uncertainty"] == 0.25
