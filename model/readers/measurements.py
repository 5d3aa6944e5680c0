"""What an imported measurement file holds, shared by every importer (SPEC 4.5).

An importer turns one file (a CSV of ours, a vLLM start-up log, a benchmark's output) into a
:class:`Dataset`: what it recognised (``format``), what kind of measurement that is (``kind``:
which lens and which fit it feeds), the figures it read under the names SPEC 4.5 gives, the rows
of tabular data with typed numbers, the run's conditions it found (model, GPUs, concurrency,
prompt and output lengths, engine version) and what it could not read, with the line or column
and the reason (``problems``). A file from which nothing usable can be read is a
:class:`ScenarioError` whose key is the file name, never an empty success.

Nothing here evaluates or unpickles anything: files are decoded as UTF-8 text (a byte-order
mark is dropped), size-limited before decoding, and refused when they look binary.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from model.errors import ScenarioError

MAX_BYTES = 5_000_000  #: one measurement file (the app's upload limit is 5 MB as well)
MAX_ROWS = 100_000  #: rows of one table
MAX_PROBLEMS = 50  #: problems listed per file (the count of the rest is kept)

#: what a Dataset measures; which overlay and which fit it feeds
KINDS = (
    "decode",  # decode steps against batch: batch, step_ms (Roofline; bw_efficiency, host_ms)
    "launch",  # launch micro-benchmark: kernels, eager_ms, graph_ms (Launch overhead; launch_us)
    "cold_start",  # cold-start line items: item, seconds (Cold start waterfall)
    "startup_log",  # a vLLM start-up log (Cold start; compile, capture, load, read rate)
    "request",  # per-concurrency request latency: ttft_ms, tpot_ms (prefill_efficiency, decode)
    "serving",  # one serving-benchmark run (vllm bench serve, GenAI-Perf): a request row
    "latency",  # vllm bench latency: end-to-end seconds of one batch
    "throughput",  # vllm bench throughput: requests/s and tokens/s of an offline run
    "bandwidth",  # capture kit: matrix-vector sweep, achieved HBM bandwidth (bw_efficiency)
    "h2d",  # capture kit: host-to-device copies, pinned and pageable (hardware.h2d_gb_s)
)

#: our own CSV formats: required columns (any one of each tuple), optional columns, and a
#: template written by :func:`template_csv`. Units are in the column names.
CSV_SCHEMAS: dict[str, dict] = {
    "decode": {
        "required": (("batch",), ("step_ms", "tokens_per_s")),
        "optional": ("cuda_graphs", "context_tokens", "gpus", "model", "note"),
        "template": [
            "batch,step_ms,cuda_graphs,context_tokens",
            "1,21.4,full_and_piecewise,2048",
            "8,22.9,full_and_piecewise,2048",
            "32,27.5,full_and_piecewise,2048",
            "1,38.0,none,2048",
        ],
        "help": "decode sweep: one row per batch (and graphs mode); step_ms or tokens_per_s "
        "(aggregate over the batch)",
    },
    "launch": {
        "required": (("kernels",), ("eager_ms",), ("graph_ms",)),
        "optional": ("note",),
        "template": ["kernels,eager_ms,graph_ms", "100,0.52,0.021", "1000,5.10,0.095"],
        "help": "launch micro-benchmark: a chain of `kernels` empty kernels launched one by one "
        "(eager_ms) against one CUDA graph replay of the same chain (graph_ms)",
    },
    "cold_start": {
        "required": (("item",), ("seconds",)),
        "optional": ("note",),
        "template": [
            "item,seconds",
            "process_init,4.1",
            "cuda_context,5.8",
            "allocator,3.9",
            "weights,23.0",
            "compile_capture,52.0",
        ],
        "help": "cold-start line items: item is 1–5 or process_init, cuda_context, allocator, "
        "weights, compile_capture",
    },
    "request": {
        "required": (("concurrency",), ("ttft_ms", "tpot_ms")),
        "optional": ("prompt_tokens", "output_tokens", "e2e_ms", "note"),
        "template": [
            "prompt_tokens,output_tokens,concurrency,ttft_ms,tpot_ms",
            "1024,256,1,95.0,22.0",
            "1024,256,16,180.0,26.5",
        ],
        "help": "request latency against concurrency (mean over the run)",
    },
    "bandwidth": {
        "required": (("bytes",), ("ms",)),
        "optional": ("batch", "rows", "cols", "dtype", "gb_s", "note"),
        "template": ["batch,bytes,ms,gb_s", "1,1073741824,0.40,2684.4"],
        "help": "capture kit: a decode-like matrix-vector product per batch, bytes read and time",
    },
    "h2d": {
        "required": (("mode",), ("bytes",), ("ms",)),
        "optional": ("gb_s", "note"),
        "template": ["mode,bytes,ms,gb_s", "pinned,1073741824,20.1,53.4"],
        "help": "capture kit: host-to-device copies, mode pinned or pageable",
    },
}

#: cold-start CSV item names (SPEC 4.3's five line items) and the numbers that name them too
COLD_ITEMS = {
    "1": "process_init",
    "2": "cuda_context",
    "3": "allocator",
    "4": "weights",
    "5": "compile_capture",
}


@dataclass
class Problem:
    """Something an importer could not read: where (``line 12``, ``column step_ms``, ``row 4``)
    and why, in words a user can act on."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


@dataclass
class Dataset:
    """One imported file (see the module docstring)."""

    name: str
    format: str
    kind: str
    figures: dict = field(default_factory=dict)
    rows: list[dict] = field(default_factory=list)
    conditions: dict = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    problems_dropped: int = 0
    extra: dict = field(default_factory=dict)  # format-specific (a log's items, version…)

    def problem(self, where: str, message: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(Problem(where, message))
        else:
            self.problems_dropped += 1

    def to_json(self) -> dict:
        out = {
            "file": self.name,
            "format": self.format,
            "kind": self.kind,
            "figures": self.figures,
            "conditions": self.conditions,
        }
        if self.rows:
            out["rows"] = self.rows
        out.update(self.extra)
        out["problems"] = [str(p) for p in self.problems]
        if self.problems_dropped:
            out["problems"].append(f"… and {self.problems_dropped} more")
        return out


def decode_text(name: str, data: bytes) -> str:
    """The text of an uploaded file, or a :class:`ScenarioError` naming the file: empty, larger
    than :data:`MAX_BYTES`, binary (NUL bytes or not UTF-8) are refused. A UTF-8 byte-order mark
    and Windows line ends are accepted."""
    if len(data) > MAX_BYTES:
        raise ScenarioError(
            name, f"larger than {MAX_BYTES // 1_000_000} MB; measurement files are small text files"
        )
    if not data.strip():
        raise ScenarioError(name, "the file is empty")
    if b"\x00" in data[:65536]:
        raise ScenarioError(name, "a binary file; accepted are CSV, JSON, JSONL and text logs")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ScenarioError(
            name, f"not UTF-8 text (byte {exc.start}); accepted are CSV, JSON, JSONL and logs"
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


_NUMBER = re.compile(
    r"^[+-]?(?:(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
)


def number(text) -> float | None:
    """A finite number from a cell or a log value, or None. Thousands separators ("5,919.16") are
    accepted; NaN, Inf, empty cells and text are not (None)."""
    if isinstance(text, bool):
        return None
    if isinstance(text, int | float):
        return float(text) if math.isfinite(text) else None
    if not isinstance(text, str):
        return None
    t = text.strip().strip('"').strip()
    if not t or not _NUMBER.match(t) or not any(c.isdigit() for c in t):
        return None
    v = float(t.replace(",", ""))
    return v if math.isfinite(v) else None


def template_csv(kind: str) -> str:
    """A downloadable template of one of our CSV formats (header and example rows)."""
    return "\n".join(CSV_SCHEMAS[kind]["template"]) + "\n"


#: where :mod:`model.readers.importers` tries a reader (:mod:`model.readers.registry`)
STAGES = ("json", "text", "csv", "log")


@dataclass(frozen=True)
class Reader:
    """One way a file is recognised and read: each reader module lists its own in a
    module-level ``READERS`` tuple, which :mod:`model.readers.registry` collects."""

    name: str  #: unique id (``serve_json``, ``genai_perf_csv``…)
    stage: str  #: one of :data:`STAGES`
    order: int  #: within the stage, lowest first
    formats: tuple[str, ...]  #: the ``Dataset.format`` values it returns
    recognise: Callable[[Any], bool]  #: the JSON value (stage json) or the text
    read: Callable[[str, Any], Any]  #: (file name, value or text) → Dataset or None
    accepted: str = ""  #: how the accepted-formats sentence names it ("" where another reader's
    #: phrase covers it)
    accepted_json: str = ""  #: how the refusal of an unrecognised JSON file names it
    shown: int = 0  #: place of its phrase in the sentences
