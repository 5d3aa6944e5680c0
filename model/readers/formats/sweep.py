"""``vllm bench sweep``'s summary.csv (0.12 and later; format ``vllm_bench_json`` a row;
docs/research/issue-43-bench-formats.md)."""

from __future__ import annotations

import csv

from model.readers.formats.common import (
    MAX_RUNS,
    _number,
)
from model.readers.formats.json_list import _vllm_json_list
from model.readers.formats.serve_json import (
    _VLLM_STRINGS,
)
from model.readers.measurements import Dataset, Reader

# ----------------------------------------------------------------------------- vllm bench sweep

#: a ``vllm bench sweep`` summary.csv: one ``vllm bench serve`` result a row (pandas' CSV of
#: the run JSONs, its index first); recognised by the serve result's own columns
_SWEEP_COLUMNS = ("request_throughput", "output_throughput")


def read_sweep_csv(text: str, name: str) -> Dataset | None:
    """``vllm bench sweep``'s summary.csv as the serve results it lists (one run a row; each
    row read as its run JSON would be), or None when the CSV is not one."""
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


#: how this module's formats are recognised and read (:mod:`model.readers.registry`)
READERS = (
    Reader(
        name="sweep_csv",
        stage="csv",
        order=10,
        formats=("vllm_bench_sweep_csv",),
        recognise=lambda text: True,
        read=lambda name, text: read_sweep_csv(text, name),
        accepted="vllm bench sweep summary.json or summary.csv",
        shown=40,
    ),
)
