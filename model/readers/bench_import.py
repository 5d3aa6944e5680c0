"""Benchmark outputs read through the reader registry (SPEC 4.5, ``whatif import``).

:func:`read_bench` takes the text of one file and its name and returns a
:class:`~model.readers.measurements.Dataset`, or None when the text is none of the benchmark
formats (so a caller can try others), or raises :class:`~model.errors.ScenarioError` (key: the
file name) when the text is recognisably one of them but nothing usable can be read.

The formats themselves live one module each in :mod:`model.readers.formats` and register with
:mod:`model.readers.registry`; this module is the order in which they are tried on a text:
JSON first (a text that parses as JSON is read by the ``json`` readers only; one that does not
is tried as text), then the ``text`` readers (printed tables, JSONL, consoles), in their order.
Broken JSON that names a benchmark's keys is an error saying where it breaks.
"""

from __future__ import annotations

import re

from model.errors import ScenarioError
from model.readers import registry
from model.readers.formats.common import LINK_KEY, MAX_LINK_CHARS, _json
from model.readers.formats.sweep import read_sweep_csv
from model.readers.measurements import Dataset

__all__ = ["FORMATS", "LINK_KEY", "MAX_LINK_CHARS", "read_bench", "read_sweep_csv"]

#: every ``Dataset.format`` the benchmark readers (those of :mod:`model.readers.formats`) return
FORMATS = tuple(
    dict.fromkeys(
        f
        for r in registry.readers()
        if r.read.__module__.startswith("model.readers.formats.")
        for f in r.formats
    )
)

#: keys that make broken JSON recognisably a benchmark result (then an error, not None)
_BENCH_KEY = re.compile(
    r'"(completed|request_throughput|total_token_throughput|output_throughput|avg_latency|'
    r"requests_per_second|time_to_first_token|request_latency|burstiness|num_prompts|"
    r'max_concurrency|tokenizer_id|(mean|median|p99)_(ttft|tpot|itl|e2el)_ms)"'
)


def read_bench(text: str, name: str) -> Dataset | None:
    """The benchmark output in ``text`` (file ``name``) as a Dataset, None when it is none of the
    registered benchmark formats, or a ScenarioError (key ``name``) when it is one of them but
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
            return registry.read_json(name, obj)
    ds = registry.read_text(name, text)
    if ds is not None:
        return ds
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
