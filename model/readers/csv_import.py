"""Readers for our own measurement CSV formats (SPEC 4.5; the schemas are
:data:`model.readers.measurements.CSV_SCHEMAS`: decode, launch, cold_start, request, bandwidth,
h2d).

:func:`detect_schema` says which of our formats a header is; :func:`read_csv` reads a file into
a :class:`~model.readers.measurements.Dataset` (``format`` ``"<kind>_csv"``), returns None when
the header is none of ours (so a dispatcher can try GenAI-Perf and the rest), and raises
:class:`~model.errors.ScenarioError` (key: the file name) when the file is clearly meant to be
one of ours but nothing usable can be read. Files are parsed with Python's ``csv`` module, one
record per line; nothing is evaluated.

Rules
-----
Lines
    Blank lines, and lines whose first non-blank character is ``#``, are ignored anywhere (before
    the header, between rows, at the end). A comment ``# link: https://…`` (the app's share
    link) is kept as ``conditions["link"]``; only http(s) links are kept. An Excel ``sep=;``
    line before the header sets the separator. One record per line: a quoted field may hold the
    separator but not a line break (an unclosed quote refuses that row). A line longer than
    100,000 characters refuses the file (Python's csv field limit is left alone; with
    ``kind=None`` such a first line is simply not ours: None); text longer than
    :data:`~model.readers.measurements.MAX_BYTES` characters is refused too.
Separator
    Comma. A header with no comma but a tab (or else a semicolon) makes the file tab (or
    semicolon) separated. There, when every decimal number in the data is written with a
    decimal comma (``21,4``, ``1.234,5``: what Excel saves in a locale that uses one, with
    ``;``), the comma is read as the decimal point and ``extra["converted"]`` says so; when the
    file also writes decimals with a point, a comma inside a number is refused as ambiguous
    (decimal comma or thousands separator?). In a comma-separated file a quoted ``"5,919.16"``
    is a number.
Header
    Names are case-insensitive; surrounding spaces, quotes and a UTF-8 byte-order mark are
    ignored; spaces, hyphens, dots and ``/`` inside a name read as ``_``; a unit in brackets
    reads as a suffix (``Step (ms)`` = ``step_ms``, ``GB/s`` = ``gb_s``, ``µs`` = ``us``). Each
    kind's
    columns are those of ``CSV_SCHEMAS``. These units in the name are converted on reading
    (and listed in ``Dataset.extra["converted"]``):

    - time columns in ms (``step_ms``, ``eager_ms``, ``graph_ms``, ``ttft_ms``, ``tpot_ms``,
      ``e2e_ms``, and ``ms`` of bandwidth/h2d, also written ``time_ms``): the suffix ``_s``
      (``_sec``, ``_seconds``) ×1000, ``_us`` ×0.001, ``_ns`` ×10⁻⁶; ``_msec`` = ``_ms``;
    - cold_start ``seconds`` (also ``s``, ``sec``, ``time_s``, ``duration_s``): ``ms``
      ×0.001, ``min`` ×60;
    - ``bytes`` (also ``size_bytes``): ``kb``, ``mb``, ``gb`` (10³, 10⁶, 10⁹) and ``kib``,
      ``mib``, ``gib`` (2¹⁰, 2²⁰, 2³⁰), rounded to whole bytes;
    - ``gb_s`` (also ``bandwidth_gb_s``, ``bw_gb_s``): ``mb_s`` ×0.001, ``tb_s`` ×1000,
      ``gib_s`` ×1.073741824.

    A few synonyms are read as well: ``batch_size``/``bs``, ``num_kernels``,
    ``max_concurrency``, ``tokens_s``/``tok_s``/``tokens_per_sec``, ``mean_ttft_ms``,
    ``mean_tpot_ms``, ``e2el_ms``/``mean_e2el_ms``, ``input_tokens``/``input_len``,
    ``output_len``, ``context``/``context_len``, ``cudagraph_mode``/``graphs``, ``num_gpus``,
    ``notes``. A time without a unit (``step``, ``eager``, ``ttft``) or with a name we do not
    read (``latency_s``, ``step_min``) is not guessed: the message names the accepted
    columns. Other unknown columns are ignored with a problem ("column 'x': ignored"). Two
    columns giving the same value (``step_ms`` and ``step_s``) refuse the file.
Detection
    A header is one of ours when it has every required column of a kind (any one of each
    alternative); when several kinds fit, the one that reads most of the header wins (``mode,
    bytes, ms`` is h2d, not bandwidth). With ``kind=None``, a header that is only our columns
    or the unit-less names above but lacks a required one (``batch,step``) is clearly meant to
    be ours: a :class:`ScenarioError` names what is missing and what is accepted. Any other
    header is not ours: None. With ``kind`` given, a header without that kind's required
    columns is a :class:`ScenarioError` naming them.
Cells
    Numbers as :func:`~model.readers.measurements.number` reads them (thousands separators in quoted
    cells, no NaN, no Inf). A unit in a cell is accepted only when it is the column's own unit
    (``21.4 ms`` in ``step_ms``, ``2 s`` in ``seconds``): the value is read as written. Any
    other unit (``0.0214 s`` in ``step_ms``, ``8 seqs`` in ``batch``) refuses the row: units
    belong in the header. Times, rates and bandwidths are > 0 (cold-start seconds ≥ 0) and
    within 10⁻⁹ … 10¹² in the column's unit; sizes at most 10¹⁸ bytes. ``batch``, ``kernels``,
    ``concurrency``, ``gpus``, ``rows``, ``cols``, ``prompt_tokens``, ``output_tokens`` are
    whole numbers ≥ 1 and ``context_tokens`` ≥ 0 (``8.0`` reads as 8; ``8.5`` is refused), at
    most 10⁹. An empty optional cell is None; an empty required cell refuses the row.
Rows
    A refused row gets a problem ``row N (line L): column c: '<value>' …`` (N counts data rows
    from 1, L is the line in the file); the other rows are read. A row with too many or too few
    cells is refused (extra empty trailing cells, as spreadsheets write, are not too many); a
    row with every cell empty is skipped. An identical typed row is kept once ("row N
    duplicates row M"); the same batch with other values is a repeat and kept. Rows after the
    first ``MAX_ROWS`` are ignored with a problem. No readable row: :class:`ScenarioError`
    listing the first problems; a header and no data rows: "header only: no data rows".

Kinds
-----
decode
    ``batch``; ``step_ms`` or ``tokens_per_s`` (aggregate over the batch). From tokens_per_s
    alone, ``step_ms = batch / tokens_per_s × 1000`` (both kept). With both, they must agree
    within 5 % or a problem says so (step_ms is used). ``cuda_graphs``: ``none`` (also
    ``eager``, ``enforce_eager``, ``off``, ``false``, ``no``), ``piecewise``,
    ``full_decode_only``, ``full_and_piecewise``, ``full`` (vLLM's FULL: a decode step replays
    one full graph, read as ``full_decode_only``); ``graphs``, ``on``, ``true``, ``yes``,
    ``default`` or an empty cell mean the engine's default and read as None; case, hyphens and
    vLLM's spelling (``FULL_AND_PIECEWISE``, ``CUDAGraphMode.FULL``) are accepted.
    ``context_tokens`` ≥ 0. Figures: ``points``, ``batches`` (distinct, sorted),
    ``min_step_ms``, ``max_step_ms``, ``graph_modes`` (distinct, None first).
launch
    ``kernels``, ``eager_ms``, ``graph_ms``; graph_ms > eager_ms is a problem, the row is kept.
    Figures: ``points``, ``tau_us_naive`` = median over rows of (eager_ms − graph_ms) / kernels
    × 1000 [µs per launch].
cold_start
    ``item``: 1–5 or the names of ``COLD_ITEMS`` (process_init, cuda_context, allocator,
    weights, compile_capture); also ``item 4``, ``process``, ``process_start`` (1),
    ``cuda_init``, ``context`` (2), ``allocator_init`` (3), ``weights_load``, ``weight_load``,
    ``load``, ``loading_weights``, ``model_loading`` (4). ``compile`` (``torch_compile``) and
    ``capture`` (``graph_capture``, ``graphs``, ``cuda_graphs``) are the two parts of item 5
    (``part`` in the row); item 5 is their sum when it is not given whole (given whole, the
    whole is used). ``seconds`` ≥ 0.
    A repeated item is a repeat: figures use the mean and keep the count. Figures:
    ``points``, ``item1_s`` … ``item5_s`` and ``item1_n`` … (repeats) for the items present,
    ``compile_s``/``capture_s`` when parts are given, ``total_s`` only when all five are
    present.
request
    ``concurrency`` ≥ 1, ``ttft_ms`` and/or ``tpot_ms`` (each row needs one), optional
    ``prompt_tokens``, ``output_tokens``, ``e2e_ms``. Figures: ``points``, ``concurrencies``.
bandwidth
    ``bytes``, ``ms``, optional ``gb_s`` (computed as bytes / ms / 10⁶ when absent; when
    present it must agree within 2 % or a problem says so and the computed value is used),
    ``batch``, ``rows``, ``cols``, ``dtype``. Figures: ``points``, ``max_gb_s``,
    ``median_gb_s``.
h2d
    ``mode`` (``pinned`` or ``pageable``; also ``page_locked``, ``unpinned``), ``bytes``,
    ``ms``, ``gb_s`` as for bandwidth. Figures: ``points``, ``pinned_gb_s`` and
    ``pageable_gb_s`` (median per mode present).

Rows hold the kind's columns that the header has, under the names of ``CSV_SCHEMAS`` (None
where an optional cell is empty), plus ``step_ms`` (decode, from tokens_per_s), ``gb_s``
(bandwidth and h2d, computed when absent) and ``name``, ``part`` (cold_start); whole numbers
are ints, everything else numeric is a float in the column's unit.

Conditions: ``link`` (from the comment), and ``model``, ``gpus``, ``context_tokens``,
``prompt_tokens``, ``output_tokens``, ``dtype`` when that column holds one value throughout.
"""

from __future__ import annotations

import csv
import re
import statistics
from dataclasses import dataclass, field
from decimal import Decimal

from model.errors import ScenarioError
from model.readers.measurements import (
    COLD_ITEMS,
    CSV_SCHEMAS,
    MAX_BYTES,
    MAX_ROWS,
    Dataset,
    Reader,
    number,
)
from model.scenario import CUDA_GRAPHS_MODES

MAX_LINE = 100_000  #: characters in one line
MAX_INT = 1_000_000_000  #: the largest count a whole-number column accepts
#: the range of other numbers, in the column's unit (ms, s, GB/s, tokens/s): a time of 10⁻⁹ ms
#: or 10¹² s is a typing error, and the figures derived from such values would overflow
MIN_VALUE, MAX_VALUE = 1e-9, 1e12
MAX_BYTES_VALUE = 10**18  #: the largest size in bytes
FIRST_PROBLEMS = 5  #: problems quoted in the error when no row could be read

# --- header names ---------------------------------------------------------------------------

# unit suffix → (factor to the canonical unit, the unit's canonical label)
_MS = {
    "ms": (1.0, "ms"),
    "msec": (1.0, "ms"),
    "s": (1e3, "s"),
    "sec": (1e3, "s"),
    "seconds": (1e3, "s"),
    "us": (1e-3, "us"),
    "usec": (1e-3, "us"),
    "ns": (1e-6, "ns"),
}
_SECONDS = {
    "s": (1.0, "s"),
    "sec": (1.0, "s"),
    "seconds": (1.0, "s"),
    "ms": (1e-3, "ms"),
    "min": (60.0, "min"),
}
_BYTES = {
    "bytes": (1.0, "bytes"),
    "kb": (1e3, "kb"),
    "mb": (1e6, "mb"),
    "gb": (1e9, "gb"),
    "kib": (2.0**10, "kib"),
    "mib": (2.0**20, "mib"),
    "gib": (2.0**30, "gib"),
}
_GB_S = {
    "gb_s": (1.0, "gb_s"),
    "mb_s": (1e-3, "mb_s"),
    "tb_s": (1e3, "tb_s"),
    "gib_s": (2.0**30 / 1e9, "gib_s"),
}


def _with_units(bases: tuple[str, ...], units: dict) -> dict:
    return {(f"{b}_{u}" if b else u): fu for b in bases for u, fu in units.items()}


def _plain(*names: str, unit: str | None = None) -> dict:
    return {n: (1.0, unit) for n in names}


#: canonical column → {accepted header name: (factor, unit label)}
_ALIASES: dict[str, dict[str, tuple[float, str | None]]] = {
    "batch": _plain("batch", "batch_size", "bs"),
    "kernels": _plain("kernels", "num_kernels", "n_kernels"),
    "concurrency": _plain("concurrency", "max_concurrency"),
    "context_tokens": _plain("context_tokens", "context", "context_len", "context_length"),
    "prompt_tokens": _plain("prompt_tokens", "input_tokens", "input_len"),
    "output_tokens": _plain("output_tokens", "output_len"),
    "gpus": _plain("gpus", "num_gpus", "n_gpus"),
    "rows": _plain("rows"),
    "cols": _plain("cols"),
    "step_ms": _with_units(("step",), _MS),
    "tokens_per_s": _plain(
        "tokens_per_s",
        "tokens_s",
        "tok_s",
        "tokens_per_sec",
        "tokens_per_second",
        "tok_per_s",
        unit="tokens_per_s",
    ),
    "eager_ms": _with_units(("eager",), _MS),
    "graph_ms": _with_units(("graph",), _MS),
    "ttft_ms": _with_units(("ttft", "mean_ttft"), _MS),
    "tpot_ms": _with_units(("tpot", "mean_tpot"), _MS),
    "e2e_ms": _with_units(("e2e", "e2el", "mean_e2el"), _MS),
    "ms": _with_units(("", "time"), _MS),
    "seconds": _with_units(("", "time", "duration"), _SECONDS),
    "bytes": _with_units(("", "size"), _BYTES),
    "gb_s": _with_units(("", "bandwidth", "bw"), _GB_S),
    "cuda_graphs": _plain("cuda_graphs", "cudagraph_mode", "cuda_graph", "cudagraphs", "graphs"),
    "item": _plain("item", "line_item"),
    "mode": _plain("mode", "memory"),
    "model": _plain("model"),
    "dtype": _plain("dtype"),
    "note": _plain("note", "notes", "comment"),
}

#: canonical column → how its cells are read: (type, lower bound) for numbers
_TYPES: dict[str, tuple[str, int]] = {
    "batch": ("int", 1),
    "kernels": ("int", 1),
    "concurrency": ("int", 1),
    "gpus": ("int", 1),
    "rows": ("int", 1),
    "cols": ("int", 1),
    "prompt_tokens": ("int", 1),
    "output_tokens": ("int", 1),
    "context_tokens": ("int", 0),
    "step_ms": ("pos", 0),
    "tokens_per_s": ("pos", 0),
    "eager_ms": ("pos", 0),
    "graph_ms": ("pos", 0),
    "ttft_ms": ("pos", 0),
    "tpot_ms": ("pos", 0),
    "e2e_ms": ("pos", 0),
    "ms": ("pos", 0),
    "gb_s": ("pos", 0),
    "seconds": ("nonneg", 0),
    "bytes": ("bytes", 1),
    "cuda_graphs": ("graphs", 0),
    "item": ("item", 0),
    "mode": ("mode", 0),
    "model": ("text", 0),
    "dtype": ("text", 0),
    "note": ("text", 0),
}

# time columns and what a header without (or with an unread) unit is told, per kind
_TIME_HELP = {
    "step_ms": "the decode step time is step_ms (milliseconds; step_s, step_us and step_ns "
    "are converted), or give the aggregate tokens_per_s",
    "tokens_per_s": "the aggregate decode rate over the batch is tokens_per_s",
    "eager_ms": "the eager launch time is eager_ms (milliseconds; eager_s, eager_us and "
    "eager_ns are converted)",
    "graph_ms": "the graph replay time is graph_ms (milliseconds; graph_s, graph_us and "
    "graph_ns are converted)",
    "ttft_ms": "time to first token is ttft_ms (milliseconds; ttft_s and ttft_us are converted)",
    "tpot_ms": "time per output token is tpot_ms (milliseconds; tpot_s and tpot_us are converted)",
    "e2e_ms": "request latency is e2e_ms (milliseconds; e2e_s and e2e_us are converted)",
    "ms": "the copy time is ms (milliseconds; s, us and ns, or time_ms, are converted)",
    "seconds": "the item's time is seconds (ms and min are converted)",
    "bytes": "the size is bytes (kb, mb, gb, kib, mib and gib are converted)",
    "gb_s": "the bandwidth is gb_s (GB/s, 10⁹ bytes per second; mb_s, tb_s and gib_s are "
    "converted)",
}
#: kind → (name stems a misnamed column starts with, the column it was meant to be)
_HINTS: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = {
    "decode": (
        (("step", "step_time", "latency", "time", "itl", "tpot", "decode"), "step_ms"),
        (("throughput", "tokens", "tok"), "tokens_per_s"),
    ),
    "launch": ((("eager",), "eager_ms"), (("graph",), "graph_ms")),
    "cold_start": ((("time", "duration"), "seconds"),),
    "request": (
        (("ttft", "time_to_first_token"), "ttft_ms"),
        (("tpot", "itl"), "tpot_ms"),
        (("e2e", "e2el", "latency"), "e2e_ms"),
    ),
    "bandwidth": (
        (("time", "duration"), "ms"),
        (("size",), "bytes"),
        (("bandwidth", "bw"), "gb_s"),
    ),
    "h2d": ((("time", "duration"), "ms"), (("size",), "bytes"), (("bandwidth", "bw"), "gb_s")),
}


def _kind_names(kind: str) -> dict[str, tuple[str, float, str | None]]:
    schema = CSV_SCHEMAS[kind]
    columns = [c for group in schema["required"] for c in group] + list(schema["optional"])
    out: dict[str, tuple[str, float, str | None]] = {}
    for canonical in columns:
        for name, (factor, unit) in _ALIASES[canonical].items():
            if name in out and out[name][0] != canonical:  # pragma: no cover - table error
                raise RuntimeError(f"{kind}: header name {name} is ambiguous")
            out[name] = (canonical, factor, unit)
    return out


#: kind → {normalised header name: (canonical column, factor, unit label)}
_NAMES = {kind: _kind_names(kind) for kind in CSV_SCHEMAS}

_BRACKETS = re.compile(r"[(\[]\s*([^)\]]*?)\s*[)\]]")
_SEPARATORS = re.compile(r"[\s\-/.]+")


def _norm(name: str) -> str:
    """A header name as looked up: lower case, µ as u, brackets and spaces as ``_``."""
    n = name.strip().lstrip("\ufeff").strip().strip('"').strip().lower()
    n = n.replace("µ", "u").replace("μ", "u")
    n = _BRACKETS.sub(r" \1", n)
    n = _SEPARATORS.sub("_", n)
    return re.sub(r"_+", "_", n).strip("_")


def _hint(kind: str, norm: str) -> str | None:
    """What a column name that is not ours but looks meant as one of ``kind``'s is told."""
    for stems, canonical in _HINTS[kind]:
        for stem in stems:
            if norm == stem:
                return f"has no unit: {_TIME_HELP[canonical]}"
            if norm.startswith(stem + "_"):
                return f"is not read: {_TIME_HELP[canonical]}"
    return None


def _groups(groups) -> str:
    """``batch and step_ms (or tokens_per_s)``."""
    return " and ".join(
        g[0] + (f" (or {' or '.join(g[1:])})" if len(g) > 1 else "") for g in groups
    )


def _accepted(kind: str) -> str:
    schema = CSV_SCHEMAS[kind]
    return f"required {_groups(schema['required'])}; optional {', '.join(schema['optional'])}"


@dataclass
class _Column:
    index: int
    raw: str  # as written in the header
    name: str  # canonical
    factor: float
    unit: str | None


@dataclass
class _Header:
    kind: str
    columns: list[_Column] = field(default_factory=list)
    hints: list[tuple[int, str, str]] = field(default_factory=list)  # index, raw, message
    unknown: list[tuple[int, str]] = field(default_factory=list)
    unnamed: list[int] = field(default_factory=list)
    duplicates: list[tuple[_Column, _Column]] = field(default_factory=list)
    width: int = 0  # cells up to the last named column

    @property
    def names(self) -> set[str]:
        return {c.name for c in self.columns}

    def missing(self) -> list[tuple[str, ...]]:
        have = self.names
        return [g for g in CSV_SCHEMAS[self.kind]["required"] if not have.intersection(g)]

    def satisfied(self) -> int:
        return len(CSV_SCHEMAS[self.kind]["required"]) - len(self.missing())


def _match(kind: str, header: list[str]) -> _Header:
    table = _NAMES[kind]
    h = _Header(kind)
    seen: dict[str, _Column] = {}
    last_named = max((i for i, raw in enumerate(header) if _norm(raw)), default=-1)
    h.width = last_named + 1
    for i, raw in enumerate(header):
        norm = _norm(raw)
        if not norm:
            if i < last_named:
                h.unnamed.append(i)
            continue
        if norm in table:
            canonical, factor, unit = table[norm]
            col = _Column(i, raw.strip().lstrip("\ufeff").strip(), canonical, factor, unit)
            if canonical in seen:
                h.duplicates.append((seen[canonical], col))
                continue
            seen[canonical] = col
            h.columns.append(col)
            continue
        message = _hint(kind, norm)
        if message:
            h.hints.append((i, raw.strip(), message))
        else:
            h.unknown.append((i, raw.strip()))
    return h


def _best(header: list[str], full: bool) -> _Header | None:
    """The kind a header fits best: every required column (``full``) or, when not ``full``,
    only our names and at least one required column or misnamed time."""
    best, best_key = None, None
    for kind in CSV_SCHEMAS:
        h = _match(kind, header)
        if full:
            if h.missing():
                continue
            key = (len(h.columns), len(CSV_SCHEMAS[kind]["required"]))
        else:
            if h.unknown or not (h.satisfied() or h.hints):
                continue
            key = (h.satisfied() + len(h.hints), len(h.columns))
        if best_key is None or key > best_key:
            best, best_key = h, key
    return best


def detect_schema(header: list[str]) -> str | None:
    """Which of :data:`~model.readers.measurements.CSV_SCHEMAS` a header row is (see the module
    docstring's Detection), or None when it is none of ours."""
    h = _best(list(header), full=True)
    return h.kind if h else None


# --- lines and cells ------------------------------------------------------------------------

_LINK = re.compile(r"^#\s*link\s*[:=]\s*(\S+)\s*$", re.IGNORECASE)
_SEP_LINE = re.compile(r"^sep=(.)$", re.IGNORECASE)
_UNIT_CELL = re.compile(r"^(?P<num>[+-]?[\d,]*\.?\d+(?:[eE][+-]?\d+)?)\s*(?P<unit>[a-zA-Zµμ%/_]+)$")
_CELL_UNITS = {
    **dict.fromkeys(("ms", "msec", "msecs"), "ms"),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), "s"),
    **dict.fromkeys(("us", "usec", "usecs", "µs", "μs"), "us"),
    "ns": "ns",
    **dict.fromkeys(("min", "mins", "minute", "minutes"), "min"),
    **dict.fromkeys(("b", "byte", "bytes"), "bytes"),
    **{u: u for u in ("kb", "mb", "gb", "kib", "mib", "gib")},
    **dict.fromkeys(("gb/s", "gb_s", "gbps"), "gb_s"),
    **dict.fromkeys(("gib/s", "gib_s"), "gib_s"),
    **dict.fromkeys(("mb/s", "mb_s"), "mb_s"),
    **dict.fromkeys(("tb/s", "tb_s"), "tb_s"),
    **dict.fromkeys(("tok/s", "tokens/s", "tok_s", "tokens_s", "tokens_per_s"), "tokens_per_s"),
}
_NOT_FINITE = {"nan", "inf", "infinity", "+inf", "-inf", "+infinity", "-infinity", "-nan"}


def _split(line: str, delimiter: str) -> list[str] | None:
    """The cells of one line, stripped; None when its quotes do not close."""
    if '"' not in line:
        return [c.strip() for c in line.split(delimiter)]
    try:
        cells = next(csv.reader([line], delimiter=delimiter, skipinitialspace=True, strict=True))
    except csv.Error:
        if line.count('"') % 2:  # a quote opened and not closed
            return None
        # closed quotes with text after them (`"Batch" ,`): read leniently
        cells = next(csv.reader([line], delimiter=delimiter, skipinitialspace=True))
    return [c.strip() for c in cells]


#: a number written with a decimal comma, as Excel saves a CSV in a locale that uses one (the
#: separator is then ';'): ``21,4``, ``1.234,5`` (a '.' grouping thousands), as a whole cell
_DEC_COMMA = re.compile(
    r"(?:^|(?<=[;\t]))[ \t]*(?P<q>\"?)[ \t]*(?P<num>[+-]?(?:\d{1,3}(?:\.\d{3})+|\d+),\d+)"
    r"[ \t]*(?P=q)[ \t]*(?=[;\t]|$)"
)
#: a number written with a decimal point (it makes a comma in the same file ambiguous)
_DEC_POINT = re.compile(
    r"(?:^|[;\t])[ \t]*\"?[ \t]*[+-]?\d*\.\d+(?:[eE][+-]?\d+)?[ \t]*\"?[ \t]*(?=[;\t]|$)"
)


def _to_point(m: re.Match) -> str:
    return m["num"].replace(".", "").replace(",", ".")


def _decimal_comma(data: list, delimiter: str) -> bool:
    """True when a ';' or tab separated file writes its decimals with a comma: some cell is a
    number with a decimal comma and none is a number with a decimal point ('1.5' beside '2,5'
    leaves the comma ambiguous: it is then refused cell by cell)."""
    lines = [line for _, line in data]
    return any(_DEC_COMMA.search(line) for line in lines) and not any(
        _DEC_POINT.search(line) for line in lines
    )


def _shown(cell: str) -> str:
    return repr(cell if len(cell) <= 40 else cell[:40] + "…")


class _CellError(Exception):
    pass


def _number(cell: str, col: _Column, delimiter: str) -> float:
    v = number(cell)
    if v is not None and (delimiter == "," or "," not in cell):
        return v
    if v is not None or (delimiter != "," and re.match(r"^[+-]?\d+,\d+$", cell)):
        raise _CellError(
            f"{_shown(cell)}: a comma in a number is ambiguous in a "
            f"{'tab' if delimiter == chr(9) else repr(delimiter)}-separated file that also "
            "writes decimals with '.'; write every decimal point as '.' (or every one as ',') "
            "and no thousands separator"
        )
    if cell.lower() in _NOT_FINITE:
        raise _CellError(f"{_shown(cell)} is not a number (NaN and Inf are not accepted)")
    m = _UNIT_CELL.match(cell)
    if m and number(m["num"]) is not None:
        unit = _CELL_UNITS.get(m["unit"].lower().replace("μ", "µ"), m["unit"])
        if col.unit is not None and unit == col.unit:
            return _number(m["num"], col, delimiter)
        where = f"the column is in {col.unit}" if col.unit else "this column has no unit"
        raise _CellError(f"{_shown(cell)}: units belong in the header ({where})")
    raise _CellError(f"{_shown(cell)} is not a number")


_GRAPHS = {
    **dict.fromkeys(("none", "eager", "enforce_eager", "off", "false", "no"), "none"),
    **{m: m for m in CUDA_GRAPHS_MODES},
    "full": "full_decode_only",
    **dict.fromkeys(("graphs", "on", "true", "yes", "default"), None),
}
_GRAPHS_ACCEPTED = (
    "none (or eager, enforce_eager), piecewise, full_decode_only, full_and_piecewise, full; "
    "graphs, on, true or empty for the engine's default"
)
_COLD_NAMES = {name: int(i) for i, name in COLD_ITEMS.items()}
_COLD_NAMES.update(
    {
        "process": 1,
        "process_start": 1,
        "cuda_init": 2,
        "context": 2,
        "allocator_init": 3,
        "weights_load": 4,
        "weight_load": 4,
        "load": 4,
        "loading_weights": 4,
        "model_loading": 4,
    }
)
_COLD_PARTS = {
    "compile": "compile",
    "torch_compile": "compile",
    "capture": "capture",
    "graph_capture": "capture",
    "graphs": "capture",
    "cuda_graphs": "capture",
}
_COLD_ACCEPTED = (
    "1–5 or " + ", ".join(COLD_ITEMS.values()) + "; compile and capture as the parts of item 5"
)
_MODES = {
    "pinned": "pinned",
    "page_locked": "pinned",
    "pageable": "pageable",
    "unpinned": "pageable",
}


def _word(cell: str) -> str:
    return re.sub(r"[\s\-]+", "_", cell.strip().lower())


def _scale(value: float, factor: float) -> float:
    """``value × factor`` in decimal, so that 21400 µs is 21.4 ms and not 21.400000000000002."""
    if factor == 1.0:
        return value
    return float(Decimal(repr(value)) * Decimal(repr(factor)))


def _cell(cell: str, col: _Column, delimiter: str):
    """One cell's typed value (None when empty), or :class:`_CellError`."""
    cell = cell.strip()
    kind, low = _TYPES[col.name]
    if kind == "text":
        return cell or None
    if not cell:
        return None
    if kind == "graphs":
        w = _word(cell).removeprefix("cudagraphmode.")
        if w not in _GRAPHS:
            raise _CellError(f"{_shown(cell)} is not a graphs mode; accepted: {_GRAPHS_ACCEPTED}")
        return _GRAPHS[w]
    if kind == "mode":
        w = _word(cell)
        if w not in _MODES:
            raise _CellError(f"{_shown(cell)} is not a copy mode; accepted: pinned, pageable")
        return _MODES[w]
    if kind == "item":
        w = _word(cell)
        v = number(w.removeprefix("item").strip("_"))
        if v is not None and v.is_integer() and 1 <= v <= 5:
            return (int(v), None)
        if w in _COLD_NAMES:
            return (_COLD_NAMES[w], None)
        if w in _COLD_PARTS:
            return (5, _COLD_PARTS[w])
        raise _CellError(f"{_shown(cell)} is not a cold-start item; accepted: {_COLD_ACCEPTED}")
    v = _scale(_number(cell, col, delimiter), col.factor)
    if kind == "int":
        if not v.is_integer():
            raise _CellError(f"{_shown(cell)} is not a whole number")
        if v < low:
            raise _CellError(f"{_shown(cell)} must be at least {low}")
        if v > MAX_INT:
            raise _CellError(f"{_shown(cell)} is more than {MAX_INT:,}")
        return int(v)
    if kind == "bytes":
        if col.factor == 1.0 and not v.is_integer():
            raise _CellError(f"{_shown(cell)} is not a whole number of bytes")
        if round(v) < 1:
            raise _CellError(f"{_shown(cell)} must be at least one byte")
        if round(v) > MAX_BYTES_VALUE:
            raise _CellError(f"{_shown(cell)} is more than 10¹⁸ bytes")
        return int(round(v))
    if kind == "pos" and not v > 0:
        raise _CellError(f"{_shown(cell)} must be greater than 0")
    if kind == "nonneg" and v < 0:
        raise _CellError(f"{_shown(cell)} must not be negative")
    if v > MAX_VALUE or (kind == "pos" and v < MIN_VALUE):
        low = f"{MIN_VALUE:g}" if kind == "pos" else "0"
        raise _CellError(
            f"{_shown(cell)} is out of range: {col.name} between {low} and {MAX_VALUE:g}"
        )
    return v


# --- reading --------------------------------------------------------------------------------


def read_csv(text: str, name: str, kind: str | None = None) -> Dataset | None:
    """Read one of our CSV formats (rules in the module docstring).

    Parameters
    ----------
    text : str
        The file's text (:func:`~model.readers.measurements.decode_text` of the upload).
    name : str
        The file name: the key of any :class:`ScenarioError` and ``Dataset.name``.
    kind : str or None
        One of ``CSV_SCHEMAS`` to read the file as; None detects it from the header.

    Returns
    -------
    Dataset or None
        None when ``kind`` is None and the header is none of ours.
    """
    if kind is not None and kind not in CSV_SCHEMAS:
        raise ScenarioError(name, f"unknown CSV kind {kind!r}; accepted: {', '.join(CSV_SCHEMAS)}")
    if len(text) > MAX_BYTES:
        raise ScenarioError(
            name, f"larger than {MAX_BYTES // 1_000_000} MB; measurement files are small"
        )
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")

    # the header: the first line that is neither blank nor a comment (after an Excel sep= line)
    start, delimiter = None, None
    for i, line in enumerate(lines):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        m = _SEP_LINE.match(s)
        if delimiter is None and m:
            delimiter = m[1]
            continue
        start = i
        break
    if start is None:
        if delimiter is None and not any(line.strip() for line in lines):
            raise ScenarioError(name, "the file is empty")
        if kind is None:
            return None
        raise ScenarioError(name, f"no header line; accepted {kind} columns: {_accepted(kind)}")
    head = lines[start]
    if len(head) > MAX_LINE:
        if kind is None:
            return None
        raise ScenarioError(
            name, f"line {start + 1} is {len(head):,} characters long; the limit is {MAX_LINE:,}"
        )
    if delimiter is None:
        delimiter = "," if "," in head else "\t" if "\t" in head else ";" if ";" in head else ","
    cells = _split(head, delimiter)

    header = _header(name, kind, cells)
    if header is None:
        return None
    kind = header.kind

    ds = Dataset(name=name, format=f"{kind}_csv", kind=kind)
    if "#" in text:
        _comments(ds, lines)
    converted = [f"{c.raw} → {c.name} (× {c.factor:g})" for c in header.columns if c.factor != 1]
    if converted:
        ds.extra["converted"] = converted
    for i in header.unnamed:
        ds.problem(f"column {i + 1}", "no name: ignored")
    for _, raw, message in header.hints:
        ds.problem(f"column {raw!r}", f"ignored: it {message}")
    for _, raw in header.unknown:
        ds.problem(f"column {raw!r}", f"ignored: not a {kind} column ({_accepted(kind)})")

    if max(map(len, lines)) > MAX_LINE:
        i = next(i for i, line in enumerate(lines) if len(line) > MAX_LINE)
        raise ScenarioError(
            name,
            f"line {i + 1} is {len(lines[i]):,} characters long; the limit is {MAX_LINE:,} "
            "(is this a CSV of ours?)",
        )
    blank = delimiter + ' \t"'  # a line of empty cells is skipped like a blank one
    if "#" in text:
        data = [
            (i, line)
            for i, line in enumerate(lines[start + 1 :], start + 2)
            if line.strip(blank) and not line.lstrip().startswith("#")
        ]
    else:
        data = [
            (i, line) for i, line in enumerate(lines[start + 1 :], start + 2) if line.strip(blank)
        ]
    if not data:
        raise ScenarioError(name, f"header only: no data rows ({kind} CSV)")
    if len(data) > MAX_ROWS:
        ds.problem(
            f"line {data[MAX_ROWS][0]}",
            f"{len(data) - MAX_ROWS:,} rows after row {MAX_ROWS:,} ignored "
            f"(the limit is {MAX_ROWS:,} rows per file)",
        )
        del data[MAX_ROWS:]

    if delimiter != "," and _decimal_comma(data, delimiter):
        data = [(i, _DEC_COMMA.sub(_to_point, line)) for i, line in data]
        ds.extra.setdefault("converted", []).append(
            f"decimal comma: '1,5' read as 1.5 ({'tab' if delimiter == chr(9) else repr(delimiter)}"
            "-separated file whose numbers all write the decimal point as ',')"
        )
    first, refused = _rows(ds, header, data, delimiter)
    if not ds.rows:
        more = f"; … ({refused} rows refused)" if refused > FIRST_PROBLEMS else ""
        raise ScenarioError(name, f"no row could be read as a {kind} CSV: {'; '.join(first)}{more}")
    _conditions(ds)
    _FIGURES[kind](ds)
    return ds


def _header(name: str, kind: str | None, cells: list[str] | None) -> _Header | None:
    """The header matched to ``kind`` (or detected), None when it is not ours and ``kind`` is
    None; :class:`ScenarioError` when it is meant to be ours and cannot be."""
    if kind is None:
        h = _best(cells or [], full=True) if cells else None
        if h is None:
            near = _best(cells, full=False) if cells else None
            if near is None:
                return None
            h = near
    else:
        if cells is None:
            raise ScenarioError(
                name,
                f"the header's quotes do not close; accepted {kind} columns: {_accepted(kind)}",
            )
        h = _match(kind, cells)
    if h.duplicates:
        a, b = h.duplicates[0]
        raise ScenarioError(name, f"columns {a.raw!r} and {b.raw!r} both give {a.name}; keep one")
    missing = h.missing()
    if missing:
        said = [f"column {raw!r} {message}" for _, raw, message in h.hints]
        need = _groups(missing)
        other = _best(cells, full=True) if kind is not None else None
        looks = f"; the header looks like a {other.kind} CSV" if other else ""
        raise ScenarioError(
            name,
            "; ".join(said + [f"missing {'columns' if len(missing) > 1 else 'column'} {need}"])
            + f"; accepted {h.kind} columns: {_accepted(h.kind)}{looks}",
        )
    return h


def _comments(ds: Dataset, lines: list[str]) -> None:
    for i in [i for i, line in enumerate(lines) if "#" in line]:
        s = lines[i].strip()
        if not s.startswith("#"):
            continue
        m = _LINK.match(s)
        if not m:
            continue
        link = m[1]
        if not re.match(r"^https?://", link, re.IGNORECASE):
            ds.problem(f"line {i + 1}", "link ignored: only http(s) links are kept")
        elif "link" in ds.conditions:
            ds.problem(f"line {i + 1}", "a second link ignored")
        else:
            ds.conditions["link"] = link


_MISS = object()  # a cell the fast path leaves to _cell
_GRAPHS_FAST = {**_GRAPHS, "": None}
_MODES_FAST = {**_MODES, "": None}
_ITEMS_FAST = {
    "": None,
    **{str(i): (i, None) for i in range(1, 6)},
    **{w: (i, None) for w, i in _COLD_NAMES.items()},
    **{w: (5, p) for w, p in _COLD_PARTS.items()},
}


def _fast(cells: list[str], col: _Column) -> list:
    """The values of one column's plain cells (unsigned decimals, known words), :data:`_MISS`
    for the rest; :func:`_cell` reads those and reads the plain ones to the same values."""
    kind, low = _TYPES[col.name]
    f = col.factor
    if kind == "int" and f == 1.0:  # nine digits at most: within MAX_INT
        vals = [int(c) if c.isdecimal() and len(c) < 10 else _MISS for c in cells]
        return [v if v is _MISS or v >= low else _MISS for v in vals]
    if kind == "bytes" and f == 1.0:
        vals = [int(c) if c.isdecimal() and len(c) < 19 else _MISS for c in cells]
        return [v if v is _MISS or v >= 1 else _MISS for v in vals]
    if kind in ("pos", "nonneg"):
        vals = [
            float(c)
            if c.replace(".", "", 1).isdecimal() and c[-1] != "." and len(c) < 300
            else _MISS
            for c in cells
        ]
        if f != 1.0:
            vals = [v if v is _MISS else _scale(v, f) for v in vals]
        low = MIN_VALUE if kind == "pos" else 0.0
        return [v if v is not _MISS and low <= v <= MAX_VALUE else _MISS for v in vals]
    if kind == "text":
        return [c.strip() or None for c in cells]
    table = {"graphs": _GRAPHS_FAST, "mode": _MODES_FAST, "item": _ITEMS_FAST}.get(kind)
    if table is not None:
        return [table.get(c.lower(), _MISS) for c in cells]
    return [_MISS] * len(cells)


def _rows(ds: Dataset, header: _Header, data: list, delimiter: str) -> list:
    """Read the data rows into ``ds.rows``, column by column (plain cells take a fast path);
    the problems of refused rows are returned too."""
    width = header.width
    columns = header.columns
    if any('"' in line for _, line in data):
        split = [
            line.split(delimiter) if '"' not in line else _split(line, delimiter)
            for _, line in data
        ]
    else:
        split = [line.split(delimiter) for _, line in data]
    notes: dict[int, list[str]] = {}  # row index → problems, in file order at the end
    refused: set[int] = set()

    def note(n: int, message: str, refuse: bool = True) -> None:
        notes.setdefault(n, []).append(message)
        if refuse:
            refused.add(n)

    odd = [n for n, cells in enumerate(split) if cells is None or len(cells) != width]
    for n in odd:
        cells = split[n]
        if cells is None:
            note(n, "a quote does not close (one record per line)")
        elif len(cells) < width or any(c.strip() for c in cells[width:]):
            note(n, f"{len(cells)} cells; the header has {width} columns")
    ok = [n for n in range(len(split)) if n not in refused] if refused else range(len(split))
    good = [split[n] for n in ok] if refused else split

    values = []
    for col in columns:
        cells = [r[col.index] for r in good]
        vals = _fast(cells, col)
        for i in [i for i, v in enumerate(vals) if v is _MISS]:
            try:
                vals[i] = _cell(cells[i], col, delimiter)
            except _CellError as exc:
                vals[i] = None
                note(ok[i], f"column {col.raw}: {exc}")
        values.append(vals)
    names = [c.name for c in columns]
    for group in CSV_SCHEMAS[header.kind]["required"]:
        present = [(j, c.raw) for j, c in enumerate(columns) if c.name in group]
        if len(present) == 1:
            message = f"column {present[0][1]}: empty; a value is required"
        else:
            message = f"columns {' and '.join(raw for _, raw in present)}: empty; one is required"
        empty = set.intersection(
            *({i for i, v in enumerate(values[j]) if v is None} for j, _ in present)
        )
        for i in sorted(empty):
            if ok[i] not in refused:
                note(ok[i], message)

    rows = list(zip(*values, strict=True))
    valid = [i for i in range(len(rows)) if ok[i] not in refused] if refused else range(len(rows))
    first_seen = dict(zip([rows[i] for i in reversed(valid)], reversed(valid), strict=True))
    keep = [i for i in valid if first_seen[rows[i]] == i]
    if len(keep) < len(valid):
        for i in valid:
            if first_seen[rows[i]] != i:
                note(ok[i], f"duplicates row {ok[first_seen[rows[i]]] + 1}: kept once", False)
    post = _POST[header.kind]
    if header.kind == "decode" and "tokens_per_s" not in names:
        post = None
    ds.rows = [dict(zip(names, rows[i], strict=True)) for i in keep]
    if post is not None:
        for i, row in zip(keep, ds.rows, strict=True):
            message = post(row)
            if message:
                note(ok[i], message, refuse=False)

    first = []
    for n in sorted(notes):
        where = f"row {n + 1} (line {data[n][0]})"
        for message in notes[n]:
            ds.problem(where, message)
            if n in refused and len(first) < FIRST_PROBLEMS:
                first.append(f"{where}: {message}")
    return first, len(refused)


# --- per-kind rows ---------------------------------------------------------------------------


def _post_decode(row: dict) -> str | None:
    step, tps, batch = row.get("step_ms"), row.get("tokens_per_s"), row["batch"]
    if step is None:
        row["step_ms"] = batch / tps * 1000.0
        return None
    if tps is None:
        return None
    implied = batch / tps * 1000.0
    off = abs(step - implied) / step
    if off <= 0.05:
        return None
    per_seq = 1000.0 / tps
    why = (
        " (is tokens_per_s per sequence? it is the aggregate over the batch)"
        if batch > 1 and abs(step - per_seq) / step <= 0.05
        else ""
    )
    return (
        f"step_ms {step:g} and tokens_per_s {tps:g} disagree by {off:.0%}: batch / tokens_per_s "
        f"= {implied:.4g} ms{why}; step_ms is used"
    )


def _post_launch(row: dict) -> str | None:
    if row["graph_ms"] > row["eager_ms"]:
        return (
            f"graph_ms {row['graph_ms']:g} is more than eager_ms {row['eager_ms']:g}: a graph "
            "replay should be faster than launching one by one; row kept"
        )
    return None


def _post_cold(row: dict) -> str | None:
    row["item"], row["part"] = row["item"]
    row["name"] = COLD_ITEMS[str(row["item"])]
    return None


def _post_bandwidth(row: dict) -> str | None:
    computed = row["bytes"] / row["ms"] / 1e6
    given = row.get("gb_s")
    row["gb_s"] = computed
    if given is None:
        return None
    off = abs(given - computed) / computed
    if off <= 0.02:
        row["gb_s"] = given
        return None
    gib = abs(given * 2**30 / 1e9 - computed) / computed <= 0.02
    return (
        f"gb_s {given:g} disagrees with bytes / ms = {computed:.5g} GB/s by {off:.0%}"
        f"{' (is it GiB/s?)' if gib else ''}; the computed value is used"
    )


def _post_none(row: dict) -> str | None:
    return None


_POST = {
    "decode": _post_decode,
    "launch": _post_launch,
    "cold_start": _post_cold,
    "request": _post_none,
    "bandwidth": _post_bandwidth,
    "h2d": _post_bandwidth,
}


def _conditions(ds: Dataset) -> None:
    for key in ("model", "gpus", "context_tokens", "prompt_tokens", "output_tokens", "dtype"):
        if key not in ds.rows[0]:
            continue
        values = {row[key] for row in ds.rows if row[key] is not None}
        if len(values) == 1:
            ds.conditions[key] = values.pop()


# --- figures ---------------------------------------------------------------------------------


def _figures_decode(ds: Dataset) -> None:
    steps = [r["step_ms"] for r in ds.rows]
    modes = {r.get("cuda_graphs") for r in ds.rows}
    ds.figures.update(
        points=len(ds.rows),
        batches=sorted({r["batch"] for r in ds.rows}),
        min_step_ms=min(steps),
        max_step_ms=max(steps),
        graph_modes=([None] if None in modes else []) + sorted(m for m in modes if m),
    )


def _figures_launch(ds: Dataset) -> None:
    tau = [(r["eager_ms"] - r["graph_ms"]) / r["kernels"] * 1000.0 for r in ds.rows]
    ds.figures.update(points=len(ds.rows), tau_us_naive=statistics.median(tau))


def _figures_cold(ds: Dataset) -> None:
    f = ds.figures
    f["points"] = len(ds.rows)
    by: dict = {}
    for r in ds.rows:
        by.setdefault((r["item"], r["part"]), []).append(r["seconds"])
    for item in range(1, 5):
        if (item, None) in by:
            f[f"item{item}_s"] = statistics.fmean(by[(item, None)])
            f[f"item{item}_n"] = len(by[(item, None)])
    parts = {p: by[(5, p)] for p in ("compile", "capture") if (5, p) in by}
    for p, values in parts.items():
        f[f"{p}_s"] = statistics.fmean(values)
    if (5, None) in by:
        f["item5_s"] = statistics.fmean(by[(5, None)])
        f["item5_n"] = len(by[(5, None)])
        if parts:
            ds.problem(
                "item 5",
                "given whole and as compile/capture parts: the whole is used for item5_s",
            )
    elif parts:
        f["item5_s"] = sum(f[f"{p}_s"] for p in parts)
        f["item5_n"] = max(len(v) for v in parts.values())
        if len(parts) == 1:
            (have,) = parts
            lack = "capture" if have == "compile" else "compile"
            ds.problem("item 5", f"only {have} is given, no {lack}: item5_s is {have} alone")
    if all(f"item{i}_s" in f for i in range(1, 6)):
        f["total_s"] = sum(f[f"item{i}_s"] for i in range(1, 6))


def _figures_request(ds: Dataset) -> None:
    ds.figures.update(
        points=len(ds.rows), concurrencies=sorted({r["concurrency"] for r in ds.rows})
    )


def _figures_bandwidth(ds: Dataset) -> None:
    rates = [r["gb_s"] for r in ds.rows]
    ds.figures.update(
        points=len(ds.rows), max_gb_s=max(rates), median_gb_s=statistics.median(rates)
    )


def _figures_h2d(ds: Dataset) -> None:
    ds.figures["points"] = len(ds.rows)
    for mode in ("pinned", "pageable"):
        rates = [r["gb_s"] for r in ds.rows if r["mode"] == mode]
        if rates:
            ds.figures[f"{mode}_gb_s"] = statistics.median(rates)


_FIGURES = {
    "decode": _figures_decode,
    "launch": _figures_launch,
    "cold_start": _figures_cold,
    "request": _figures_request,
    "bandwidth": _figures_bandwidth,
    "h2d": _figures_h2d,
}


#: how this module's formats are recognised and read (:mod:`model.readers.registry`)
READERS = (
    Reader(
        name="our_csv",
        stage="csv",
        order=20,
        formats=tuple(f"{kind}_csv" for kind in CSV_SCHEMAS),
        recognise=lambda text: True,
        read=lambda name, text: read_csv(text, name),
        accepted="our CSVs (decode sweep, launch micro-benchmark, cold-start items, request "
        "latency, capture-kit bandwidth and host-to-device)",
        shown=10,
    ),
)
