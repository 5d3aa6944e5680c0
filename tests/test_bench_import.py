"""Benchmark-output importers (``model.readers.bench_import``, SPEC 4.5): one hand-written file
per format and variant in ``tests/data/bench/`` with the figures expected by hand, the real
published files in ``shared/fixtures/bench_formats`` when that folder is there, and bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model.errors import ScenarioError
from model.readers.bench_import import FORMATS, read_bench
from model.readers.importers import import_file
from model.readers.measurements import decode_text
from tests.helpers import hang_guard

DATA = Path(__file__).resolve().parent / "data" / "bench"
REAL = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "bench_formats"
GENAI_ARTIFACT = "artifacts/Qwen_Qwen3-8B-openai-chat-concurrency32/profile_export_genai_perf.csv"

approx = pytest.approx


def load(name: str, as_name: str | None = None):
    data = (DATA / name).read_bytes()
    return read_bench(decode_text(name, data), as_name or name)


def problems(ds) -> list[str]:
    return [str(p) for p in ds.problems]


def check_clean(ds) -> None:
    """What every Dataset keeps to: a known format, numbers only as figures (ints for counts),
    no per-request list copied, JSON without NaN."""
    assert ds.format in FORMATS
    for key, value in ds.figures.items():
        assert isinstance(value, int | float) and not isinstance(value, bool), key
        assert math.isfinite(value) and value >= 0, key
    for key in ("completed", "failed", "max_concurrency", "runs"):
        if key in ds.figures:
            assert isinstance(ds.figures[key], int), key
    for where in (ds.figures, ds.conditions, *ds.rows):
        for key, value in where.items():
            assert not isinstance(value, list | dict), key
        for key in ("ttfts", "itls", "input_lens", "output_lens", "latencies", "generated_texts"):
            assert key not in where
    json.dumps(ds.to_json(), allow_nan=False)


# ------------------------------------------------------------------------------ vLLM serve JSON


def test_legacy_save_result_json():
    ds = load("serve_legacy.json")
    check_clean(ds)
    assert (ds.format, ds.kind) == ("vllm_bench_json", "serving")
    f = ds.figures
    assert f["completed"] == 4 and f["duration"] == 2.5
    assert f["request_throughput"] == 1.6
    assert f["output_throughput"] == 204.8 and f["total_token_throughput"] == 1024.0
    assert f["mean_ttft_ms"] == 65.0 and f["median_ttft_ms"] == 65.0 and f["p99_ttft_ms"] == 79.7
    assert f["p90_ttft_ms"] == 77.0 and f["std_ttft_ms"] == 11.18
    assert f["mean_tpot_ms"] == 11.5 and f["p99_tpot_ms"] == 12.97
    assert f["median_itl_ms"] == 11.0 and f["p90_itl_ms"] == 12.8
    assert f["mean_input_tokens"] == 512.0 and f["mean_output_tokens"] == 128.0
    # "request_goodput:" is null (no --goodput), max_concurrency null: neither is a figure
    assert "request_goodput" not in f and "request_goodput:" not in f
    assert "max_concurrency" not in f and "failed" not in f
    c = ds.conditions
    assert c["request_rate"] == "inf"
    assert c["model"] == "Qwen/Qwen2.5-7B-Instruct" and c["backend"] == "vllm"
    assert c["gpu"] == "1xNVIDIA_H100_80GB_HBM3" and c["tp"] == "1"
    assert c["num_prompts"] == 4 and c["date"] == "20250412-101500"
    assert c["mean_input_tokens"] == 512.0
    assert not ds.rows and not ds.problems


def test_vllm_bench_serve_json():
    ds = load("serve_new.json")
    check_clean(ds)
    assert ds.format == "vllm_bench_json"
    f = ds.figures
    assert f["completed"] == 198 and f["failed"] == 2 and f["max_concurrency"] == 16
    assert f["duration"] == 40.0 and f["request_throughput"] == 4.95
    assert f["request_goodput"] == 4.5
    assert f["max_output_tokens_per_s"] == 1520.0 and f["max_concurrent_requests"] == 16
    assert f["mean_e2el_ms"] == 3120.0 and f["p99.9_e2el_ms"] == 3700.0
    assert f["p99.9_ttft_ms"] == 301.0 and f["median_tpot_ms"] == 11.5
    assert f["mean_input_tokens"] == approx(1024.0) and f["mean_output_tokens"] == approx(256.0)
    c = ds.conditions
    assert c["max_concurrency"] == 16 and c["request_rate"] == 20.0
    assert c["model"] == "Qwen/Qwen3-8B" and c["gpu"] == "8xNVIDIA_H200"
    assert "label" not in c  # null
    assert not ds.problems


def test_append_result_jsonl_three_runs_and_a_broken_line():
    ds = load("serve_runs.jsonl")
    check_clean(ds)
    assert (ds.format, ds.kind) == ("vllm_bench_jsonl", "serving")
    assert problems(ds) == ["line 3: not JSON"]
    assert len(ds.rows) == 3
    assert [r["max_concurrency"] for r in ds.rows] == [1, 4, 16]
    assert [r["request_rate"] for r in ds.rows] == [10.0, 10.0, "inf"]
    assert [r["completed"] for r in ds.rows] == [20, 80, 320]
    assert [r["mean_ttft_ms"] for r in ds.rows] == [30.0, 42.0, 95.0]
    assert all(
        r["mean_input_tokens"] == 512.0 and r["mean_output_tokens"] == 128.0 for r in ds.rows
    )
    f = ds.figures  # the last run, and how many
    assert f["runs"] == 3 and f["completed"] == 320 and f["duration"] == 80.0
    assert f["p99_itl_ms"] == 30.0 and f["request_throughput"] == 4.0
    assert ds.conditions["request_rate"] == "inf" and ds.conditions["max_concurrency"] == 16


def test_jsonl_duplicated_runs_are_fine():
    line = (DATA / "serve_runs.jsonl").read_text().splitlines()[0]
    ds = read_bench(line + "\n" + line + "\n", "dup.jsonl")
    assert ds.format == "vllm_bench_jsonl" and len(ds.rows) == 2
    assert ds.rows[0] == ds.rows[1] and ds.figures["runs"] == 2 and not ds.problems


# ----------------------------------------------------------------------------- stdout tables


def test_legacy_stdout_table_with_command_and_logs():
    ds = load("serve_stdout_legacy.txt")
    check_clean(ds)
    assert (ds.format, ds.kind) == ("vllm_bench_stdout", "serving")
    f = ds.figures
    assert f["completed"] == 200 and f["duration"] == 52.37
    assert f["total_token_throughput"] == 8798.93  # "Total Token throughput" (capital T)
    assert f["output_throughput"] == 977.66 and f["request_throughput"] == 3.82
    assert f["mean_ttft_ms"] == 142.18 and f["median_ttft_ms"] == 131.40
    assert f["p99_ttft_ms"] == 388.05 and f["p99_tpot_ms"] == 31.77 and f["p99_itl_ms"] == 62.10
    assert f["mean_input_tokens"] == 2048.0 and f["mean_output_tokens"] == 256.0
    assert f["runs"] == 1 and "failed" not in f
    # the command (continued over three lines), the Namespace print and the preamble
    c = ds.conditions
    assert c["model"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert c["max_concurrency"] == 32 and c["request_rate"] == 4.0 and c["num_prompts"] == 200
    assert c["input_len"] == 2048 and c["output_len"] == 256
    assert not ds.problems  # the unknown "Accuracy Rate (%)" row is silently fine
    assert len(ds.rows) == 1


def test_new_stdout_two_tables_trailing_spaces():
    text = (DATA / "serve_stdout_new.txt").read_text()
    assert "Successful requests:                     100       \n" in text
    ds = read_bench(text, "serve_stdout_new.txt")
    check_clean(ds)
    assert ds.format == "vllm_bench_stdout"
    assert len(ds.rows) == 2 and ds.figures["runs"] == 2
    first, second = ds.rows
    assert first["completed"] == 100 and first["failed"] == 0 and first["max_concurrency"] == 8
    assert first["request_rate"] == "inf" and first["num_prompts"] == 100
    assert first["p99.9_ttft_ms"] == 95.75 and first["mean_e2el_ms"] == 1995.30
    assert first["max_concurrent_requests"] == 8 and first["max_output_tokens_per_s"] == 904.0
    assert second["request_rate"] == 20.0 and second["max_concurrency"] == 64
    f = ds.figures  # the last table
    assert f["completed"] == 998 and f["failed"] == 2 and f["max_concurrency"] == 64
    assert f["duration"] == 60.12 and f["request_goodput"] == 15.90
    assert f["total_token_throughput"] == 19920.16  # "Total token throughput" (new spelling)
    assert f["p90_ttft_ms"] == 350.0 and f["p99_ttft_ms"] == 610.25 and f["p99.9_ttft_ms"] == 720.0
    assert f["median_tpot_ms"] == 17.90 and f["p99.9_itl_ms"] == 55.50
    assert f["mean_e2el_ms"] == 3832.10 and f["p99_e2el_ms"] == 4700.0
    assert f["mean_input_tokens"] == 1000.0 and f["mean_output_tokens"] == 200.0
    assert ds.conditions["model"] == "Qwen/Qwen3-8B" and ds.conditions["input_len"] == 1000
    assert not ds.problems


def test_stdout_table_followed_by_its_saved_json_is_one_run():
    table = (DATA / "serve_stdout_legacy.txt").read_text()
    saved = json.loads((DATA / "serve_legacy.json").read_text())
    saved["completed"] = 200
    ds = read_bench(table + "<<<RESULT_START>>>\n" + json.dumps(saved) + "\n", "log.txt")
    assert ds.format == "vllm_bench_stdout" and len(ds.rows) == 1
    assert ds.figures["std_ttft_ms"] == 11.18  # only the JSON has it
    assert ds.figures["duration"] == 2.5  # the JSON's unrounded figures win
    assert ds.conditions["gpu"] == "1xNVIDIA_H100_80GB_HBM3"
    saved["completed"] = 7  # another run: a row of its own
    ds = read_bench(table + json.dumps(saved) + "\n", "log.txt")
    assert len(ds.rows) == 2 and ds.figures["completed"] == 7


def test_namespace_line_gives_conditions_without_eval():
    text = (
        "Namespace(backend='vllm', dataset_name='sharegpt', model='org/m', max_concurrency=None, "
        "num_prompts=50, request_rate=inf, random_input_len=1024, enforce_eager=True, "
        "tensor_parallel_size=4, compilation_config=Cfg(model='other'))\n"
        "============ Serving Benchmark Result ============\n"
        "Successful requests:                     50\n"
        "==================================================\n"
    )
    ds = read_bench(text, "x.txt")
    c = ds.conditions
    assert c["model"] == "org/m" and c["num_prompts"] == 50 and c["request_rate"] == "inf"
    assert c["tensor_parallel_size"] == 4 and c["enforce_eager"] is True
    assert "max_concurrency" not in c  # None
    assert "input_len" not in c  # random_input_len is an unused default with sharegpt


def test_stdout_with_a_garbled_value_names_the_line():
    text = (
        "============ Serving Benchmark Result ============\n"
        "Successful requests:                     50\n"
        "Mean TTFT (ms):                          abc\n"
        "==================================================\n"
    )
    ds = read_bench(text, "x.txt")
    assert ds.figures["completed"] == 50 and "mean_ttft_ms" not in ds.figures
    (p,) = problems(ds)
    assert p.startswith("line 3, Mean TTFT (ms):") and "'abc' is not a number" in p


# -------------------------------------------------------------------- latency and throughput


def test_latency_stdout():
    ds = load("latency_stdout.txt")
    check_clean(ds)
    assert (ds.format, ds.kind) == ("vllm_latency_stdout", "latency")
    f = ds.figures
    assert f["avg_latency_s"] == 1.2345678901234567 and f["std_latency_s"] == 0.0251
    assert f["p10_latency_s"] == approx(1.2011111111111111) and f["p50_latency_s"] == 1.23
    assert f["p90_latency_s"] == 1.27 and f["p99_latency_s"] == approx(1.31)
    assert f["init_engine_s"] == 23.40 and f["runs"] == 1
    c = ds.conditions
    assert c["model"] == "meta-llama/Llama-3.1-8B-Instruct" and c["batch_size"] == 4
    assert c["input_len"] == 512 and c["output_len"] == 128 and c["tensor_parallel_size"] == 2
    assert ds.rows[0]["bench"] == "latency" and not ds.problems


def test_latency_json():
    ds = load("latency.json")
    check_clean(ds)
    assert (ds.format, ds.kind) == ("vllm_latency_json", "latency")
    assert ds.figures == {
        "avg_latency_s": 0.5123,
        "p10_latency_s": 0.5102,
        "p25_latency_s": 0.511,
        "p50_latency_s": 0.512,
        "p75_latency_s": 0.5135,
        "p90_latency_s": 0.5145,
        "p99_latency_s": 0.5149,
        "iterations": 3,
    }


def test_throughput_stdout_new_and_old_lines():
    ds = load("throughput_stdout.txt")
    check_clean(ds)
    assert (ds.format, ds.kind) == ("vllm_throughput_stdout", "throughput")
    new, old = ds.rows
    assert new["request_throughput"] == 12.50 and new["total_token_throughput"] == 16000.0
    assert new["output_throughput"] == 3200.0
    assert new["total_input_tokens"] == 512000 and new["total_output_tokens"] == 128000
    assert new["init_engine_s"] == 9.5 and new["input_len"] == 1024 and "enforce_eager" not in new
    # before vLLM PR #8914: "Y tokens/s" is total tokens, there is no output split
    assert old["request_throughput"] == 10.0 and old["total_token_throughput"] == 12800.0
    assert "output_throughput" not in old and old["enforce_eager"] is True
    assert ds.figures["runs"] == 2 and ds.figures["request_throughput"] == 10.0
    assert "output_throughput" not in ds.figures  # the last run's, not a mix
    assert not ds.problems


def test_throughput_json():
    ds = load("throughput.json")
    check_clean(ds)
    assert (ds.format, ds.kind) == ("vllm_throughput_json", "throughput")
    assert ds.figures == {
        "duration": 40.0,
        "completed": 500,
        "total_num_tokens": 640000,
        "request_throughput": 12.5,
        "total_token_throughput": 16000.0,
    }


def test_latency_and_throughput_in_one_paste():
    text = (DATA / "latency_stdout.txt").read_text() + (DATA / "throughput_stdout.txt").read_text()
    ds = read_bench(text, "both.txt")
    assert (ds.format, ds.kind) == ("vllm_latency_stdout", "latency")  # the first run's
    assert [r["bench"] for r in ds.rows] == ["latency", "throughput", "throughput"]
    assert ds.figures["avg_latency_s"] == 1.2345678901234567
    assert ds.figures["request_throughput"] == 10.0 and ds.figures["runs"] == 3


# ------------------------------------------------------------------------------- GenAI-Perf


def test_genai_perf_csv_old_without_units():
    ds = load("genai_perf_old.csv")
    check_clean(ds)
    assert (ds.format, ds.kind) == ("genai_perf_csv", "serving")
    f = ds.figures
    assert f["mean_ttft_ms"] == 1234.50 and f["median_ttft_ms"] == 1200.75  # "1,234.50"
    assert f["p99_ttft_ms"] == 1990.40 and f["max_ttft_ms"] == 2010.0
    assert f["mean_e2el_ms"] == 5678.90 and f["p99_e2el_ms"] == 7600.0
    assert f["mean_itl_ms"] == 22.40 and f["median_itl_ms"] == 22.10
    assert f["mean_output_tokens"] == 200.50 and f["mean_input_tokens"] == 2048.0
    assert f["output_throughput"] == 530.25 and f["request_throughput"] == 2.64
    assert "completed" not in f and not any("tpot" in k for k in f)  # no TPOT is made up
    assert ds.conditions == {"mean_input_tokens": 2048.0, "mean_output_tokens": 200.50}
    assert not ds.problems


def test_genai_perf_csv_new_crlf_units_telemetry():
    assert b"\r\n" in (DATA / "genai_perf_new.csv").read_bytes()
    text = (DATA / "genai_perf_new.csv").read_bytes().decode()  # raw \r\n, not decode_text
    ds = read_bench(text, GENAI_ARTIFACT)
    check_clean(ds)
    assert ds.format == "genai_perf_csv"
    f = ds.figures
    assert f["mean_ttft_ms"] == 85.20 and f["median_ttft_ms"] == 80.40 and f["p1_ttft_ms"] == 41.0
    assert f["mean_ttst_ms"] == 12.30
    assert f["mean_e2el_ms"] == 1520.75 and f["p99_e2el_ms"] == 2050.0
    assert f["mean_itl_ms"] == 11.40 and f["p99_itl_ms"] == 14.80
    assert f["output_throughput_per_user"] == 87.70
    assert f["median_output_throughput_per_user"] == 88.0
    assert f["output_throughput"] == 2806.40 and f["request_throughput"] == 21.93
    assert f["request_goodput"] == 20.10 and f["completed"] == 640
    assert f["mean_input_tokens"] == 512.0 and f["mean_output_tokens"] == 128.0
    assert f["max_concurrency"] == 32 and ds.conditions["max_concurrency"] == 32
    assert not any("gpu" in k or "power" in k or "energy" in k for k in f)  # telemetry skipped
    assert not ds.problems


def test_genai_perf_json_and_aiperf_json():
    ds = load("genai_perf.json")
    check_clean(ds)
    assert (ds.format, ds.kind) == ("genai_perf_json", "serving")
    f = ds.figures
    assert f["request_throughput"] == 21.93 and f["completed"] == 640
    assert (
        f["mean_e2el_ms"] == 1520.75 and f["median_e2el_ms"] == 1500.0 and f["std_e2el_ms"] == 150.5
    )
    assert f["mean_ttft_ms"] == 85.2 and f["p99_ttft_ms"] == 200.5 and f["mean_itl_ms"] == 11.4
    assert f["output_throughput"] == 2806.4 and f["output_throughput_per_user"] == 87.7
    assert f["mean_input_tokens"] == 512.0 and f["mean_output_tokens"] == 128.0
    assert ds.conditions["model"] == "Qwen/Qwen3-8B" and ds.conditions["max_concurrency"] == 32
    assert not ds.problems

    ds = load("aiperf.json")
    check_clean(ds)
    assert ds.format == "genai_perf_json"
    f = ds.figures
    assert f["duration"] == 40.0 and f["completed"] == 250 and f["failed"] == 3
    assert f["total_input_tokens"] == 1024000 and f["total_output_tokens"] == 64000
    assert f["p1_e2el_ms"] == 9800.0 and f["median_ttft_ms"] == 600.0
    assert ds.conditions["model"] == "openai/gpt-oss-20b" and ds.conditions["max_concurrency"] == 64
    assert not ds.problems


def test_genai_perf_units_and_not_available():
    text = (
        "Metric,avg,min,max,p99,p95,p90,p75,p50,p25\n"
        "Time To First Token (ns),2500000,1000000,4000000,3900000,3800000,3600000,3000000,2400000,1800000\n"
        "Request Latency (furlongs),1,1,1,1,1,1,1,1,1\n"
        "Output Token Throughput (tokens/sec),300.00,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A\n"
        "Inter Token Latency (ms),x,1,1,1,1,1,1,1,1\n"
    )
    ds = read_bench(text, "p.csv")
    assert ds.figures["mean_ttft_ms"] == approx(2.5) and ds.figures["median_ttft_ms"] == approx(2.4)
    assert ds.figures["output_throughput"] == 300.0
    assert "mean_e2el_ms" not in ds.figures and "mean_itl_ms" not in ds.figures
    assert ds.figures["median_itl_ms"] == 1.0
    ps = problems(ds)
    assert any(p.startswith("line 3, Request Latency (furlongs)") and "unit" in p for p in ps)
    assert any(p.startswith("line 5, Inter Token Latency (ms) avg") and "'x'" in p for p in ps)
    assert len(ps) == 2  # N/A is a statistic not given, not a problem


# ------------------------------------------------ patterns seen in published real outputs
# Each file in tests/data/bench below is short, hand-written with made-up values, and
# reproduces one pattern a published output showed; the source is named above each test.


# SGLang's bench_serving table: https://github.com/sgl-project/sglang/issues/8285 (Backend,
# Max request concurrency, E2E Latency rows), https://github.com/sgl-project/sglang/issues/2805
# ("Max reqeuest concurrency: not set", sglang 0.4.0), https://github.com/sgl-project/sglang/pull/14098
# (--backend vllm, TPOT section), https://github.com/sgl-project/sglang/pull/12263 (P90/P99 E2E,
# Max ITL), https://github.com/WILLIAM-qmul/SGLang-dLoRA (old "Total throughput (tok/s)").
def test_sglang_stdout_two_tables():
    ds = load("serve_stdout_sglang.txt")
    check_clean(ds)
    assert (ds.format, ds.kind) == ("sglang_bench_stdout", "serving")
    first, second = ds.rows
    assert first["backend"] == "sglang" and first["request_rate"] == 8.0
    assert "max_concurrency" not in first  # "not set"
    assert first["completed"] == 400 and first["duration"] == 52.0
    assert first["total_token_throughput"] == 9846.15  # "Total throughput (tok/s)"
    assert first["input_throughput"] == 7876.92 and first["output_throughput"] == 1969.23
    assert first["mean_concurrency"] == 21.4
    assert first["mean_e2el_ms"] == 2782.5 and first["median_e2el_ms"] == 2650.0
    assert first["p95_itl_ms"] == 12.9 and first["max_itl_ms"] == 118.0
    assert first["mean_input_tokens"] == 1024.0 and first["mean_output_tokens"] == 256.0
    # python3 -m sglang.bench_serving … --random-input 1024 (argparse takes the prefix)
    assert first["input_len"] == 1024 and first["output_len"] == 256
    assert first["num_prompts"] == 400
    f = ds.figures
    assert f["runs"] == 2 and f["completed"] == 640 and f["max_concurrency"] == 64
    assert f["duration"] == 80.0 and f["request_throughput"] == 8.0
    assert f["total_token_throughput"] == 17408.0 and f["output_throughput"] == 1024.0
    assert f["mean_e2el_ms"] == 7762.5 and f["median_e2el_ms"] == 7700.0
    assert f["p90_e2el_ms"] == 9100.0 and f["p99_e2el_ms"] == 10400.0
    assert f["mean_ttft_ms"] == 1510.25 and f["median_ttft_ms"] == 1420.0
    assert f["p99_ttft_ms"] == 3900.5
    assert f["mean_tpot_ms"] == 49.2 and f["median_tpot_ms"] == 48.75 and f["p99_tpot_ms"] == 60.1
    assert f["mean_itl_ms"] == 49.3 and f["p99_itl_ms"] == 210.4 and f["max_itl_ms"] == 2950.0
    assert f["mean_input_tokens"] == 2048.0 and f["mean_output_tokens"] == 128.0
    c = ds.conditions
    assert c["backend"] == "vllm" and c["request_rate"] == "inf" and c["max_concurrency"] == 64
    assert c["input_len"] == 2048 and c["num_prompts"] == 640
    assert not ds.problems


# SGLang's --output-file JSONL with the script's text between runs, "request_rate": Infinity,
# mean_e2e_latency_ms: https://github.com/sgl-project/sglang/issues/12389
def test_sglang_jsonl_with_text_lines():
    ds = load("sglang_runs.jsonl")
    check_clean(ds)
    assert (ds.format, ds.kind) == ("sglang_bench_jsonl", "serving")
    first, second = ds.rows
    assert first["request_rate"] == "inf" and first["max_concurrency"] == 16
    assert first["completed"] == 128 and first["duration"] == 64.0
    assert first["mean_e2el_ms"] == 7950.5 and first["p99_e2el_ms"] == 9020.75
    assert first["std_e2el_ms"] == 410.25 and first["mean_concurrency"] == 15.9
    assert "spec_decode_acceptance_length" not in first  # null
    assert first["mean_input_tokens"] == 4096.0 and first["mean_output_tokens"] == 512.0
    assert first["input_len"] == 4096 and first["output_len"] == 512
    f = ds.figures
    assert f["runs"] == 2 and f["completed"] == 256 and f["max_concurrency"] == 32
    assert f["request_throughput"] == 3.2 and f["output_throughput"] == 1638.4
    assert f["mean_ttft_ms"] == 1020.75 and f["median_ttft_ms"] == 990.0
    assert f["p99_ttft_ms"] == 1650.5 and f["mean_tpot_ms"] == 17.36
    assert f["p95_itl_ms"] == 22.0 and f["mean_e2el_ms"] == 9890.0
    assert f["spec_decode_acceptance_length"] == 2.35
    for key in ("mean_e2e_latency_ms", "total_output_tokens_retokenized", "concurrency"):
        assert key not in f and key not in ds.conditions
    assert not ds.problems  # the text lines between the runs are not problems


# A table whose line breaks were lost (an issue scraped into one paragraph), cut short at the
# end: https://github.com/vllm-project/vllm/issues/35625 as mirrored in a wiki page
def test_flattened_table_on_one_line():
    text = (DATA / "serve_stdout_flattened.txt").read_text()
    assert text.count("\n") == 1
    ds = read_bench(text, "scraped.md")
    check_clean(ds)
    assert ds.format == "vllm_bench_stdout" and len(ds.rows) == 1
    f = ds.figures
    assert f["completed"] == 500 and f["failed"] == 0 and f["max_concurrency"] == 50
    assert f["duration"] == 40.0 and f["request_throughput"] == 12.5
    assert f["output_throughput"] == 1600.0 and f["total_token_throughput"] == 8000.0
    assert f["max_output_tokens_per_s"] == 1900.0 and f["max_concurrent_requests"] == 62
    assert f["mean_ttft_ms"] == 310.5 and f["median_ttft_ms"] == 150.25
    assert f["p99_ttft_ms"] == 2400.75 and f["p99_tpot_ms"] == 35.4
    assert f["mean_input_tokens"] == 512.0 and f["mean_output_tokens"] == 128.0
    assert "mean_itl_ms" not in f
    assert problems(ds) == ["line 1, Mean ITL (ms): '4...' is not a number"]


# Lines with something in front: a container name from `docker compose logs` (the prefix as in
# https://github.com/eugr/spark-vllm-docker/pull/200), time stamps from `kubectl logs
# --timestamps`, '# ' (https://github.com/yiliu30/vllm-fork/blob/main/scripts/pp_local_test_res.sh)
def test_lines_with_log_prefixes():
    ds = load("serve_stdout_prefixed.log")
    check_clean(ds)
    assert ds.format == "vllm_bench_stdout"
    first, second = ds.rows
    assert first["model"] == "Qwen/Qwen3-8B" and first["num_prompts"] == 160
    assert first["max_concurrency"] == 16 and first["request_rate"] == "inf"
    assert first["completed"] == 160 and first["failed"] == 0 and first["duration"] == 20.0
    assert first["total_token_throughput"] == 5120.0 and first["output_throughput"] == 1024.0
    assert first["mean_ttft_ms"] == 62.4 and first["p99_ttft_ms"] == 140.0
    assert first["median_tpot_ms"] == 14.8 and first["mean_input_tokens"] == 512.0
    assert second["max_concurrency"] == 64 and second["completed"] == 640
    assert second["duration"] == 40.0 and second["request_throughput"] == 16.0
    assert second["mean_ttft_ms"] == 210.0 and second["median_ttft_ms"] == 190.5
    assert second["p99_ttft_ms"] == 650.0
    assert ds.figures["max_concurrency"] == 64 and ds.figures["runs"] == 2
    assert not ds.problems
    text = "".join("# " + line for line in (DATA / "serve_stdout_legacy.txt").open())
    assert read_bench(text, "x.sh").figures == load("serve_stdout_legacy.txt").figures


# A paste without the banner (https://github.com/eugr/spark-vllm-docker/pull/271), with the
# speculative-decoding section vLLM prints (rows of vllm/benchmarks/serve.py; seen in
# https://github.com/vllm-project/vllm/issues/33497)
def test_table_without_banner_and_spec_decode_rows():
    ds = load("serve_stdout_bannerless.md")
    check_clean(ds)
    assert ds.format == "vllm_bench_stdout" and len(ds.rows) == 1
    f = ds.figures
    assert f["completed"] == 40 and f["failed"] == 0 and f["duration"] == 200.0
    assert f["request_throughput"] == 0.2 and f["output_throughput"] == 102.4
    assert f["total_token_throughput"] == 512.0 and f["max_concurrent_requests"] == 40
    assert f["mean_ttft_ms"] == 3200.5 and f["p99_ttft_ms"] == 5100.25
    assert f["mean_tpot_ms"] == 310.2 and f["p99_tpot_ms"] == 330.75
    assert f["spec_decode_acceptance_rate"] == 68.5
    assert f["spec_decode_acceptance_length"] == 3.06
    assert (f["spec_decode_num_drafts"], f["spec_decode_draft_tokens"]) == (6700, 20100)
    assert f["spec_decode_accepted_tokens"] == 13768
    assert f["mean_input_tokens"] == 2048.0 and f["mean_output_tokens"] == 512.0
    assert ds.conditions["request_rate"] == 4.0
    assert not ds.problems


# Markdown: a before/after table with two value columns (the comparison vLLM PRs post, e.g.
# https://github.com/vllm-project/vllm/pull/25735, as a table), and the banner table pasted as
# a quoted markdown table
def test_markdown_tables():
    ds = load("serve_markdown.md")
    check_clean(ds)
    main, pr = ds.rows
    assert main["label"] == "main" and pr["label"] == "this PR"
    assert main["completed"] == 100 and main["duration"] == 96.44
    assert main["output_throughput"] == 1014.26 and main["mean_ttft_ms"] == 313.28
    assert main["median_ttft_ms"] == 287.0 and main["p99_ttft_ms"] == 534.92
    assert main["mean_tpot_ms"] == 9.15
    assert pr["duration"] == 88.2 and pr["output_throughput"] == 1108.98
    assert pr["mean_ttft_ms"] == 290.1 and pr["p99_ttft_ms"] == 498.0 and pr["mean_tpot_ms"] == 8.4
    assert ds.figures["runs"] == 2 and not ds.problems

    ds = load("serve_stdout_piped.md")
    check_clean(ds)
    f = ds.figures
    assert f["completed"] == 100 and f["max_concurrency"] == 10 and f["duration"] == 96.44
    assert f["mean_ttft_ms"] == 313.28 and f["p99_ttft_ms"] == 534.92
    assert f["mean_input_tokens"] == approx(2043.57) and not ds.problems


# GenAI-Perf's console table: wrapped label, thousands separators, N/A, the command and the
# artifacts path around it: https://github.com/triton-inference-server/perf_analyzer/blob/main/genai-perf/docs/dynamo.md
# (older lower-case labels: genai-perf/docs/goodput_tutorial.md; times in ns and "Num output
# token": https://github.com/triton-inference-server/perf_analyzer/issues/437)
def test_genai_perf_console_table():
    ds = load("genai_perf_console.txt")
    check_clean(ds)
    assert (ds.format, ds.kind) == ("genai_perf_console", "serving")
    f = ds.figures
    assert f["mean_ttft_ms"] == 48.2 and f["p99_ttft_ms"] == 92.4 and f["p75_ttft_ms"] == 55.3
    assert f["mean_ttst_ms"] == 12.1
    assert f["mean_e2el_ms"] == 1580.4 and f["p99_e2el_ms"] == 1710.3 and f["min_e2el_ms"] == 1490.0
    assert f["mean_itl_ms"] == 12.05 and f["p90_itl_ms"] == 12.5
    assert f["output_throughput_per_user"] == 83.0  # its label is on two lines
    assert f["p99_output_throughput_per_user"] == 86.0
    assert f["mean_input_tokens"] == 512.0 and f["mean_output_tokens"] == 128.0
    assert f["output_throughput"] == 1295.6 and f["request_throughput"] == 10.12
    assert f["completed"] == 160 and f["max_concurrency"] == 16
    assert not any("tpot" in k for k in f)
    assert ds.conditions["model"] == "Qwen/Qwen3-8B" and ds.conditions["max_concurrency"] == 16
    assert not ds.problems
    old = (
        "┃            Statistic ┃           avg ┃           min ┃           max ┃           p99 ┃\n"
        "│ Request latency (ns) │ 4,110,623,430 │ 2,272,022,940 │ 5,252,536,691 │ 5,217,352,175 │\n"
        "│     Num output token │           331 │           189 │           414 │           412 │\n"
        "│ Inter token latency (ms) │ 11.… │ 10.… │ 12.… │ 11.… │\n"
    )
    ds = read_bench(old, "console.txt")
    assert ds.figures["mean_e2el_ms"] == 4110.62343 and ds.figures["max_e2el_ms"] == 5252.536691
    assert ds.figures["mean_output_tokens"] == 331.0 and "mean_itl_ms" not in ds.figures
    assert problems(ds)[0] == "line 4, Inter token latency (ms) avg: '11.…': cut by the terminal"


# AIPerf's console table: labels wrapped over two or three lines, '-' cells, the CLI command
# wrapped, "Benchmark Duration: X sec":
# https://github.com/ai-dynamo/aiperf/blob/main/docs/tutorials/custom-dataset.md
def test_aiperf_console_table():
    ds = load("aiperf_console.txt")
    check_clean(ds)
    assert ds.format == "aiperf_console"
    f = ds.figures
    assert f["mean_ttft_ms"] == 25.4 and f["median_ttft_ms"] == 20.5 and f["std_ttft_ms"] == 11.3
    assert f["p99_ttft_ms"] == 60.2
    assert f["mean_e2el_ms"] == 3120.0 and f["median_e2el_ms"] == 2650.0
    assert f["p99_e2el_ms"] == 6700.25
    assert f["mean_itl_ms"] == 3.7 and f["median_itl_ms"] == 3.68
    assert f["mean_output_tokens"] == 840.0 and f["mean_input_tokens"] == 120.0
    assert f["output_throughput"] == 538.46 and f["request_throughput"] == 0.64
    assert f["completed"] == 20 and f["duration"] == 31.25 and f["max_concurrency"] == 4
    assert ds.conditions["model"] == "Qwen/Qwen3-0.6B"
    assert not ds.problems


# AIPerf's profile_export_aiperf.csv: p1…p99 and std columns, "Benchmark Duration (sec)",
# "Request Count" without a unit, the GPU block "Endpoint,GPU_Index,…":
# https://github.com/ai-dynamo/aiperf/blob/main/docs/tutorials/working-with-profile-exports.md
def test_aiperf_csv_with_p1_p5_p10_and_std():
    ds = load("profile_export_aiperf.csv")
    check_clean(ds)
    assert ds.format == "genai_perf_csv"
    f = ds.figures
    assert f["mean_e2el_ms"] == 4210.5 and f["median_e2el_ms"] == 4100.0
    assert (f["p1_e2el_ms"], f["p5_e2el_ms"], f["p10_e2el_ms"]) == (3150.0, 3300.0, 3420.0)
    assert f["p99_e2el_ms"] == 6000.0 and f["std_e2el_ms"] == 620.4
    assert (
        f["mean_ttft_ms"] == 410.2 and f["median_ttft_ms"] == 380.0 and f["p99_ttft_ms"] == 1150.0
    )
    assert f["mean_itl_ms"] == 29.8 and f["p99_itl_ms"] == 33.3
    assert f["mean_input_tokens"] == 1024.0 and f["mean_output_tokens"] == 128.0
    assert f["duration"] == 52.5 and f["request_throughput"] == 3.81
    assert f["completed"] == 200 and f["output_throughput"] == 487.62
    assert not any("gpu" in k or "power" in k for k in f)
    assert not ds.problems


# A GenAI-Perf CSV opened and saved again by Excel in a locale with a decimal comma: ';'
# between cells, "1.146,31" (the thousands grouped by '.'); values of the real file
# shared/fixtures/bench_formats/07 (https://github.com/NVIDIA/cloudai/blob/main/doc/ai_dynamo.md)
def test_genai_perf_csv_saved_by_excel_with_decimal_commas():
    ds = load("genai_perf_excel_semicolon.csv")
    check_clean(ds)
    assert ds.format == "genai_perf_csv"
    f = ds.figures
    assert f["mean_ttft_ms"] == 1146.31 and f["median_ttft_ms"] == 640.07
    assert f["max_ttft_ms"] == 3485.23 and f["p99_e2el_ms"] == 9436.13
    assert f["mean_e2el_ms"] == 6406.2 and f["mean_output_tokens"] == 174.45
    assert f["output_throughput"] == 261.25 and f["request_throughput"] == 1.5
    assert f["completed"] == 40 and ds.extra["converted"] and not ds.problems


def test_json_array_of_results():
    ds = load("serve_results_array.json")
    check_clean(ds)
    assert ds.format == "vllm_bench_json"
    first, second = ds.rows
    assert first["max_concurrency"] == 4 and first["completed"] == 40
    assert first["duration"] == 10.0 and first["request_throughput"] == 4.0
    assert first["mean_ttft_ms"] == 40.0 and first["mean_input_tokens"] == 512.0
    assert second["max_concurrency"] == 16 and second["mean_ttft_ms"] == 85.5
    assert ds.figures["runs"] == 2 and ds.figures["completed"] == 160
    assert ds.conditions["model"] == "Qwen/Qwen2.5-7B-Instruct"
    assert problems(ds) == ["item 3: not a benchmark result object"]
    ds = read_bench('[{"completed": 3}]', "a.json")
    assert ds.figures == {"completed": 3, "runs": 1}
    gp = (DATA / "genai_perf.json").read_text()
    ds = read_bench(f"[{gp}, {gp}]", "sweep.json")
    assert ds.format == "genai_perf_json" and len(ds.rows) == 2
    assert ds.rows[1]["mean_e2el_ms"] == 1520.75


# ---------------------------------------------------------- through `whatif import`'s reader


def imported(name: str, text: str):
    return import_file(name, text.encode())


def test_every_data_file_imports_without_a_traceback():
    for path in sorted(DATA.iterdir()):
        data = path.read_bytes()
        for cut in (len(data), len(data) // 2, len(data) // 3):
            try:
                ds = import_file(path.name, data[:cut])
            except ScenarioError as exc:
                assert exc.key == path.name and exc.message
                continue
            assert ds.figures or ds.rows


def test_hostile_files_get_a_result_or_a_message_naming_them():
    ds = imported("decode.tsv", "batch\tstep_ms\n1\t20.5\n2\t21.0\n")
    assert ds.format == "decode_csv" and [r["step_ms"] for r in ds.rows] == [20.5, 21.0]
    ds = imported("excel.csv", "sep=;\nbatch;tokens_per_s\n1;45,5\n2;88,25\n")
    assert ds.format == "decode_csv" and [r["tokens_per_s"] for r in ds.rows] == [45.5, 88.25]
    with pytest.raises(ScenarioError) as err:
        imported("tpot.csv", "Batch Size,TPOT (ms)\n1,20.5\n2,21.0\n")
    assert err.value.key == "tpot.csv"
    assert "step_ms" in err.value.message and "tokens_per_s" in err.value.message
    assert "accepted decode columns" in err.value.message
    with pytest.raises(ScenarioError) as err:
        imported("list.json", '[1, "a", {"b": 2}]')
    assert err.value.key == "list.json" and "accepted JSON" in err.value.message
    line = json.dumps({"completed": 10, "mean_ttft_ms": 1.5, "ttfts": [0.1] * 2000})
    with pytest.raises(ScenarioError) as err:
        import_file("big.jsonl", ((line + "\n") * (5_000_000 // len(line) + 2)).encode())
    assert err.value.key == "big.jsonl" and "larger than 5 MB" in err.value.message


def jsonl_just_under_the_size_limit() -> str:
    line = json.dumps({**json.loads((DATA / "serve_new.json").read_text()), "ttfts": [0.1] * 400})
    return (line + "\n") * (4_900_000 // (len(line) + 1))


def test_a_jsonl_just_under_the_size_limit_is_read_in_one_pass(monkeypatch):
    text = jsonl_just_under_the_size_limit()
    lines = text.count("\n")
    decoded = []  # the length of every text handed to json.loads
    loads = json.loads

    def counted(s, *args, **kwargs):
        decoded.append(len(s))
        return loads(s, *args, **kwargs)

    monkeypatch.setattr(json, "loads", counted)
    with hang_guard(50):  # ten times the 5 s limit this test used to assert
        ds = imported("runs.jsonl", text)
    assert ds.format == "vllm_bench_jsonl" and ds.figures["runs"] == len(ds.rows) == lines > 100
    # each line is decoded once (and the whole text at most once more, to tell JSON from
    # JSONL): the work grows with the file, never with the file times its lines
    assert len(decoded) <= lines + 3, (len(decoded), lines)
    assert sum(decoded) <= 3 * len(text), (sum(decoded), len(text))


# ------------------------------------------------------------------------- the real files


def real(name: str):
    if not (REAL / name).is_file():
        pytest.skip(f"{REAL} is not here (the published examples live outside the repository)")
    return read_bench(decode_text(name, (REAL / name).read_bytes()), name)


def test_real_01_stdout_table_and_saved_json():
    ds = real("01_benchmark_serving_stdout_and_json_nerdalert_L40S.txt")
    check_clean(ds)
    assert ds.format == "vllm_bench_stdout" and len(ds.rows) == 1
    f = ds.figures
    assert f["completed"] == 300 and f["duration"] == approx(36.034275877000255)
    assert f["total_token_throughput"] == approx(10566.33, abs=0.005)
    assert f["mean_ttft_ms"] == approx(54.58, abs=0.005) and f["p99_itl_ms"] == approx(
        34.21, abs=0.005
    )
    assert f["std_ttft_ms"] == approx(9.27197373989555)
    assert f["mean_input_tokens"] == approx(999.0)  # 299700 / 300
    c = ds.conditions
    assert c["gpu"] == "4xNVIDIA_L40S" and c["model"] == "meta-llama/Llama-3.2-3B-Instruct"
    assert c["request_rate"] == 10.0 and c["num_prompts"] == 300
    assert not ds.problems


def test_real_02_jsonl():
    ds = real("02_benchmark_serving_results_nerdalert_L40S.jsonl")
    check_clean(ds)
    assert ds.format == "vllm_bench_jsonl" and len(ds.rows) == 3
    assert [r["request_rate"] for r in ds.rows] == [10.0, 30.0, "inf"]
    assert [r["completed"] for r in ds.rows] == [300, 900, 900]
    f = ds.figures
    assert f["runs"] == 3 and f["mean_ttft_ms"] == approx(4386.739448253334)
    assert f["total_token_throughput"] == approx(39473.22362543967)
    assert f["mean_input_tokens"] == approx(999.0)
    assert not ds.problems


def test_real_03_newest_table():
    ds = real("03_vllm_bench_serve_stdout_tenstorrent_pr2119.txt")
    check_clean(ds)
    f = ds.figures
    assert f["completed"] == 999 and f["failed"] == 1 and f["max_concurrency"] == 64
    assert f["duration"] == 1.33 and f["total_token_throughput"] == 192958.09
    assert f["max_output_tokens_per_s"] == 92826.0 and f["max_concurrent_requests"] == 778
    assert f["mean_tpot_ms"] == 0.10 and f["median_itl_ms"] == 0.0 and f["p99_itl_ms"] == 5.26
    assert f["mean_input_tokens"] == approx(128.0)  # 127872 / 999
    assert not ds.problems


def test_real_05_latency_and_throughput():
    ds = real("05_benchmark_latency_throughput_stdout_vllm_pr11078.txt")
    check_clean(ds)
    assert ds.format == "vllm_latency_stdout"
    assert [r["bench"] for r in ds.rows] == ["latency"] * 4 + ["throughput"] * 2
    assert [r["avg_latency_s"] for r in ds.rows[:4]] == approx(
        [0.9704469823899369, 0.8950413154981409, 7.81603614680001, 7.495755991366673]
    )
    assert [r["init_engine_s"] for r in ds.rows] == [11.79, 48.18, 20.63, 87.17, 14.42, 87.18]
    assert ds.rows[0]["batch_size"] == 1 and "compilation_config" not in ds.rows[0]
    assert ds.rows[1]["compilation_config"] == "{'level': 3, 'candidate_compile_sizes': [1]}"
    assert ds.rows[4]["input_len"] == 256 and ds.rows[4]["output_throughput"] == 11364.08
    f = ds.figures
    assert f["avg_latency_s"] == approx(7.495755991366673) and f["request_throughput"] == 46.11
    assert f["total_token_throughput"] == 23606.51 and f["runs"] == 6
    assert not ds.problems


def test_real_06_throughput_before_after():
    ds = real("06_benchmark_throughput_stdout_before_after_pr8914.txt")
    check_clean(ds)
    assert ds.format == "vllm_throughput_stdout"
    before, after = ds.rows
    assert before["request_throughput"] == 81.74 and before["total_token_throughput"] == 20926.37
    assert after["output_throughput"] == 11426.69 and ds.figures["request_throughput"] == 89.27


def test_real_07_genai_perf_csv():
    ds = real("07_genai_perf_profile_export_genai_perf_cloudai_doc.csv")
    check_clean(ds)
    f = ds.figures
    assert f["mean_ttft_ms"] == 1146.31 and f["median_ttft_ms"] == 640.07
    assert f["p99_ttft_ms"] == 3457.97 and f["mean_e2el_ms"] == 6406.20
    assert f["median_e2el_ms"] == 5690.23 and f["mean_itl_ms"] == 30.35
    assert f["mean_input_tokens"] == 3000.05 and f["mean_output_tokens"] == 174.45
    assert f["output_throughput"] == 261.25 and f["request_throughput"] == 1.50
    assert f["completed"] == 40 and "max_concurrency" not in f
    assert not ds.problems


def test_real_08_genai_perf_csv():
    ds = real("08_genai_perf_profile_export_genai_perf_perf_analyzer_issue393.csv")
    check_clean(ds)
    f = ds.figures
    assert f["mean_ttft_ms"] == 32688.40 and f["p99_e2el_ms"] == 101001.72
    assert f["median_itl_ms"] == 144.32 and f["mean_output_tokens"] == 241.75
    assert f["mean_input_tokens"] == 4000.03 and f["completed"] == 353
    assert f["request_throughput"] == 1.70 and f["output_throughput"] == 410.43
    assert not ds.problems


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        "[1, 2, 3]",
        '[{"a": 1}, 2, "x"]',
        "42",
        '"text"',
        "null",
        "",
        "   \n",
        "hello world\nno benchmark here\n",
        "INFO 01-01 Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 5.0 tokens/s\n",
        "batch,step_ms\n1,20.5\n",
        "{not json at all",
        '{"date": "20250101-000000", "backend": "vllm", "duration": 3.0}',
    ],
)
def test_not_a_benchmark_is_none(text):
    assert read_bench(text, "f") is None


def test_benchmark_keys_with_unusable_values_name_the_key():
    with pytest.raises(ScenarioError) as err:
        read_bench('{"completed": "abc", "mean_ttft_ms": [1, 2]}', "r.json")
    assert err.value.key == "r.json"
    assert "completed" in err.value.message and "'abc' is not a number" in err.value.message
    assert "accepted" in err.value.message


def test_nan_infinity_and_negative_are_problems():
    text = (
        '{"completed": 10, "duration": -3.0, "mean_ttft_ms": NaN, "p99_ttft_ms": Infinity, '
        '"median_ttft_ms": 12.5, "failed": 1.5, "request_rate": Infinity}'
    )
    ds = read_bench(text, "r.json")
    check_clean(ds)
    assert ds.figures == {"completed": 10, "median_ttft_ms": 12.5}
    assert ds.conditions["request_rate"] == "inf"
    ps = problems(ds)
    assert any(p.startswith("duration: negative") for p in ps)
    assert any(p.startswith("mean_ttft_ms: NaN is not a number") for p in ps)
    assert any(p.startswith("p99_ttft_ms: Infinity is not a number") for p in ps)
    assert any(p.startswith("failed: 1.5 is not a whole number") for p in ps)


def test_unexpected_types_are_problems():
    ds = read_bench('{"completed": 10, "duration": [1], "backend": 3, "mean_itl_ms": true}', "r")
    ps = problems(ds)
    assert "duration: expected a number, got a list" in ps
    assert "mean_itl_ms: expected a number, got true/false" in ps
    assert "backend: expected text, got int" in ps
    ds = read_bench('{"request_latency": 5, "time_to_first_token": {"unit": "ms", "avg": 9}}', "g")
    assert ds.format == "genai_perf_json" and ds.figures == {"mean_ttft_ms": 9.0}
    assert problems(ds)[0].startswith("request_latency: expected an object")
    ds = read_bench('{"avg_latency": 1.5, "percentiles": [1], "latencies": 3}', "l")
    assert ds.figures == {"avg_latency_s": 1.5} and len(ds.problems) == 2


@pytest.mark.parametrize("opening", ["[", '{"a": '])
def test_deeply_nested_json_is_an_error_not_a_crash(opening):
    with pytest.raises(ScenarioError) as err:
        read_bench(opening * 200_000, "deep.json")
    assert "nested too deeply" in err.value.message


def test_truncated_benchmark_json_is_an_error():
    text = (DATA / "serve_new.json").read_text()[:300]
    with pytest.raises(ScenarioError) as err:
        read_bench(text, "cut.json")
    assert "not valid JSON" in err.value.message and err.value.key == "cut.json"


def test_jsonl_with_every_run_unusable_is_an_error():
    with pytest.raises(ScenarioError) as err:
        read_bench('{"completed": "x"}\n{"completed": null, "duration": "y"}\n', "r.jsonl")
    assert "line 1, completed" in err.value.message


def test_jsonl_deep_line_is_a_problem():
    good = (DATA / "serve_runs.jsonl").read_text().splitlines()[0]
    ds = read_bench(good + "\n" + "[" * 200_000 + "\n" + good + "\n", "r.jsonl")
    assert len(ds.rows) == 2 and problems(ds) == ["line 2: JSON nested too deeply"]


def test_genai_perf_header_only_is_an_error():
    with pytest.raises(ScenarioError) as err:
        read_bench(
            "Metric,avg,min,max,p99,p95,p90,p75,p50,p25\r\n", "profile_export_genai_perf.csv"
        )
    assert "GenAI-Perf" in err.value.message and "accepted" in err.value.message


def test_empty_table_and_unreadable_latency_are_errors():
    with pytest.raises(ScenarioError, match="Serving Benchmark Result"):
        read_bench(
            "============ Serving Benchmark Result ============\n" + "=" * 50 + "\n", "t.txt"
        )
    with pytest.raises(ScenarioError) as err:
        read_bench("Avg latency: nan seconds\n", "lat.txt")
    assert "line 1, Avg latency: 'nan' is not a number" in err.value.message


def test_read_bench_takes_raw_windows_text():
    text = (DATA / "serve_stdout_legacy.txt").read_text().replace("\n", "\r\n")
    ds = read_bench("\ufeff" + text, "win.txt")
    assert ds.figures["completed"] == 200 and ds.conditions["max_concurrency"] == 32


def test_an_exponent_without_digits_before_it_is_not_a_number():
    # measurements.number lets "E10" through its pattern to float(); here it is a problem
    ds = read_bench('{"completed": 5, "duration": "E10", "percentiles": {"E10": 1}}', "r.json")
    assert ds.figures == {"completed": 5}
    assert "duration: 'E10' is not a number" in problems(ds)
    ds = read_bench('{"avg_latency": 1.0, "percentiles": {"E10": 1}}', "l.json")
    assert ds.figures == {"avg_latency_s": 1.0} and "percentiles.E10" in problems(ds)[0]


_TEXTS = sorted(p.read_text(encoding="utf-8") for p in DATA.iterdir())
_PIECES = st.sampled_from(
    ["{", "}", "[", '"', ",", ":", "NaN", "Infinity", "E10", "-1", "1,000", "\n", "\r\n", "x"]
    + ["Metric,avg", "Throughput: 1 requests/s, ", "Avg latency: ", "=" * 50, "P99 TTFT (ms): "]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(_TEXTS),
    st.lists(st.tuples(st.floats(0, 1), st.integers(0, 40), _PIECES), max_size=6),
)
def test_mangled_files_give_a_dataset_none_or_a_scenario_error(text, edits):
    for where, cut, piece in edits:
        at = int(where * len(text))
        text = text[:at] + piece + text[at + cut :]
    try:
        ds = read_bench(text, "mangled")
    except ScenarioError:
        return
    if ds is not None:
        check_clean(ds)


#: long or odd lines, and what reading each gives: None (not a benchmark file), the words of
#: the one-line refusal, or the figures read
LONG_OR_ODD_LINES = [
    ("=" * 100_000 + " Serving Benchmark Resul\n", None),  # a regular expression would backtrack
    (
        "============ Serving Benchmark Result ============\nx" + " " * 100_000 + "y\n",
        "no readable row",
    ),
    ("Metric,avg\nx" + " " * 100_000 + "y,1\n", "GenAI-Perf CSV with nothing usable"),
    ("Avg latency: 1 seconds\n" + "x\n" * 100_000, {"avg_latency_s": 1.0, "runs": 1}),
    ("{}\n" * 100_000, None),
    (
        "============ Serving Benchmark Result ============\nP" + "9" * 400 + " TTFT (ms): 1\n",
        "no readable row",
    ),
]


@pytest.mark.parametrize(("text", "expected"), LONG_OR_ODD_LINES)
def test_long_or_odd_lines_get_a_short_answer(text, expected):
    with hang_guard(20):  # ten times the 2 s limit this test used to assert
        try:
            got = read_bench(text, "big")
        except ScenarioError as exc:
            got = exc
    if isinstance(expected, str):  # refused in one line that does not repeat the long line
        assert isinstance(got, ScenarioError) and got.key == "big", got
        assert expected in got.message and "\n" not in got.message
        assert len(got.message) < 1000, len(got.message)
    elif expected is None:
        assert got is None
    else:
        assert not isinstance(got, ScenarioError), got
        check_clean(got)
        assert got.figures == expected and len(got.rows) == 1
