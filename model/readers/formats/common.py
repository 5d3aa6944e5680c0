"""What every benchmark-output reader shares (:mod:`model.readers.formats`): reading JSON
without overflow, a figure's checks, command lines and ``Namespace(...)`` lines, runs.

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

import json
import math
import re
import shlex
from dataclasses import dataclass, field

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
        _set_condition(ds, out, f"{where}, {key}", name, kind, value)
    return out


def _set_condition(ds: Dataset, out: dict, where: str, name: str, kind, value: str) -> None:
    """``out[name]`` from a command's or a ``Namespace(...)``'s text ``value`` as its kind says:
    a whole count, a request rate, or the text itself; a value its kind refuses is a problem
    recorded at ``where`` and left out."""
    if kind == _INT:
        value = _count_condition(ds, where, value)
    elif kind == _RATE:
        value = _rate_condition(ds, where, value)
    if value is not None:
        out[name] = value


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
        else:
            _set_condition(ds, out, f"{where}, {key}", name, kind, value)
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


def _label(text: str) -> str:
    """A label compared by its words: lower case, runs of spaces as one."""
    return " ".join(text.lower().split())
