"""One entry point for every measurement file: recognise the format and read it (SPEC 4.5).

:func:`import_file` decodes the bytes (:func:`model.readers.measurements.decode_text`: size
limit, binary refused, UTF-8), then tries the readers in an order that cannot mistake one format
for another:

1. JSON or JSONL (the text, or its first line, parses as JSON; a log whose lines start with
   ``[`` does not): a benchmark's result
   (:func:`model.readers.bench_import.read_bench`); any other JSON is refused by name.
2. A CSV header: our own formats first (:func:`model.readers.csv_import.read_csv`, recognised
   by their columns), then GenAI-Perf's ``profile_export_genai_perf.csv``.
3. Text: a benchmark's stdout (the serving table, ``vllm bench latency`` / ``throughput``),
   then a vLLM start-up log (:func:`model.readers.vllm_log.parse_log`). Benchmark stdout comes
   first because ``benchmark_latency`` prints the engine's start-up lines too.

A file none of them recognises is a :class:`ScenarioError` naming the file and every accepted
format.
"""

from __future__ import annotations

import json

from model.errors import ScenarioError
from model.readers import bench_import, registry
from model.readers.measurements import Dataset, decode_text


def _looks_like_csv(text: str) -> bool:
    for line in text.split("\n", 50)[:50]:
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        return ("," in s or ";" in s or "\t" in s) and not s.startswith(("INFO", "WARNING", "("))
    return False


def _is_json(text: str) -> bool:
    """Whether the text is JSON, or JSONL (its first line is a JSON value): a log whose lines
    start with ``[`` (``[pod-7f9c] INFO …``, ``[2025-06-19 23:05:01] …``, ``[RunAI Streamer]``)
    is not."""
    body = text.strip()
    if body[:1] not in ("{", "["):
        return False
    try:
        json.loads(body.split("\n", 1)[0])
        return True
    except RecursionError:  # nested past json's depth: JSON-shaped, refused by the reader
        return True
    except ValueError:
        pass
    try:
        json.loads(body)
        return True
    except RecursionError:
        return True
    except ValueError:
        return False


def import_text(text: str, name: str) -> Dataset:
    """A :class:`Dataset` from the text of a file called ``name`` (see the module docstring)."""
    if _is_json(text):
        ds = bench_import.read_bench(text, name)
        if ds is None:
            raise ScenarioError(
                name,
                "a JSON file that is not a benchmark result; accepted JSON: "
                + registry.accepted_json(),
            )
        return ds
    if _looks_like_csv(text):
        ds = registry.read_text(name, text, stage="csv")
        if ds is None:
            ds = bench_import.read_bench(text, name)
        if ds is not None:
            return ds
    ds = bench_import.read_bench(text, name)
    if ds is not None:
        return ds
    try:
        ds = registry.read_text(name, text, stage="log")
    except ScenarioError as exc:
        if _looks_like_csv(text):
            raise ScenarioError(
                name,
                "a CSV whose columns are none of the accepted formats; see the templates "
                f"(accepted: {registry.accepted()})",
            ) from None
        raise ScenarioError(name, f"{exc.message}; accepted files: {registry.accepted()}") from None
    if ds is None:
        raise ScenarioError(
            name, f"none of the accepted formats; accepted files: {registry.accepted()}"
        )
    return ds


def import_file(name: str, data: bytes) -> Dataset:
    """A :class:`Dataset` from an uploaded or given file's bytes."""
    return import_text(decode_text(name, data), name)
