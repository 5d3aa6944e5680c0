"""Measure each page's server-side run time (AppTest) against a minimal one-chart page.

    .venv/bin/python benchmarks/page_speed.py [--runs 20] [--mode change|rerun]

A run is what the server does after a widget change: with ``--mode change`` (the default) the
sidebar's "Batch" number input gets a new value before every run (1 + run number above the
scenario's batch, so no two runs see the same scenario and no cache is hit twice); its callback
and the whole script run. ``--mode alternate`` flips it between two values, as the browser
benchmark does (a cache keyed on the scenario hits after the first two). ``--mode rerun`` re-executes the script with nothing changed (what
an ``st.rerun`` or a second look costs). The minimal page (``benchmarks/minimal_page.py``:
one widget, one metric, one chart) gets the same change.

The cases are measured round-robin (one run of each per round), so load drift on the machine
hits every page alike. Columns per case, median and p90 over the runs:

* ``script ms``: wall time of the script thread (widget callbacks and the script), the
  server's own work. The ratio ``× min`` is against the minimal page's median.
* ``cpu ms``: CPU time of that thread, the same work without other processes' load.
* ``AppTest ms``: the whole ``AppTest.run()``, with the harness' thread start and element-tree
  parsing (grows with the number of elements).

Scripts are compiled once and kept, as ``streamlit run`` does (AppTest alone would recompile
every page on every run; ``--recompile`` measures that way, as the first version of this
benchmark did).

Then the core calls alone (``roofline_lens``: the batch sweep 1–4096 in one vectorised call;
``launch_lens``: one vectorised sweep per graphs mode; ...).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ui.streamlit_internals import runner_internals  # noqa: E402 - the one seam

_internals = runner_internals()
_app_test = _internals.app_test
_local_runner = _internals.local_script_runner
ScriptCache = _internals.ScriptCache
ScriptRunner = _internals.ScriptRunner
from streamlit.testing.v1 import AppTest  # noqa: E402

from model.cold_start import cold_start_lens  # noqa: E402
from model.evaluate import launch_lens, roofline_lens, sweep  # noqa: E402
from model.overrides import resolve  # noqa: E402

MINIMAL = "benchmarks/minimal_page.py"
CASES = [
    (MINIMAL, None),
    ("app.py", "default"),
    ("pages/1_Roofline.py", "default"),
    ("pages/1_Roofline.py", "seed-3b-4090"),
    ("pages/1_Roofline.py", "mixtral-fp8-2xh100"),
    ("pages/3_Launch_overhead.py", "default"),
    ("pages/3_Launch_overhead.py", "seed-70b-eager-4xh100"),
    ("pages/3_Launch_overhead.py", "seed-qa-awq-5.5gib"),
    ("pages/4_Cold_start.py", "seed-70b-fp8-cold-start"),
    ("pages/4_Cold_start.py", "seed-70gb-network-5gbs"),
]

# --- one script cache, as a server has -------------------------------------------------------
# AppTest makes a new ScriptCache for every run, so every run re-reads the page, applies
# Streamlit's "magic" AST pass and compiles it: 0.3 ms for the minimal page, 2.5–8 ms for the
# lenses. ``streamlit run`` compiles a script once and keeps the bytecode; so do we.
_SHARED_CACHE = ScriptCache()
_app_test.ScriptCache = lambda: _SHARED_CACHE
_local_runner.ScriptCache = lambda: _SHARED_CACHE

# --- the script thread's own time -----------------------------------------------------------

_last = threading.local()
_timings: list[tuple[float, float]] = []
_original_run_script = ScriptRunner._run_script


def _timed_run_script(self, rerun_data):
    wall, cpu = time.perf_counter(), time.thread_time()
    try:
        return _original_run_script(self, rerun_data)
    finally:
        _timings.append((time.perf_counter() - wall, time.thread_time() - cpu))


ScriptRunner._run_script = _timed_run_script


@dataclass
class Case:
    page: str
    scenario: str | None
    at: AppTest | None = None
    batch: int = 1
    script: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    apptest: list[float] = field(default_factory=list)


def _start(case: Case) -> None:
    at = AppTest.from_file(str(ROOT / case.page), default_timeout=60)
    if case.scenario:
        at.query_params["scenario"] = case.scenario
    at.run()  # warm: imports, preset loading
    assert not at.exception, [e.value for e in at.exception]
    case.at = at
    case.batch = int(at.sidebar.number_input(key="w_batch").value)


def _run_once(case: Case, mode: str, step: int) -> None:
    at = case.at
    if mode == "change":
        at.sidebar.number_input(key="w_batch").set_value(case.batch + 1 + step)
    elif mode == "alternate":
        at.sidebar.number_input(key="w_batch").set_value(case.batch + (step + 1) % 2)
    _timings.clear()
    start = time.perf_counter()
    at.run()
    case.apptest.append(time.perf_counter() - start)
    assert not at.exception, [e.value for e in at.exception]
    case.script.append(sum(t[0] for t in _timings))
    case.cpu.append(sum(t[1] for t in _timings))


def time_call(fn, runs: int) -> list[float]:
    fn()
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[int(0.9 * (len(ordered) - 1))]


def run(runs: int = 20, mode: str = "change", core: bool = True, cases=None, out=sys.stdout):
    """Measure every case round-robin; print the table; return the cases."""
    # AppTest has no browser: the pause that lets a browser paint the headline figures first
    # (ui.page.HEADLINE_PAUSE_S) is not server work (browser_speed.py measures it live, in
    # servers of their own, which keep it)
    from ui import page

    page.HEADLINE_PAUSE_S = 0.0
    cases = [Case(p, s) for p, s in (cases or CASES)]
    for case in cases:
        _start(case)
    for case in cases:  # one unmeasured change each: the first change's callback path
        _run_once(case, mode, -1)
        case.script.clear(), case.cpu.clear(), case.apptest.clear()
    for step in range(runs):
        for case in cases:
            _run_once(case, mode, step)
    base_wall = summary(cases[0].script)[0]
    base_cpu = summary(cases[0].cpu)[0]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"Server side (AppTest), {runs} runs per page, mode={mode}, round-robin; "
        f"load average {load:.1f} on {os.cpu_count()} CPUs",
        file=out,
    )
    print(
        f"{'page':28} {'scenario':24} {'script ms':>9} {'p90':>6} {'× min':>6} "
        f"{'cpu ms':>7} {'× min':>6} {'AppTest ms':>10}",
        file=out,
    )
    for c in cases:
        w, w90 = summary(c.script)
        cpu, _ = summary(c.cpu)
        total, _ = summary(c.apptest)
        print(
            f"{c.page:28} {c.scenario or '-':24} {w * 1e3:9.1f} {w90 * 1e3:6.1f} "
            f"{w / base_wall:6.2f} {cpu * 1e3:7.1f} {cpu / base_cpu:6.2f} {total * 1e3:10.1f}",
            file=out,
        )
    if core:
        s = resolve([("scenario", "default")])[0]
        for label, fn in (
            ("core: roofline_lens(default)", lambda: roofline_lens(s)),
            ("core: launch_lens(default), 4 mode sweeps", lambda: launch_lens(s)),
            ("core: cold_start_lens(default), 5 tier sweeps", lambda: cold_start_lens(s)),
            ("core: sweep(batch 1..4096), one call", lambda: sweep(s, range(1, 4097))),
        ):
            med, p90 = summary(time_call(fn, runs))
            print(f"{label:53} {med * 1e3:9.2f} {p90 * 1e3:6.2f}", file=out)
    return cases


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--mode", choices=("change", "alternate", "rerun"), default="change")
    parser.add_argument("--no-core", action="store_true", help="skip the core-call timings")
    parser.add_argument("--only", help="comma-separated substrings of page paths (plus minimal)")
    parser.add_argument(
        "--recompile", action="store_true", help="compile every page on every run (AppTest's way)"
    )
    args = parser.parse_args()
    if args.recompile:
        _app_test.ScriptCache = ScriptCache
        _local_runner.ScriptCache = ScriptCache
    cases = CASES
    if args.only:
        keys = [k.strip().lower() for k in args.only.split(",")]
        cases = [c for c in CASES if c[0] == MINIMAL or any(k in c[0].lower() for k in keys)]
    run(args.runs, args.mode, core=not args.no_core, cases=cases)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
