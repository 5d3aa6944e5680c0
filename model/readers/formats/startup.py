"""``vllm bench startup``: ``--output-json`` and stdout (0.13 and later; format
``startup_bench``; docs/research/issue-43-bench-formats.md)."""

from __future__ import annotations

import re

from model.readers.formats.common import (
    _figure,
    _refuse,
)
from model.readers.measurements import Dataset, Reader

# ----------------------------------------------------------------------------- vllm bench startup

#: ``vllm bench startup --output-json`` (0.13 and later): the mean of each phase's iterations,
#: in seconds (vllm/benchmarks/startup.py; docs/research/issue-43-bench-formats.md)
_STARTUP_FIGURES = {
    "avg_cold_startup_time": "cold_startup_s",
    "avg_warm_startup_time": "warm_startup_s",
    "avg_cold_compilation_time": "cold_compile_s",
    "avg_warm_compilation_time": "warm_compile_s",
}
_STARTUP_KEYS = set(_STARTUP_FIGURES)
_STARTUP_BANNER = "STARTUP TIME BENCHMARK RESULTS"
_STARTUP_LINE = re.compile(
    r"^\s*Avg (total startup|startup|compilation) time:\s*([0-9.eE+-]+)\s*seconds\s*$"
)


def _startup_json(name: str, obj: dict) -> Dataset:
    """``vllm bench startup --output-json``: the cold and warm start-up and torch.compile
    means [s], and how many iterations each phase ran."""
    ds = Dataset(name, "vllm_bench_startup_json", "startup_bench")
    for key, fig in _STARTUP_FIGURES.items():
        if obj.get(key) is not None:
            v = _figure(ds, key, fig, obj[key])
            if v is not None:
                ds.figures[fig] = v
    for phase in ("cold", "warm"):
        times = obj.get(f"{phase}_startup_times")
        if isinstance(times, list) and times:
            ds.figures[f"{phase}_iterations"] = len(times)
    if not {"cold_startup_s", "warm_startup_s"} & set(ds.figures):
        _refuse(
            name,
            ds,
            "a vLLM startup benchmark JSON",
            "avg_cold_startup_time / avg_warm_startup_time in seconds (vllm bench startup)",
        )
    return ds


def _startup_stdout(name: str, text: str) -> Dataset:
    """``vllm bench startup``'s printed results: a COLD STARTUP and a WARM STARTUP section,
    each with its average start-up and compilation time [s] (0.13-0.16 print "Avg total
    startup time", later releases "Avg startup time")."""
    ds = Dataset(name, "vllm_bench_startup_stdout", "startup_bench")
    phase = None
    for n, line in enumerate(text.split("\n"), 1):
        upper = line.strip().upper()
        if upper.startswith("COLD STARTUP"):
            phase = "cold"
            continue
        if upper.startswith("WARM STARTUP"):
            phase = "warm"
            continue
        m = _STARTUP_LINE.match(line)
        if m and phase:
            fig = f"{phase}_{'compile' if m.group(1) == 'compilation' else 'startup'}_s"
            v = _figure(ds, f"line {n}", fig, m.group(2))
            if v is not None:
                ds.figures.setdefault(fig, v)
    if not {"cold_startup_s", "warm_startup_s"} & set(ds.figures):
        _refuse(
            name,
            ds,
            "vllm bench startup output",
            "the COLD STARTUP / WARM STARTUP sections with 'Avg startup time: X seconds'",
        )
    return ds


#: how this module's formats are recognised and read (:mod:`model.readers.registry`)
READERS = (
    Reader(
        name="startup_json",
        stage="json",
        order=30,
        formats=("vllm_bench_startup_json",),
        recognise=lambda v: isinstance(v, dict) and bool(_STARTUP_KEYS & set(v)),
        read=_startup_json,
        accepted="vllm bench startup (stdout or JSON)",
        accepted_json="vllm bench startup --output-json",
        shown=60,
    ),
    Reader(
        name="startup_stdout",
        stage="text",
        order=60,
        formats=("vllm_bench_startup_stdout",),
        recognise=lambda text: _STARTUP_BANNER in text,
        read=_startup_stdout,
        accepted="vllm bench startup (stdout or JSON)",
        shown=60,
    ),
)
