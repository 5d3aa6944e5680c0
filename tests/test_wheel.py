"""The built wheel works: installed (not editable) into a fresh venv, ``whatif`` runs from
another directory with its presets."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheel_ships_its_presets_and_runs_from_another_directory(tmp_path):
    """Build the wheel, install it (not editable) into a fresh venv, run ``whatif`` elsewhere.

    The fresh venv borrows only the third-party dependencies from the test environment (a path
    line in a ``.pth`` file, so the editable install of this checkout is *not* activated): the
    ``model`` package and its presets must come from the wheel.
    """
    source = tmp_path / "source"  # a copy: building writes build/ and egg-info beside the code
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "*.egg-info", "__pycache__", "tests", ".*cache"
        ),
    )
    dist = tmp_path / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["-w", str(dist), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = dist.glob("inference_whatif-*.whl")
    env_dir = tmp_path / "fresh"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    install = subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    site = next((env_dir / "lib").glob("python3*/site-packages"))
    deps = next(p for p in map(Path, sys.path) if p.name == "site-packages" and p.is_dir())
    (site / "zz_test_deps.pth").write_text(f"{deps}\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run(
        [str(py), "-c", "import model.datafiles as d; print(d.__file__); print(d.PRESETS_DIR)"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert where.returncode == 0, where.stderr
    module_file, presets_dir = where.stdout.split()
    assert Path(module_file).is_relative_to(env_dir), module_file
    assert Path(presets_dir).is_relative_to(env_dir), presets_dir
    proc = subprocess.run(
        [str(env_dir / "bin" / "whatif"), "eval", "--scenario", "seed-3b-4090", "--json"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["decode"]["t_step_ms"] == pytest.approx(8.0, rel=1e-3)  # the seed's BF16 row
    listing = subprocess.run(
        [str(env_dir / "bin" / "whatif"), "presets"], cwd=elsewhere, capture_output=True, text=True
    )
    assert "seed-70b-fp8-cold-start" in listing.stdout and "h100-sxm" in listing.stdout
    # the readers are found by listing their package (model.readers.registry): the installed
    # wheel must carry model/readers/formats and find a benchmark result with it
    bench = ROOT / "tests" / "data" / "bench" / "serve_new.json"
    read = subprocess.run(
        [str(env_dir / "bin" / "whatif"), "import", str(bench), "--json"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout)["format"] == "vllm_bench_json"
    # the pages' addresses are read from their declarations in the installed ui/lenses
    # (whatif/pages.py), without importing Streamlit: the link opens the declared page
    url = subprocess.run(
        [str(env_dir / "bin" / "whatif"), "url", "--page", "scale_to_zero", "--base", "http://h:1"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert url.returncode == 0, url.stderr
    assert url.stdout.startswith("http://h:1/Scale_to_zero?"), url.stdout
