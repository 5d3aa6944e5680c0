"""``vllm bench latency`` and ``vllm bench throughput``: stdout and ``--output-json``
(SPEC 4.5).

Formats (``Dataset.format``; ``kind`` in brackets):

``vllm_latency_stdout`` / ``vllm_latency_json`` [latency]
    ``benchmark_latency.py`` / ``vllm bench latency``: ``Avg latency: X seconds``,
    ``Std latency: …``, ``{p}% percentile latency: …``; its ``--output-json`` (``avg_latency``,
    ``latencies``, ``percentiles``). Figures ``avg_latency_s``, ``std_latency_s``,
    ``p{p}_latency_s`` (and ``iterations`` from the JSON's list).
``vllm_throughput_stdout`` / ``vllm_throughput_json`` [throughput]
    ``benchmark_throughput.py`` / ``vllm bench throughput``: ``Throughput: X requests/s, Y total
    tokens/s, Z output tokens/s`` (before vLLM PR #8914: ``Throughput: X requests/s, Y tokens/s``,
    Y being total tokens), ``Total num prompt tokens:  N``, ``Total num output tokens:  N``; its
    ``--output-json`` (``elapsed_time``, ``num_requests``, ``total_num_tokens``,
    ``requests_per_second``, ``tokens_per_second``).
    A paste holding latency and throughput runs (both stdout formats) is one Dataset: one row per
    run (``bench``: latency or throughput), format and kind those of the FIRST run found, figures
    and conditions those of the last latency run merged with those of the last throughput run
    (in the order the two appear), ``runs`` the number of runs. Each run's conditions come from
    the command line just before it (``--model``, ``--input-len``, ``--output-len``,
    ``--batch-size``, ``-tp``, ``-O``…) and ``init engine (…) took X seconds`` just before it is its
    ``init_engine_s``. Tool defaults for flags the command does not give are not filled in.
"""

from __future__ import annotations

import re

from model.readers.formats.common import (
    MAX_RUNS,
    _command,
    _figure,
    _kind_of,
    _logical_lines,
    _namespace,
    _pct_name,
    _refuse,
    _Run,
)
from model.readers.measurements import Dataset, Reader

# ---------------------------------------------------------------- latency and throughput stdout

_AVG = re.compile(r"\bAvg latency:\s*(\S+)\s*seconds")
_STD = re.compile(r"\bStd latency:\s*(\S+)\s*seconds")
_PCT = re.compile(r"\b(\d+(?:\.\d+)?)% percentile latency:\s*(\S+)\s*seconds")
_THR_NEW = re.compile(
    r"\bThroughput:\s*(\S+)\s*requests/s,\s*(\S+)\s*total tokens/s,\s*(\S+)\s*output tokens/s"
)
_THR_OLD = re.compile(r"\bThroughput:\s*(\S+)\s*requests/s,\s*(\S+)\s*tokens/s")
_THR_ANY = re.compile(r"\bThroughput:\s*\S+\s*requests/s")
_PROMPT_TOKENS = re.compile(r"\bTotal num prompt tokens:\s*(\S+)")
_OUTPUT_TOKENS = re.compile(r"\bTotal num output tokens:\s*(\S+)")
_INIT = re.compile(r"init engine \(profile, create kv cache, warmup model\) took\s*(\S+)\s*sec")
#: every line the latency/throughput reader uses holds one of these
_LAT_THR_WORDS = ("latency", "Throughput", "bench", "Namespace(", "init engine", "Total num")
_LAT_THR_ACCEPTED = (
    "lines such as 'Avg latency: 0.97 seconds', '90% percentile latency: 1.01 seconds', "
    "'Throughput: 44.39 requests/s, 22728.17 total tokens/s, 11364.08 output tokens/s'"
)


def _looks_lat_thr(text: str) -> bool:
    """Whether the text holds a latency or throughput line. Each pattern's literal is looked
    for first (a substring search, in C): on a crafted 5 MB line of digits the patterns alone
    tried every position, 1 s of the session's time before the file was refused (issue 22)."""
    return bool(
        ("Avg latency:" in text and _AVG.search(text))
        or ("Std latency:" in text and _STD.search(text))
        or ("% percentile latency:" in text and _PCT.search(text))
        or ("Throughput:" in text and _THR_ANY.search(text))
    )


def _lat_thr_stdout(name: str, text: str) -> Dataset:
    ds = Dataset(name, "vllm_latency_stdout", "latency")
    runs: list[_Run] = []
    pending_c: dict = {}
    pending_f: dict = {}

    def start(bench: str, n: int) -> _Run:
        nonlocal pending_c, pending_f
        run = _Run(bench, line=n, conditions=pending_c, figures=pending_f)
        pending_c, pending_f = {}, {}
        runs.append(run)
        return run

    def put(run: _Run, n: int, what: str, key: str, raw: str) -> None:
        v = _figure(ds, f"line {n}, {what}", key, raw)
        if v is not None:
            run.figures[key] = v

    for n, line in _logical_lines(text):
        if not any(word in line for word in _LAT_THR_WORDS):
            continue  # most lines of a log: no need to try every pattern
        if len(runs) > MAX_RUNS:
            ds.problem(f"line {n}", f"more than {MAX_RUNS} runs; the rest is not read")
            break
        cmd = _command(ds, f"line {n}", line)
        if cmd is not None:
            pending_c, pending_f = cmd, {}
            continue
        args = _namespace(ds, f"line {n}", line)
        if args is not None:
            pending_c.update(args)
            continue
        last = runs[-1] if runs else None
        if m := _INIT.search(line):
            v = _figure(ds, f"line {n}, init engine", "init_engine_s", m.group(1))
            if v is not None:
                pending_f["init_engine_s"] = v
        elif m := _AVG.search(line):
            put(start("latency", n), n, "Avg latency", "avg_latency_s", m.group(1))
        elif m := _STD.search(line):
            if last is None or last.bench != "latency" or "std_latency_s" in last.figures:
                last = start("latency", n)
            put(last, n, "Std latency", "std_latency_s", m.group(1))
        elif m := _PCT.search(line):
            if _pct_name(m.group(1)) is None:
                ds.problem(f"line {n}", f"{m.group(1)}% is not a percentile; accepted: 0–100")
                continue
            key = f"{_pct_name(m.group(1))}_latency_s"
            if last is None or last.bench != "latency" or key in last.figures:
                last = start("latency", n)
            put(last, n, f"{m.group(1)}% percentile latency", key, m.group(2))
        elif m := _THR_NEW.search(line):
            run = start("throughput", n)
            put(run, n, "Throughput requests/s", "request_throughput", m.group(1))
            put(run, n, "Throughput total tokens/s", "total_token_throughput", m.group(2))
            put(run, n, "Throughput output tokens/s", "output_throughput", m.group(3))
        elif m := _THR_OLD.search(line):
            run = start("throughput", n)
            put(run, n, "Throughput requests/s", "request_throughput", m.group(1))
            put(run, n, "Throughput tokens/s", "total_token_throughput", m.group(2))
        elif m := _THR_ANY.search(line):
            ds.problem(f"line {n}", "a Throughput line this importer does not know")
        elif last is not None and last.bench == "throughput":
            for regex, key in (
                (_PROMPT_TOKENS, "total_input_tokens"),
                (_OUTPUT_TOKENS, "total_output_tokens"),
            ):
                if (m := regex.search(line)) and key not in last.figures:
                    put(last, n, key, key, m.group(1))
    kept = [r for r in runs if set(r.figures) - {"init_engine_s"}]
    if not kept:
        _refuse(name, ds, "vLLM latency/throughput benchmark output", _LAT_THR_ACCEPTED)
    if kept[0].bench == "throughput":
        ds.format, ds.kind = "vllm_throughput_stdout", "throughput"
    ds.rows = [r.row(with_bench=True) for r in kept]
    last_of = {r.bench: i for i, r in enumerate(kept)}
    for i in sorted(last_of.values()):
        ds.figures.update(kept[i].figures)
        ds.conditions.update(kept[i].conditions)
    ds.figures["runs"] = len(kept)
    return ds


# ----------------------------------------------------------------- latency / throughput JSON


def _latency_json(name: str, obj: dict) -> Dataset:
    ds = Dataset(name, "vllm_latency_json", "latency")
    for key, fig in (("avg_latency", "avg_latency_s"), ("std_latency", "std_latency_s")):
        if obj.get(key) is not None:
            v = _figure(ds, key, fig, obj[key])
            if v is not None:
                ds.figures[fig] = v
    pct = obj.get("percentiles")
    if isinstance(pct, dict):
        for p, raw in pct.items():
            if _pct_name(p) is None:
                ds.problem(f"percentiles.{p}", "not a percentile; accepted keys '0' to '100'")
                continue
            fig = f"{_pct_name(p)}_latency_s"
            v = _figure(ds, f"percentiles.{p}", fig, raw)
            if v is not None:
                ds.figures[fig] = v
    elif pct is not None:
        ds.problem("percentiles", f"expected an object {{'50': seconds, …}}, got {_kind_of(pct)}")
    lat = obj.get("latencies")
    if isinstance(lat, list):
        if lat:
            ds.figures["iterations"] = len(lat)
    elif lat is not None:
        ds.problem("latencies", f"expected a list of seconds, got {_kind_of(lat)}")
    if not set(ds.figures) - {"iterations"}:
        _refuse(
            name,
            ds,
            "a vLLM latency benchmark JSON",
            "avg_latency and percentiles {'50': seconds, …} in seconds",
        )
    return ds


_THROUGHPUT_JSON = {
    "elapsed_time": "duration",
    "num_requests": "completed",
    "total_num_tokens": "total_num_tokens",
    "requests_per_second": "request_throughput",
    "tokens_per_second": "total_token_throughput",
}


def _throughput_json(name: str, obj: dict) -> Dataset:
    ds = Dataset(name, "vllm_throughput_json", "throughput")
    for key, fig in _THROUGHPUT_JSON.items():
        if obj.get(key) is not None:
            v = _figure(ds, key, fig, obj[key])
            if v is not None:
                ds.figures[fig] = v
    if not ds.figures:
        _refuse(
            name,
            ds,
            "a vLLM throughput benchmark JSON",
            "numbers for " + ", ".join(_THROUGHPUT_JSON),
        )
    return ds


#: how this module's formats are recognised and read (:mod:`model.readers.registry`)
READERS = (
    Reader(
        name="latency_json",
        stage="json",
        order=40,
        formats=("vllm_latency_json",),
        recognise=lambda v: (
            isinstance(v, dict)
            and ("avg_latency" in v or ("latencies" in v and "percentiles" in v))
        ),
        read=_latency_json,
        accepted="vllm bench latency and throughput (stdout or JSON)",
        accepted_json="vllm bench latency --output-json",
        shown=50,
    ),
    Reader(
        name="throughput_json",
        stage="json",
        order=50,
        formats=("vllm_throughput_json",),
        recognise=lambda v: (
            isinstance(v, dict)
            and any(
                k in v for k in ("requests_per_second", "tokens_per_second", "total_num_tokens")
            )
        ),
        read=_throughput_json,
        accepted="vllm bench latency and throughput (stdout or JSON)",
        accepted_json="vllm bench throughput --output-json",
        shown=50,
    ),
    Reader(
        name="latency_throughput_stdout",
        stage="text",
        order=70,
        formats=(
            "vllm_latency_stdout",
            "vllm_throughput_stdout",
        ),
        recognise=_looks_lat_thr,
        read=_lat_thr_stdout,
        accepted="vllm bench latency and throughput (stdout or JSON)",
        shown=50,
    ),
)
