"""The scenario's bounds mean something: every numeric bound the scenario accepts evaluates,
subnormal and vanishing divisors are refused with the bound, every figure is finite at the
corners of the bounds (in the core, in ``whatif eval --json`` and on every page), and
``rate_scale`` has one bound that the traffic model takes."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from model.cold_start import cold_start_lens
from model.errors import ScenarioError
from model.evaluate import evaluate, launch_lens, roofline_lens, strict_figures
from model.overrides import resolve
from model.scenario import MAX_RATE_SCALE, Scenario
from tests.pages import open_page

ROOT = Path(__file__).resolve().parent.parent


def test_rate_scale_has_one_bound_that_the_traffic_model_takes():
    from model.economics import economics_lens

    top = resolve([("rate_scale", f"{MAX_RATE_SCALE:g}")], strict=True)[0]
    assert economics_lens(top)["figures"]["requests_per_day"] > 0
    with pytest.raises(ScenarioError) as err:
        resolve([("rate_scale", f"{MAX_RATE_SCALE * 1.0001:g}")], strict=True)
    assert err.value.key == "rate_scale"
    field = Scenario.model_fields["rate_scale"]
    assert {m.le for m in field.metadata if hasattr(m, "le")} == {MAX_RATE_SCALE}


@pytest.mark.parametrize(
    "page, query",
    [
        ("app.py", {"rate_scale": "10001"}),
        ("app.py", {"rate_scale": "10000"}),
        ("pages/5_Scale_to_zero.py", {"rate_scale": "20000"}),
        ("app.py", {"base.rate_scale": "10001"}),
        ("pages/7_Compare.py", {"vs": "rate_scale=10001"}),
        ("pages/7_Compare.py", {"vs": "rate_scale=10000"}),
    ],
)
def test_a_rate_scale_link_never_shows_an_exception(page, query):
    at = open_page(page, pairs=list(query.items()))
    assert at.metric or at.dataframe or at.table  # the rest of the page works


def test_every_numeric_bound_the_scenario_accepts_evaluates():
    """Each numeric scenario field at its lower and upper bound, one at a time: the whole core
    (every lens and the Compare figures) computes, or refuses with a ScenarioError naming a
    key, never another exception."""
    from model.evaluate import summary

    for name, field in Scenario.model_fields.items():
        bounds = [getattr(m, a, None) for m in field.metadata for a in ("ge", "le", "gt", "lt")]
        bounds = [b for b in bounds if isinstance(b, (int, float))]
        for value in bounds:
            try:
                s = resolve([(name, f"{value:g}")], strict=True)[0]
            except ScenarioError:
                continue  # a bound the other fields refuse together (a prompt past the context)
            try:
                summary(s)
            except ScenarioError as exc:
                assert exc.key, (name, value)


DIVISORS = [
    "bw_efficiency",
    "flops_efficiency",
    "launch_us",
    "weights_gb",
    "gpu_memory_utilization",
    "storage_gb_s",
    "stream_gb_s",
    "hardware.memory_gb",
    "hardware.hbm_bandwidth_tb_s",
    "hardware.peak_tflops.bf16",
    "hardware.h2d_gb_s",
    "hardware.interconnect_gb_s",
    "model.params_b",
]


@pytest.mark.parametrize("key", DIVISORS)
@pytest.mark.parametrize("value", ["5e-324", "1e-300", "2.2e-308", "1e-9"])
def test_subnormal_and_vanishing_divisors_are_refused_with_the_bound(key, value):
    with pytest.raises(ScenarioError) as info:
        resolve([(key, value)], strict=True)
    assert info.value.key == key
    assert "≥" in str(info.value)


def _finite(obj, path="") -> list[str]:
    if isinstance(obj, dict):
        return [p for k, v in obj.items() for p in _finite(v, f"{path}.{k}")]
    if isinstance(obj, (list, tuple)):
        return [p for i, v in enumerate(obj) for p in _finite(v, f"{path}[{i}]")]
    if hasattr(obj, "dtype") and getattr(obj.dtype, "kind", "") == "f":
        import numpy as np

        return [] if np.isfinite(obj).all() else [path]
    if isinstance(obj, float) and not math.isfinite(obj):
        return [path]
    return []


LOW = {
    "bw_efficiency": "0.001",
    "flops_efficiency": "0.001",
    "launch_us": "0.001",
    "weights_gb": "0.001",
    "hardware.hbm_bandwidth_tb_s": "0.001",
    "hardware.h2d_gb_s": "0.001",
    "hardware.interconnect_gb_s": "0.001",
    "hardware.peak_tflops.bf16": "0.001",
    "hardware.peak_tflops.fp8": "0.001",
    "model.params_b": "0.001",
    "hardware.memory_gb": "0.1",
    "storage_gb_s": "0.001",
    "stream_gb_s": "0.001",
    "gpu_memory_utilization": "0.01",
    "host_ms": "0",
    "context_tokens": "0",
    "capture_s_per_graph": "0",
    "graph_mb_per_graph": "0",
    "compile_s": "0",
    "process_init_s": "0",
    "cuda_context_s": "0",
    "allocator_s": "0",
}


HIGH = {
    "launch_us": "1000",
    "weights_gb": "1000000",
    "hardware.hbm_bandwidth_tb_s": "100",
    "hardware.peak_tflops.bf16": "100000",
    "model.params_b": "100000",
    "host_ms": "1000",
    "context_tokens": "10000000",
    "batch": "65536",
    "gpus": "64",
    "kernels": "1000000",
    "model.layers": "2000",
    "concurrency": "1024",
    "capture_s_per_graph": "600",
    "graph_mb_per_graph": "100000",
    "compile_s": "3600",
    "allreduce_latency_us": "10000",
}


@settings(max_examples=60, deadline=None)
@given(
    picks=st.dictionaries(
        st.sampled_from(sorted(set(LOW) | set(HIGH))), st.sampled_from(["low", "high"])
    ),
    mode=st.sampled_from(["none", "piecewise", "full_decode_only", "full_and_piecewise"]),
    launch_model=st.sampled_from(["additive", "pipelined"]),
    sleep=st.sampled_from(["0", "1", "2"]),
    loader=st.sampled_from(["safetensors", "runai_streamer", "tensorizer", "pickle"]),
)
def test_every_figure_is_finite_at_the_corners_of_the_bounds(
    picks, mode, launch_model, sleep, loader
):
    pairs = [(k, (LOW if v == "low" else HIGH).get(k, LOW.get(k))) for k, v in picks.items()]
    pairs = [(k, v) for k, v in pairs if v is not None]
    pairs += [
        ("cuda_graphs", mode),
        ("launch_model", launch_model),
        ("sleep_level", sleep),
        ("loader", loader),
    ]
    s, _ = resolve(pairs, strict=False)
    for name, figures in (
        ("evaluate", evaluate(s)),
        ("roofline_lens", roofline_lens(s)),
        ("launch_lens", launch_lens(s)),
        ("cold_start_lens", cold_start_lens(s)),
    ):
        assert not _finite(figures), (name, _finite(figures)[:5], pairs)
    json.dumps(strict_figures(evaluate(s)), allow_nan=False)


def test_strict_figures_turns_non_finite_into_null_with_a_reason():
    out = strict_figures({"a": {"x": float("inf"), "y": float("nan"), "z": 1.0, "w": None}})
    assert out["a"] == {"x": None, "y": None, "z": 1.0, "w": None}
    assert set(out["null_reasons"]) == {"a.x", "a.y", "a.w"}
    json.dumps(out, allow_nan=False)


def test_eval_json_is_strict_and_explains_its_nulls():
    proc = subprocess.run(
        [sys.executable, "-m", "whatif", "eval", "--json", "--set", "launch_us=0.001"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Infinity" not in proc.stdout and "NaN" not in proc.stdout

    def no_constants(name):
        raise AssertionError(f"non-standard JSON constant {name}")

    out = json.loads(proc.stdout, parse_constant=no_constants)
    assert out["cold_start"]["wake_s"] is None
    assert "sleep_level is 0" in out["null_reasons"]["cold_start.wake_s"]


PAGES = ["app.py", "pages/1_Roofline.py", "pages/3_Launch_overhead.py", "pages/4_Cold_start.py"]


NOT_A_NUMBER = re.compile(r"(?<![A-Za-z])(inf|nan|Infinity|NaN)(?![A-Za-z])")


CORNERS = {
    "vanishing divisors": {
        k: LOW[k]
        for k in (
            "bw_efficiency",
            "flops_efficiency",
            "launch_us",
            "weights_gb",
            "hardware.hbm_bandwidth_tb_s",
            "hardware.h2d_gb_s",
            "storage_gb_s",
            "stream_gb_s",
            "host_ms",
            "context_tokens",
        )
    },
    "zero overheads": {
        "host_ms": "0",
        "process_init_s": "0",
        "cuda_context_s": "0",
        "allocator_s": "0",
        "compile_s": "0",
        "capture_s_per_graph": "0",
        "graph_mb_per_graph": "0",
        "sleep_level": "1",
    },
    "everything at its top": {
        "batch": "65536",
        "context_tokens": "10000000",
        "kernels": "1000000",
        "launch_us": "1000",
        "host_ms": "1000",
        "model.params_b": "100000",
        "gpus": "64",
        "sleep_level": "2",
    },
}


def _texts(at: AppTest) -> list[str]:
    out = []
    for m in at.metric:
        out += [str(m.label), str(m.value), str(m.proto.help or "")]
    for kind in (at.markdown, at.caption, at.info, at.warning, at.error, at.success):
        out += [str(e.value) for e in kind]
    for frame in at.dataframe:
        out += [str(v) for v in frame.value.astype(str).to_numpy().ravel()]
    return out


@pytest.mark.parametrize("corner", list(CORNERS))
@pytest.mark.parametrize("page", PAGES)
def test_pages_show_no_inf_or_nan_at_the_corners(page, corner):
    at = open_page(page, pairs=list(CORNERS[corner].items()), timeout=90)
    assert not at.warning or all("not accepted" not in w.value for w in at.warning)
    bad = [t for t in _texts(at) if NOT_A_NUMBER.search(t)]
    assert not bad, bad[:5]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4096), st.integers(0, 32768), st.sampled_from(["vllm", "sglang"]))
def test_the_per_kernel_step_is_never_shorter_than_one_roof(batch, context, engine):
    """A sum of per-kernel maxima is at least the maximum of the sums (model.roofline.gpu_time):
    the 2026.12.8 profiles' decode step is never shorter than their frozen 2026.12.7 step."""
    from model.decode import sweep

    pairs = [("model", "qwen3-32b"), ("context_tokens", str(context))]
    new = sweep(resolve([*pairs, ("engine", engine)], strict=True)[0], [batch])
    old = sweep(resolve([*pairs, ("engine", f"{engine}@2026.12.7")], strict=True)[0], [batch])
    assert new["t_gpu_s"][0] >= old["t_gpu_s"][0] * (1 - 1e-12)
    kernels = new["t_gpu_s"][0] - new["t_comm_s"][0]  # the all-reduces are the same in both
    assert kernels <= (old["t_memory_s"][0] + old["t_compute_s"][0]) * (1 + 1e-12)
