"""The vLLM start-up log parser (model/readers/vllm_log.py, SPEC 4.5 ``whatif parse-log``).

Three sets of inputs: the project's own small logs in ``tests/data/logs`` (one per vLLM version
family, written in the formats of public logs, expected figures written by hand below); the real
excerpts in ``../shared/fixtures/vllm_logs`` when that folder exists (skipped otherwise, as in CI);
and bad or hostile input (empty, binary, huge, regex bombs, NaN and negative values), plus a
property test that noise added around the lines never changes what is read.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model.errors import ScenarioError
from model.readers.measurements import MAX_PROBLEMS
from model.readers.vllm_log import FIGURE_KEYS, MAX_LINE, parse_log, parse_log_bytes
from tests.helpers import hang_guard

ROOT = Path(__file__).resolve().parent.parent

LOGS = Path(__file__).resolve().parent / "data" / "logs"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "vllm_logs"


def _own(name: str):
    return parse_log((LOGS / name).read_bytes().decode("utf-8"), name)


def _check(ds, figures: dict, conditions: dict | None = None, **extra):
    """Every expected figure is there with its value (floats to 1e-9), no figure is None."""
    for key, want in figures.items():
        assert key in ds.figures, f"{ds.name}: {key} missing; got {ds.figures}"
        got = ds.figures[key]
        if isinstance(want, bool) or want is None:
            assert got is want, f"{ds.name}: {key} = {got!r}, expected {want!r}"
        elif isinstance(want, int):
            assert got == want and isinstance(got, int), f"{ds.name}: {key} = {got!r}"
        else:
            assert math.isclose(got, want, rel_tol=1e-9), f"{ds.name}: {key} = {got}, not {want}"
    for key, want in (conditions or {}).items():
        assert ds.conditions.get(key) == want, f"{ds.name}: condition {key} = {ds.conditions}"
    for key, want in extra.items():
        got = ds.extra[key]
        if isinstance(want, dict):
            for k, v in want.items():
                assert math.isclose(got[k], v, rel_tol=1e-9), f"{ds.name}: {key}.{k} = {got}"
        else:
            assert got == want, f"{ds.name}: extra {key} = {got!r}, expected {want!r}"
    assert all(v is not None for v in ds.figures.values())
    assert set(ds.figures) <= set(FIGURE_KEYS)
    json.dumps(ds.to_json())  # serialisable as the CLI prints it


def _problems(ds) -> str:
    return "\n".join(str(p) for p in ds.problems)


# ---------------------------------------------------------------------------------------------
# 1. The project's own logs, one per version family


def test_v02_bento_capture_only():
    ds = _own("v02_bento_llama2.log")
    _check(
        ds,
        {"graph_capture_s": 7.0, "gpu_blocks": 7449, "enforce_eager": False},
        {
            "model": "meta-llama/Llama-2-7b-chat-hf",
            "tensor_parallel_size": 1,
            "gpus": 1,
            "dtype": "float16",
            "load_format": "auto",
            "max_model_len": 4096,
            "engine": "V0",
        },
        version=None,
        ranks=1,
        start_ups=1,
        items={"item5_s": 7.0, "item5_capture_s": 7.0},
    )
    # the capture warning's "set 'enforce_eager=True'" is advice, not the configuration
    assert "kv_cache_tokens" not in ds.figures  # blocks without a stated block size
    assert "torch.compile" in _problems(ds)  # item 5 lacks its compile part


def test_v05_tensor_parallel_workers():
    ds = _own("v05_tp4_workers.log")
    _check(
        ds,
        {"model_loading_gib": 3.3812, "graph_capture_s": 12.0, "gpu_blocks": 21050},
        {
            "model": "instructlab/merlinite-7b-lab",
            "tensor_parallel_size": 4,
            "gpus": 4,
            "dtype": "bfloat16",
            "engine": "V0",
            "vllm_version": "0.5.4",
        },
        version="0.5.4",
        ranks=4,
    )
    assert "'GB' in this vLLM version means GiB" in _problems(ds)
    assert "model_loading_s" not in ds.figures  # V0 prints no seconds


def test_v064_banner_opt125m():
    ds = _own("v064_opt125m_offline.log")
    _check(
        ds,
        {
            "model_loading_gib": 0.2389,
            "kv_cache_gib": 20.53,
            "gpu_blocks": 37372,
            "max_concurrency": 291.97,
            "max_concurrency_tokens": 2048,
            "graph_capture_s": 7.0,
            "enforce_eager": False,
        },
        {
            "model": "facebook/opt-125m",
            "total_gpu_memory_gib": 23.64,
            "gpu_memory_utilization": 0.9,
            "max_model_len": 2048,
            "load_format": "auto",
            "weights_format": "bin",
            "engine": "V0",
            "vllm_version": "0.6.4.dev26+g92d86da2.d20241017",
        },
        version="0.6.4.dev26+g92d86da2.d20241017",
    )
    assert "memory_profiling_s" not in ds.figures  # 0.6.4's results line has no duration


def test_v065_memory_profiling_results_and_redrawn_bar():
    ds = _own("v065_memprof_tp2.log")
    _check(
        ds,
        {
            "model_loading_gib": 9.2451,
            "memory_profiling_s": 12.91,  # the larger of the two ranks
            "kv_cache_gib": 58.11,
            "gpu_blocks": 95110,
            "max_concurrency": 371.52,
            "max_concurrency_tokens": 4096,
            "graph_capture_s": 14.0,
            "graph_capture_gib": 0.22,
            "graphs_captured": 35,  # one bar drawn five times with carriage returns
            "init_engine_s": 33.27,
            "enforce_eager": False,
        },
        {"tensor_parallel_size": 2, "gpus": 2, "total_gpu_memory_gib": 79.15},
        ranks=2,
        start_ups=1,
    )


def test_v08_v0_bracketed_file_names():
    ds = _own("v08_v0_brackets.log")
    _check(
        ds,
        {
            "loading_weights_s": 0.61,
            "model_loading_s": 8.941327,
            "model_loading_gib": 2.8876,
            "memory_profiling_s": 0.91,
            "kv_cache_gib": 15.75,
            "gpu_blocks": 36864,
            "max_concurrency": 18.0,
            "max_concurrency_tokens": 32768,
            "graph_capture_s": 12.0,
            "graph_capture_gib": 0.19,
            "graphs_captured": 35,
            "init_engine_s": 15.52,
            "enforce_eager": False,
        },
        {
            "model": "Qwen/Qwen2.5-1.5B-Instruct",
            "gpu_memory_utilization": 0.85,
            "total_gpu_memory_gib": 23.68,
            "engine": "V0",
            "vllm_version": "0.8.2",
        },
        items={"item4_s": 8.941327, "item5_s": 12.0},
    )
    assert "line 7" in _problems(ds) and "means GiB" in _problems(ds)


def test_v1_085_markdown_bold_fences_and_quotes():
    ds = _own("v1_085_markdown.log")
    _check(
        ds,
        {
            "loading_weights_s": 1.42,
            "model_loading_s": 2.37381,
            "model_loading_gib": 6.016,
            "dynamo_transform_s": 7.88,
            "compile_s": 25.37,
            "torch_compile_total_s": 33.25,
            "kv_cache_tokens": 1048576,
            "max_concurrency": 8.0,
            "max_concurrency_tokens": 131072,
            "graphs_captured": 67,
            "graph_capture_s": 19.0,
            "graph_capture_gib": 0.52,
            "init_engine_s": 59.91,
            "enforce_eager": False,
        },
        {"model": "meta-llama/Llama-3.2-3B-Instruct", "engine": "V1", "vllm_version": "0.8.5"},
        items={"item4_s": 2.37381, "item5_s": 52.25, "item5_compile_s": 33.25},
    )
    assert ds.problems == []


def test_v1_011_tensor_parallel_engine_core_and_capture_bars():
    ds = _own("v1_011_tp2_enginecore.log")
    _check(
        ds,
        {
            "loading_weights_s": 11.62,
            "model_loading_s": 13.018835,
            "model_loading_gib": 30.5855,
            "dynamo_transform_s": 8.40,
            "compile_s": 20.05,
            "torch_compile_total_s": 28.20,
            "kv_cache_gib": 20.70,
            "kv_cache_tokens": 765904,
            "max_concurrency": 23.37,
            "max_concurrency_tokens": 32768,
            "graphs_captured": 86,  # 51 PIECEWISE + 35 FULL, each bar printed several times
            "graph_capture_s": 6.0,
            "graph_capture_gib": 0.62,
            "init_engine_s": 62.31,
            "enforce_eager": False,
        },
        {
            "model": "Qwen/Qwen3-32B",
            "tensor_parallel_size": 2,
            "gpus": 2,
            "engine": "V1",
            "vllm_version": "0.11.0",
            "max_model_len": 32768,
        },
        version="0.11.0",
        ranks=2,
        start_ups=1,
        items={"item4_s": 13.018835, "item5_s": 34.2},
    )


def test_v1_0112_gib_memory_and_a_drafter_compiled_in_its_own_directory():
    ds = _own("v1_0112_gib_memory_eagle.log")
    _check(
        ds,
        {
            "loading_weights_s": 5.98,  # target 5.98, drafter 0.42: the larger
            "model_loading_s": 8.880427,
            "model_loading_gib": 15.242,
            "dynamo_transform_s": 8.2,  # backbone 7.00 + eagle_head 1.20
            "compile_s": 15.0,
            "compile_cache_load_s": 0.85,
            "compile_cache_hit": True,
            "torch_compile_total_s": 24.05,  # printed twice, cumulative
            "graphs_captured": 134,
            "graph_capture_s": 6.0,
            "graph_capture_gib": 1.03,
            "init_engine_s": 40.11,
            "kv_cache_gib": 52.34,
            "kv_cache_tokens": 428768,
        },
        {"model": "meta-llama/Llama-3.1-8B-Instruct", "vllm_version": "0.11.2", "engine": "V1"},
        start_ups=1,
        items={"item5_s": 30.05},
    )


def test_v1_2026_model_runner_v2_compile_ranges_warmup_and_init_compilation():
    ds = _own("v1_2026_mrv2_compile_range.log")
    _check(
        ds,
        {
            "download_s": 12.345678,
            "loading_weights_s": 26.93,
            "model_loading_s": 32.969258,
            "model_loading_gib": 7.64,
            "dynamo_transform_s": 8.52,
            "compile_s": 44.99,  # (1, 8192) 41.98 + (8193, 16384) 3.01
            "torch_compile_total_s": 53.51,
            "warmup_s": 76.71,
            "kv_cache_gib": 118.40,
            "kv_cache_tokens": 862128,
            "max_concurrency": 52.62,
            "max_concurrency_tokens": 16384,
            "graphs_captured": 10,
            "graph_capture_s": 3.0,
            "graph_capture_gib": 0.52,
            "init_engine_s": 180.23,
            "init_compilation_s": 53.51,
            "enforce_eager": False,
        },
        {
            "model": "Qwen/Qwen3-8B",
            "max_model_len": 16384,
            "gpu_memory_utilization": 0.92,
            "engine": "V1",
            "vllm_version": "0.21.0",
        },
        version="0.21.0",
        start_ups=1,  # serve command, banner, args and engine line open one start-up
        items={"item4_s": 32.969258, "item5_s": 56.51, "item5_compile_s": 53.51},
    )
    assert ds.problems == []


def test_runai_streamer_in_a_v073_log():
    ds = _own("runai_streamer_v073.log")
    _check(
        ds,
        {
            "stream_gib": 942.3 / 1024,
            "stream_s": 0.18,
            "stream_gib_s": 5.0,
            "model_loading_s": 0.571034,
            "model_loading_gib": 0.9277,
            "memory_profiling_s": 0.82,
            "gpu_blocks": 98172,
            "graph_capture_s": 3.0,
            "init_engine_s": 4.18,
        },
        {"load_format": "runai_streamer", "engine": "V0", "vllm_version": "0.7.3"},
        items={"item4_s": 0.571034},
    )


def test_enforce_eager_log():
    ds = _own("v1_010_enforce_eager.log")
    _check(
        ds,
        {
            "loading_weights_s": 1.91,
            "model_loading_s": 2.76412,
            "kv_cache_tokens": 104784,
            "init_engine_s": 2.35,
            "enforce_eager": True,
        },
        {"engine": "V1", "vllm_version": "0.10.1.1", "model": "google/gemma-2-2b-it"},
        items={"item5_s": 0.0, "item5_capture_s": 0.0},
    )
    assert "graph_capture_s" not in ds.figures


@pytest.mark.parametrize(
    "line",
    [
        "INFO 01-01 00:00:00 [gpu_model_runner.py:1] Cudagraph is disabled under eager mode",
        "WARNING 01-01 00:00:00 [gpu_model_runner.py:1] Skipping CUDA graph capture. Please add "
        "-O 3 to use CUDA graphs.",
        "INFO 01-01 00:00:00 [core.py:1] Initializing a V1 LLM engine (v0.11.0) with config: "
        "model='m', enforce_eager=True, compilation_config={'level': 3}",
        "INFO 01-01 00:00:00 [core.py:1] Initializing a V1 LLM engine (v0.21.0) with config: "
        "model='m', compilation_config={'cudagraph_mode': <CUDAGraphMode.NONE: 0>}",
        "$ vllm serve m --enforce-eager",
    ],
)
def test_graphs_disabled_wordings(line):
    text = (
        line
        + "\nINFO 01-01 00:00:09 [core.py:1] init engine (profile, create kv cache, "
        + ("warmup model) took 9.00 seconds")
    )
    assert parse_log(text).figures["enforce_eager"] is True


def test_enforce_eager_unknown_without_evidence():
    ds = parse_log("INFO 01-01 00:00:01 [loader.py:1] Loading weights took 1.00 seconds")
    assert "enforce_eager" not in ds.figures


def test_noisy_compose_ansi_iso_timestamps_border_and_hard_wraps():
    raw = (LOGS / "noisy_compose_ansi_wrapped.log").read_bytes()
    assert b"\r\n" in raw and b"\x1b[" in raw
    ds = parse_log_bytes("noisy.log", raw)
    _check(
        ds,
        {
            "loading_weights_s": 3.52,
            "model_loading_gib": 4.1801,  # "4.18" + "01 GiB and …" rejoined
            "model_loading_s": 4.00219,
            "dynamo_transform_s": 7.51,
            "compile_cache_load_s": 4.19,
            "compile_cache_hit": True,
            "torch_compile_total_s": 11.70,
            "kv_cache_tokens": 613024,
            "graphs_captured": 67,
            "graph_capture_s": 17.0,  # "17 se" + "cs, took 0.48 GiB" rejoined
            "graph_capture_gib": 0.48,
            "init_engine_s": 34.11,
            "enforce_eager": False,
        },
        {"engine": "V1", "vllm_version": "0.9.1", "gpus": 2},
        version="0.9.1",
        ranks=2,
        start_ups=1,
    )
    assert ds.problems == []


# ---------------------------------------------------------------------------------------------
# Start-ups


def test_two_start_ups_with_a_banner_report_the_last():
    ds = _own("two_starts_banner.log")
    _check(
        ds,
        {
            "loading_weights_s": 3.10,
            "model_loading_s": 3.912345,
            "dynamo_transform_s": 8.90,
            "compile_s": 2.40,
            "torch_compile_total_s": 11.30,
            "graph_capture_s": 11.0,
            "init_engine_s": 30.12,
        },
        {"model": "Qwen/Qwen2.5-7B-Instruct", "vllm_version": "0.10.1.1"},
        start_ups=2,
    )
    assert "2 start-ups in this log" in _problems(ds)
    assert "figures are of the last one (from line 12)" in _problems(ds)


def test_two_start_ups_without_a_marker_split_on_a_repeated_figure():
    ds = _own("two_starts_no_marker.log")
    _check(
        ds,
        {"loading_weights_s": 3.10, "compile_s": 2.40, "init_engine_s": 30.12},
        start_ups=2,
    )
    assert "2 start-ups in this log" in _problems(ds)


def test_data_parallel_engines_are_one_start_up():
    """EngineCore_DP0 finishes (init engine) before EngineCore_DP1 prints its capture line."""
    ds = _own("dp2_no_split.log")
    _check(
        ds,
        {
            "loading_weights_s": 4.30,
            "model_loading_s": 5.30,
            "graph_capture_s": 6.0,
            "graph_capture_gib": 0.41,
            "init_engine_s": 27.50,
        },
        {"data_parallel_size": 2, "gpus": 2},
        start_ups=1,
        ranks=2,
    )
    assert "start-ups" not in _problems(ds)


def test_out_of_order_paste_is_one_start_up():
    ds = _own("out_of_order_paste.log")
    _check(ds, {"init_engine_s": 31.0, "loading_weights_s": 2.0, "compile_s": 9.0}, start_ups=1)


def test_a_later_start_up_without_figures_is_noted():
    text = (
        "INFO 01-01 00:00:01 [loader.py:1] Loading weights took 2.00 seconds\n"
        "INFO 01-01 00:00:09 [core.py:1] init engine (profile, create kv cache, warmup model) "
        "took 9.00 seconds\n"
        "$ vllm serve other/model\n"
        "ERROR 01-01 00:01:00 [core.py:1] EngineCore failed to start.\n"
    )
    ds = parse_log(text)
    assert ds.figures["loading_weights_s"] == 2.0
    assert "line 3" in _problems(ds) and "printed no timing line" in _problems(ds)


# ---------------------------------------------------------------------------------------------
# Hard wraps


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (
            "INFO 01-01 00:00:01 [gpu_model_runner.py:1] Model loading took 4.18\n"
            "01 GiB and 2.52 seconds",
            {"model_loading_gib": 4.1801, "model_loading_s": 2.52},
        ),
        (
            "INFO 01-01 00:00:01 [gpu_model_runner.py:1] Graph capturing finished in 17 se\n"
            "cs, took 0.48 GiB",
            {"graph_capture_s": 17.0, "graph_capture_gib": 0.48},
        ),
        (  # wrapped at a space: the trailing space was lost
            "INFO 01-01 00:00:01 [gpu_model_runner.py:1] Model loading took 4.1801\n"
            "GiB and 2.524322 seconds",
            {"model_loading_gib": 4.1801, "model_loading_s": 2.524322},
        ),
        (  # wrapped inside the phrase itself
            "INFO 01-01 00:00:01 [gpu_model_runner.py:1] Model loa\n"
            "ding took 4.1801 GiB and 2.52 seconds",
            {"model_loading_gib": 4.1801, "model_loading_s": 2.52},
        ),
        (  # three pieces
            "(EngineCore_DP0 pid=1) INFO 01-01 00:00:01 [gpu_model_runner.py:1] Model loading "
            "took 4.1\n801 GiB and 2.\n52 seconds",
            {"model_loading_gib": 4.1801, "model_loading_s": 2.52},
        ),
        (  # a complete capture line, its GiB on the next line
            "INFO 01-01 00:00:01 [gpu_model_runner.py:1] Graph capturing finished in 17 secs\n"
            ", took 0.48 GiB",
            {"graph_capture_s": 17.0, "graph_capture_gib": 0.48},
        ),
    ],
)
def test_hard_wrapped_values_are_rejoined(text, want):
    ds = parse_log(text)
    _check(ds, want)
    assert not [p for p in ds.problems if p.where], _problems(ds)  # no line left unread


def test_a_wrapped_config_line_is_rejoined():
    text = (
        "(APIServer pid=1) INFO 05-01 12:48:00 [utils.py:233] non-default args: {'model_tag': "
        "'hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4', 'model': 'hugging-quants/Meta-L\n"
        "lama-3.1-8B-Instruct-AWQ-INT4', 'dtype': 'float16', 'tensor_parallel_size': 2}\n"
        "(EngineCore_DP0 pid=9) INFO 05-01 12:49:00 [default_loader.py:1] Loading weights took "
        "3.00 seconds\n"
    )
    _check(
        parse_log(text),
        {"loading_weights_s": 3.0},
        {
            "model": "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4",
            "tensor_parallel_size": 2,
            "dtype": "float16",
        },
    )


def test_a_multi_line_message_without_prefixes_is_read_line_by_line():
    text = (
        "INFO 02-11 10:17:54 worker.py:267] Memory profiling takes 0.91 seconds\n"
        "the current vLLM instance can use total_gpu_memory (23.68GiB) x gpu_memory_utilization "
        "(0.85) = 20.13GiB\n"
        "model weights take 2.89GiB; non_torch_memory takes 0.08GiB; PyTorch activation peak "
        "memory takes 1.41GiB; the rest of the memory reserved for KV Cache is 15.75GiB.\n"
    )
    _check(
        parse_log(text),
        {"memory_profiling_s": 0.91, "kv_cache_gib": 15.75, "model_loading_gib": 2.89},
        {"total_gpu_memory_gib": 23.68, "gpu_memory_utilization": 0.85},
        lines_matched=2,
    )


def test_stacked_process_prefixes_name_the_inner_worker():
    text = (
        "(EngineCore_DP0 pid=7) (RayWorkerWrapper pid=51, ip=10.0.0.1) INFO 01-01 00:00:01 "
        "[default_loader.py:1] Loading weights took 2.00 seconds\n"
        "(EngineCore_DP0 pid=7) (RayWorkerWrapper pid=52, ip=10.0.0.2) INFO 01-01 00:00:01 "
        "[default_loader.py:1] Loading weights took 2.50 seconds\n"
    )
    _check(parse_log(text), {"loading_weights_s": 2.5}, ranks=2)


def test_complete_prefixless_lines_are_not_joined():
    text = (
        "Dynamo bytecode transform time: 4.60 s\n"
        "Compiling a graph for general shape takes 14.77 s\n"
        "torch.compile takes 19.37 s in total\n"
        "Graph capturing finished in 15 secs, took 0.33 GiB\n"
        "init engine (profile, create kv cache, warmup model) took 39.34 seconds\n"
    )
    ds = parse_log(text)
    _check(
        ds,
        {
            "dynamo_transform_s": 4.60,
            "compile_s": 14.77,
            "torch_compile_total_s": 19.37,
            "graph_capture_s": 15.0,
            "graph_capture_gib": 0.33,
            "init_engine_s": 39.34,
        },
        lines_matched=5,
    )


def test_a_prefixed_next_line_is_not_a_continuation():
    text = (
        "INFO 01-01 00:00:01 [gpu_model_runner.py:1] Model loading took 4.18\n"
        "INFO 01-01 00:00:02 [loader.py:1] Loading weights took 01 seconds\n"
    )
    ds = parse_log(text)
    assert ds.figures == {"loading_weights_s": 1.0}
    assert "line 1" in _problems(ds) and "model_loading_gib" in _problems(ds)


def test_a_cut_last_line_is_a_problem_naming_it():
    text = (
        "INFO 01-01 00:00:01 [loader.py:1] Loading weights took 1.00 seconds\n"
        "INFO 01-01 00:00:30 [gpu_model_runner.py:1] Graph capturing finished in 17 se"
    )
    ds = parse_log(text)
    assert "graph_capture_s" not in ds.figures
    assert "line 2: looks like a graph_capture_s line" in _problems(ds)


# ---------------------------------------------------------------------------------------------
# Patterns met in public logs that are not in the fixtures. Each test log is short, written for
# this project with made-up values, in the format of the public log named in the comment.


def test_torchserve_prefix_before_the_worker_prefix():
    # https://github.com/pytorch/serve/pull/3315 and /pull/3343 (vLLM 0.6.x under TorchServe,
    # TP2): "… [INFO ] W-9000-model_1.0-stdout MODEL_LOG - (VllmWorkerProcess pid=N) INFO …"
    # hid the worker's prefix, so both ranks counted as one
    ds = _own("torchserve_prefix_v06_tp2.log")
    _check(
        ds,
        {
            "model_loading_gib": 3.0147,
            "graph_capture_s": 22.0,  # the slower of the two ranks
            "gpu_blocks": 61205,
            "max_concurrency": 119.54,
            "max_concurrency_tokens": 8192,
            "enforce_eager": False,
        },
        {
            "model": "meta-llama/Llama-3.2-3B-Instruct",
            "tensor_parallel_size": 2,
            "gpus": 2,
            "engine": "V0",
            "vllm_version": "0.6.1.dev238+ge2c6e0a82",
        },
        ranks=2,
        start_ups=1,
        items={"item5_s": 22.0, "item5_capture_s": 22.0},
    )


def test_ray_serve_nested_prefixes_are_one_rank():
    # https://github.com/ray-project/ray/pull/65486 (Ray Serve LLM, 2026): each worker line is
    # printed twice, once as "(RayWorkerProc pid=N) (Worker pid=N)" and once behind
    # "(ServeReplica:default:LLMServer:qwen-0_5b pid=M) (EngineCore pid=K)", whose name has colons;
    # https://github.com/ray-project/ray/issues/53663: "(_EngineBackgroundProcess pid=N)"
    ds = _own("rayserve_nested_prefixes.log")
    _check(
        ds,
        {
            "loading_weights_s": 1.41,
            "model_loading_s": 2.062217,
            "model_loading_gib": 0.93,
            "graph_capture_s": 2.0,
            "graph_capture_gib": 0.11,
            "graphs_captured": 51,
            "init_engine_s": 9.84,
            "enforce_eager": False,
        },
        {"model": "Qwen/Qwen2.5-0.5B-Instruct", "gpus": 1, "engine": "V1"},
        version="0.19.1",
        ranks=1,  # was 2: the long and the short form of one worker
        start_ups=1,
    )


def test_records_glued_by_tqdm_and_lost_newlines():
    # a public write-up of Qwen3-235B-A22B-FP8 on 8xL40S (vLLM 0.10.2, found through the code
    # index): "Time spent downloading weights for …: 272.079211 seconds7MB/s]" (a tqdm redraw
    # glued on); a shard bar running into the next record; several records on one line, as a
    # paste that lost its newlines leaves them (the digest of vllm-project/vllm#21520)
    ds = _own("glued_records.log")
    _check(
        ds,
        {
            "download_s": 41.208113,
            "loading_weights_s": 8.31,
            "model_loading_s": 50.402871,  # the second rank, third record of line 5
            "model_loading_gib": 28.4418,
        },
        {"gpus": 2, "engine": "V1"},
        ranks=2,
        lines_matched=5,
    )
    assert "download_s" not in _problems(ds)  # no "looks like a download_s line" problem


def test_aot_cache_hit_and_kv_cache_memory_bytes():
    # https://github.com/SergiioB/intel-arc-pro-b70-inference-cookbook/issues/4 (2026, XPU) and
    # https://github.com/vllm-project/vllm/pull/36634: "Directly load AOT compilation from
    # path …" was not a cache hit, "reserved 4.25 GiB memory for KV Cache as specified by
    # kv_cache_memory_bytes" gave no kv_cache_gib
    ds = _own("aot_cache_kv_bytes_2026.log")
    _check(
        ds,
        {
            "loading_weights_s": 3.12,
            "model_loading_s": 4.287341,
            "model_loading_gib": 5.61,
            "compile_cache_hit": True,
            "torch_compile_total_s": 0.08,
            "warmup_s": 0.41,
            "graph_capture_s": 6.0,
            "graph_capture_gib": 0.38,
            "init_engine_s": 19.4,
            "kv_cache_gib": 6.5,
            "kv_cache_tokens": 106496,
            "max_concurrency": 13.0,
            "enforce_eager": False,
        },
        {"engine": "V1", "vllm_version": "0.24.0"},
        items={"item4_s": 4.287341, "item5_s": 6.08, "item5_compile_s": 0.08},
    )


def test_cache_load_left_out_of_the_v010_total():
    # https://github.com/kyuz0/amd-strix-halo-vllm-toolboxes/pull/5 (ROCm, 0.10/0.11,
    # "(EngineCore_0 pid=N)"): "Dynamo bytecode transform time: 3.70 s", "… from the cache, took
    # 5.920 s", "torch.compile takes 3.70 s in total" — vLLM ≤0.10 adds only Dynamo and compile
    # time to that total, so item 5 missed the cache load
    ds = _own("cache_load_outside_total_v010.log")
    _check(
        ds,
        {
            "dynamo_transform_s": 2.84,
            "compile_cache_load_s": 3.417,
            "compile_cache_hit": True,
            "torch_compile_total_s": 2.84,  # as printed
            "graph_capture_s": 5.0,
            "graphs_captured": 67,
            "init_engine_s": 17.93,
        },
        items={"item5_s": 11.257, "item5_compile_s": 6.257, "item5_capture_s": 5.0},
    )
    assert "leaves out the load of the compiled graphs" in _problems(ds)


def test_a_2026_total_that_counts_the_cache_load_is_kept():
    # https://github.com/noonghunna/club-3090/issues/178: Dynamo 5.34 s + cache load 11.657 s,
    # "torch.compile took 18.21 s in total" (the load is in it)
    text = (
        "(Worker_TP0 pid=111) INFO 05-21 06:31:48 [backends.py:1148] Dynamo bytecode transform "
        "time: 5.34 s\n"
        "(Worker_TP0 pid=111) INFO 05-21 06:32:01 [backends.py:292] Directly load the compiled "
        "graph(s) for compile range (1, 8192) from the cache, took 11.657 s\n"
        "(Worker_TP0 pid=111) INFO 05-21 06:32:01 [monitor.py:53] torch.compile took 18.21 s in "
        "total\n"
    )
    ds = parse_log(text)
    _check(ds, {"torch_compile_total_s": 18.21}, items={"item5_compile_s": 18.21})
    assert "leaves out" not in _problems(ds)


def test_tpu_xla_precompilation_is_the_compile_part():
    # https://github.com/vllm-project/tpu-inference/pull/1729 ("Compilation finished in 0.23
    # [secs]." per precompiled function) and vllm/v1/worker/tpu_model_runner.py: the log had no
    # figure for item 5
    ds = _own("tpu_xla_precompile.log")
    _check(
        ds,
        {
            "loading_weights_s": 4.21,
            "compile_s": 59.33,  # 41.27 + 18.06
            "init_engine_s": 73.4,
            "kv_cache_tokens": 1124992,
        },
        {"platform": "tpu", "engine": "V1", "vllm_version": "0.8.2"},
        items={"item4_s": 4.21, "item5_s": 59.33, "item5_compile_s": 59.33, "item5_capture_s": 0.0},
    )
    assert "XLA precompilation" in _problems(ds)
    assert "graph_capture_s" not in ds.figures
    assert "Dynamo" not in _problems(ds)


def test_cpu_backend_partial_figures():
    # a public vLLM 0.28 CPU-backend log (found through the code index; the lines are those of
    # vllm/v1/worker/cpu_worker.py and cpu_model_runner.py) and kserve/kserve#4470: no KV size
    # was read, and item 5 was taken as 0 although the model was compiled in the warm-up
    ds = _own("cpu_backend_2026.log")
    _check(
        ds,
        {
            "loading_weights_s": 1.84,
            "warmup_s": 3.02,
            "init_engine_s": 40.12,
            "kv_cache_gib": 2.25,
            "kv_cache_tokens": 65536,
            "max_concurrency": 32.0,
            "enforce_eager": True,  # cudagraph_mode NONE
        },
        {"platform": "cpu", "model": "facebook/opt-125m", "vllm_version": "0.28.1"},
        items={"item4_s": 1.84},
    )
    assert "item5_compile_s" not in ds.extra["items"]
    problems = _problems(ds)
    assert "CPU-backend log" in problems and "figures are partial" in problems
    assert "line 5: the model was compiled here but vLLM printed no compile time" in problems


def test_a_cpu_log_without_timings_says_so():
    # https://github.com/kserve/kserve/pull/4470 (vLLM 0.8.5 on CPU, V0 fallback): the excerpt
    # has no timing line; the error names the backend
    text = (
        "INFO 05-14 17:28:14 [__init__.py:239] Automatically detected platform cpu.\n"
        "WARNING 05-14 17:28:21 [arg_utils.py:1658] device type=cpu is not supported by the V1 "
        "Engine. Falling back to V0.\n"
        "INFO 05-14 17:28:21 [llm_engine.py:240] Initializing a V0 LLM engine (v0.8.5.post1) "
        "with config: model='Qwen/Qwen3-14B', dtype=torch.bfloat16, max_seq_len=4096, "
        "enforce_eager=False, device_config=cpu\n"
    )
    with pytest.raises(ScenarioError) as err:
        parse_log(text, "cpu.log")
    assert "no vLLM start-up timing line" in err.value.message
    assert "CPU-backend log" in err.value.message


def test_a_fence_glued_to_a_record_is_read():
    # a paste whose newlines were lost starts with its code fence: "```text INFO … took …"
    text = (
        "```text INFO 07-24 11:08:25 [core.py:194] init engine (profile, create kv cache, warmup "
        "model) took 33.27 seconds INFO 07-24 11:08:26 [loggers.py:141] Engine 000: vllm "
        "cache_config_info with initialization after num_gpu_blocks is: 42180\n```\n"
    )
    _check(parse_log(text), {"init_engine_s": 33.27})


# ---------------------------------------------------------------------------------------------
# Single lines and their variants


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("Loading weights took 0.69 seconds", {"loading_weights_s": 0.69}),
        ("Loading model weights took 1.5874 GB", {"model_loading_gib": 1.5874}),
        ("Loading model weights took 12.50 seconds", {"loading_weights_s": 12.5}),
        (
            "Loading model weights took in total 0.9 GiB of device memory",
            {"model_loading_gib": 0.9},
        ),
        (
            "Model loading took 12.66 GiB memory and 31.657031 seconds",
            {"model_loading_gib": 12.66, "model_loading_s": 31.657031},
        ),
        (
            "Model loading took 3.4 GB and 4.2 seconds",
            {"model_loading_gib": 3.4, "model_loading_s": 4.2},
        ),
        ("Dynamo bytecode transform time: 7.51 s", {"dynamo_transform_s": 7.51}),
        ("Compiling a graph for general shape takes 36.76 s", {"compile_s": 36.76}),
        ("Compiling a graph for shape 8 takes 1.5 s", {"compile_s": 1.5}),
        (
            "Directly load the compiled graph for shape None from the cache",
            {"compile_cache_hit": True},
        ),
        (
            "Directly load the compiled graph(s) for compile range (1, 8192) from the cache, "
            "took 5.958 s",
            {"compile_cache_load_s": 5.958, "compile_cache_hit": True},
        ),
        ("torch.compile takes 19.37 s in total", {"torch_compile_total_s": 19.37}),
        ("torch.compile took 82.29 s in total", {"torch_compile_total_s": 82.29}),
        ("Memory profiling takes 0.91 seconds", {"memory_profiling_s": 0.91}),
        ("Initial profiling/warmup run took 76.71 s", {"warmup_s": 76.71}),
        ("Graph capturing finished in 6 secs.", {"graph_capture_s": 6.0}),
        (
            "init engine (profile, create kv cache, warmup model) took 90.00 s (compilation: "
            "8.90 s)",
            {"init_engine_s": 90.0, "init_compilation_s": 8.9},
        ),
        ("Available KV cache memory: 26.91 GiB", {"kv_cache_gib": 26.91}),
        ("GPU KV cache size: 613,024 tokens", {"kv_cache_tokens": 613024}),
        ("# GPU blocks: 37300, # CPU blocks: 7281", {"gpu_blocks": 37300}),
        ("# cuda blocks: 12200, # CPU blocks: 3640", {"gpu_blocks": 12200}),
        (
            "Maximum concurrency for 2,048 tokens per request: 775.22x",
            {"max_concurrency": 775.22, "max_concurrency_tokens": 2048},
        ),
        (
            "[RunAI Streamer] Overall time to stream 942.3 MiB of all files: 0.18s, 5.0 GiB/s",
            {"stream_gib": 942.3 / 1024, "stream_s": 0.18, "stream_gib_s": 5.0},
        ),
        (
            "INFO file_streamer.py:66: [RunAI Streamer] Overall time to stream 69.3 GiB of all "
            "files to cpu: 41.52s, 1.7 GiB/s",
            {"stream_gib": 69.3, "stream_s": 41.52, "stream_gib_s": 1.7},
        ),
        (
            "the rest of the memory reserved for KV Cache is 13.40GiB.",
            {"kv_cache_gib": 13.40},
        ),
        (
            "Time spent downloading weights for Qwen/Qwen3-8B: 33.108532 seconds",
            {"download_s": 33.108532},
        ),
        # a tqdm redraw glued onto the unit (a public 8xL40S write-up of Qwen3-235B on 0.10.2)
        (
            "Time spent downloading weights for Qwen/Qwen3-235B: 272.079211 seconds7MB/s]",
            {"download_s": 272.079211},
        ),
        ("Loading weights took 12.18 seconds2it/s]", {"loading_weights_s": 12.18}),
        # 2026 AOT cache (vllm-project/vllm#36634, noonghunna/club-3090#178)
        (
            "Directly load AOT compilation from path /root/.cache/vllm/torch_compile_cache/"
            "torch_aot_compile/ec3d2674d11c/rank_0_0/model",
            {"compile_cache_hit": True},
        ),
        # kv_cache_memory_bytes set, profiling skipped
        # (https://github.com/SergiioB/intel-arc-pro-b70-inference-cookbook/issues/4)
        (
            "Initial free memory 31.16 GiB, reserved 4.25 GiB memory for KV Cache as specified "
            "by kv_cache_memory_bytes config and skipped memory profiling.",
            {"kv_cache_gib": 4.25},
        ),
        # CPU backend's cpu_worker.py (2026)
        ("Explicitly set (1.0/15.51) GiB for KV cache on node 0.", {"kv_cache_gib": 1.0}),
        (
            "Auto set (1.48/18.0) GiB for KV cache on node 0, with 5.4 GiB requested memory for "
            "the worker. 3.92 GiB memory was consumed by non-kv usages.",
            {"kv_cache_gib": 1.48},
        ),
        # 2026 kv_cache_utils.py: both on one line
        (
            "GPU KV cache size: 29,056 tokens, Maximum concurrency for 2,048 tokens per request: "
            "14.19x",
            {"kv_cache_tokens": 29056, "max_concurrency": 14.19, "max_concurrency_tokens": 2048},
        ),
        # TPU: XLA precompilation (https://github.com/vllm-project/tpu-inference/pull/1729;
        # vllm/v1/worker/tpu_model_runner.py, V0 vllm/worker/tpu_model_runner.py)
        ("Compilation finished in 0.23 [secs].", {"compile_s": 0.23}),
        ("Compilation for prefill done in 12.50 s.", {"compile_s": 12.5}),
        ("    -- Compilation for decode done in 3.10 [secs].", {"compile_s": 3.1}),
        ("Multimodal image Encoder compilation finished in in 7.25 [secs].", {"compile_s": 7.25}),
    ],
)
def test_each_line_format(line, want):
    for prefix in (
        "",
        "INFO 06-19 23:05:01 [x.py:1] ",
        "INFO 06-19 23:05:01 x.py:1] ",
        "(Worker_TP0_EP0 pid=12) INFO 06-19 23:05:01 [x.py:1] ",
        "(RayWorkerWrapper pid=4025, ip=10.0.0.2) INFO 06-19 23:05:01 x.py:1] ",
        # TorchServe (https://github.com/pytorch/serve/pull/3315)
        "2024-09-13T22:24:43,002 [INFO ] W-9000-model_1.0-stdout MODEL_LOG - "
        "(VllmWorkerProcess pid=2716901) INFO 09-13 22:24:43 model_runner.py:1] ",
        # Ray Serve (https://github.com/ray-project/ray/pull/65486)
        "(ServeReplica:default:LLMServer:qwen-0_5b pid=62683) (EngineCore pid=64296) "
        "(RayWorkerProc pid=65043) (Worker pid=65043) INFO 08-14 11:58:42 [x.py:1] ",
        # caret notation (https://github.com/vllm-project/vllm/pull/25607)
        "^[[1;36m(APIServer pid=1)^[[0;0m ^[[1;36m(EngineCore_DP0 pid=276)^[[0;0m INFO 09-24 "
        "13:00:49 [x.py:1] ",
        # vllm-omni (https://github.com/vllm-project/vllm-omni/pull/1160)
        "(EngineCore_DP0 pid=181642) [Stage-0] INFO 02-02 18:25:03 [x.py:1] ",
        # lighteval's re-formatted records (https://github.com/huggingface/open-r1/issues/466)
        "[2025-03-04 07:33:14,739] [    INFO]: ",
    ):
        _check(parse_log(prefix + line), want)


@pytest.mark.parametrize(
    ("line", "rank"),
    [
        # https://github.com/pytorch/serve/pull/3315: TorchServe's prefix before the worker's
        (
            "2024-09-13T22:26:20,874 [INFO ] W-9000-model_1.0-stdout MODEL_LOG - "
            "(VllmWorkerProcess pid=2716901) INFO 09-13 22:26:20 model_runner.py:1428] Graph "
            "capturing finished in 32 secs.",
            "VllmWorkerProcess pid=2716901",
        ),
        # https://github.com/ray-project/ray/pull/65486: the innermost of Ray Serve's prefixes
        (
            "(ServeReplica:default:LLMServer:qwen-0_5b pid=62683) (EngineCore pid=64296) "
            "(RayWorkerProc pid=65043) (Worker pid=65043) INFO 08-14 11:58:42 "
            "[default_loader.py:430] Loading weights took 1.35 seconds",
            "Worker pid=65043",
        ),
        # https://github.com/ray-project/ray/issues/53663
        (
            "(_EngineBackgroundProcess pid=9083) INFO 06-09 16:23:39 [model_runner.py:1] Graph "
            "capturing finished in 14 secs, took 0.21 GiB",
            "_EngineBackgroundProcess pid=9083",
        ),
        # https://github.com/vllm-project/vllm/pull/25607 (llm-d, seen through cat -v)
        (
            "^[[1;36m(APIServer pid=1)^[[0;0m ^[[1;36m(EngineCore_DP0 pid=276)^[[0;0m INFO 09-24 "
            "12:58:10 [default_loader.py:267] Loading weights took 9.80 seconds",
            "EngineCore_DP0 pid=276",
        ),
        # https://github.com/vllm-project/vllm-omni/pull/1160: a stage tag after the process
        (
            "(EngineCore_DP0 pid=181642) [Stage-0] INFO 02-02 18:25:04 [core.py:273] init engine "
            "(profile, create kv cache, warmup model) took 2.60 seconds",
            "EngineCore_DP0 pid=181642",
        ),
    ],
)
def test_unknown_and_nested_prefixes_keep_the_rank(line, rank):
    from model.readers.vllm_log import _clean

    rows = _clean(line, 1)
    assert len(rows) == 1 and rows[0].rank == rank and rows[0].prefixed
    assert rows[0].msg.startswith(("[", "Graph", "Loading", "init")), rows[0].msg
    assert rows[0].ts is not None and rows[0].ts[0] == "vllm"


def test_ray_repeated_suffix_and_ranks():
    text = (
        "(RayWorkerWrapper pid=4025, ip=10.0.0.2) INFO 08-17 23:29:22 model_runner.py:266] "
        "Loading model weights took 1.5874 GB [repeated 3x across cluster]\n"
        "INFO 08-17 23:29:22 model_runner.py:266] Loading model weights took 1.5874 GB\n"
    )
    _check(parse_log(text), {"model_loading_gib": 1.5874}, ranks=2)


def test_version_wordings():
    line = "INFO 01-01 00:00:09 [loader.py:1] Loading weights took 9.00 seconds"
    for head, version in (
        (
            "(APIServer pid=1) INFO 11-24 11:43:10 [api_server.py:1] vLLM API server version "
            "0.11.2",
            "0.11.2",
        ),
        (
            "INFO 02-27 06:12:49 llm_engine.py:232] Initializing a V0 LLM engine (v0.7.3) with "
            "config: model='m'",
            "0.7.3",
        ),
        (
            "(APIServer pid=1) INFO 07-03 16:27:41 [utils.py:299]  \u2584\u2584 \u2584\u2588 "
            "\u2588     \u2588     \u2588 \u2580\u2584\u2580 \u2588  version 0.19.0",
            "0.19.0",
        ),
    ):
        ds = parse_log(head + "\n" + line)
        assert ds.extra["version"] == version
        assert ds.conditions["vllm_version"] == version
    assert parse_log(line).extra["version"] is None


def test_model_from_a_serve_command():
    ds = parse_log(
        "$ vllm serve meta-llama/Meta-Llama-3-8B -tp 2 --max-model-len 8192\n"
        "Graph capturing finished in 10 secs, took 0.32 GiB\n"
    )
    _check(
        ds,
        {"graph_capture_s": 10.0},
        {"model": "meta-llama/Meta-Llama-3-8B", "tensor_parallel_size": 2, "gpus": 2},
    )


# ---------------------------------------------------------------------------------------------
# 2. The real excerpts in ../shared (absent in CI)

_need_shared = pytest.mark.skipif(
    not SHARED.is_dir(), reason=f"{SHARED} absent (the shared fixtures live outside the repo)"
)


def _shared(prefix: str):
    (path,) = SHARED.glob(prefix + "_*.log")
    return parse_log(path.read_text(encoding="utf-8"), path.name)


SHARED_EXPECTED = {
    "01": (
        {"graph_capture_s": 6.0, "enforce_eager": False},
        {"engine": "V0"},
        {"version": None, "ranks": 1, "items": {"item5_s": 6.0}},
    ),
    "03": ({"model_loading_gib": 1.5874, "enforce_eager": False}, {"engine": "V0"}, {}),
    "05": (
        {
            "model_loading_gib": 0.2389,
            "gpu_blocks": 37300,
            "max_concurrency": 291.41,
            "max_concurrency_tokens": 2048,
            "graph_capture_s": 6.0,
            "enforce_eager": False,
        },
        {
            "model": "facebook/opt-125m",
            "load_format": "auto",
            "tensor_parallel_size": 1,
            "dtype": "float16",
            "max_model_len": 2048,
            "vllm_version": "0.6.4.dev26+g92d86da2.d20241017",
            "engine": "V0",
        },
        {"version": "0.6.4.dev26+g92d86da2.d20241017"},
    ),
    "07": (
        {
            "model_loading_gib": 18.4902,
            "memory_profiling_s": 72.36,
            "kv_cache_gib": 34.96,
            "gpu_blocks": 189945,
            "max_concurrency": 2967.89,
            "max_concurrency_tokens": 1024,
            "enforce_eager": False,
        },
        {"total_gpu_memory_gib": 79.15, "gpu_memory_utilization": 0.9, "gpus": 2},
        {"ranks": 2},
    ),
    "09": (
        {
            "dynamo_transform_s": 4.60,
            "compile_s": 14.77,
            "torch_compile_total_s": 19.37,
            "graph_capture_s": 15.0,
            "graph_capture_gib": 0.33,
            "init_engine_s": 39.34,
        },
        {"model": "meta-llama/Meta-Llama-3-8B"},
        {"start_ups": 2, "items": {"item5_s": 34.37}},
    ),
    "12": (
        {
            "memory_profiling_s": 0.44,
            "model_loading_gib": 1.12,
            "kv_cache_gib": 61.84,
            "gpu_blocks": 36184,
            "max_concurrency": 70.67,
            "max_concurrency_tokens": 8192,
            "graph_capture_s": 2.0,
            "graph_capture_gib": 0.13,
            "init_engine_s": 5.13,
            "enforce_eager": False,
        },
        {"total_gpu_memory_gib": 79.19, "gpu_memory_utilization": 0.8, "engine": "V0"},
        {},
    ),
    "15": (
        {
            "loading_weights_s": 0.69,
            "model_loading_gib": 3.4213,
            "model_loading_s": 0.902026,
            "dynamo_transform_s": 7.51,
            "torch_compile_total_s": 7.51,
            "compile_cache_hit": True,
            "graph_capture_s": 17.0,
            "graph_capture_gib": 0.48,
            "init_engine_s": 34.11,
            "kv_cache_tokens": 613024,
            "max_concurrency": 4.68,
            "max_concurrency_tokens": 131072,
            "enforce_eager": False,
        },
        {"engine": "V1"},
        {"items": {"item4_s": 0.902026, "item5_s": 24.51}, "start_ups": 1},
    ),
    "18": (
        {
            "loading_weights_s": 1.01,
            "model_loading_gib": 4.1801,
            "model_loading_s": 2.524322,
            "dynamo_transform_s": 8.28,
            "compile_cache_load_s": 1.495,
            "compile_cache_hit": True,
        },
        {"engine": "V1", "weights_format": "safetensors"},
        {"items": {"item4_s": 2.524322, "item5_compile_s": 9.775}},
    ),
    "20": (
        {
            "model_loading_gib": 2.0513,
            "model_loading_s": 27.200487,
            "dynamo_transform_s": 6.07,
            "compile_s": 13.62,
            "torch_compile_total_s": 19.69,
            "kv_cache_gib": 33.31,
            "kv_cache_tokens": 1587648,
            "max_concurrency": 775.22,
            "max_concurrency_tokens": 2048,
            "graphs_captured": 86,
            "enforce_eager": False,
        },
        {"engine": "V1"},
        {},
    ),
    "24": (
        {
            "loading_weights_s": 26.93,
            "model_loading_gib": 7.64,
            "model_loading_s": 32.969258,
            "dynamo_transform_s": 8.52,
        },
        {"engine": "V1"},
        {},
    ),
    "26": (
        {
            "graph_capture_s": 1.0,
            "graph_capture_gib": 0.45,
            "init_engine_s": 90.0,
            "init_compilation_s": 8.9,
            "enforce_eager": False,
        },
        {"engine": "V1", "gpus": 2},
        {"ranks": 2, "items": {"item5_s": 9.9}},
    ),
    "30": ({"stream_gib": 69.3, "stream_s": 41.52, "stream_gib_s": 1.7}, {}, {}),
}


@_need_shared
@pytest.mark.parametrize("prefix", sorted(SHARED_EXPECTED))
def test_shared_real_excerpts(prefix):
    figures, conditions, extra = SHARED_EXPECTED[prefix]
    _check(_shared(prefix), figures, conditions, **extra)


@_need_shared
def test_shared_every_excerpt_is_read():
    for path in sorted(SHARED.glob("*.log")):
        ds = parse_log(path.read_text(encoding="utf-8"), path.name)
        assert ds.figures, path.name
    names = {p.name[:2] for p in SHARED.glob("*.log")}
    assert names <= set(SHARED_EXPECTED), "a new shared excerpt needs its expected figures"


@_need_shared
def test_shared_03_ranks_and_gb_note():
    ds = _shared("03")
    assert ds.extra["ranks"] in (7, 8)
    assert "means GiB" in _problems(ds)


@_need_shared
def test_shared_09_two_start_ups():
    ds = _shared("09")
    assert "2 start-ups in this log" in _problems(ds)
    assert "figures are of the last one" in _problems(ds)


# ---------------------------------------------------------------------------------------------
# 3. Bad input


def test_empty_text_is_an_error_naming_the_file():
    for text in ("", "   \n\n\t\n"):
        with pytest.raises(ScenarioError) as err:
            parse_log(text, "empty.log")
        assert err.value.key == "empty.log" and "empty" in err.value.message


def test_no_timing_line_is_an_error_saying_what_is_looked_for():
    text = "INFO 01-01 00:00:00 [api_server.py:1] Starting vLLM API server on http://0.0.0.0:8000\n"
    with pytest.raises(ScenarioError) as err:
        parse_log(text * 50, "server.log")
    assert err.value.key == "server.log"
    for wording in ("no vLLM start-up timing line", "Loading weights took", "init engine"):
        assert wording in err.value.message


def test_config_lines_alone_are_not_timings():
    text = (
        "INFO 10-17 13:27:36 llm_engine.py:237] Initializing an LLM engine (v0.6.4) with config: "
        "model='facebook/opt-125m', enforce_eager=True\n"
    )
    with pytest.raises(ScenarioError):
        parse_log(text, "config.log")


def test_not_text_and_binary():
    with pytest.raises(ScenarioError):
        parse_log(b"Loading weights took 1 seconds", "bytes.log")  # type: ignore[arg-type]
    with pytest.raises(ScenarioError) as err:
        parse_log_bytes("weights.bin", b"\x00\x01\x02PK\x03\x04" * 100)
    assert err.value.key == "weights.bin"
    with pytest.raises(ScenarioError):
        parse_log_bytes("latin1.log", "caf\xe9 took".encode("latin-1"))
    with pytest.raises(ScenarioError):
        parse_log_bytes("big.log", b"x" * 6_000_000)


def test_binary_ish_text_without_timings():
    rng = random.Random(7)
    alphabet = [chr(c) for c in (*range(1, 32), *range(0x80, 0x3000))]
    text = "".join(rng.choices(alphabet, k=200_000))
    with pytest.raises(ScenarioError):
        parse_log(text, "garbage.log")


def test_parse_log_bytes_with_bom_and_crlf():
    data = "\ufeffINFO 01-01 00:00:01 [loader.py:1] Loading weights took 2.50 seconds\r\n"
    ds = parse_log_bytes("bom.log", data.encode("utf-8"))
    assert ds.figures == {"loading_weights_s": 2.5}
    assert ds.name == "bom.log" and ds.format == "vllm_log" and ds.kind == "startup_log"


def test_negative_nan_and_absurd_values_are_problems_not_figures():
    text = "\n".join(
        [
            "INFO 01-01 00:00:01 [loader.py:1] Loading weights took -3 seconds",
            "INFO 01-01 00:00:02 [gpu_model_runner.py:1] Model loading took nan GiB and 2.5 "
            "seconds",
            "INFO 01-01 00:00:03 [backends.py:1] Dynamo bytecode transform time: inf s",
            "INFO 01-01 00:00:04 [monitor.py:1] torch.compile takes 1e400 s in total",
            "INFO 01-01 00:00:05 [gpu_model_runner.py:1] Graph capturing finished in 5 secs, "
            "took 9e9 GiB",
            "INFO 01-01 00:00:06 [core.py:1] init engine (profile, create kv cache, warmup model) "
            "took 12.5 seconds",
        ]
    )
    ds = parse_log(text)
    assert ds.figures == {
        "model_loading_s": 2.5,
        "graph_capture_s": 5.0,
        "init_engine_s": 12.5,
        "enforce_eager": False,
    }
    problems = _problems(ds)
    for where in ("line 1", "line 2", "line 3", "line 4", "line 5"):
        assert where in problems
    assert "negative" in problems and "not a number" in problems


def test_only_unreadable_values_is_an_error_that_says_why():
    with pytest.raises(ScenarioError) as err:
        parse_log("Loading weights took -3 seconds\n", "neg.log")
    assert "negative" in err.value.message and "line 1" in err.value.message


def test_problems_are_capped():
    text = "Loading weights took -1 seconds\n" * 200 + "Loading weights took 1 seconds\n"
    ds = parse_log(text)
    assert len(ds.problems) == MAX_PROBLEMS and ds.problems_dropped > 0
    assert ds.to_json()["problems"][-1].startswith("… and ")


def _guarded(fn, guard_s=20.0):
    """``fn()``, failed rather than left hanging past ``guard_s``: a hang guard only, ten times
    the wall-clock limit these tests used to assert (issue 40). How long the big and hostile
    logs take is measured by benchmarks/suite_timings.py."""
    with hang_guard(guard_s):
        return fn()


_RUNTIME_LINES = [
    "(APIServer pid=1) INFO 06-19 23:{m:02d}:{s:02d} [loggers.py:123] Engine 000: Avg prompt "
    "throughput: {a:.1f} tokens/s, Avg generation throughput: {b:.1f} tokens/s, Running: {r} "
    "reqs, Waiting: 0 reqs, GPU KV cache usage: {c:.1f}%, Prefix cache hit rate: {c:.1f}%",
    '(APIServer pid=1) INFO:     10.0.{r}.{s}:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    "(APIServer pid=1) INFO 06-19 23:{m:02d}:{s:02d} [logger.py:41] Received request "
    "chatcmpl-{a:.0f}: prompt: 'Summarise the following text; it took 3 seconds to load', "
    "params: SamplingParams(n=1, temperature=0.7, max_tokens=512), lora_request: None.",
    "(APIServer pid=1) INFO 06-19 23:{m:02d}:{s:02d} [engine.py:330] Finished request "
    "chatcmpl-{a:.0f}.",
    "(EngineCore_DP0 pid=88) WARNING 06-19 23:{m:02d}:{s:02d} [scheduler.py:111] Sequence group "
    "{r} is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache.",
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3.12/site-packages/vllm/entrypoints/openai/serving_chat.py", line '
    "{r}, in create_chat_completion",
    "\x1b[32mINFO\x1b[0m {m:02d}:{s:02d} worker heartbeat ok; GPU memory {c:.1f} GiB",
]


def _runtime_log(size: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    lines, total = [], 0
    while total < size:
        line = rng.choice(_RUNTIME_LINES).format(
            m=rng.randint(0, 59),
            s=rng.randint(0, 59),
            a=rng.random() * 1000,
            b=rng.random() * 1000,
            r=rng.randint(0, 255),
            c=rng.random() * 100,
        )
        lines.append(line)
        total += len(line) + 1
    return lines


def _server_log() -> str:
    lines = _runtime_log(5_000_000)
    lines.insert(7, "INFO 01-01 00:00:09 [loader.py:1] Loading weights took 4.25 seconds")
    return "\n".join(lines)


def test_five_megabytes_of_a_running_server_log_give_only_its_timing_line():
    ds = _guarded(lambda: parse_log(_server_log(), "server.log"), 30)
    assert ds.figures == {"loading_weights_s": 4.25}


def _word_salad() -> str:
    rng = random.Random(3)
    words = (
        "GET /v1/completions 200 OK took loading the model request took ms Capturing config "
        "version memory finished serve stream eager compile blocks: cuda graph INFO WARNING "
        "(APIServer pid=1) 12.5 seconds GiB secs takes weights graph"
    ).split()
    lines, size = [], 0
    while size < 1_000_000:
        line = " ".join(rng.choice(words) for _ in range(rng.randint(3, 25)))
        lines.append(line)
        size += len(line) + 1
    lines.append("INFO 01-01 00:00:09 [loader.py:1] Loading weights took 4.25 seconds")
    return "\n".join(lines)


def test_a_megabyte_of_word_salad_gives_only_its_timing_line():
    """Every line holds the words a timing line is made of, none holds a timing line."""
    ds = _guarded(lambda: parse_log(_word_salad(), "salad.log"), 30)
    assert ds.figures["loading_weights_s"] == 4.25
    assert [k for k in ds.figures if k.endswith("_s")] == ["loading_weights_s"]
    assert len(ds.problems) <= MAX_PROBLEMS


def _many_short_lines() -> str:
    return "a\n" * 2_400_000 + "Graph capturing finished in 3 secs\n"


def test_many_short_lines_are_all_read_to_the_last():
    ds = _guarded(lambda: parse_log(_many_short_lines()), 30)
    assert ds.figures["graph_capture_s"] == 3.0


def test_a_megabyte_line_without_newline_is_skipped():
    big = "Loading weights took " + "9" * 1_000_000
    with pytest.raises(ScenarioError):
        _guarded(lambda: parse_log(big, "one-line.log"))
    ds = _guarded(lambda: parse_log(big + "\nGraph capturing finished in 3 secs\n"))
    assert ds.figures["graph_capture_s"] == 3.0
    assert f"more than {MAX_LINE:,}" in _problems(ds) and "line 1" in _problems(ds)


#: lines built to make a reader backtrack or loop over them
HOSTILE_LINES = [
    "took " * 100_000,
    "Loading weights took " * 900,
    "Model loading took " * 1000,
    "Compiling a graph for " * 900 + "takes",
    "init engine " * 1600 + "took",
    "Directly load the compiled graph " * 600 + "from the cache, took",
    "Capturing: 1%" + "|" * 19_000,
    "Capturing CUDA graphs: 100%|" + "\u2588" * 19_000,
    "(" * 19_000,
    "(a pid=1) " * 1900,
    "[0;" * 4900,
    "\x1b[" * 9000,
    "\x1b]" * 9000,
    "> " * 9000,
    "1" * 19_990 + " seconds",
    "Maximum concurrency for " + "1," * 9000,
    "non-default args: {'model': " + "'" * 19_000,
    "Initializing an LLM engine (v" + "1." * 9000,
    "2024-01-01T00:00:00 " * 900,
    "vllm-1  | " * 1900,
    "Overall time to stream " + "9 " * 9000,
    "$ vllm serve " + "-x " * 6000,
]


@pytest.mark.parametrize("bomb", HOSTILE_LINES)
def test_hostile_lines_leave_the_next_line_read(bomb):
    valid = "\nGraph capturing finished in 3 secs\n"
    ds = _guarded(lambda: parse_log(bomb + valid), 10)
    assert ds.figures.get("graph_capture_s") == 3.0
    assert len(ds.problems) <= MAX_PROBLEMS
    # and the same bomb as 200 lines (about 4 MB): the same figures, the problems capped
    many = _guarded(lambda: parse_log("\n".join([bomb[:MAX_LINE]] * 200) + valid), 50)
    assert many.figures == ds.figures
    assert len(many.problems) <= MAX_PROBLEMS


# ---------------------------------------------------------------------------------------------
# 4. Noise around the lines never changes what is read

_PREFIXES = [
    "vllm-1  | ",
    "2025-06-19T23:05:01.123456789Z ",
    "2024-01-18T07:51:30+0800 ",
    "2026-05-01 23:13:17.078 | ",
    "[pod/vllm-7c9f/vllm] ",
    "Aug 18 22:21:59 sys0 vllm[188300]: ",
    "> ",
    "\x1b[0m",
    "\x1b[2K",
    "2024-09-13T22:24:43,002 [INFO ] W-9000-model_1.0-stdout MODEL_LOG - ",
]
_CLEAN_LOGS = [
    "v1_011_tp2_enginecore.log",
    "v1_2026_mrv2_compile_range.log",
    "v065_memprof_tp2.log",
    "v08_v0_brackets.log",
    "v05_tp4_workers.log",
]


def _noisy(line: str, draw) -> str:
    if line.startswith("(") and ") " in line and draw(st.booleans()):
        head, rest = line.split(") ", 1)
        esc = draw(st.sampled_from(["\x1b", "^[", ""]))  # ESC, caret notation (cat -v), lost
        line = f"{esc}[1;36m{head}){esc}[0;0m {rest}"
    if draw(st.booleans()):
        line = line.replace("INFO ", "\x1b[32mINFO\x1b[0m ", 1)
    for prefix in draw(st.lists(st.sampled_from(_PREFIXES), max_size=3)):
        line = prefix + line
    if draw(st.booleans()):
        line = "\u2502 " + line + " \u2502"
    return line + " " * draw(st.integers(0, 5))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(_CLEAN_LOGS), data=st.data(), crlf=st.booleans())
def test_noise_around_lines_never_changes_the_figures(name, data, crlf):
    text = (LOGS / name).read_bytes().decode("utf-8")
    clean = parse_log(text, name)
    noisy = "\n".join(_noisy(line, data.draw) for line in text.split("\n"))
    if crlf:
        noisy = noisy.replace("\n", "\r\n")
    ds = parse_log(noisy, name)
    assert ds.figures == clean.figures
    assert ds.extra["items"] == clean.extra["items"]
    assert ds.extra["version"] == clean.extra["version"]
    assert ds.extra["start_ups"] == clean.extra["start_ups"]
    assert ds.conditions.get("model") == clean.conditions.get("model")


def test_parse_log_says_at_least_for_gpus_counted_from_the_ranks_it_shows(tmp_path):
    import subprocess
    import sys

    lines = [
        f"(VllmWorker rank={r} pid={100 + r}) INFO 06-19 23:05:0{r} [default_loader.py:262] "
        f"Loading weights took 3.{r} seconds"
        for r in range(7)
    ]
    path = tmp_path / "excerpt.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "whatif", "parse-log", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "at least 7" in done.stdout


STREAM = (
    "{prefix}INFO 06-19 23:05:{sec} [file_streamer.py:179] [RunAI Streamer] Overall time to "
    "stream {size} of all files to cpu: {s}s, {rate}/s"
)


def test_two_unrelated_streamer_lines_are_noted_and_one_models_shards_are_not(tmp_path):
    from model.readers.vllm_log import parse_log

    unrelated = [
        STREAM.format(prefix="", sec="01", size="942.3 MiB", s="1.2", rate="785.3 MiB"),
        STREAM.format(prefix="", sec="09", size="14.9 GiB", s="6.1", rate="2.4 GiB"),
    ]
    ds = parse_log("\n".join(unrelated), "two.log")
    notes = " ".join(ds.extra.get("notes", []))
    assert "2 Run:ai streamer lines" in notes and "keep the longest (line 2: 14.9 GiB" in notes
    assert "line 1: 0.92 GiB in 1.2 s" in notes
    assert ds.figures["stream_s"] == pytest.approx(6.1)

    shards = [
        STREAM.format(
            prefix=f"(VllmWorker rank={r} pid={10 + r}) ",
            sec=f"0{r}",
            size="3.7 GiB",
            s=f"2.{r}",
            rate="1.7 GiB",
        )
        for r in range(4)
    ]
    ds = parse_log("\n".join(shards), "tp4.log")
    assert not any("streamer" in n for n in ds.extra.get("notes", []))
    assert ds.figures["stream_s"] == pytest.approx(2.3)
