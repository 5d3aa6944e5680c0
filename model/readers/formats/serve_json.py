"""The result JSON of ``vllm bench serve`` and SGLang's ``bench_serving`` (SPEC 4.5).

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
"""

from __future__ import annotations

import math
import re

from model.readers.formats.common import (
    _SERVING_STAT_KEY,
    _SGLANG_E2E,
    _STAT_KEY,
    LINK_KEY,
    MAX_LINK_CHARS,
    MAX_RUNS,
    _count_condition,
    _figure,
    _json,
    _kind_of,
    _mean_lengths,
    _multi_run,
    _number,
    _rate_condition,
    _refuse,
    _Run,
)
from model.readers.measurements import Dataset, Reader

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


#: how this module's formats are recognised and read (:mod:`model.readers.registry`)
READERS = (
    Reader(
        name="serve_json",
        stage="json",
        order=20,
        formats=("vllm_bench_json", "sglang_bench_json"),
        recognise=lambda v: isinstance(v, dict) and _is_vllm(v),
        read=_vllm_json,
        accepted="vllm bench serve / benchmark_serving.py and SGLang bench_serving results (JSON, JSONL or the printed table)",
        accepted_json="vllm bench serve / benchmark_serving.py --save-result (JSON or JSONL)",
        shown=30,
    ),
    Reader(
        name="serve_jsonl",
        stage="text",
        order=50,
        formats=("vllm_bench_jsonl", "sglang_bench_jsonl"),
        recognise=lambda text: "{" in text,
        read=_vllm_jsonl,
        accepted="vllm bench serve / benchmark_serving.py and SGLang bench_serving results (JSON, JSONL or the printed table)",
        shown=30,
    ),
)
