"""What the tests share beyond fixtures (those are in conftest.py): a guard that fails a test
instead of hanging the suite, the random-scenario strategy of the property tests, every figure
the lens pages build, and what finding a PostgreSQL server for the store tests takes."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import threading
from pathlib import Path

import pytest
from hypothesis import assume
from hypothesis import strategies as st
from numpy.testing import assert_allclose

import datastore
from model.cold_start import cold_start_lens
from model.errors import ScenarioError
from model.evaluate import launch_lens, roofline_lens
from model.overrides import resolve
from model.presets import hardware_presets, model_presets, scenario_names
from model.scenario import CUDA_GRAPHS_MODES
from model.units import WEIGHTS_DTYPES
from ui import cold_charts, launch_charts, roofline_charts


class Hung(Exception):
    """A hang guard went off (not an OSError, so no code under test mistakes it for its own)."""


@contextlib.contextmanager
def hang_guard(seconds: float, what: str = "the call"):
    """Fail the test, instead of hanging the suite, when the block is still running after
    ``seconds``: a guard set far above any normal time (ten times the wall-clock limit the
    tests used to assert), never the thing a test checks (issue 40). The timings themselves
    are in ``benchmarks/suite_timings.py``.

    SIGALRM on the main thread, which the regular-expression engine, ``select`` and lock waits
    see; where there is no SIGALRM or off the main thread, the block runs unguarded."""
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return

    def fire(signum, frame):
        raise Hung(f"{what} was still running after {seconds:g} s (a hang guard, far above normal)")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


finite = dict(allow_nan=False, allow_infinity=False)


overrides = st.fixed_dictionaries(
    {},
    optional={
        "hardware": st.sampled_from(sorted(hardware_presets())),
        "model": st.sampled_from(sorted(model_presets())),
        "gpus": st.integers(1, 64),
        "weights_dtype": st.sampled_from(WEIGHTS_DTYPES),
        "batch": st.integers(1, 65536),
        "context_tokens": st.integers(0, 10_000_000),
        "kernels": st.one_of(st.none(), st.integers(1, 1_000_000)),
        "launch_us": st.floats(0.001, 1000, **finite),
        "weights_gb": st.one_of(st.none(), st.floats(0.001, 1_000_000, **finite)),
        "capture_s_per_graph": st.floats(0, 600, **finite),
        "loader": st.sampled_from(["safetensors", "runai_streamer", "tensorizer", "pickle"]),
        "storage": st.sampled_from(["nvme", "nvme_raid0", "object_store", "nfs", "page_cache"]),
        "concurrency": st.one_of(st.none(), st.integers(1, 1024)),
        "storage_gb_s": st.one_of(st.none(), st.floats(0.01, 10000, **finite)),
        "stream_gb_s": st.one_of(st.none(), st.floats(0.01, 10000, **finite)),
        "compile_s": st.one_of(st.none(), st.floats(0, 3600, **finite)),
        "compile_cached_s": st.one_of(st.none(), st.floats(0, 3600, **finite)),
        "process_init_s": st.floats(0, 3600, **finite),
        "host_ms": st.floats(0, 1000, **finite),
        "cuda_graphs": st.sampled_from(CUDA_GRAPHS_MODES),
        "launch_model": st.sampled_from(["additive", "pipelined"]),
        "bw_efficiency": st.floats(0.01, 1, **finite),
        "compile_cache": st.booleans(),
        "sleep_level": st.sampled_from([0, 1, 2]),
        "capture_sizes": st.lists(st.integers(1, 65536), min_size=1, max_size=60, unique=True).map(
            sorted
        ),
        "gpu_hour_usd": st.one_of(st.none(), st.floats(0, 1000, **finite)),
        "hardware.hbm_bandwidth_tb_s": st.floats(0.01, 100, **finite),
        "hardware.peak_tflops.fp8": st.floats(1, 100000, **finite),
        "hardware.name": st.text(st.characters(codec="utf-8"), min_size=1, max_size=40).filter(
            lambda t: t.strip() == t and t
        ),
        "model.layers": st.integers(1, 2000),
        "model.active_params_b": st.one_of(st.none(), st.floats(0.1, 0.5, **finite)),
    },
)


@st.composite
def scenarios(draw):
    base = draw(st.sampled_from([None] + scenario_names()))
    items = ([("scenario", base)] if base else []) + list(draw(overrides).items())
    try:
        return resolve(items, strict=True)[0]
    except ScenarioError:
        assume(False)  # e.g. an active-parameter count too small for a MoE preset


def every_figure(s):
    """Every figure the three lens pages build for ``s``, as the pages build them (the pages
    get the effective scenario: every ``auto`` knob filled in from the engine profile)."""
    rl = roofline_lens(s)
    rf = rl["figures"]["roofline"]
    mem = rl["figures"]["memory"]
    yield roofline_charts.roofline_figure(
        s,
        rl["sweep"],
        rl["current_index"],
        rf["ridge_flop_per_byte"],
        rf["compute_dtype"],
        rl["figures"]["request"],
    )
    yield roofline_charts.step_composition_figure(
        rl["sweep"], s.batch, rl["ridge_batch"], mem["max_batch"], max(s.capture_sizes)
    )
    yield roofline_charts.memory_figure(rl["figures"]["memory"])
    ll = launch_lens(s)
    lf = ll["figures"]["launch"]
    yield launch_charts.timeline_figure(ll["timeline"], s.host_ms * 1e-3, s.launch_model)
    yield launch_charts.timeline_figure(ll["timeline"], s.host_ms * 1e-3, s.launch_model, zoom=12)
    yield launch_charts.mode_sweep_figure(
        ll["grid"], ll["modes"], s.batch, s.capture_sizes, ll["grid_waste"], mem["max_batch"]
    )
    yield launch_charts.launch_share_figure(
        ll["share"], lf["kernels"], s.launch_us, s.hardware.hbm_bandwidth_tb_s
    )
    yield launch_charts.bucket_figure(ll["buckets"], s.capture_sizes, s.batch)
    cl = cold_start_lens(s)
    cs = cl["figures"]
    yield cold_charts.waterfall_figure(cs, cl["columns"]["optimised"])
    yield cold_charts.columns_figure(cl["columns"])
    yield cold_charts.weights_timeline_figure(cl["timeline"], cs["overlap"])
    yield cold_charts.tier_figure(
        cl["tiers"], cl["concurrency"], s.storage, cs["concurrency"], cs["weights_s"]
    )
    yield cold_charts.wake_figure(cs)


def need(reason: str) -> None:
    """Skip, or fail under CI, where the real PostgreSQL server cannot be had."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(
            f"{reason} (CI=true: .ci/run installs PostgreSQL and the test extra)", pytrace=False
        )
    pytest.skip(reason)


def pg_bindir() -> Path | None:
    def version(p: str) -> float:
        try:
            return float(Path(p).parent.name)
        except ValueError:
            return 0.0

    for cand in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True):
        if (Path(cand) / "initdb").exists() and (Path(cand) / "pg_ctl").exists():
            return Path(cand)
    pg_config = shutil.which("pg_config")
    if pg_config:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
        bindir = Path(out.stdout.strip())
        if (bindir / "initdb").exists() and (bindir / "pg_ctl").exists():
            return bindir
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def drop_table(url: str) -> None:
    import psycopg

    with psycopg.connect(url) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {datastore.TABLE}")


def assert_close(a, b, rtol=1e-9):
    """``assert_allclose`` at a relative precision (1e-9 unless stated), usable in an ``assert``."""
    assert_allclose(a, b, rtol=rtol)
    return True
