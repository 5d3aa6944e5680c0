"""A number no float can hold, in an uploaded benchmark file, is refused or read as a
non-finite value, never an internal error (issue 40, R8)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from model.overrides import resolve

ROOT = Path(__file__).resolve().parent.parent
BASE = {
    "date": "20250101-000000",
    "backend": "vllm",
    "model_id": "meta-llama/Llama-3.1-8B-Instruct",
    "num_prompts": 10,
    "request_rate": "inf",
    "max_concurrency": 1,
    "completed": 10,
    "duration": 1.0,
    "mean_ttft_ms": 12.0,
    "output_throughput": 100.0,
}


@pytest.mark.parametrize("key", ["duration", "mean_ttft_ms", "completed", "num_prompts"])
def test_a_4000_digit_number_is_not_an_internal_error(tmp_path, key):
    text = json.dumps(BASE).replace(json.dumps(BASE[key]), "1" + "0" * 4000, 1)
    if key in ("completed", "num_prompts"):
        text = json.dumps(BASE).replace(f'"{key}": 10', f'"{key}": 1{"0" * 4000}')
    path = tmp_path / "bench.json"
    path.write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "whatif", "calibrate", str(path), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode in (0, 2), done.stderr
    assert "internal error" not in done.stderr
    assert "Traceback" not in done.stderr
    if done.returncode == 0:
        json.loads(done.stdout)  # the JSON and nothing before it


def test_c_level_output_during_a_fit_does_not_precede_the_json(monkeypatch, capfd, tmp_path):
    """LAPACK reports a bad argument with C's printf (R7): whatever the computation writes to
    the process's standard output goes to standard error, and ``--json`` prints JSON only."""
    import ctypes

    from model import calibrate
    from whatif import cli

    real = calibrate.calibrate

    def noisy(*a, **kw):
        libc = ctypes.CDLL(None)
        libc.printf(b" ** On entry to DLASCL parameter number  4 had an illegal value\n")
        return real(*a, **kw)

    monkeypatch.setattr(calibrate, "calibrate", noisy)
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(BASE))
    rc = cli.main(["calibrate", str(path), "--json"])
    out, err = capfd.readouterr()
    assert rc == 0
    json.loads(out)
    assert "DLASCL" in err


ABSURD = (
    b'{"max_concurrency": 1e308, "mean_ttft_ms": 1e308, "mean_tpot_ms": 1e-320, "completed": 1}'
)


def test_an_absurd_benchmark_is_read_with_its_values_refused_by_name():
    from model.readers.importers import import_file

    ds = import_file("absurd.json", ABSURD)
    assert "mean_ttft_ms" not in ds.figures and "mean_tpot_ms" not in ds.figures
    said = " ".join(str(p) for p in ds.problems)
    assert "mean_ttft_ms" in said and "mean_tpot_ms" in said and "out of range" in said


def test_calibrate_on_an_absurd_file_is_a_clear_refusal_not_an_internal_error(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "absurd.json"
    path.write_bytes(ABSURD)
    done = subprocess.run(
        [sys.executable, "-m", "whatif", "calibrate", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "internal error" not in done.stderr
    assert done.stderr.startswith("whatif: error: measurements:")


def test_the_fit_never_raises_on_points_past_any_physical_range():
    """The absurd benchmark as a reader that let it through would hand it over: the fit refuses
    (it raised numpy's LinAlgError before)."""
    from model.calibrate import calibrate
    from model.readers.measurements import Dataset

    s = resolve([("scenario", "default")], strict=True)[0]
    big = 10.0**308
    ds = Dataset(
        name="absurd.json",
        format="vllm_bench_json",
        kind="serving",
        figures={
            "max_concurrency": big,
            "mean_ttft_ms": big,
            "mean_tpot_ms": 1e-320,
            "completed": 1,
        },
        conditions={"max_concurrency": big},
    )
    cal = calibrate(s, [ds])  # refusals, never an exception
    assert not cal.fits
    assert cal.refused
