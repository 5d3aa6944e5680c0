"""Request traces for replay (SPEC 4.4, Scale to zero): arrival times and, where the file has
them, prompt and output tokens per request.

Three CSV formats, recognised from the header (case-insensitive; spaces, underscores, quotes and a
UTF-8 byte-order mark around the names do not matter; columns may come in any order):

- **plain** — ``arrival_s[,input_tokens,output_tokens]``: seconds from the start (any finite
  number ≥ 0, at most :data:`MAX_ARRIVAL_S`), whole token counts ≥ 0.
- **azure** — the Azure LLM inference traces (Azure/AzurePublicDataset, 2023 and 2024):
  ``TIMESTAMP,ContextTokens,GeneratedTokens`` with absolute timestamps such as
  ``2023-11-16 18:15:46.6805900``. Seven fractional digits are more than Python's
  ``datetime.fromisoformat`` takes, so the column is parsed by pandas' vectorised ISO 8601
  parser, which keeps nanoseconds (up to 9 digits; a ``T`` separator, no fraction and UTC
  offsets are accepted too — mixed offsets are converted to UTC).
- **burstgpt** — HPMLL/BurstGPT: ``Timestamp,[Session ID,Elapsed time,]Model,Request tokens,
  Response tokens,Total tokens,Log Type`` with relative seconds. A response of 0 tokens (a failed
  request in BurstGPT) is kept as a request with 0 output tokens, with a notice.

A fourth, JSON Lines with prefix block ids (Mooncake's traces; :mod:`model.readers.mooncake`),
is recognised by its first character (``{``).

Arrivals are returned sorted, in seconds from the first request (which is 0.0; a plain or
BurstGPT file whose first request is later says so in a notice). Unsorted rows and requests at
the same instant are legitimate: they are sorted (stably, tokens with their request), with a
notice.

Bad input (SPEC section 6). The whole file is refused, as a :class:`ScenarioError` keyed by the file
name, when it is empty, binary or not UTF-8, larger than allowed, has only a header, has a header
that is none of the three (the message lists them), or keeps no row. Single rows are refused —
counted in ``rows_refused``, listed in ``problems`` by line (at most
:data:`~model.readers.measurements.MAX_PROBLEMS`, then a count of the rest), the rest kept — for an
empty, non-numeric, NaN, infinite or negative value, a timestamp that does not parse, a token count
that is not a whole number or is above :data:`MAX_TOKENS`, an arrival above :data:`MAX_ARRIVAL_S`
(an absolute timestamp that far from the trace's median: a typo'd year), a line with more fields
than the header, and a value under a header column without a name (trailing commas). Blank lines (or
lines of only commas) are skipped with a notice. More than ``max_rows`` rows: the first ``max_rows``
are used and a notice says how many were not read; the rest is never parsed. Every notice and
problem is plain text: a caller shows it as text, never as HTML.

Speed: one ``pandas.read_csv`` call with explicit dtypes (C parser), then numpy; no Python loop
per row. Measured on the 2-core development machine (Python 3.11, pandas 3.1, numpy 2.4) with
:func:`read_trace_file`, 1,000,000 rows: plain with tokens 0.25–0.35 s, BurstGPT with the session
columns (8 columns, 49 MB) 0.9 s, Azure 1.5 s (its text timestamps are most of it); ``summary()``
0.05 s. A file with a non-numeric cell is read a second time with the number columns' types
inferred, so that each bad cell can be named: 0.8–0.9 s for 1 M plain rows.
"""

from __future__ import annotations

import codecs
import csv
import io
import math
import re
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from model.errors import ScenarioError
from model.readers.measurements import MAX_BYTES, MAX_PROBLEMS, Problem, decode_text

MAX_TRACE_ROWS = 2_000_000  #: rows read from one trace; the rest is not parsed (with a notice)
MAX_TRACE_FILE_BYTES = 300_000_000  #: :func:`read_trace_file` (the CLI); uploads: ``MAX_BYTES``
MAX_ARRIVAL_S = 1e9  #: ≈ 31.7 years: later arrivals are refused
MAX_TOKENS = 10_000_000  #: tokens of one request; more is refused

#: the accepted headers, as the refusal of an unknown header lists them
ACCEPTED_HEADERS = (
    "plain `arrival_s[,input_tokens,output_tokens]` (seconds from the start); "
    "Azure LLM inference trace `TIMESTAMP,ContextTokens,GeneratedTokens`; "
    "BurstGPT `Timestamp,[Session ID,Elapsed time,]Model,Request tokens,Response tokens,"
    "Total tokens,Log Type` (relative seconds); or the Mooncake JSON Lines format "
    '`{"timestamp": ms, "input_length": n, "output_length": n, "hash_ids": [...]}`'
)


@dataclass(frozen=True)
class _Format:
    id: str
    label: str
    time: str  # normalised column names (see _key)
    input: str
    output: str
    optional: tuple[str, ...]  # besides the three above (read, not used)
    required: tuple[str, ...]  # which of the three must be there
    absolute: bool  # absolute timestamps (dates) rather than seconds


_FORMATS = (
    _Format(
        "plain",
        "plain trace",
        "arrivals",
        "inputtokens",
        "outputtokens",
        (),
        ("arrivals",),
        False,
    ),
    _Format(
        "azure",
        "Azure LLM inference trace",
        "timestamp",
        "contexttokens",
        "generatedtokens",
        (),
        ("timestamp", "contexttokens", "generatedtokens"),
        True,
    ),
    _Format(
        "burstgpt",
        "BurstGPT trace",
        "timestamp",
        "requesttokens",
        "responsetokens",
        ("sessionid", "elapsedtime", "model", "totaltokens", "logtype"),
        ("timestamp", "requesttokens", "responsetokens"),
        False,
    ),
)


@dataclass(eq=False)
class Trace:
    """One request trace (see the module docstring)."""

    name: str
    format: str  # "plain" | "azure" | "burstgpt" | "mooncake"
    arrival_s: np.ndarray  # float64, sorted, seconds from the first request (first = 0.0)
    input_tokens: np.ndarray | None  # int64 per request, or None when the file lacks them
    output_tokens: np.ndarray | None
    rows: int  # rows read and used
    rows_refused: int
    problems: list[Problem]  # refused rows: where and why (capped, then a count of the rest)
    notices: list[str]
    span_s: float  # last − first arrival
    start: str | None  # the first absolute timestamp as ISO 8601 text (Azure), else None
    #: per request, where the file carries prefix block ids (the Mooncake format): the group of
    #: requests that share a prefix (-1: none), and how many prompt tokens of it are shared
    prefix_group: np.ndarray | None = None
    prefix_tokens: np.ndarray | None = None

    def summary(self) -> dict:
        """Plain figures for a table or JSON: ``requests``, ``span_s``, ``mean_rate_per_s``
        (requests / span; None for a zero span), ``peak_rate_per_hour`` (the most requests in
        any 3600 s window), ``rows_refused``, ``format``, ``start``, ``mean_input_tokens`` and
        ``mean_output_tokens`` (None when the file has no such column)."""
        a = self.arrival_s
        n = int(a.size)
        peak = 0
        if n:
            ends = np.searchsorted(a, a + 3600.0, side="left")
            peak = int((ends - np.arange(n)).max())
        return {
            "requests": n,
            "span_s": float(self.span_s),
            "mean_rate_per_s": n / self.span_s if self.span_s > 0 else None,
            "peak_rate_per_hour": peak,
            "rows_refused": int(self.rows_refused),
            "format": self.format,
            "start": self.start,
            "mean_input_tokens": _mean(self.input_tokens),
            "mean_output_tokens": _mean(self.output_tokens),
        }

    def scaled(self, rate_scale: float) -> Trace:
        """The same requests with the time axis divided by ``rate_scale`` (SPEC 4.4: 2 replays
        the trace at twice its rate, 0.5 at half), as a new trace."""
        try:
            scale = float(rate_scale)
        except (TypeError, ValueError):
            scale = math.nan
        if not math.isfinite(scale) or not 1e-6 <= scale <= 1e6:
            raise ScenarioError(
                "rate_scale",
                f"for a trace, a number from 0.000001 to 1,000,000; got {rate_scale!r}",
            )
        if scale == 1.0:
            return self
        return replace(self, arrival_s=self.arrival_s / scale, span_s=self.span_s / scale)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def _mean(values: np.ndarray | None) -> float | None:
    return float(values.mean()) if values is not None and values.size else None


def trace_template() -> str:
    """The plain format with a few example rows (two requests arrive together)."""
    return (
        "arrival_s,input_tokens,output_tokens\n"
        "0.0,1024,256\n"
        "0.8,512,128\n"
        "0.8,2048,64\n"
        "12.5,1200,300\n"
        "75.0,800,200\n"
    )


# -- entry points -------------------------------------------------------------------------------


def read_trace(
    name: str, data: bytes, max_rows: int = MAX_TRACE_ROWS, *, max_bytes: int = MAX_BYTES
) -> Trace:
    """A trace from an uploaded file's bytes (uploads: ``max_bytes`` =
    :data:`model.readers.measurements.MAX_BYTES`). Raises :class:`ScenarioError` keyed by
    ``name``."""
    data = bytes(data)
    _check_size(name, len(data), max_bytes)
    if len(data) <= MAX_BYTES:
        try:  # empty, binary (NUL bytes), not UTF-8: measurements' own checks
            decode_text(name, data)
        except ScenarioError as exc:
            raise ScenarioError(name, _for_traces(exc.message)) from None
    else:  # a CLI file larger than an upload: the same checks, without a copy as text
        if b"\x00" in data[:65536]:
            raise ScenarioError(name, _for_traces("a binary file"))
        decoder = codecs.getincrementaldecoder("utf-8")()
        step = 1 << 24
        for at in range(0, len(data), step):
            try:
                decoder.decode(data[at : at + step], final=at + step >= len(data))
            except UnicodeDecodeError as exc:
                where = f"byte {at + exc.start}"
                raise ScenarioError(name, _for_traces(f"not UTF-8 text ({where})")) from None
    return _parse(name, data, max_rows)


def read_trace_text(text: str, name: str, max_rows: int = MAX_TRACE_ROWS) -> Trace:
    """A trace from text already in memory (a template, a paste, a test)."""
    if "\x00" in text[:65536]:
        raise ScenarioError(name, _for_traces("a binary file"))
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ScenarioError(name, _for_traces(f"not UTF-8 text (character {exc.start})")) from None
    return _parse(name, data, max_rows)


def read_trace_file(
    path: str, max_bytes: int = MAX_TRACE_FILE_BYTES, max_rows: int = MAX_TRACE_ROWS
) -> Trace:
    """A trace file for the CLI: its size is checked before anything is read."""
    name = str(path)
    p = Path(path)
    try:
        size = p.stat().st_size
    except FileNotFoundError:
        raise ScenarioError(name, "no such file") from None
    except OSError as exc:
        raise ScenarioError(name, f"cannot be read ({exc.strerror or exc})") from None
    if not p.is_file():
        raise ScenarioError(name, "not a file; give a CSV trace file")
    _check_size(name, size, max_bytes)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ScenarioError(name, f"cannot be read ({exc.strerror or exc})") from None
    return read_trace(name, data, max_rows, max_bytes=max_bytes)


def _check_size(name: str, size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise ScenarioError(
            name,
            f"{_size(size)}; trace files of at most {_size(max_bytes)} are accepted (cut a "
            "longer trace, e.g. with `head -n 1000001`)",
        )


def _size(n: int) -> str:
    if n < 1_000_000:
        return f"{n:,} bytes"
    return f"{n / 1e6:,.0f} MB" if n % 1_000_000 == 0 else f"{n / 1e6:,.1f} MB"


def _for_traces(message: str) -> str:
    """decode_text's refusal, with what a trace must be instead of what a measurement may be."""
    head = message.split(";")[0]
    if head == "the file is empty":
        return (
            f"the file is empty; a trace is a CSV file with one of the headers {ACCEPTED_HEADERS}"
        )
    return f"{head}; a trace is a UTF-8 CSV text file with one of the headers {ACCEPTED_HEADERS}"


# -- the header ---------------------------------------------------------------------------------


def _key(column: str) -> str:
    """A column name as compared: lower case, without spaces, underscores, quotes or a BOM."""
    return re.sub(r"[\s_\"'\ufeff]+", "", column).lower()


def _find_header(name: str, data: bytes) -> tuple[int, int, str]:
    """Byte offset of the header line, its 1-based line number and its text."""
    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    n = len(data)
    while start < n and data[start] in b" \t\r\n":
        start += 1
    if start >= n:
        raise ScenarioError(name, _for_traces("the file is empty"))
    newlines = data.count(b"\n", 0, start) or data.count(b"\r", 0, start)
    end = n
    for sep in (b"\n", b"\r"):
        i = data.find(sep, start, min(n, start + 65536))
        if i != -1:
            end = min(end, i)
    raw = data[start : min(end, start + 65536)]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError(name, _for_traces("not UTF-8 text")) from None
    return start, newlines + 1, text


def _detect(name: str, header: str) -> tuple[_Format, list[str], dict[str, int]]:
    """The format of a header line, its fields, and the position of each column it names."""
    fields = next(csv.reader([header]), [])
    keys = [_key(f) for f in fields]
    while keys and not keys[-1]:  # trailing commas (a spreadsheet's empty columns)
        keys.pop()
    shown = header if len(header) <= 120 else header[:117] + "…"
    seen: dict[str, int] = {}
    for i, k in enumerate(keys):
        if k in seen:
            raise ScenarioError(
                name, f"column {fields[i].strip()!r} appears twice in the header {shown!r}"
            )
        seen[k] = i
    for fmt in _FORMATS:
        known = {fmt.time, fmt.input, fmt.output, *fmt.optional}
        if all(k in seen for k in fmt.required):
            unknown = [fields[i].strip() for k, i in seen.items() if k not in known]
            if unknown:
                listed = ", ".join(repr(u) for u in unknown[:5])
                raise ScenarioError(
                    name,
                    f"column(s) {listed} are not part of a {fmt.label}; accepted headers: "
                    f"{ACCEPTED_HEADERS}",
                )
            return fmt, fields, seen
    hint = ""
    if keys and re.fullmatch(r"[0-9.eE+-]+", keys[0]):
        hint = " (the first line must be a header)"
    elif ";" in header or "\t" in header:
        hint = " (columns must be separated by commas)"
    raise ScenarioError(
        name, f"unrecognised header {shown!r}{hint}; accepted headers: {ACCEPTED_HEADERS}"
    )


# -- reading ------------------------------------------------------------------------------------


def _read_csv(
    name: str, data: bytes, start: int, n_fields: int, dtypes: dict, nrows: int
) -> tuple[pd.DataFrame, list[tuple[int, int]]]:
    """The table below the header (header line at ``start``), and the lines (counted from the
    header as line 1) that had more fields than the header and were skipped, with their count
    of fields."""
    buffer = io.BytesIO(data)
    buffer.seek(start)
    names = [f"c{i}" for i in range(n_fields)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            frame = pd.read_csv(
                buffer,
                header=0,
                names=names,
                index_col=False,
                dtype=dtypes,
                keep_default_na=False,
                na_values=[""],
                skip_blank_lines=False,
                skipinitialspace=True,
                on_bad_lines="warn",
                nrows=nrows,
                encoding="utf-8",
                engine="c",
            )
        except UnicodeDecodeError as exc:
            raise ScenarioError(
                name, _for_traces(f"not UTF-8 text (byte {start + exc.start})")
            ) from None
        except pd.errors.ParserError as exc:
            raise ScenarioError(name, f"cannot be read as CSV: {str(exc).strip()[:200]}") from None
    skipped: list[tuple[int, int]] = []
    for w in caught:
        found = re.findall(r"Skipping line (\d+): expected \d+ fields, saw (\d+)", str(w.message))
        skipped.extend((int(line), int(saw)) for line, saw in found)
    return frame, sorted(skipped)


def _line_count(data: bytes, start: int) -> int:
    """Lines from ``start`` to the end (a last line without a line end counts)."""
    n = data.count(b"\n", start) or data.count(b"\r", start)
    if len(data) > start and data[-1:] not in (b"\n", b"\r"):
        n += 1
    return n


class _Rows:
    """Row refusals: a reason per row (the first one found), turned into problems at the end.
    Blank rows are neither kept nor refused."""

    def __init__(self, blank: np.ndarray):
        self.blank = blank
        self.reason = np.zeros(blank.size, dtype=np.int16)
        self.texts: list[tuple[str, object]] = []  # per reason: (message template, raw values)

    def refuse(self, mask: np.ndarray, message: str, values=None) -> None:
        """Refuse the rows in ``mask`` not refused yet; ``message`` may hold ``{v}``."""
        new = mask & (self.reason == 0) & ~self.blank
        if new.any():
            self.texts.append((message, values))
            self.reason[new] = len(self.texts)

    @property
    def refused(self) -> np.ndarray:
        return self.reason != 0


def _value_text(v) -> str:
    if isinstance(v, str):
        return repr(v if len(v) <= 40 else v[:37] + "…")
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:g}" if isinstance(v, float) else repr(v)


def _numbers(frame: pd.DataFrame, column: str) -> tuple[np.ndarray, np.ndarray | None]:
    """A column as float64 (NaN where empty or not a number) and, read as text, its raw cells."""
    series = frame[column]
    if pd.api.types.is_bool_dtype(series.dtype):  # "True"/"False" read as booleans: not numbers
        raw = series.astype(object).map(str).to_numpy(dtype=object)
        return np.full(len(series), np.nan), raw
    if pd.api.types.is_numeric_dtype(series.dtype):
        return series.to_numpy(dtype=np.float64, na_value=np.nan), None
    raw = series.to_numpy(dtype=object, na_value=None)
    values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    return values, raw


def _check_numbers(
    rows: _Rows,
    label: str,
    values: np.ndarray,
    raw: np.ndarray | None,
    accepted: str,
    upper: float,
    whole: bool,
) -> None:
    nan = np.isnan(values)
    if raw is None:
        rows.refuse(nan, f"{label} is empty; accepted: {accepted}")
    else:
        empty = nan & pd.isna(raw)
        rows.refuse(empty, f"{label} is empty; accepted: {accepted}")
        rows.refuse(nan, f"{label} {{v}} is not a number; accepted: {accepted}", raw)
    with np.errstate(invalid="ignore"):
        rows.refuse(np.isinf(values), f"{label} is infinite; accepted: {accepted}")
        rows.refuse(values < 0, f"{label} {{v}} is negative; accepted: {accepted}", values)
        rows.refuse(values > upper, f"{label} {{v}} is too large; accepted: {accepted}", values)
        if whole:
            rows.refuse(
                values != np.floor(values),
                f"{label} {{v}} is not a whole number; accepted: {accepted}",
                values,
            )


def _parse(name: str, data: bytes, max_rows: int) -> Trace:
    from model.readers import mooncake

    if mooncake.looks_like_mooncake(data):
        return _parse_mooncake(name, data, max_rows)
    start, header_line, header = _find_header(name, data)
    fmt, fields, position = _detect(name, header)
    n_fields = len(fields)
    col = {k: f"c{i}" for k, i in position.items()}
    time_col = col[fmt.time]
    in_col, out_col = col.get(fmt.input), col.get(fmt.output)
    used = [c for c in (time_col, in_col, out_col) if c]
    max_rows = max(1, int(max_rows))

    # fast path: numbers straight to float64; a non-numeric cell makes read_csv fail, then the
    # number columns are read again as text so that each bad cell can be named
    dtypes = {f"c{i}": object for i in range(n_fields)}
    for c in used:
        dtypes[c] = np.float64
    if fmt.absolute:
        dtypes[time_col] = str
    try:
        frame, skipped = _read_csv(name, data, start, n_fields, dtypes, max_rows + 1)
    except ValueError as exc:
        if isinstance(exc, ScenarioError):
            raise
        for c in used:  # inferred: a column of numbers is read as numbers, the others as text
            if not (fmt.absolute and c == time_col):
                dtypes.pop(c)
        frame, skipped = _read_csv(name, data, start, n_fields, dtypes, max_rows + 1)

    notices: list[str] = []
    total = _line_count(data, start) - 1  # lines below the header, blank ones included
    n_read = len(frame)
    truncated = n_read > max_rows and (
        total > max_rows + 1 or not bool(frame.iloc[max_rows:].isna().all(axis=None))
    )
    frame = frame.iloc[:max_rows]
    if truncated:
        notices.append(
            f"the trace has about {total:,} rows; only the first {max_rows:,} are used "
            f"({max(total - max_rows, 0):,} rows not read)"
        )
        wrong_fields = len(skipped)
    else:
        # exact, whatever the warnings machinery caught: lines below the header − rows read
        wrong_fields = max(total - n_read, len(skipped))

    n = len(frame)
    blank = _blank(frame, used)
    rows = _Rows(blank)
    unnamed = [f"c{i}" for i in range(len(position), n_fields) if f"c{i}" not in used]
    if unnamed:  # trailing commas in the header: those columns must stay empty
        filled = frame[unnamed].notna().any(axis=1).to_numpy()
        rows.refuse(filled, "a value under a column without a name in the header")

    time_label = fields[position[fmt.time]].strip()
    ns = None
    if fmt.absolute:
        raw_time = frame[time_col]
        stamps = _timestamps(raw_time)
        ns = stamps.to_numpy(dtype="datetime64[ns]").view(np.int64)
        bad = np.isnat(stamps.to_numpy(dtype="datetime64[ns]"))
        raw = raw_time.to_numpy(dtype=object, na_value=None)
        accepted = "a date and time like 2023-11-16 18:15:46.6805900"
        rows.refuse(bad & pd.isna(raw), f"{time_label} is empty; accepted: {accepted}")
        rows.refuse(bad, f"{time_label} {{v}} is not a date and time; accepted: {accepted}", raw)
        ok = ~rows.refused & ~blank
        if ok.any():  # a typo'd year would stretch the day to centuries
            middle = np.median(ns[ok])
            far = np.abs(ns.astype(np.float64) - middle) > MAX_ARRIVAL_S * 1e9
            rows.refuse(
                far,
                f"{time_label} {{v}} is more than {MAX_ARRIVAL_S:,.0f} s (31 years) away from the "
                "trace's other requests",
                raw,
            )
        seconds = None
    else:
        seconds, raw = _numbers(frame, time_col)
        _check_numbers(
            rows,
            time_label,
            seconds,
            raw,
            f"seconds from the start, 0 to {MAX_ARRIVAL_S:,.0f}",
            MAX_ARRIVAL_S,
            whole=False,
        )
    tokens = {}
    for key, c in ((fmt.input, in_col), (fmt.output, out_col)):
        if c is None:
            continue
        values, raw = _numbers(frame, c)
        _check_numbers(
            rows,
            fields[position[key]].strip(),
            values,
            raw,
            f"a whole number of tokens, 0 to {MAX_TOKENS:,}",
            MAX_TOKENS,
            whole=True,
        )
        tokens[key] = values

    keep = ~rows.refused & ~blank
    n_blank = int(blank.sum())
    refused_rows = int(rows.refused.sum())
    problems = _problems(rows, skipped, header_line, n_fields, wrong_fields)
    rows_refused = refused_rows + wrong_fields

    kept = int(keep.sum())
    if kept == 0:
        if n - n_blank == 0 and not wrong_fields:
            raise ScenarioError(name, f"a header ({fmt.label}) but no rows below it")
        first = "; ".join(str(p) for p in problems[:3])
        raise ScenarioError(
            name, f"no row could be used ({rows_refused:,} refused{': ' + first if first else ''})"
        )

    if fmt.absolute:
        times = ns[keep]
    else:
        times = seconds[keep]
    inputs = tokens[fmt.input][keep].astype(np.int64) if fmt.input in tokens else None
    outputs = tokens[fmt.output][keep].astype(np.int64) if fmt.output in tokens else None

    if times.size > 1 and bool(np.any(times[1:] < times[:-1])):
        order = np.argsort(times, kind="stable")
        moved = int(np.count_nonzero(order != np.arange(order.size)))
        times = times[order]
        inputs = inputs[order] if inputs is not None else None
        outputs = outputs[order] if outputs is not None else None
        notices.append(f"rows were not in time order: sorted ({moved:,} rows moved)")
    same = int(np.count_nonzero(times[1:] == times[:-1])) if times.size > 1 else 0
    if same:
        notices.append(
            f"requests at the same instant as the one before them: {same:,} (kept: "
            "requests may arrive together)"
        )

    start_text = None
    if fmt.absolute:
        first_ns = int(times[0])
        arrival = (times - first_ns).astype(np.float64) / 1e9
        stamp = pd.Timestamp(first_ns, unit="ns")
        start_text = (stamp.tz_localize("UTC") if _aware(frame[time_col]) else stamp).isoformat()
    else:
        first = float(times[0])
        arrival = times - first
        if first > 0:
            notices.append(
                f"arrivals are counted from the first request, at {_value_text(first)} s in the file"
            )
    if fmt.id == "burstgpt" and outputs is not None:
        failed = int(np.count_nonzero(outputs == 0))
        if failed:
            notices.append(
                f"requests with 0 response tokens (failed requests in BurstGPT): {failed:,}, "
                "kept as requests with 0 output tokens"
            )
    if n_blank:
        notices.append(f"{_count(n_blank, 'blank line')} skipped")

    arrival = np.ascontiguousarray(arrival, dtype=np.float64)
    return Trace(
        name=name,
        format=fmt.id,
        arrival_s=arrival,
        input_tokens=inputs,
        output_tokens=outputs,
        rows=kept,
        rows_refused=rows_refused,
        problems=problems,
        notices=notices,
        span_s=float(arrival[-1] - arrival[0]),
        start=start_text,
    )


def _parse_mooncake(name: str, data: bytes, max_rows: int) -> Trace:
    """A Mooncake JSON Lines trace (:mod:`model.readers.mooncake`), sorted by arrival with
    its tokens and prefixes, counted from the first request."""
    from model.readers import mooncake

    text = data.decode("utf-8-sig")
    times, inputs, outputs, group, prefix, refused, problems, notices, blank = mooncake.parse(
        name, text, max(1, int(max_rows))
    )
    order = np.argsort(times, kind="stable")
    moved = int(np.count_nonzero(order != np.arange(order.size)))
    if moved:
        notices.append(f"rows were not in time order: sorted ({moved:,} rows moved)")
    times, inputs, outputs = times[order], inputs[order], outputs[order]
    group, prefix = group[order], prefix[order]
    first = float(times[0])
    if first > 0:
        notices.append(f"arrivals are counted from the first request, at {first:g} s in the file")
    arrival = np.ascontiguousarray(times - first, dtype=np.float64)
    if blank:
        notices.append(f"{_count(blank, 'blank line')} skipped")
    if refused > len(problems):
        problems = [*problems, Problem("", f"… and {refused - len(problems):,} more refused rows")]
    return Trace(
        name=name,
        format="mooncake",
        arrival_s=arrival,
        input_tokens=inputs,
        output_tokens=outputs,
        rows=int(arrival.size),
        rows_refused=refused,
        problems=problems,
        notices=notices,
        span_s=float(arrival[-1] - arrival[0]),
        start=None,
        prefix_group=group if bool(np.any(prefix > 0)) else None,
        prefix_tokens=prefix if bool(np.any(prefix > 0)) else None,
    )


def _blank(frame: pd.DataFrame, used: list[str]) -> np.ndarray:
    """Rows with every cell empty (blank lines, or only commas): the columns read first, the
    others (text, slower) only on those rows."""
    blank = frame[used].isna().all(axis=1).to_numpy()
    others = [c for c in frame.columns if c not in used]
    if others and blank.any():
        idx = np.flatnonzero(blank)
        blank[idx] = frame.iloc[idx][others].isna().all(axis=1).to_numpy()
    return blank


def _timestamps(column: pd.Series) -> pd.Series:
    """Text timestamps to datetime64 (naive; UTC where the text has offsets), NaT where bad."""
    try:
        out = pd.to_datetime(column, format="ISO8601", errors="coerce")
    except (ValueError, TypeError):  # mixed UTC offsets, or offsets beside naive times
        out = pd.to_datetime(column, format="ISO8601", errors="coerce", utc=True)
    if not pd.api.types.is_datetime64_any_dtype(out.dtype):
        out = pd.to_datetime(column, format="ISO8601", errors="coerce", utc=True)
    if getattr(out.dt, "tz", None) is not None:
        out = out.dt.tz_convert("UTC").dt.tz_localize(None)
    return out


def _aware(column: pd.Series) -> bool:
    """Whether the first timestamp text carries a UTC offset (then ``start`` says +00:00)."""
    for v in column.head(1000):
        if isinstance(v, str) and v.strip():
            return bool(re.search(r"(Z|[+-]\d\d:?\d\d)\s*$", v.strip()))
    return False


def _problems(
    rows: _Rows, skipped: list[tuple[int, int]], header_line: int, n_fields: int, wrong_fields: int
) -> list[Problem]:
    """Problems by line, in file order: refused rows and lines with too many fields."""
    offset = header_line - 1  # skipped lines and rows count from the header as line 1
    refused = np.flatnonzero(rows.refused)
    lines = np.asarray([s for s, _ in skipped], dtype=np.int64)
    ranks = lines - 2 - np.arange(len(skipped))
    out: list[tuple[int, Problem]] = []
    for i in refused[: MAX_PROBLEMS + 1]:
        line = 2 + int(i) + int(np.searchsorted(ranks, i, side="right")) + offset
        message, values = rows.texts[rows.reason[i] - 1]
        if "{v}" in message:
            message = message.replace("{v}", _value_text(values[i]))
        out.append((line, Problem(f"line {line}", message)))
    for s, saw in skipped[: MAX_PROBLEMS + 1]:
        message = f"{saw} fields where the header has {n_fields}: the row is refused"
        out.append((s + offset, Problem(f"line {s + offset}", message)))
    out.sort(key=lambda item: item[0])
    problems = [p for _, p in out[:MAX_PROBLEMS]]
    total = len(refused) + wrong_fields
    if total > len(problems):
        problems.append(Problem("", f"… and {total - len(problems):,} more refused rows"))
    return problems
