"""A number no float can hold, in an uploaded benchmark file, is refused or read as a
non-finite value, never an internal error (issue 40, R8)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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
        [sys.executable, "-m", "model", "calibrate", str(path), "--json"],
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

    from model import calibrate, cli

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
