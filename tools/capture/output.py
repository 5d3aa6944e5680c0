"""What the capture kit writes: the four CSVs in the app's upload schema and ``env.json``.

Pure standard library. The column lists below are the app's
``model.readers.measurements.CSV_SCHEMAS`` (required columns first, then optional ones; no other
columns, so the app's importer reads every one); ``tests/test_capture_kit.py`` holds them to that
schema. Repeat counts and spreads go into the ``note`` column, without commas.
"""

from __future__ import annotations

import csv
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

from tools.capture.stats import Summary, gb_s, launch_us, matvec_bytes, summarize

#: file name → (schema kind in model.readers.measurements.CSV_SCHEMAS, columns in order)
FILES: dict[str, tuple[str, tuple[str, ...]]] = {
    "launch.csv": ("launch", ("kernels", "eager_ms", "graph_ms", "note")),
    "h2d.csv": ("h2d", ("mode", "bytes", "ms", "gb_s", "note")),
    "cold_start.csv": ("cold_start", ("item", "seconds", "note")),
    "bandwidth.csv": (
        "bandwidth",
        ("batch", "bytes", "ms", "gb_s", "rows", "cols", "dtype", "note"),
    ),
}


def fmt(value, digits: int = 4) -> str:
    """One CSV cell: integers as integers, floats to ``digits`` significant digits in plain
    decimal notation (no exponent, trailing zeros dropped; the integer part is never rounded
    away: 12345.6 → 12346), None, NaN and infinities as an empty cell."""
    if value is None or isinstance(value, bool):
        return "" if value is None else str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return ""
        if value == 0:
            return "0"
        decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
        text = f"{value:.{decimals}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return "0" if text in ("-0", "") else text
    return str(value)


def _spread(s: Summary, unit: str = "ms") -> str:
    """``median of 20; IQR 0.51–0.53 ms`` (no commas: the note stays one plain cell)."""
    return f"median of {s.n}; IQR {fmt(s.q1)}–{fmt(s.q3)} {unit}"


def launch_rows(results) -> list[dict]:
    """Rows of launch.csv from ``[(kernels, eager_ms_samples, graph_ms_samples), …]``."""
    rows = []
    for kernels, eager, graph in results:
        e, g = summarize(eager), summarize(graph)
        rows.append(
            {
                "kernels": int(kernels),
                "eager_ms": e.median,
                "graph_ms": g.median,
                "note": f"eager {_spread(e)}; graph {_spread(g)}",
            }
        )
    return rows


def h2d_rows(results) -> list[dict]:
    """Rows of h2d.csv from ``[(mode, bytes, ms_samples), …]``."""
    rows = []
    for mode, nbytes, samples in results:
        s = summarize(samples)
        rows.append(
            {
                "mode": mode,
                "bytes": int(nbytes),
                "ms": s.median,
                "gb_s": gb_s(nbytes, s.median),
                "note": _spread(s),
            }
        )
    return rows


def bandwidth_rows(results, rows: int, cols: int, dtype: str, copies: int = 1) -> list[dict]:
    """Rows of bandwidth.csv from ``[(batch, ms_samples), …]`` of one weight shape."""
    out = []
    for batch, samples in results:
        s = summarize(samples)
        nbytes = matvec_bytes(rows, cols, batch, dtype)
        out.append(
            {
                "batch": int(batch),
                "bytes": nbytes,
                "ms": s.median,
                "gb_s": gb_s(nbytes, s.median),
                "rows": rows,
                "cols": cols,
                "dtype": dtype,
                "note": f"{_spread(s)}; {copies} weight copies round-robin",
            }
        )
    return out


def cold_rows(runs: list[dict]) -> list[dict]:
    """Rows of cold_start.csv from the child runs (see :mod:`tools.capture.cold`): each run a
    dict with ``python_s`` (spawn to the child's first line), ``import_s`` (``import torch``) and
    ``context_s`` (``torch.cuda.init()`` + the first tensor on the GPU, synchronised).

    process_init = python_s + import_s; cuda_context = context_s. They add up (the app sums the
    line items), so cuda_context does not repeat the import."""
    init = summarize(r["python_s"] + r["import_s"] for r in runs)
    ctx = summarize(r["context_s"] for r in runs)
    first = runs[0]
    python_s = summarize(r["python_s"] for r in runs).median
    import_s = summarize(r["import_s"] for r in runs).median
    total = summarize(r["python_s"] + r["import_s"] + r["context_s"] for r in runs).median

    def how(s: Summary) -> str:
        return f"median of {s.n} fresh processes" if s.n > 1 else "one fresh process"

    def first_run(seconds: float) -> str:
        return f"; first run {fmt(seconds)} s" if len(runs) > 1 else ""

    return [
        {
            "item": "process_init",
            "seconds": init.median,
            "note": f"{how(init)}: python start {fmt(python_s)} s + import torch {fmt(import_s)} s"
            + first_run(first["python_s"] + first["import_s"]),
        },
        {
            "item": "cuda_context",
            "seconds": ctx.median,
            "note": f"{how(ctx)}: torch.cuda.init() + first tensor on the GPU"
            f"; spawn to first tensor {fmt(total)} s" + first_run(first["context_s"]),
        },
    ]


def write_csv(path: Path, name: str, rows: list[dict]) -> Path:
    """Write ``rows`` as the CSV ``name`` (a key of :data:`FILES`) into the folder ``path``.
    Cells are formatted by :func:`fmt`; a column missing from a row is an empty cell."""
    _, columns = FILES[name]
    target = Path(path) / name
    with target.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow([fmt(row.get(c)) for c in columns])
    return target


SMI_FIELDS = (
    "index",
    "name",
    "driver_version",
    "pci.bus_id",
    "memory.total",
    "pstate",
    "persistence_mode",
    "clocks.sm",
    "clocks.mem",
    "clocks.max.sm",
    "clocks.max.mem",
    "clocks.applications.graphics",
    "power.limit",
    "temperature.gpu",
)


def parse_smi(text: str | None, fields=SMI_FIELDS) -> list[dict]:
    """GPUs from ``nvidia-smi --query-gpu=… --format=csv,noheader,nounits`` output: one dict per
    line, numbers as numbers, ``[N/A]``/``[Not Supported]`` as None. Lines that do not have one
    value per field are skipped; no text, no GPUs."""
    gpus = []
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        cells = next(csv.reader([line], skipinitialspace=True))
        if len(cells) != len(fields):
            continue
        gpu = {}
        for i, key in enumerate(fields):  # no zip(strict): the kit runs on Python 3.9 too
            cell = cells[i].strip()
            if not cell or cell.startswith("[") or cell.upper() == "N/A":
                gpu[key] = None
                continue
            try:
                number = float(cell)
                gpu[key] = int(number) if number.is_integer() and "." not in cell else number
            except ValueError:
                gpu[key] = cell
        gpus.append(gpu)
    return gpus


ENV_VARS = (
    "CUDA_VISIBLE_DEVICES",
    "CUDA_MODULE_LOADING",
    "CUDA_DEVICE_MAX_CONNECTIONS",
    "PYTORCH_CUDA_ALLOC_CONF",
    "NCCL_P2P_DISABLE",
)


def build_env(argv, torch_info: dict | None = None, smi: list[dict] | None = None, **extra) -> dict:
    """The content of env.json: command line, UTC time, Python and OS, what torch reported
    (``torch_info``; any key may be missing), nvidia-smi's view of the GPUs (``smi``; may be
    empty when nvidia-smi is absent), CUDA-related environment variables, and ``extra``."""
    info = dict(torch_info or {})
    env = {
        "command": " ".join([Path(sys.executable).name, "-m", "tools.capture", *map(str, argv)]),
        "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "torch": info.get("torch"),
        "cuda": info.get("cuda"),
        "cudnn": info.get("cudnn"),
        "driver": next(
            (g.get("driver_version") for g in smi or [] if g.get("driver_version")), None
        ),
        "gpu_count": info.get("gpu_count", len(smi or []) or None),
        "device": info.get("device"),
        "gpu": info.get("gpu"),
        "gpus_nvidia_smi": smi or [],
        "env": {k: os.environ[k] for k in ENV_VARS if k in os.environ},
    }
    for key, value in info.items():  # anything else torch_info carried (an error, say)
        env.setdefault(key, value)
    env.update(extra)
    return env


def write_json(path: Path, data: dict) -> Path:
    target = Path(path)
    target.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    return target


def app_summary(files: dict[str, list[dict]]) -> dict:
    """The figures the app's model takes, from the written rows (keys as the app names them):
    launch_us (τ, from the longest chain), h2d_gb_s (pinned, largest copy), bandwidth_gb_s at
    batch 1 and its best over the sweep, process_init_s and cuda_context_s."""
    out: dict = {}
    launch = files.get("launch.csv") or []
    if launch:
        r = max(launch, key=lambda r: r["kernels"])
        out["launch_us"] = launch_us(r["kernels"], r["eager_ms"], r["graph_ms"])
    pinned = [r for r in files.get("h2d.csv") or [] if r["mode"] == "pinned"]
    if pinned:
        out["h2d_gb_s"] = max(pinned, key=lambda r: r["bytes"])["gb_s"]
    bw = files.get("bandwidth.csv") or []
    if bw:
        out["bandwidth_gb_s_batch1"] = min(bw, key=lambda r: r["batch"])["gb_s"]
        out["bandwidth_gb_s_best"] = max(r["gb_s"] for r in bw)
    for r in files.get("cold_start.csv") or []:
        out[f"{r['item']}_s"] = r["seconds"]
    return {k: float(fmt(v)) for k, v in out.items() if fmt(v)}  # 4 significant digits
