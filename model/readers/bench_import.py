"""Importers for serving, latency and throughput benchmark outputs (SPEC 4.5, ``whatif import``).

:func:`read_bench` takes the text of one file and its name and returns a
:class:`~model.readers.measurements.Dataset`, or None when the text is none of the formats below
(so a dispatcher can try others), or raises :class:`~model.errors.ScenarioError` (key: the file
name) when the text is recognisably one of them but nothing usable can be read.

Formats (``Dataset.format``; ``kind`` in brackets):

``vllm_bench_json`` [serving]
    One result object of vLLM's ``benchmarks/benchmark_serving.py --save-result`` (legacy, up to
    mid-2025: the goodput key is spelt ``"request_goodput:"`` with a colon, ``request_rate`` may be
    the string ``"inf"``, ``--metadata KEY=VALUE`` pairs are string keys such as ``"gpu"``) or of
    ``vllm bench serve`` (``vllm/benchmarks/serve.py``: ``failed``, ``max_concurrency``,
    ``max_output_tokens_per_s``, ``max_concurrent_requests``…). The per-request lists
    (``ttfts``, ``itls``, ``input_lens``, ``latencies``…) are not copied; the mean prompt and
    output lengths are derived from ``total_input_tokens / completed`` (or ``input_lens``).
    Other numeric keys named like metrics (``spec_decode_*``, ``probe_*``, ``*_ms``, ``*_per_s``,
    ``*_throughput``) are figures; other numbers and short strings are conditions (metadata).
    A JSON array of such objects (a sweep collected into one file) is one row per object,
    GenAI-Perf/AIPerf exports included; items that are no result are problems (``item 3: …``).
``vllm_bench_jsonl`` [serving]
    Several such objects, one a line (``--append-result``). One row per run; a line that starts
    like JSON and is not is a problem (``line N: not JSON``) and the rest is read; lines that do
    not start with ``{`` or ``[`` (a wrapper script's notes between the runs) are skipped.
``sglang_bench_json`` / ``sglang_bench_jsonl`` [serving]
    SGLang's ``python -m sglang.bench_serving --output-file`` (JSONL, one object per run, often
    with the script's text lines between them): vLLM's keys, except ``{stat}_e2e_latency_ms``
    (read as ``{stat}_e2el_ms``), ``concurrency`` (its mean requests in flight:
    ``mean_concurrency``), ``accept_length`` (``spec_decode_acceptance_length``), and
    ``request_rate`` written as JSON's ``Infinity``. ``random_input_len``/``random_output_len``
    give ``input_len``/``output_len`` when ``dataset_name`` is ``random``.
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
    used. The command ``python -m sglang.bench_serving …`` gives the conditions.``vllm_latency_stdout`` / ``vllm_latency_json`` [latency]
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
``genai_perf_csv`` [serving]
    GenAI-Perf ``profile_export_genai_perf.csv`` (and AIPerf's ``profile_export_aiperf.csv``):
    block ``Metric,avg,min,max,p99,…`` (values with thousands separators, quoted), block
    ``Metric,Value``; GPU telemetry blocks (``Metric,GPU,…``, ``Endpoint,GPU_Index,…``) are
    skipped. Labels with or without units (older files: ``Output Sequence Length``).
``genai_perf_console`` / ``aiperf_console`` [serving]
    The table GenAI-Perf and AIPerf print (``NVIDIA GenAI-Perf | LLM Metrics``, rich's box
    characters): header ``┃ Statistic ┃ avg ┃ min ┃ …`` (AIPerf: ``┃ Metric ┃``), rows
    ``│ Request Latency (ms) │ 1,799.53 │ …``; a label wrapped over several lines (its other
    cells empty) is joined; ``N/A`` and ``-`` are statistics not given, a value the terminal
    cut (``11.…``) is a problem. Labels and units as in the CSV (older: ``Time to first token
    (ms)``, ``Num output token``, times in ns). Around the table: ``Benchmark Duration: X sec``
    (``duration``), the model from the ``genai-perf``/``aiperf profile`` command, the
    concurrency from ``--concurrency N`` or the artifacts path (``…-concurrency16/…``).
``genai_perf_json`` [serving]
    The companion ``profile_export_genai_perf.json`` and AIPerf's ``profile_export_aiperf.json``:
    ``{metric: {"unit": …, "avg": …, "p50": …, "p99": …}}``; model and concurrency from
    ``input_config`` where present.

Figure names, whatever the source (SPEC 4.5, vLLM's result JSON names): ``completed``,
``failed``, ``duration`` [s], ``max_concurrency``, ``request_throughput`` [req/s],
``request_goodput``, ``output_throughput``, ``total_token_throughput`` [tok/s],
``total_input_tokens``, ``total_output_tokens``, ``mean_input_tokens``, ``mean_output_tokens``,
and ``{stat}_{m}_ms`` for m in ttft, tpot, itl, e2el with stat ``mean``, ``median``, ``std``,
``p{P}`` (``p99``, ``p99.9``) and, from GenAI-Perf, ``min`` and ``max``. GenAI-Perf's avg is mean,
p50 median; "Request Latency" is e2el, "Inter Token Latency" itl, "Time To First Token" ttft,
"Time To Second Token" ``ttst``; it has no TPOT, none is made up. "Output Token Throughput Per
User" is ``output_throughput_per_user`` (other stats ``{stat}_output_throughput_per_user``); the
sequence-length rows are ``{stat}_input_tokens`` / ``{stat}_output_tokens``. The stdout table's
"Peak output token throughput" and "Peak concurrent requests" keep the JSON's names
``max_output_tokens_per_s`` and ``max_concurrent_requests``. Counts are ints. Every figure is a
finite number ≥ 0: NaN, Infinity and negative values are problems, not figures.

``conditions``: ``model``, ``backend``, ``gpu`` and the other ``--metadata`` pairs, ``date`` (as
the tool wrote it), ``num_prompts``, ``request_rate`` (a float or ``"inf"``), ``max_concurrency``,
``mean_input_tokens``, ``mean_output_tokens``, ``tensor_parallel_size`` and the other command
flags found; for GenAI-Perf the concurrency (``max_concurrency``) and request rate that the
artifact directory or file name carries (``…-concurrency<N>/profile_export_genai_perf.csv``).
Where a file holds several runs, ``figures`` and ``conditions`` are the last run's (plus
``runs``) and ``rows`` holds each run's conditions and figures.

Sources (schemas read from the tools' code; real examples in ``shared/fixtures/bench_formats``):

- vllm-project/vllm ``benchmarks/benchmark_serving.py`` @0049e29c (save-result JSON, stdout
  table); ``vllm/benchmarks/serve.py`` @009e6d4a (``vllm bench serve``);
  ``vllm/benchmarks/latency.py`` @00cae075; ``vllm/benchmarks/throughput.py`` @02028314 and
  https://github.com/vllm-project/vllm/pull/8914 (throughput line before/after the output split);
  https://github.com/vllm-project/vllm/pull/11078 (latency and throughput stdout).
- https://github.com/nerdalert/vllm-bench-automation (README.md; vllm-benchmark-graphs/results.json)
  for real ``--save-result`` JSON and JSONL; https://github.com/tenstorrent/tt-inference-server/pull/2119
  for the newest table.
- triton-inference-server/perf_analyzer ``genai-perf/genai_perf/export_data/csv_exporter.py``
  @09628cd6; real CSVs from https://github.com/NVIDIA/cloudai/blob/main/doc/ai_dynamo.md and
  https://github.com/triton-inference-server/perf_analyzer/issues/393; the JSON layout from
  https://github.com/ai-dynamo/aiperf/issues/340 and AIPerf's
  ``docs/tutorials/working-with-profile-exports.md``.
- Patterns of published outputs beyond those (tests/test_bench_import.py names each source):
  SGLang's table and JSONL (sgl-project/sglang issues #8285, #2805, #12389, PRs #14098,
  #12263), a flattened table (vllm-project/vllm#35625), a paste without the banner
  (eugr/spark-vllm-docker#271), GenAI-Perf's console table (perf_analyzer
  ``genai-perf/docs/dynamo.md``, issue #437) and AIPerf's (ai-dynamo/aiperf
  ``docs/tutorials/custom-dataset.md``), AIPerf's CSV with ``p1…p99,std``
  (``docs/tutorials/working-with-profile-exports.md``).

Recognition: a JSON object by its keys (vLLM: ``completed``, ``request_throughput``,
``mean_ttft_ms``…; GenAI-Perf: a metric such as ``request_latency`` holding an object; latency:
``avg_latency``; throughput: ``requests_per_second``…); a list by its items. Valid JSON with none
of them (``{"a": 1}``, ``[1, 2]``, a number) is None; broken JSON that names such keys is an
error saying where it breaks.
``Dataset.problems`` lists what was skipped and why (``line 5, Mean TTFT (ms): 'abc' is not a
number``, ``mean_ttft_ms: NaN is not a number``, ``duration: negative``, ``line 3: not JSON``);
rows and keys this importer does not use are skipped silently.

Nothing is evaluated: JSON is read with :func:`json.loads` (a nesting too deep for it is a
:class:`ScenarioError`), CSV with :mod:`csv`, command lines with :func:`shlex.split`.
"""

from __future__ import annotations

import csv
import json
import math
import re
import shlex
from dataclasses import dataclass, field
from decimal import Decimal

from model.errors import ScenarioError
from model.readers.measurements import Dataset
from model.readers.measurements import number as _measurements_number

#: benchmark runs read from one file (a run is a whole result; more would only cost time
#: while the server holds the interpreter: 100 000 one-line runs took ~6 s to read)
MAX_RUNS = 2000

#: every ``Dataset.format`` this module returns
FORMATS = (
    "vllm_bench_json",
    "vllm_bench_jsonl",
    "vllm_bench_stdout",
    "vllm_latency_stdout",
    "vllm_latency_json",
    "vllm_throughput_stdout",
    "vllm_throughput_json",
    "genai_perf_csv",
    "genai_perf_json",
    "genai_perf_console",
    "aiperf_console",
    "sglang_bench_stdout",
    "sglang_bench_json",
    "sglang_bench_jsonl",
)

#: figures that are counts: ints, and a fractional value is a problem
_COUNTS = {
    "completed",
    "failed",
    "max_concurrency",
    "total_input_tokens",
    "total_output_tokens",
    "total_num_tokens",
    "iterations",
    "spec_decode_num_drafts",
    "spec_decode_draft_tokens",
    "spec_decode_accepted_tokens",
}
#: figures that are ints when whole (printed with decimals by some tools)
_WHOLE = {"max_concurrent_requests"}

_STAT_KEY = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_[a-z0-9_]+_ms$")
_SERVING_STAT_KEY = re.compile(
    r"^(mean|median|std|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el|e2e_latency)_ms$"
)
#: SGLang's bench_serving writes ``mean_e2e_latency_ms`` where vLLM writes ``mean_e2el_ms``
_SGLANG_E2E = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_e2e_latency_ms$")


#: the ``--metadata`` key ``whatif commands`` gives a benchmark: the link of the scenario that
#: predicted the run (:func:`model.readers.setup.linked_scenario`)
LINK_KEY = "whatif_link"
MAX_LINK_CHARS = 8192


def _json(text: str):
    """:func:`json.loads` with integers past 18 digits read as floats (a 4,000-digit number
    becomes inf, which the figures' checks refuse by name, instead of an ``OverflowError``
    where it meets a float)."""
    return json.loads(text, parse_int=_json_int)


def _json_int(digits: str):
    return int(digits) if len(digits.lstrip("-")) <= 18 else float(digits)


# --------------------------------------------------------------------------------------- values


def _number(raw) -> float | None:
    """:func:`model.readers.measurements.number`, and None where it raises: it lets an exponent
    with no mantissa ("E10") through its pattern to ``float()``, which refuses it."""
    try:
        return _measurements_number(raw)
    except ValueError:
        return None


def _kind_of(raw) -> str:
    if raw is None:
        return "null"
    if isinstance(raw, bool):
        return "true/false"
    if isinstance(raw, dict):
        return "an object"
    if isinstance(raw, list):
        return "a list"
    if isinstance(raw, str):
        return "text"
    return type(raw).__name__


def _show(raw) -> str:
    if isinstance(raw, float) and not math.isfinite(raw):
        return "NaN" if math.isnan(raw) else ("Infinity" if raw > 0 else "-Infinity")
    text = repr(raw) if isinstance(raw, str) else str(raw)
    return text if len(text) <= 40 else text[:37] + "…"


#: the magnitudes a benchmark's figure may have, zero aside: no time in ms or s, count, rate or
#: throughput a benchmark reports is below 10⁻⁹ or above 10¹⁵; a value outside (1e308 ms, a
#: subnormal 1e-320) is no measurement and would only drive the fit out of finite numbers
MIN_MAGNITUDE, MAX_MAGNITUDE = 1e-9, 1e15
PLAUSIBLE = f"accepted: 0, or a magnitude from {MIN_MAGNITUDE:g} to {MAX_MAGNITUDE:g}"


def _plausible(value: float) -> bool:
    return value == 0 or MIN_MAGNITUDE <= abs(value) <= MAX_MAGNITUDE


def _figure(ds: Dataset, where: str, key: str, raw) -> float | int | None:
    """``raw`` as figure ``key`` (a finite number ≥ 0; an int for counts), or None with a
    problem recorded at ``where``."""
    if isinstance(raw, bool | list | dict) or raw is None:
        ds.problem(where, f"expected a number, got {_kind_of(raw)}")
        return None
    value = _number(raw)
    if value is None:
        ds.problem(where, f"{_show(raw)} is not a number")
        return None
    if not _plausible(value):
        ds.problem(where, f"{_show(raw)} is out of range: {PLAUSIBLE}")
        return None
    if value < 0:
        ds.problem(where, f"negative ({_show(raw)}); times, counts and rates are ≥ 0")
        return None
    if key in _COUNTS:
        if value != int(value):
            ds.problem(where, f"{_show(raw)} is not a whole number")
            return None
        return int(value)
    if key in _WHOLE and value == int(value):
        return int(value)
    return value


def _count_condition(ds: Dataset, where: str, raw) -> int | None:
    value = _number(raw)
    if value is not None and not _plausible(value):
        ds.problem(where, f"{_show(raw)} is out of range: {PLAUSIBLE}")
        return None
    if value is None or value < 0 or value != int(value):
        ds.problem(where, f"{_show(raw)} is not a whole number ≥ 0")
        return None
    return int(value)


def _rate_condition(ds: Dataset, where: str, raw) -> float | str | None:
    """A request rate: a number ≥ 0 or ``"inf"`` (the string vLLM writes; JSON's Infinity and
    ``float('inf')`` mean the same: every request at once)."""
    if isinstance(raw, float) and raw == math.inf:
        return "inf"
    if isinstance(raw, str) and raw.strip().lower() in ("inf", "infinity"):
        return "inf"
    value = None if isinstance(raw, bool) else _number(raw)
    if value is None or value < 0 or not _plausible(value):
        ds.problem(where, f"{_show(raw)} is not a request rate; accepted: a number ≥ 0 or 'inf'")
        return None
    return value


def _mean_lengths(figures: dict, conditions: dict, input_lens=None, output_lens=None) -> None:
    """``mean_input_tokens`` / ``mean_output_tokens`` from the totals over ``completed`` (or the
    per-request lists), into both figures and conditions."""
    completed = figures.get("completed")
    for total_key, lens, out_key in (
        ("total_input_tokens", input_lens, "mean_input_tokens"),
        ("total_output_tokens", output_lens, "mean_output_tokens"),
    ):
        if out_key in figures:
            continue
        value = None
        if completed and total_key in figures:
            value = figures[total_key] / completed
        elif isinstance(lens, list) and lens:
            nums = [_number(x) for x in lens]
            if all(n is not None and n >= 0 for n in nums):
                value = sum(nums) / len(nums)
        if value is not None:
            figures[out_key] = value
            conditions.setdefault(out_key, value)


def _pct_name(p) -> str | None:
    """``p99``, ``p99.9`` for a percentile 0–100, else None."""
    v = _number(p)
    if v is None or not 0 <= v <= 100:
        return None
    return f"p{int(v)}" if v == int(v) else f"p{v}"


# ------------------------------------------------------------------------------- command lines

_COMMAND = re.compile(
    r"(?:benchmark_(?:serving|latency|throughput)\.py|vllm\s+bench\s+(?:serve|latency|throughput)"
    r"|sglang\.bench_serving|(?<![a-z])bench_serving\.py)"
    r"(?P<args>(?:\s.*)?)$"
)

_INT, _STR, _RATE, _FLAG = "int", "str", "rate", "flag"
_FLAGS = {
    "--model": ("model", _STR),
    "--tensor-parallel-size": ("tensor_parallel_size", _INT),
    "-tp": ("tensor_parallel_size", _INT),
    "--pipeline-parallel-size": ("pipeline_parallel_size", _INT),
    "-pp": ("pipeline_parallel_size", _INT),
    "--data-parallel-size": ("data_parallel_size", _INT),
    "-dp": ("data_parallel_size", _INT),
    "--input-len": ("input_len", _INT),
    "--random-input-len": ("input_len", _INT),
    "--random-input": ("input_len", _INT),  # argparse takes the prefix; people type it
    "--output-len": ("output_len", _INT),
    "--random-output-len": ("output_len", _INT),
    "--random-output": ("output_len", _INT),
    "--batch-size": ("batch_size", _INT),
    "--num-prompts": ("num_prompts", _INT),
    "--max-concurrency": ("max_concurrency", _INT),
    "--request-rate": ("request_rate", _RATE),
    "--backend": ("backend", _STR),
    "--dataset-name": ("dataset_name", _STR),
    "--dtype": ("dtype", _STR),
    "--quantization": ("quantization", _STR),
    "-q": ("quantization", _STR),
    "--kv-cache-dtype": ("kv_cache_dtype", _STR),
    "--max-model-len": ("max_model_len", _INT),
    "--max-num-seqs": ("max_num_seqs", _INT),
    "--load-format": ("load_format", _STR),
    "--num-scheduler-steps": ("num_scheduler_steps", _INT),
    "--num-iters": ("num_iters", _INT),
    "--enforce-eager": ("enforce_eager", _FLAG),
    "-O": ("compilation_config", _STR),
    "--compilation-config": ("compilation_config", _STR),
}
_NEGATIVE = re.compile(r"^-\d")


def _command(ds: Dataset, where: str, line: str) -> dict | None:
    """The conditions a benchmark command line states, or None when ``line`` is not one."""
    m = _COMMAND.search(line)
    if not m:
        return None
    try:
        tokens = shlex.split(m.group("args"), comments=True)
    except ValueError:  # an unbalanced quote: read what splits on blanks
        tokens = m.group("args").split()
    out: dict = {}
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        if not tok.startswith("-"):
            continue
        value = None
        if tok.startswith("--") and "=" in tok:
            tok, value = tok.split("=", 1)
        elif tok.startswith("-O") and not tok.startswith("--") and len(tok) > 2:
            tok, value = "-O", tok[2:].lstrip("=")
        key = tok.replace("_", "-") if tok.startswith("--") else tok
        if key not in _FLAGS:
            continue
        name, kind = _FLAGS[key]
        if kind == _FLAG:
            out[name] = True
            continue
        if value is None:
            if i < len(tokens) and (not tokens[i].startswith("-") or _NEGATIVE.match(tokens[i])):
                value = tokens[i]
                i += 1
            else:
                continue
        if kind == _INT:
            v = _count_condition(ds, f"{where}, {key}", value)
            if v is not None:
                out[name] = v
        elif kind == _RATE:
            v = _rate_condition(ds, f"{where}, {key}", value)
            if v is not None:
                out[name] = v
        else:
            out[name] = value
    return out


_NAMESPACE_KEYS = {
    "model": ("model", _STR),
    "input_len": ("input_len", _INT),
    "output_len": ("output_len", _INT),
    "batch_size": ("batch_size", _INT),
    "tensor_parallel_size": ("tensor_parallel_size", _INT),
    "pipeline_parallel_size": ("pipeline_parallel_size", _INT),
    "num_prompts": ("num_prompts", _INT),
    "max_concurrency": ("max_concurrency", _INT),
    "request_rate": ("request_rate", _RATE),
    "backend": ("backend", _STR),
    "dataset_name": ("dataset_name", _STR),
    "dtype": ("dtype", _STR),
    "quantization": ("quantization", _STR),
    "kv_cache_dtype": ("kv_cache_dtype", _STR),
    "max_model_len": ("max_model_len", _INT),
    "load_format": ("load_format", _STR),
    "num_scheduler_steps": ("num_scheduler_steps", _INT),
    "num_iters": ("num_iters", _INT),
    "enforce_eager": ("enforce_eager", _FLAG),
}
_NS_VALUE = re.compile(
    r"\b(?P<key>[a-z_]+)=(?:'(?P<sq>(?:[^'\\]|\\.)*)'|\"(?P<dq>(?:[^\"\\]|\\.)*)\"|(?P<bare>[^,()\s]+))"
)


def _namespace(ds: Dataset, where: str, line: str) -> dict | None:
    """The conditions in the ``Namespace(...)`` line the scripts print (``print(args)``), or None
    when ``line`` is not one. Read with a regular expression, never evaluated; ``None`` values are
    skipped, and ``random_input_len``/``random_output_len`` count only with
    ``dataset_name='random'`` (otherwise they are unused defaults)."""
    start = line.find("Namespace(")
    if start < 0:
        return None
    found: dict[str, str | None] = {}
    for m in _NS_VALUE.finditer(line, start + len("Namespace(")):
        key = m.group("key")
        if key in found:
            continue  # the first (top-level) one
        value = m.group("sq") if m.group("sq") is not None else m.group("dq")
        if value is None:
            value = None if m.group("bare") == "None" else m.group("bare")
        found[key] = value
    if found.get("dataset_name") == "random":
        for k in ("input_len", "output_len"):
            if found.get(f"random_{k}") is not None:
                found[k] = found[f"random_{k}"]
    out: dict = {}
    for key, (name, kind) in _NAMESPACE_KEYS.items():
        value = found.get(key)
        if value is None:
            continue
        if kind == _FLAG:
            if value in ("True", "False"):
                out[name] = value == "True"
        elif kind == _INT:
            v = _count_condition(ds, f"{where}, {key}", value)
            if v is not None:
                out[name] = v
        elif kind == _RATE:
            v = _rate_condition(ds, f"{where}, {key}", value)
            if v is not None:
                out[name] = v
        else:
            out[name] = value
    return out


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) with shell continuations (a trailing backslash) joined."""
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for n, line in enumerate(text.split("\n"), 1):
        if pending is not None:
            start, head = pending
            line = head + " " + line.strip().lstrip("$>").strip()
            n = start
            pending = None
        if line.rstrip().endswith("\\"):
            pending = (n, line.rstrip()[:-1])
            continue
        out.append((n, line))
    if pending is not None:
        out.append(pending)
    return out


# ------------------------------------------------------------------------------ runs, datasets


@dataclass
class _Run:
    bench: str  # serving, latency, throughput
    line: int = 0
    figures: dict = field(default_factory=dict)
    conditions: dict = field(default_factory=dict)
    merged: bool = False  # a saved JSON object was merged into this table run
    sglang: bool = False  # printed (or saved) by SGLang's bench_serving

    def row(self, with_bench: bool = False) -> dict:
        row = {"bench": self.bench} if with_bench else {}
        row.update(self.conditions)
        row.update(self.figures)
        return row


def _multi_run(ds: Dataset, runs: list[_Run], with_bench: bool = False) -> Dataset:
    ds.rows = [r.row(with_bench) for r in runs]
    last = runs[-1]
    ds.figures = dict(last.figures)
    ds.conditions = dict(last.conditions)
    ds.figures["runs"] = len(runs)
    return ds


def _refuse(name: str, ds: Dataset, what: str, accepted: str):
    found = "; ".join(str(p) for p in ds.problems[:3])
    detail = f" ({found})" if found else ""
    raise ScenarioError(name, f"{what} with nothing usable{detail}; accepted: {accepted}")


# ----------------------------------------------------------------------------- vLLM serve JSON

_VLLM_FIGURES = {
    "duration",
    "completed",
    "failed",
    "total_input_tokens",
    "total_output_tokens",
    "request_throughput",
    "request_goodput",
    "output_throughput",
    "total_token_throughput",
    "input_throughput",
    "max_output_tokens_per_s",
    "max_concurrent_requests",
    "rtfx",
}
_VLLM_MARKERS = (_VLLM_FIGURES - {"duration"}) | {"request_goodput:"}
_VLLM_STRINGS = {
    "date": "date",
    "backend": "backend",
    "endpoint_type": "endpoint_type",
    "label": "label",
    "model_id": "model",
    "tokenizer_id": "tokenizer",
    "ramp_up_strategy": "ramp_up_strategy",
}
_VLLM_NUMBERS = {"burstiness", "ramp_up_start_rps", "ramp_up_end_rps"}
_VLLM_DETAILS = {
    "input_lens",
    "output_lens",
    "ttfts",
    "itls",
    "tpots",
    "generated_texts",
    "errors",
    "latencies",
    "queue_times",
    "start_times",
    "rps_change_events",
}
_FIGURE_LIKE = re.compile(r"^(spec_decode_|probe_)|(_ms|_per_s|_throughput)$")
#: SGLang's keys: its mean concurrency over the run (not a setting), its spec-decode length,
#: and counts that are neither settings nor figures here
_SGLANG_KEYS = {"concurrency": "mean_concurrency", "accept_length": "spec_decode_acceptance_length"}
_SGLANG_SKIP = {
    "total_output_tokens_retokenized",
    "total_input_text_tokens",
    "total_input_vision_tokens",
    "total_input_audio_tokens",
}
_VLLM_ACCEPTED = (
    "a vLLM --save-result JSON object with numbers for completed, duration, request_throughput, "
    "output_throughput, total_token_throughput, mean_ttft_ms, median_ttft_ms, p99_ttft_ms…"
)


def _is_vllm(obj: dict) -> bool:
    return any(k in _VLLM_MARKERS or _SERVING_STAT_KEY.match(k) for k in obj)


def _is_sglang(obj: dict) -> bool:
    """A result object of SGLang's bench_serving (``--output-file``, JSONL)."""
    return "total_output_tokens_retokenized" in obj or any(_SGLANG_E2E.match(k) for k in obj)


def _vllm_object(ds: Dataset, obj: dict, prefix: str = "") -> _Run:
    """One serve result object as a run (figures and conditions); problems go to ``ds``."""
    run = _Run("serving", sglang=_is_sglang(obj))
    figures, conditions = run.figures, run.conditions
    metadata: dict = {}
    for key, raw in obj.items():
        where = f"{prefix}{key}"
        if key in _VLLM_DETAILS:
            continue
        if run.sglang:
            if key in _SGLANG_SKIP:
                continue
            m = _SGLANG_E2E.match(key)
            if m:
                key = f"{m.group(1)}_e2el_ms"
            elif key in _SGLANG_KEYS:
                if raw is not None:
                    key = _SGLANG_KEYS[key]
                    v = _figure(ds, where, key, raw)
                    if v is not None:
                        figures[key] = v
                continue
        if key in ("request_goodput:", "request_goodput", "max_concurrency"):
            if raw is None:  # not measured (no --goodput) or not set (no --max-concurrency)
                continue
            name = key.rstrip(":")
            v = _figure(ds, where, name, raw)
            if v is not None:
                figures[name] = v
                if name == "max_concurrency":
                    conditions[name] = v
        elif key in _VLLM_FIGURES or _STAT_KEY.match(key):
            if raw is None:
                continue
            v = _figure(ds, where, key, raw)
            if v is not None:
                figures[key] = v
        elif key == "request_rate":
            v = _rate_condition(ds, where, raw)
            if v is not None:
                conditions[key] = v
        elif key == "num_prompts":
            v = _count_condition(ds, where, raw)
            if v is not None:
                conditions[key] = v
        elif key in _VLLM_STRINGS:
            if isinstance(raw, str):
                conditions[_VLLM_STRINGS[key]] = raw
            elif raw is not None:
                ds.problem(where, f"expected text, got {_kind_of(raw)}")
        elif key in _VLLM_NUMBERS:
            if raw is not None and _number(raw) is not None:
                conditions[key] = _number(raw)
        elif isinstance(raw, int | float) and not isinstance(raw, bool):
            if _FIGURE_LIKE.search(key):
                v = _figure(ds, where, key, raw)
                if v is not None:
                    figures[key] = v
            elif math.isfinite(raw):
                metadata[key] = raw
        elif key == LINK_KEY and isinstance(raw, str):
            # the scenario that predicted this run (whatif commands writes it; issue 43 §3)
            if len(raw) <= MAX_LINK_CHARS:
                conditions[LINK_KEY] = raw
            else:
                ds.problem(where, f"a link of {len(raw):,} characters; at most {MAX_LINK_CHARS:,}")
        elif isinstance(raw, str) and len(raw) <= 200:
            metadata[key] = raw  # --metadata KEY=VALUE pairs: gpu, deployment…
    for key, value in metadata.items():
        conditions.setdefault(key, value)
    if run.sglang and conditions.get("dataset_name") == "random":
        for k in ("input_len", "output_len"):
            if isinstance(conditions.get(f"random_{k}"), int):
                conditions.setdefault(k, conditions[f"random_{k}"])
    _mean_lengths(figures, conditions, obj.get("input_lens"), obj.get("output_lens"))
    return run


def _vllm_json(name: str, obj: dict) -> Dataset:
    ds = Dataset(name, "vllm_bench_json", "serving")
    run = _vllm_object(ds, obj)
    if not run.figures:
        _refuse(name, ds, "a vLLM serving benchmark result", _VLLM_ACCEPTED)
    if run.sglang:
        ds.format = "sglang_bench_json"
    ds.figures, ds.conditions = run.figures, run.conditions
    return ds


def _vllm_json_list(name: str, items: list) -> Dataset | None:
    """A JSON array of result objects (a sweep's files collected into one): one row per object
    (vLLM, SGLang or GenAI-Perf/AIPerf exports); other items are problems. None when no item
    is a result."""
    if not any(isinstance(o, dict) and (_is_vllm(o) or _is_gp_json(o)) for o in items):
        return None
    ds = Dataset(name, "vllm_bench_json", "serving")
    runs: list[_Run] = []
    kinds: set[str] = set()
    for i, obj in enumerate(items, 1):
        if len(runs) >= MAX_RUNS:
            ds.problem(f"item {i}", f"more than {MAX_RUNS} runs; the rest is not read")
            break
        if isinstance(obj, dict) and _is_gp_json(obj):
            try:
                one = _genai_json(f"item {i}", obj)
            except ScenarioError as exc:
                ds.problem(f"item {i}", exc.message)
                continue
            for p in one.problems:
                ds.problem(f"item {i}, {p.where}", p.message)
            run = _Run("serving", line=i, figures=one.figures, conditions=one.conditions)
            runs.append(run)
            kinds.add("genai_perf_json")
            continue
        if not isinstance(obj, dict) or not _is_vllm(obj):
            ds.problem(f"item {i}", "not a benchmark result object")
            continue
        run = _vllm_object(ds, obj, f"item {i}, ")
        if run.figures:
            run.line = i
            runs.append(run)
            kinds.add("sglang_bench_json" if run.sglang else "vllm_bench_json")
        else:
            ds.problem(f"item {i}", "no usable figure in this run")
    if not runs:
        _refuse(name, ds, "a JSON array of benchmark results", _VLLM_ACCEPTED)
    if len(kinds) == 1:
        ds.format = kinds.pop()
    return _multi_run(ds, runs)


#: a vLLM result key as it is written in JSON text (a quick test before parsing line by line)
_VLLM_KEY_TEXT = re.compile(
    r'"(completed|failed|request_throughput|output_throughput|total_token_throughput|'
    r"total_input_tokens|total_output_tokens|request_goodput:?|input_throughput|"
    r"max_output_tokens_per_s|max_concurrent_requests|rtfx|"
    r'[a-z0-9.]+_(ttft|tpot|itl|e2el|e2e_latency)_ms)"'
)


def _vllm_jsonl(name: str, text: str) -> Dataset | None:
    """Result objects one a line (``--append-result``, SGLang's ``--output-file``). Lines that
    do not start with ``{`` or ``[`` are text between the objects (a log's lines, a note) and
    are skipped; a line that starts like JSON and is not is a problem."""
    if not _VLLM_KEY_TEXT.search(text):
        return None
    notes: list[tuple[int, str]] = []  # (line, why), in file order
    parsed: list[tuple[int, object]] = []
    candidates = 0
    for n, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        if not s or s[0] not in "{[":
            continue
        candidates += 1
        try:
            obj = _json(s)
        except RecursionError:
            notes.append((n, "JSON nested too deeply"))
            continue
        except ValueError:
            notes.append((n, "not JSON"))
            continue
        parsed.append((n, obj))
    objects = [o for _, o in parsed if isinstance(o, dict)]
    if not any(_is_vllm(o) for o in objects) or len(objects) * 2 < candidates:
        return None
    ds = Dataset(name, "vllm_bench_jsonl", "serving")
    runs: list[_Run] = []
    for n, obj in parsed:
        if not isinstance(obj, dict) or not _is_vllm(obj):
            notes.append((n, "not a vLLM or SGLang benchmark result object"))
            continue
        if len(runs) >= MAX_RUNS:
            notes.append((n, f"more than {MAX_RUNS} runs; the rest is not read"))
            notes = [(m, why) for m, why in notes if m <= n]
            break
        run = _vllm_object(ds, obj, f"line {n}, ")
        if run.figures:
            run.line = n
            runs.append(run)
        else:
            notes.append((n, "no usable figure in this run"))
    for n, why in sorted(notes, key=lambda x: x[0]):
        ds.problem(f"line {n}", why)
    if not runs:
        _refuse(name, ds, "vLLM benchmark results, one JSON object a line,", _VLLM_ACCEPTED)
    if all(r.sglang for r in runs):
        ds.format = "sglang_bench_jsonl"
    return _multi_run(ds, runs)


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


def _label(text: str) -> str:
    return " ".join(text.lower().split())


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


# ----------------------------------------------------------------------------- vllm bench sweep

#: a ``vllm bench sweep`` summary.csv: one ``vllm bench serve`` result a row (pandas' CSV of
#: the run JSONs, its index first); recognised by the serve result's own columns
_SWEEP_COLUMNS = ("request_throughput", "output_throughput")


def read_sweep_csv(text: str, name: str) -> Dataset | None:
    """``vllm bench sweep``'s summary.csv as the serve results it lists (one run a row; each
    row read as its run JSON would be), or None when the CSV is not one."""
    import csv
    import io

    head = text.split("\n", 1)[0]
    if not all(c in head for c in _SWEEP_COLUMNS) or "_ms" not in head:
        return None
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except (StopIteration, csv.Error):
        return None
    items: list[dict] = []
    for row in reader:
        if len(items) >= MAX_RUNS:
            break
        obj: dict = {}
        for key, cell in zip(header, row, strict=False):
            if not key or cell == "":
                continue  # pandas' index column, and cells the run did not have
            if key in ("latencies", "queue_times", "input_lens", "output_lens", "ttfts", "itls"):
                continue  # per-request lists (0.34 keeps some without --save-detailed)
            num = _number(cell)
            obj[key] = num if num is not None and key not in _VLLM_STRINGS else cell
        if obj:
            items.append(obj)
    ds = _vllm_json_list(name, items)
    if ds is not None:
        ds.format = "vllm_bench_sweep_csv"
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


# ------------------------------------------------------------------------------- GenAI-Perf

#: distributions: metric → (figure stem, what it measures)
_GP_DIST = {
    "time to first token": ("ttft", "time"),
    "time to second token": ("ttst", "time"),
    "request latency": ("e2el", "time"),
    "inter token latency": ("itl", "time"),
    "output token throughput per user": ("output_throughput_per_user", "rate"),
    "output token throughput per request": ("output_throughput_per_user", "rate"),
    "output sequence length": ("output_tokens", "tokens"),
    "input sequence length": ("input_tokens", "tokens"),
    "num output token": ("output_tokens", "tokens"),  # GenAI-Perf 24.0x
    "num input token": ("input_tokens", "tokens"),
    "output token count": ("output_tokens", "tokens"),  # AIPerf
}
#: single values: metric → figure
_GP_SINGLE = {
    "output token throughput": "output_throughput",
    "request throughput": "request_throughput",
    "request count": "completed",
    "request goodput": "request_goodput",
    "benchmark duration": "duration",
    "error request count": "failed",
    "total token throughput": "total_token_throughput",
    "total isl": "total_input_tokens",
    "total osl": "total_output_tokens",
}
_TIME_TO_MS = {"": 1.0, "ms": 1.0, "s": 1e3, "sec": 1e3, "us": 1e-3, "μs": 1e-3, "ns": 1e-6}
_STATS = re.compile(r"^(avg|mean|median|min|max|std|p\d+(?:\.\d+)?)$")
_GP_JSON_ACCEPTED = (
    "GenAI-Perf's profile_export_genai_perf.json or AIPerf's profile_export_aiperf.json: metrics "
    'such as "request_latency": {"unit": "ms", "avg": 6406.2, "p50": …, "p99": …}'
)
_GP_ACCEPTED = (
    "GenAI-Perf's profile_export_genai_perf.csv: a header 'Metric,avg,min,max,p99,…' and rows "
    "such as 'Request Latency (ms),6406.20,…', then 'Metric,Value' and 'Request Throughput "
    "(per sec),1.50'"
)


def _stat_name(column: str) -> str | None:
    c = column.strip().lower()
    if not _STATS.match(c):
        return None
    return {"avg": "mean", "p50": "median"}.get(c, c)


def _gp_name(stem: str, what: str, stat: str) -> str:
    if what == "time":
        return f"{stat}_{stem}_ms"
    if what == "rate":
        return stem if stat == "mean" else f"{stat}_{stem}"
    return f"{stat}_{stem}"


def _split_label(label: str) -> tuple[str, str]:
    """('request latency', 'ms') from 'Request Latency (ms)'; metric names with underscores
    (the JSON's) read the same as the CSV's words."""
    base, unit = label.strip(), ""
    if base.endswith(")") and "(" in base:
        at = base.rfind("(")
        base, unit = base[:at], base[at + 1 : -1]
    return _label(base.replace("_", " ")), unit.strip().lower()


def _gp_value(ds: Dataset, where: str, figure: str, raw, scale: float = 1.0) -> None:
    if isinstance(raw, str) and raw.strip().upper() in ("", "N/A", "NA"):
        return  # a statistic the tool does not give for this metric
    v = _figure(ds, where, figure, raw)
    if v is not None:
        if scale != 1.0:  # in decimal: 5,252,536,691 ns is 5252.536691 ms, not …690999999
            v = float(Decimal(repr(v)) * Decimal(repr(scale)))
        ds.figures[figure] = v


def _gp_metric(ds: Dataset, where: str, label: str, unit: str, stats: dict) -> None:
    """One GenAI-Perf metric (CSV row or JSON entry): ``stats`` maps our stat name
    (mean, median, p99…) to the tool's column name (avg, p50, p99…) and the raw value."""
    if label in _GP_DIST:
        stem, what = _GP_DIST[label]
        scale = 1.0
        if what == "time":
            if unit not in _TIME_TO_MS:
                ds.problem(where, f"unit {unit!r} not understood; accepted: ms, s, us, ns")
                return
            scale = _TIME_TO_MS[unit]
        for stat, (column, raw) in stats.items():
            _gp_value(ds, f"{where} {column}", _gp_name(stem, what, stat), raw, scale)
    elif label in _GP_SINGLE:
        figure = _GP_SINGLE[label]
        scale = 1.0
        if figure == "duration":
            if unit not in ("", "s", "sec", "ms"):
                ds.problem(where, f"unit {unit!r} not understood; accepted: s, sec, ms")
                return
            scale = 1e-3 if unit == "ms" else 1.0
        _, raw = stats.get("mean", stats.get("value", ("", None)))
        if raw is not None:
            _gp_value(ds, where, figure, raw, scale)


def _gp_conditions_from_name(ds: Dataset) -> None:
    _mean_lengths(ds.figures, ds.conditions)  # AIPerf's total_isl / request_count
    for key, regex, conv in (
        ("max_concurrency", r"concurrency[_-]?(\d+)", int),
        ("request_rate", r"request[_-]?rate[_-]?(\d+(?:\.\d+)?)", float),
    ):
        found = re.findall(regex, ds.name, flags=re.IGNORECASE)
        if found and key not in ds.conditions:
            ds.conditions[key] = conv(found[-1])
    for key in ("mean_input_tokens", "mean_output_tokens"):
        if key in ds.figures:
            ds.conditions.setdefault(key, ds.figures[key])
    if "max_concurrency" in ds.conditions:
        ds.figures.setdefault("max_concurrency", ds.conditions["max_concurrency"])


def _gp_delimiter(text: str) -> str:
    """',' as GenAI-Perf writes it; ';' or a tab when a spreadsheet saved it again (Excel in a
    locale with a decimal comma writes ';')."""
    first = text.lstrip().partition("\n")[0]
    if "," not in first.partition("avg")[0]:
        for d in (";", "\t"):
            if d in first:
                return d
    return ","


def _is_gp_csv(text: str) -> bool:
    first = text.lstrip().lstrip('"').partition("\n")[0]
    cells = [c.strip().strip('"').lower() for c in first.split(_gp_delimiter(text), 2)]
    return (
        len(cells) > 1
        and cells[0] == "metric"
        and (cells[1] == "value" or _STATS.match(cells[1]) is not None)
    )


_GP_DEC_COMMA = re.compile(r"^[+-]?(?:\d{1,3}(?:\.\d{3})+|\d+),\d+$")
_GP_DEC_POINT = re.compile(r"^[+-]?\d*\.\d+$")


def _genai_csv(name: str, text: str) -> Dataset:
    ds = Dataset(name, "genai_perf_csv", "serving")
    columns: list[tuple[str | None, str]] = []  # (our stat name or None, the header's name)
    mode = None  # "stats", "value", "skip"
    delimiter = _gp_delimiter(text)
    comma = False  # a ';' file whose decimals are all written with a comma
    if delimiter != ",":
        cells = [c.strip().strip('"') for c in re.split(r"[;\t\n]", text)]
        comma = any(_GP_DEC_COMMA.match(c) for c in cells) and not any(
            _GP_DEC_POINT.match(c) for c in cells
        )
        if comma:
            ds.extra["converted"] = ["decimal comma: '1,5' read as 1.5"]
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            mode = None
            continue
        try:
            cells = next(csv.reader([line], delimiter=delimiter))
        except csv.Error as exc:
            ds.problem(f"line {n}", f"not CSV ({exc})")
            continue
        if comma:
            cells = [
                c.strip().replace(".", "").replace(",", ".")
                if _GP_DEC_COMMA.match(c.strip())
                else c
                for c in cells
            ]
        head = [c.strip().lower() for c in cells]
        if mode is None or head[0] in ("metric", "endpoint"):
            if head[0] == "metric" and len(head) > 1 and head[1] == "value":
                mode = "value"
            elif head[0] == "metric" and len(head) > 1 and _STATS.match(head[1]):
                mode, columns = "stats", [(_stat_name(c), c.strip()) for c in cells]
            else:
                mode = "skip"  # GPU telemetry (Metric,GPU,… / Endpoint,GPU_Index,…) or unknown
            continue
        if mode == "skip":
            continue
        label, unit = _split_label(cells[0])
        where = f"line {n}, {cells[0].strip()}"
        if mode == "value":
            if len(cells) < 2:
                ds.problem(where, "no value")
                continue
            _gp_metric(ds, where, label, unit, {"value": ("Value", cells[1])})
        else:
            stats = {
                stat: (column, cell)
                for (stat, column), cell in zip(columns, cells, strict=False)
                if stat is not None
            }
            _gp_metric(ds, where, label, unit, stats)
    if not ds.figures:
        _refuse(name, ds, "a GenAI-Perf CSV", _GP_ACCEPTED)
    _gp_conditions_from_name(ds)
    return ds


#: the console table GenAI-Perf and AIPerf print (rich): a header ``┃ Statistic ┃ avg ┃ …`` (AIPerf:
#: ``┃ Metric ┃``), rows ``│ Request Latency (ms) │ 1,799.53 │ …``; a label too wide for its
#: column goes on in the next lines, whose value cells are empty
_GP_CONSOLE_HEAD = re.compile(r"┃\s*(?:Statistic|Metric)\s*┃", re.IGNORECASE)
_GP_CONSOLE_ACCEPTED = (
    "the table GenAI-Perf or AIPerf prints ('NVIDIA GenAI-Perf | LLM Metrics': a header "
    "'┃ Statistic ┃ avg ┃ …' and rows such as '│ Request Latency (ms) │ 1,799.53 │ …')"
)
_GP_DURATION = re.compile(r"\bBenchmark Duration:\s*([0-9.,]+)\s*(sec|s|ms)\b", re.IGNORECASE)
_GP_TOOL_MODEL = re.compile(r"(?:^|\s)(?:-m|--model|--model-names?)[ =]['\"]?([^\s'\"]+)")
_GP_CONCURRENCY = re.compile(r"(?:--concurrency[ =]['\"]?|-concurrency)(\d+)")


def _is_gp_console(text: str) -> bool:
    return "┃" in text and _GP_CONSOLE_HEAD.search(text) is not None


def _genai_console(name: str, text: str) -> Dataset:
    """The console table(s) of GenAI-Perf / AIPerf; one run a table."""
    ds = Dataset(name, "genai_perf_console", "serving")
    runs: list[_Run] = []
    run: _Run | None = None
    columns: list[tuple[str | None, str]] = []
    pending: list = []  # [line, label, cells] of the row being assembled

    def flush() -> None:
        if run is None or not pending:
            return
        n, label_text, cells = pending
        label, unit = _split_label(label_text)
        stats: dict = {}
        for (stat, column), cell in zip(columns[1:], cells, strict=False):
            if stat is None:
                continue
            cell = cell.strip()
            if cell in ("-", "—"):
                continue
            if cell.endswith("…"):
                ds.problem(f"line {n}, {label_text} {column}", f"{cell!r}: cut by the terminal")
                continue
            stats[stat] = (column, cell)
        sink = Dataset(name, ds.format, ds.kind)
        _gp_metric(sink, f"line {n}, {label_text}", label, unit, stats)
        run.figures.update(sink.figures)
        for p in sink.problems:
            ds.problem(p.where, p.message)
        pending.clear()

    lines = text.split("\n")
    for n, line in enumerate(lines, 1):
        if "┃" in line:
            cells = [c.strip() for c in line.split("┃")[1:-1]]
            if cells and cells[0].lower() in ("statistic", "metric"):
                flush()
                if len(runs) >= MAX_RUNS:
                    ds.problem(f"line {n}", f"more than {MAX_RUNS} tables; the rest is not read")
                    break
                run = _Run("serving", line=n)
                runs.append(run)
                columns = [(_stat_name(c), c) for c in cells]
            continue
        if run is None or "│" not in line:
            if run is not None and line.strip().startswith(("└", "╰")):
                flush()
            continue
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if not cells:
            continue
        label_text, values = cells[0], cells[1:]
        if not any(values):
            if pending and label_text:
                pending[1] += " " + label_text  # the label goes on
            continue
        flush()
        pending[:] = [n, label_text, values]
    flush()
    kept = [r for r in runs if r.figures]
    if not kept:
        _refuse(name, ds, "a GenAI-Perf / AIPerf console table", _GP_CONSOLE_ACCEPTED)
    # what the lines around the table say: the run's length, the command, the artifacts' path
    last = kept[-1]
    m = _GP_DURATION.search(text)
    if m and "duration" not in last.figures:
        v = _figure(ds, "Benchmark Duration", "duration", m.group(1))
        if v is not None:
            last.figures["duration"] = v / 1000 if m.group(2).lower() == "ms" else v
    for _, line in _logical_lines(text):
        if re.search(r"\b(?:genai-perf|aiperf)\s+profile\b", line):
            m = _GP_TOOL_MODEL.search(line)
            if m:
                last.conditions.setdefault("model", m.group(1))
    found = _GP_CONCURRENCY.findall(text)
    if found and len(kept) == 1:
        last.conditions["max_concurrency"] = int(found[-1])
    for r in kept:
        if "max_concurrency" in r.conditions:
            r.figures.setdefault("max_concurrency", r.conditions["max_concurrency"])
        for key in ("mean_input_tokens", "mean_output_tokens"):
            if key in r.figures:
                r.conditions.setdefault(key, r.figures[key])
    if "AIPerf" in text:
        ds.format = "aiperf_console"
    return _multi_run(ds, kept)


_GP_JSON_KEYS = {k.replace(" ", "_") for k in (*_GP_DIST, *_GP_SINGLE)}


def _is_gp_json(obj: dict) -> bool:
    return any(isinstance(obj.get(k), dict) for k in _GP_JSON_KEYS)


def _dig(obj, *path):
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _genai_json(name: str, obj: dict) -> Dataset:
    ds = Dataset(name, "genai_perf_json", "serving")
    for key, entry in obj.items():
        if key not in _GP_JSON_KEYS or entry is None:
            continue
        label, _ = _split_label(key)
        if isinstance(entry, dict):
            unit = entry.get("unit", "")
            unit = unit.strip().lower() if isinstance(unit, str) else ""
            stats = {}
            for col, raw in entry.items():
                stat = _stat_name(col)
                if stat is not None:
                    stats[stat] = (col, raw)
            _gp_metric(ds, key, label, unit, stats)
        elif label in _GP_SINGLE and isinstance(entry, int | float) and not isinstance(entry, bool):
            _gp_metric(ds, key, label, "", {"mean": ("avg", entry)})
        else:
            ds.problem(key, f"expected an object {{unit, avg, p50, p99…}}, got {_kind_of(entry)}")
    config = obj.get("input_config")
    model = None
    for path in (("model",), ("model_names",), ("endpoint", "model_names")):
        model = _dig(config, *path)
        if model:
            break
    if isinstance(model, list):
        model = ", ".join(m for m in model if isinstance(m, str)) or None
    if isinstance(model, str) and model:
        ds.conditions["model"] = model
    for path in (
        ("concurrency",),
        ("loadgen", "concurrency"),
        ("perf_analyzer", "stimulus", "concurrency"),
    ):
        conc = _dig(config, *path)
        if isinstance(conc, int) and not isinstance(conc, bool) and conc > 0:
            ds.conditions["max_concurrency"] = conc
            break
    if not ds.figures:
        _refuse(name, ds, "a GenAI-Perf/AIPerf profile export JSON", _GP_JSON_ACCEPTED)
    _gp_conditions_from_name(ds)
    return ds


# --------------------------------------------------------------------------------- dispatch


def _from_json(name: str, obj) -> Dataset | None:
    if isinstance(obj, list):
        return _vllm_json_list(name, obj)
    if not isinstance(obj, dict):
        return None
    if _is_gp_json(obj):
        return _genai_json(name, obj)
    if _is_vllm(obj):
        return _vllm_json(name, obj)
    if _STARTUP_KEYS & set(obj):
        return _startup_json(name, obj)
    if "avg_latency" in obj or ("latencies" in obj and "percentiles" in obj):
        return _latency_json(name, obj)
    if any(k in obj for k in ("requests_per_second", "tokens_per_second", "total_num_tokens")):
        return _throughput_json(name, obj)
    return None


#: keys that make broken JSON recognisably a benchmark result (then an error, not None)
_BENCH_KEY = re.compile(
    r'"(completed|request_throughput|total_token_throughput|output_throughput|avg_latency|'
    r"requests_per_second|time_to_first_token|request_latency|burstiness|num_prompts|"
    r'max_concurrency|tokenizer_id|(mean|median|p99)_(ttft|tpot|itl|e2el)_ms)"'
)


def read_bench(text: str, name: str) -> Dataset | None:
    """The benchmark output in ``text`` (file ``name``) as a Dataset, None when it is none of the
    formats in the module docstring, or a ScenarioError (key ``name``) when it is one of them but
    nothing usable can be read."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    stripped = text.strip()
    if not stripped:
        return None
    json_error: ValueError | None = None
    if stripped[0] in "{[":
        try:
            obj = _json(stripped)
        except RecursionError:
            raise ScenarioError(
                name, "JSON nested too deeply to read; a benchmark result is one flat object"
            ) from None
        except ValueError as exc:
            json_error = exc
        else:
            return _from_json(name, obj)
    if _BANNER in text and any(_is_banner(line) for line in text.split("\n")):
        return _serving_stdout(name, text)
    if _looks_bannerless(text):
        return _serving_stdout(name, text, bannerless=True)
    if _is_gp_csv(text):
        return _genai_csv(name, text)
    if _is_gp_console(text):
        return _genai_console(name, text)
    if "{" in text:
        ds = _vllm_jsonl(name, text)
        if ds is not None:
            return ds
    if _STARTUP_BANNER in text:
        return _startup_stdout(name, text)
    if _looks_lat_thr(text):
        return _lat_thr_stdout(name, text)
    if json_error is not None and _BENCH_KEY.search(stripped):
        where = getattr(json_error, "lineno", None)
        at = f"line {where}: " if where else ""
        msg = getattr(json_error, "msg", str(json_error))
        raise ScenarioError(
            name,
            f"{at}not valid JSON ({msg}); accepted: one benchmark result JSON object, or one "
            "object a line (JSONL)",
        )
    return None
