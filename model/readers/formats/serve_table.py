"""The ``Serving Benchmark Result`` table vLLM's and SGLang's benchmarks print (SPEC 4.5).

Formats (``Dataset.format``; ``kind`` in brackets):

``vllm_bench_stdout`` [serving]
    The ``============ Serving Benchmark Result ============`` table both scripts print (legacy
    ``Total Token throughput`` and new ``Total token throughput``, trailing spaces, section
    headers, ``Mean/Median/P{p} TTFT|TPOT|ITL|E2EL (ms)`` rows, the speculative-decoding rows
    ``Acceptance rate (%)``, ``Acceptance length``, ``Drafts``… as the JSON's
    ``spec_decode_*``). Rows are found by their labels wherever they stand in the line, so what
    is in front of them does not matter: a log's time stamp (``2025-06-10T12:00:00Z``), a
    container's ``bench-1  |``, ``#``, ``>``, a markdown ``|`` around the line, indentation. A
    table whose line breaks were lost (a scraped issue: the banner and every row on one line)
    is read the same way; a value cut short (``58...``) is a problem. A paste without the
    banner is read when it has a ``Successful requests`` row and a ``Mean|Median|P… TTFT|TPOT|
    ITL|E2EL (ms)`` row; a markdown table with several value columns (``| Metric | main | this
    PR |``) is one run per column, its header as ``label``. Each table is a run (a row);
    the lines around it are ignored, except the command line (``--model``, ``--max-concurrency``,
    ``--request-rate``…; continued lines joined), the ``Namespace(...)`` line the scripts print
    (read with a pattern, never evaluated), ``Traffic request rate:`` and ``Maximum request
    concurrency:`` printed before it, which become its conditions (and ``max_concurrency`` a
    figure too, as the JSON has it). A saved result JSON object printed on one line after a
    table (as in wrapper scripts' logs) with the same ``completed`` count is the same run: its
    unrounded figures and its conditions (model, GPU metadata, date) replace the table's.
``sglang_bench_stdout`` [serving]
    The same table printed by SGLang's ``bench_serving`` (also when it drives vLLM or LMDeploy:
    ``Backend:`` says which): ``Backend``, ``Traffic request rate`` and ``Max request
    concurrency`` (also spelt ``Max reqeuest concurrency``; ``not set``: no figure) inside the
    table, ``Total throughput (tok/s)`` (older name of the total), ``Concurrency``
    (``mean_concurrency``), ``Mean/Median/P{p} E2E Latency (ms)`` (e2el), ``Max ITL (ms)``
    (``max_itl_ms``); ``Total generated tokens (retokenized)`` and the text/vision split are not
    used. The command ``python -m sglang.bench_serving …`` gives the conditions.
"""

from __future__ import annotations

import re

from model.readers.formats.common import (
    MAX_RUNS,
    _command,
    _count_condition,
    _figure,
    _json,
    _label,
    _logical_lines,
    _mean_lengths,
    _multi_run,
    _namespace,
    _number,
    _pct_name,
    _rate_condition,
    _refuse,
    _Run,
)
from model.readers.formats.serve_json import (
    _is_vllm,
    _vllm_object,
)
from model.readers.measurements import Dataset, Reader

# ------------------------------------------------------------------------------ stdout table

_BANNER = "Serving Benchmark Result"
_RULE = "=" * 20  #: a table's closing line (``"=" * 50``) holds this; no regular expression
_TABLE_ROWS = {
    "successful requests": "completed",
    "failed requests": "failed",
    "maximum request concurrency": "max_concurrency",
    "max request concurrency": "max_concurrency",  # SGLang
    "max reqeuest concurrency": "max_concurrency",  # SGLang's spelling in late 2024
    "benchmark duration (s)": "duration",
    "total input tokens": "total_input_tokens",
    "total generated tokens": "total_output_tokens",
    "request throughput (req/s)": "request_throughput",
    "request goodput (req/s)": "request_goodput",
    "input token throughput (tok/s)": "input_throughput",
    "output token throughput (tok/s)": "output_throughput",
    "peak output token throughput (tok/s)": "max_output_tokens_per_s",
    "peak concurrent requests": "max_concurrent_requests",
    "rtfx": "rtfx",
    "total token throughput (tok/s)": "total_token_throughput",
    "total throughput (tok/s)": "total_token_throughput",  # SGLang before late 2024
    "acceptance rate (%)": "spec_decode_acceptance_rate",
    "acceptance length": "spec_decode_acceptance_length",
    "accept length": "spec_decode_acceptance_length",  # SGLang
    "concurrency": "mean_concurrency",  # SGLang: the mean number of requests in flight
    "drafts": "spec_decode_num_drafts",
    "draft tokens": "spec_decode_draft_tokens",
    "accepted tokens": "spec_decode_accepted_tokens",
}
#: rows that are settings, not measurements: they become conditions
_TABLE_CONDITIONS = {
    "backend": "backend",  # SGLang
    "traffic request rate": "request_rate",  # SGLang prints it inside the table
    "request rate configured (rps)": "request_rate",
}
#: rows only SGLang's bench_serving prints (its table has vLLM's banner and rows)
_SGLANG_ROWS = {
    "backend",
    "max request concurrency",
    "max reqeuest concurrency",
    "accept length",
    "concurrency",
}
_PREAMBLE = {
    "traffic request rate": "request_rate",
    "maximum request concurrency": "max_concurrency",
    "burstiness factor": "burstiness",
}
_STAT_LABEL = r"(?:mean|median|std|min|max|p\d{1,3}(?:\.\d+)?)\s+(?:ttft|tpot|itl|e2el|e2e\s+latency)\s*\(ms\)"
_STAT_ROW = re.compile(
    r"^(mean|median|std|min|max|p(\d+(?:\.\d+)?))\s+(ttft|tpot|itl|e2el|e2e latency)\s*\(ms\)$"
)


def _label_pattern(labels) -> str:
    words = sorted(labels, key=len, reverse=True)
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in words)


#: ``Label: value`` anywhere in a line, for the rows above: whatever stands before the label (a
#: log's time stamp, ``pod |``, ``#``, ``>``, a markdown ``|``) is left aside, and a line that
#: lost its line breaks (a flattened paste) holds several. The label ends at a colon or a
#: markdown cell border; the value is the next word.
_ROW_RE = re.compile(
    r"(?<![A-Za-z0-9])(?P<label>"
    + _label_pattern([*_TABLE_ROWS, *_TABLE_CONDITIONS])
    + "|"
    + _STAT_LABEL
    + r")[*_`]*[ \t]*(?::[*_`]*[ \t]*\|?|\|)[ \t]*[*_`]*(?P<value>[^\s|*`]+)",
    re.IGNORECASE,
)
_PREAMBLE_RE = re.compile(
    r"(?<![A-Za-z0-9])(?P<label>" + _label_pattern(_PREAMBLE) + r")[ \t]*:[ \t]*(?P<value>\S+)",
    re.IGNORECASE,
)
#: a pasted table without the banner (a markdown table, a trimmed paste) is read when it has
#: both of these rows
_BANNERLESS_FIRST = re.compile(r"(?<![A-Za-z0-9])successful\s+requests[*_`]*[ \t]*[:|]", re.I)
_BANNERLESS_STAT = re.compile(
    r"(?<![A-Za-z0-9])(?:mean|median|p\d{1,3})\s+(?:ttft|tpot|itl|e2el)\s*\(ms\)[*_`]*[ \t]*[:|]",
    re.I,
)
_UNSET = {"not", "not set", "none", "n/a", "-", "unlimited"}
_TABLE_ACCEPTED = (
    "rows of the 'Serving Benchmark Result' table such as 'Successful requests: 300', "
    "'Request throughput (req/s): 8.33', 'Mean TTFT (ms): 54.58'"
)


def _is_banner(line: str) -> bool:
    """``====== Serving Benchmark Result ======`` (any number of ``=``), checked without a
    regular expression, which would backtrack over a long run of ``=``."""
    at = line.find(_BANNER)
    if at < 0:
        return False
    return line[:at].rstrip().endswith("=") and line[at + len(_BANNER) :].lstrip().startswith("=")


def _table_row(ds: Dataset, run: _Run, n: int, label: str, value: str) -> None:
    key = _label(label)
    where = f"line {n}, {label}"
    if key in _SGLANG_ROWS or "e2e latency" in key:
        run.sglang = True
    if key in _TABLE_CONDITIONS:
        name = _TABLE_CONDITIONS[key]
        if name == "request_rate":
            v = _rate_condition(ds, where, value)
            if v is not None:
                run.conditions[name] = v
        else:
            run.conditions[name] = value
        return
    name = _TABLE_ROWS.get(key)
    if name is None:
        m = _STAT_ROW.match(key)
        stat = (_pct_name(m.group(2)) if m.group(2) else m.group(1)) if m else None
        if stat:
            metric = "e2el" if m.group(3) == "e2e latency" else m.group(3)
            name = f"{stat}_{metric}_ms"
    if name is None:
        return  # a percentile out of 0-100: not a row of the table
    if name == "max_concurrency" and value.lower() in _UNSET:
        return  # SGLang prints "not set"
    v = _figure(ds, where, name, value)
    if v is not None:
        run.figures[name] = v
        if name == "max_concurrency":
            run.conditions[name] = v


def _table_rows(ds: Dataset, run: _Run, n: int, text: str) -> None:
    for m in _ROW_RE.finditer(text):
        _table_row(ds, run, n, " ".join(m.group("label").split()), m.group("value"))


def _preamble(ds: Dataset, n: int, line: str, pending: dict) -> None:
    for m in _PREAMBLE_RE.finditer(line):
        label, value = " ".join(m.group("label").split()), m.group("value")
        key = _PREAMBLE[_label(label)]
        if value.lower() in _UNSET:
            continue
        where = f"line {n}, {label}"
        if key == "request_rate":
            v = _rate_condition(ds, where, value)
        elif key == "max_concurrency":
            v = _count_condition(ds, where, value)
        else:
            v = _number(value)
        if v is not None:
            pending[key] = v


def _looks_bannerless(text: str) -> bool:
    return bool(_BANNERLESS_FIRST.search(text) and _BANNERLESS_STAT.search(text))


def _row_key(label: str) -> str | None:
    """The table row ``label`` names (``successful requests``, ``p99 ttft (ms)``…), or None."""
    key = _label(label.strip("*_` :"))
    if key in _TABLE_ROWS or key in _TABLE_CONDITIONS or _STAT_ROW.match(key):
        return key
    return None


def _pipe_cells(line: str) -> list[str] | None:
    s = line.strip()
    if not s.startswith("|"):
        return None
    return [c.strip().strip("*_`").strip() for c in s.strip("|").split("|")]


def _pipe_columns(ds: Dataset, text: str) -> list[_Run] | None:
    """A markdown table with several value columns (``| Metric | before | after |``): one run
    a column, its header as the run's ``label``. None when no row has two values."""
    rows: list[tuple[int, str, list[str]]] = []
    header: list[str] | None = None
    for n, line in enumerate(text.split("\n"), 1):
        cells = _pipe_cells(line)
        if not cells or len(cells) < 2 or set("".join(cells)) <= set("-: "):
            continue
        if _row_key(cells[0]) is None:
            if header is None and not rows and len(cells) >= 3:
                header = cells
            continue
        rows.append((n, cells[0], cells[1:]))
    width = max((len(v) for _, _, v in rows), default=0)
    if width < 2:
        return None
    runs = [_Run("serving", line=rows[0][0]) for _ in range(width)]
    for i, run in enumerate(runs):
        if header is not None and i + 1 < len(header) and header[i + 1]:
            run.conditions["label"] = header[i + 1]
    for n, label, values in rows:
        for run, value in zip(runs, values, strict=False):
            if value:
                _table_row(ds, run, n, label.strip("*_` :"), value.split()[0])
    return runs


def _serving_stdout(name: str, text: str, bannerless: bool = False) -> Dataset:
    """The tables in ``text``; ``bannerless``: rows pasted without the banner, where a
    ``Successful requests`` row starts a table (and a second one, another)."""
    ds = Dataset(name, "vllm_bench_stdout", "serving")
    runs: list[_Run] = []
    pending: dict = {}
    run: _Run | None = None
    in_table = False
    columns = _pipe_columns(ds, text) if bannerless and "|" in text else None
    if columns is not None:
        return _table_runs(name, ds, columns)

    def new_run(n: int) -> _Run | None:
        nonlocal pending, in_table
        if len(runs) >= MAX_RUNS:
            ds.problem(f"line {n}", f"more than {MAX_RUNS} tables; the rest is not read")
            return None
        r = _Run("serving", line=n, conditions=pending)
        runs.append(r)
        pending, in_table = {}, True
        return r

    for n, raw in _logical_lines(text):
        line = raw.rstrip()
        if _BANNER in line and _is_banner(line):
            # one table a line, or several on a flattened line: the text after each banner
            # (up to the closing rule) holds its rows
            pieces = line.split(_BANNER)
            _preamble(ds, n, pieces[0], pending)
            for piece in pieces[1:]:
                run = new_run(n)
                if run is None:
                    break
                rest = piece.lstrip().lstrip("=")
                cut = rest.find(_RULE)
                if cut >= 0:
                    rest, in_table = rest[:cut], False
                _table_rows(ds, run, n, rest)
            if len(runs) >= MAX_RUNS and run is None:
                break
            continue
        s = line.strip()
        if s.startswith("{") and s.endswith("}"):
            _stdout_json(ds, n, s, runs)
            continue
        if in_table and run is not None:
            if _RULE in line:
                in_table = False
                continue
            if "completed" in run.figures and _BANNERLESS_FIRST.search(line):
                run = new_run(n)  # a second table whose banner was not pasted
                if run is None:
                    break
            _table_rows(ds, run, n, line)
            continue
        if bannerless and _BANNERLESS_FIRST.search(line):
            run = new_run(n)
            if run is None:
                break
            _table_rows(ds, run, n, line)
            continue
        cmd = _command(ds, f"line {n}", line)
        if cmd is not None:
            pending = cmd
            continue
        args = _namespace(ds, f"line {n}", line)
        if args is not None:
            pending.update(args)
            continue
        _preamble(ds, n, line, pending)
    return _table_runs(name, ds, runs)


def _table_runs(name: str, ds: Dataset, runs: list[_Run]) -> Dataset:
    kept = []
    for r in runs:
        if r.figures:
            _mean_lengths(r.figures, r.conditions)
            if isinstance(r.conditions.get("max_concurrency"), int):
                # printed before the table (older scripts) or given on the command line
                r.figures.setdefault("max_concurrency", r.conditions["max_concurrency"])
            kept.append(r)
        else:
            ds.problem(f"line {r.line}", "a Serving Benchmark Result table with no readable row")
    if not kept:
        _refuse(name, ds, "a vLLM 'Serving Benchmark Result' table", _TABLE_ACCEPTED)
    if all(r.sglang for r in kept):
        ds.format = "sglang_bench_stdout"
    return _multi_run(ds, kept)


def _stdout_json(ds: Dataset, n: int, line: str, runs: list[_Run]) -> None:
    """A saved result object printed on one line of a log: the same run as the table just before
    it when ``completed`` agrees (its unrounded figures and conditions win), else a run of its
    own."""
    try:
        obj = _json(line)
    except (RecursionError, ValueError):
        return
    if not isinstance(obj, dict) or not _is_vllm(obj):
        return
    run = _vllm_object(ds, obj, f"line {n}, ")
    if not run.figures:
        return
    last = runs[-1] if runs else None
    if (
        last is not None
        and last.bench == "serving"
        and not last.merged
        and last.figures.get("completed") == run.figures.get("completed")
    ):
        last.figures.update(run.figures)
        last.conditions.update(run.conditions)
        last.merged = True
        return
    run.line, run.merged = n, True
    runs.append(run)


def _has_banner(text: str) -> bool:
    return _BANNER in text and any(_is_banner(line) for line in text.split("\n"))


#: how this module's formats are recognised and read (:mod:`model.readers.registry`)
READERS = (
    Reader(
        name="serve_table",
        stage="text",
        order=10,
        formats=("vllm_bench_stdout", "sglang_bench_stdout"),
        recognise=_has_banner,
        read=_serving_stdout,
        accepted="vllm bench serve / benchmark_serving.py and SGLang bench_serving results (JSON, JSONL or the printed table)",
        shown=30,
    ),
    Reader(
        name="serve_table_bannerless",
        stage="text",
        order=20,
        formats=("vllm_bench_stdout", "sglang_bench_stdout"),
        recognise=_looks_bannerless,
        read=lambda name, text: _serving_stdout(name, text, bannerless=True),
        shown=30,
    ),
)
