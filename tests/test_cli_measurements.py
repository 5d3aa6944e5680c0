"""``whatif parse-log``, ``whatif import`` and ``whatif calibrate`` (SPEC 4.5's CLI contract):
one JSON object each, the figure names SPEC 4.5 gives, bad input as status 2 and one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from model import decode
from model.overrides import resolve
from whatif.cli import main

DATA = Path(__file__).resolve().parent / "data"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_parse_log_prints_figures_items_and_version(capsys):
    code, out, err = run(capsys, "parse-log", str(DATA / "logs" / "v1_085_markdown.log"))
    assert code == 0, err
    got = json.loads(out)
    assert got["format"] == "vllm_log"
    assert set(got) >= {"figures", "items", "version", "problems"}
    assert got["figures"]["graph_capture_s"] > 0
    assert got["items"]["item5_s"] == pytest.approx(
        got["items"]["item5_compile_s"] + got["items"]["item5_capture_s"]
    )


def test_parse_log_of_a_file_without_timing_lines_is_an_error(capsys, tmp_path):
    f = tmp_path / "nothing.log"
    f.write_text("hello\nworld\n")
    code, out, err = run(capsys, "parse-log", str(f))
    assert code == 2 and out == ""
    assert "nothing.log" in err and "no vLLM start-up timing line" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "path, fmt",
    [
        ("csv/decode_sweep.csv", "decode_csv"),
        ("bench/serve_new.json", "vllm_bench_json"),
        ("bench/serve_runs.jsonl", "vllm_bench_jsonl"),
        ("bench/serve_stdout_new.txt", "vllm_bench_stdout"),
        ("bench/genai_perf_new.csv", "genai_perf_csv"),
        ("bench/latency_stdout.txt", "vllm_latency_stdout"),
        ("bench/throughput_stdout.txt", "vllm_throughput_stdout"),
        ("logs/v1_011_tp2_enginecore.log", "vllm_log"),
    ],
)
def test_import_recognises_every_format_from_its_content(capsys, path, fmt):
    code, out, err = run(capsys, "import", str(DATA / path), "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["format"] == fmt
    assert got["figures"] or got.get("rows")


def test_import_uses_spec_names_for_serving_figures(capsys):
    code, out, _ = run(capsys, "import", str(DATA / "bench" / "genai_perf_new.csv"), "--json")
    figures = json.loads(out)["figures"]
    assert {"mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_e2el_ms"} <= set(figures)


@pytest.mark.parametrize(
    "content, needle",
    [(b"", "empty"), (b"\x00\x01binary", "binary"), (b'{"a": 1}', "not a benchmark result")],
)
def test_import_bad_files(capsys, tmp_path, content, needle):
    f = tmp_path / "bad.dat"
    f.write_bytes(content)
    code, out, err = run(capsys, "import", str(f), "--json")
    assert code == 2 and out == "" and needle in err and "bad.dat" in err


def test_calibrate_prints_keys_that_reproduce_the_measurements(capsys, tmp_path):
    base = {"hardware": "h100-sxm", "model": "llama-3.1-8b", "gpus": 1, "weights_dtype": "bf16"}
    truth, _ = resolve({**base, "bw_efficiency": 0.58, "host_ms": 2.2})
    b = np.array([1, 4, 16, 64, 256])
    t = decode.sweep(truth, b)["t_step_s"] * 1000
    csv = tmp_path / "sweep.csv"
    csv.write_text("batch,step_ms\n" + "".join(f"{x},{y:.5f}\n" for x, y in zip(b, t, strict=True)))
    yml = tmp_path / "scenario.yaml"
    yml.write_text("".join(f"{k}: {v}\n" for k, v in base.items()))
    code, out, err = run(capsys, "calibrate", str(csv), str(yml), "--json")
    assert code == 0, err
    got = json.loads(out)
    assert set(got) >= {"keys", "fit", "refused", "data_sets", "residuals"}
    assert got["keys"]["bw_efficiency"] == pytest.approx(0.58, rel=1e-3)
    assert got["keys"]["host_ms"] == pytest.approx(2.2, rel=1e-3)
    assert got["fit"]["bw_efficiency"]["points"] == 5
    # evaluating with the keys applied reproduces the figures it was fitted to
    sets = [f"{k}={v}" for k, v in {**base, **got["keys"]}.items()]
    for batch, step in zip(b, t, strict=True):
        argv = ["eval", "--json", *sum((["--set", s] for s in sets), [])]
        code, out, _ = run(capsys, *argv, "--set", f"batch={batch}")
        assert json.loads(out)["decode"]["t_step_ms"] == pytest.approx(step, rel=2e-3)


def test_calibrate_without_measurement_files_is_an_error(capsys, tmp_path):
    yml = tmp_path / "s.yaml"
    yml.write_text("gpus: 1\n")
    code, _, err = run(capsys, "calibrate", str(yml))
    assert code == 2 and "at least one measurement file" in err
