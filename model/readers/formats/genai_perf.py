"""GenAI-Perf's and AIPerf's exports and console tables (SPEC 4.5).

Formats (``Dataset.format``; ``kind`` in brackets):

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

"""

from __future__ import annotations

import csv
import re
from decimal import Decimal

from model.readers.formats.common import (
    MAX_RUNS,
    _figure,
    _kind_of,
    _label,
    _logical_lines,
    _mean_lengths,
    _multi_run,
    _refuse,
    _Run,
)
from model.readers.measurements import Dataset, Reader

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


GENAI = "GenAI-Perf profile_export_genai_perf.csv / .json and GenAI-Perf or AIPerf console tables"


#: how this module's formats are recognised and read (:mod:`model.readers.registry`)
READERS = (
    Reader(
        name="genai_perf_json",
        stage="json",
        order=10,
        formats=("genai_perf_json",),
        recognise=lambda v: isinstance(v, dict) and _is_gp_json(v),
        read=_genai_json,
        accepted=GENAI,
        accepted_json="GenAI-Perf profile_export_genai_perf.json",
        shown=70,
    ),
    Reader(
        name="genai_perf_csv",
        stage="text",
        order=30,
        formats=("genai_perf_csv",),
        recognise=_is_gp_csv,
        read=_genai_csv,
        accepted=GENAI,
        shown=70,
    ),
    Reader(
        name="genai_perf_console",
        stage="text",
        order=40,
        formats=("genai_perf_console", "aiperf_console"),
        recognise=_is_gp_console,
        read=_genai_console,
        accepted=GENAI,
        shown=70,
    ),
)
