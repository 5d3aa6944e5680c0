"""Where a page's server run goes: cProfile (CPU time) of the script thread over widget changes.

    .venv/bin/python benchmarks/profile_page.py pages/3_Launch_overhead.py [--scenario NAME]
        [--runs 10] [--top 40]

Changes the sidebar's "Batch" before every run (as ``page_speed.py --mode change``), profiles
the script thread with ``time.thread_time`` as the clock, and prints a per-run breakdown by
what the page calls (sidebar, core lens, figure builders, ``st.plotly_chart``,
``st.dataframe``, ``st.metric``, ...; cumulative, so the rows overlap where calls nest), then
the top functions by cumulative time.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import page_speed  # noqa: E402, F401 - one shared ScriptCache, as a server has

from ui.streamlit_internals import runner_internals  # noqa: E402 - the one seam

ScriptRunner = runner_internals().ScriptRunner
from streamlit.testing.v1 import AppTest  # noqa: E402

PROFILE = cProfile.Profile(time.thread_time)
_original = ScriptRunner._run_script
_enabled = False


def _profiled(self, rerun_data):
    if not _enabled:
        return _original(self, rerun_data)
    PROFILE.enable()
    try:
        return _original(self, rerun_data)
    finally:
        PROFILE.disable()


ScriptRunner._run_script = _profiled

# (label, file suffix, function name): cumulative time of every match
GROUPS = [
    ("whole run (callbacks + script)", "script_runner.py", "_run_script"),
    ("widget callbacks", "script_runner.py", "_call_callbacks"),
    ("sidebar (page_scenario)", "ui/sidebar.py", "page_scenario"),
    ("  load_scenario (URL → Scenario)", "ui/state.py", "load_scenario"),
    ("  share link (codecs.to_url)", "model/codecs.py", "to_url"),
    ("core: roofline_lens", "model/evaluate.py", "roofline_lens"),
    ("core: launch_lens", "model/evaluate.py", "launch_lens"),
    ("core: cold_start_lens", "model/cold_start.py", "cold_start_lens"),
    ("core: summary", "model/evaluate.py", "summary"),
    ("go.Figure(...) (validation)", "plotly/basedatatypes.py", "__init__"),
    ("st.plotly_chart (to_dict + JSON)", "elements/plotly_chart.py", "plotly_chart"),
    ("st.dataframe (Arrow)", "elements/arrow.py", "dataframe"),
    ("st.metric", "elements/metric.py", "metric"),
    ("st.columns", "elements/layouts.py", "columns"),
    ("st.number_input", "widgets/number_input.py", "number_input"),
    ("st.selectbox", "widgets/selectbox.py", "selectbox"),
    ("st.markdown", "elements/markdown.py", "markdown"),
    ("st.download_button", "widgets/button.py", "download_button"),
    ("pandas.DataFrame(...)", "pandas/core/frame.py", "__init__"),
    ("breakdown table", "ui/layout.py", "breakdown"),
    ("formulas", "ui/formulas.py", ""),
    ("enqueue (protobuf, hashing)", "streamlit/delta_generator.py", "_enqueue"),
]


def breakdown(stats: pstats.Stats, runs: int) -> list[tuple[str, float]]:
    rows = []
    for label, suffix, name in GROUPS:
        total = 0.0
        for (filename, _line, func), (_cc, _nc, _tt, ct, callers) in stats.stats.items():
            if filename.endswith(suffix) and (func == name or (not name)):
                if not name and func == "<module>":
                    continue
                if not name:  # a module: count its top-level functions called from outside it
                    if any(c[0].endswith(suffix) for c in callers):
                        continue
                # count only outermost calls: skip time spent under a recursive self-call
                if any(c[0] == filename and c[2] == func for c in callers):
                    ct -= sum(v[3] for c, v in callers.items() if c[0] == filename and c[2] == func)
                total += ct
        rows.append((label, total / runs))
    # every figure builder in ui/*charts*.py, by name
    for (filename, _line, func), (_cc, _nc, _tt, ct, callers) in sorted(stats.stats.items()):
        if "/ui/" in filename and "charts" in filename and func.endswith("_figure"):
            if not any(c[0] == filename for c in callers):
                rows.append((f"figure builder {Path(filename).stem}.{func}", ct / runs))
    return rows


# --timers: wall and CPU time of each wrapped call, without a profiler's overhead
TIMED: dict[str, list[float]] = {}


def _wrap(owner, attr: str, label: str) -> None:
    fn = getattr(owner, attr)

    def timed(*args, **kwargs):
        if not _enabled:
            return fn(*args, **kwargs)
        c0 = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            TIMED.setdefault(label, []).append(time.thread_time() - c0)

    timed.__wrapped__ = fn
    setattr(owner, attr, timed)


def install_timers() -> None:
    import importlib

    import streamlit as st
    from streamlit.delta_generator import DeltaGenerator

    for name in ("plotly_chart", "dataframe", "metric", "columns", "number_input", "selectbox",
                 "markdown", "download_button", "caption", "expander", "slider", "code",
                 "text_area", "button", "file_uploader", "toggle", "radio", "page_link",
                 "subheader", "title", "info", "warning", "latex"):  # fmt: skip
        _wrap(DeltaGenerator, name, f"st.{name}")
        if hasattr(st, name):
            setattr(st, name, getattr(st._main, name))
    for mod_name, attrs in (
        ("ui.sidebar", ("page_scenario", "sidebar")),
        ("ui.state", ("load_scenario", "apply_change")),
        ("model.evaluate", ("roofline_lens", "launch_lens", "summary")),
        ("model.cold_start", ("cold_start_lens",)),
        ("ui.layout", ("breakdown", "downloads", "fit_warning")),
        ("ui.formulas", ("roofline_formulas", "launch_formulas", "cold_start_formulas")),
        ("ui.buckets", ("bucket_editor",)),
        ("ui.cold_controls", ("cold_controls",)),
    ):
        try:
            mod = importlib.import_module(mod_name)
        except ImportError:
            continue
        for attr in attrs:
            if hasattr(mod, attr):
                _wrap(mod, attr, f"{mod_name}.{attr}")
    for mod_name in ("ui.charts", "ui.cold_charts", "ui.roofline_charts", "ui.launch_charts"):
        try:
            mod = importlib.import_module(mod_name)
        except ImportError:
            continue
        for attr in dir(mod):
            if attr.endswith("_figure") and callable(getattr(mod, attr)):
                _wrap(mod, attr, f"{mod_name}.{attr}")
    ScriptCache, SessionState = runner_internals().ScriptCache, runner_internals().SessionState

    _wrap(ScriptCache, "get_bytecode", "script compile (cached after the first run)")
    _wrap(SessionState, "on_script_will_rerun", "session state: before the run (callbacks)")
    _wrap(SessionState, "on_script_finished", "session state: after the run")


def main() -> int:
    global _enabled
    parser = argparse.ArgumentParser()
    parser.add_argument("page")
    parser.add_argument("--scenario")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--mode", choices=("change", "rerun"), default="change")
    parser.add_argument(
        "--timers", action="store_true", help="time wrapped calls (CPU) instead of cProfile"
    )
    args = parser.parse_args()
    if args.timers:
        global PROFILE
        ScriptRunner._run_script = _original
        install_timers()
        _wrap(ScriptRunner, "_run_script", "whole run (callbacks + script)")
    at = AppTest.from_file(str(ROOT / args.page), default_timeout=60)
    if args.scenario:
        at.query_params["scenario"] = args.scenario
    at.run()
    batch = int(at.sidebar.number_input(key="w_batch").value)
    at.sidebar.number_input(key="w_batch").set_value(batch + 1).run()
    _enabled = True
    for i in range(args.runs):
        if args.mode == "change":
            at.sidebar.number_input(key="w_batch").set_value(batch + 2 + i)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    _enabled = False
    if args.timers:
        print(f"{args.page} · {args.scenario or 'default'}: CPU ms per run (wrapped calls)")
        for label, values in sorted(TIMED.items(), key=lambda kv: -sum(kv[1])):
            print(
                f"  {label:50} {sum(values) / args.runs * 1e3:8.2f}  ({len(values) / args.runs:g} calls)"
            )
        return 0
    stats = pstats.Stats(PROFILE)
    print(f"{args.page} · {args.scenario or 'default'}: CPU ms per run (cProfile, thread time)")
    for label, value in breakdown(stats, args.runs):
        if value > 0:
            print(f"  {label:60} {value * 1e3:8.2f}")
    if args.top:
        stats.sort_stats("cumulative").print_stats(args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
