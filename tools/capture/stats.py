"""The capture kit's arithmetic: repeat statistics, bandwidth bytes, sizes from the command line.

Pure standard library (no torch, no numpy), so that it is importable and testable on any
machine. Times are milliseconds, sizes bytes, bandwidths decimal GB/s (1 GB = 1e9 bytes, as the
app counts).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

GB = 1e9
KIB, MIB, GIB = 2**10, 2**20, 2**30

#: bytes per element of the dtypes the bandwidth sweep offers
DTYPE_BYTES: dict[str, int] = {"bf16": 2, "fp16": 2, "fp32": 4}

#: the default weight matrix: Llama-3 70B's MLP projection, 8192 × 28672 bf16 = 0.47 GB, many
#: times any L2 (H100/H200 50 MB, B200 126 MB)
DEFAULT_MATRIX = (8192, 28672)
DEFAULT_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
DEFAULT_KERNELS = (10, 100, 1000)
DEFAULT_H2D_SIZES = (256 * MIB, GIB)
QUICK_H2D_SIZES = (256 * MIB,)


@dataclass(frozen=True)
class Summary:
    """Statistics of one set of repeats. Quartiles use the inclusive (linear) method, numpy's
    default: for 1, 2, 3, 4 they are 1.75 and 3.25."""

    n: int
    median: float
    q1: float
    q3: float
    low: float
    high: float

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1


def summarize(samples) -> Summary:
    """Median, quartiles and range of repeated measurements (non-finite values are dropped)."""
    values = sorted(float(v) for v in samples if v is not None and math.isfinite(v))
    if not values:
        raise ValueError("no finite samples")
    med = statistics.median(values)
    if len(values) == 1:
        q1 = q3 = values[0]
    else:
        q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return Summary(len(values), med, q1, q3, values[0], values[-1])


def gb_s(nbytes: float, ms: float) -> float:
    """Decimal GB/s of ``nbytes`` moved in ``ms`` milliseconds (NaN for a zero time)."""
    return nbytes / (ms * 1e-3) / GB if ms > 0 else math.nan


def matvec_bytes(rows: int, cols: int, batch: int, dtype: str = "bf16") -> int:
    """Bytes a decode-like ``y = x @ W.T`` moves at least once: the weight W (rows × cols), the
    activation x read (batch × cols) and the output y written (batch × rows)."""
    e = DTYPE_BYTES[dtype]
    return e * (rows * cols + batch * cols + batch * rows)


def round_robin_copies(weight_bytes: int, free_bytes: int | None = None, target: int = 2 * GIB):
    """How many distinct weight matrices the sweep cycles through so that L2 never serves a
    repeat: at least 2 and together at least ``target`` bytes, at most 16, and no more than
    half of ``free_bytes`` (GPU memory free) allows (at least 1)."""
    n = max(2, math.ceil(target / max(weight_bytes, 1)))
    n = min(n, 16)
    if free_bytes is not None:
        n = min(n, max(1, int(free_bytes * 0.5 // max(weight_bytes, 1))))
    return n


def l2_warning(weight_bytes: int, l2_bytes: int | None) -> str | None:
    """A warning when the weight matrix is not far larger than L2 (less than 8×)."""
    if l2_bytes and weight_bytes < 8 * l2_bytes:
        return (
            f"the weight matrix ({weight_bytes / 1e6:.0f} MB) is less than 8× L2 "
            f"({l2_bytes / 1e6:.0f} MB): L2 may serve part of it and overstate bandwidth"
        )
    return None


def launch_us(kernels: int, eager_ms: float, graph_ms: float) -> float:
    """CPU cost of one eager launch τ [µs]: (eager − graph) / kernels. The graph replay runs the
    same kernels without the CPU in the loop, so the difference is what launching costs."""
    return (eager_ms - graph_ms) / kernels * 1e3


_SUFFIXES = {
    "": 1,
    "B": 1,
    "K": KIB,
    "KIB": KIB,
    "M": MIB,
    "MIB": MIB,
    "G": GIB,
    "GIB": GIB,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
}


def parse_size(text: str) -> int:
    """Bytes from ``256M``, ``1G``, ``512MiB``, ``2GB``, ``1048576``. K/M/G and KiB/MiB/GiB are
    binary (1024-based); KB/MB/GB decimal. Raises ValueError with what is accepted."""
    t = text.strip().upper().replace(" ", "")
    num = t.rstrip("KMGIB")
    suffix = t[len(num) :]
    try:
        value = float(num)
    except ValueError:
        value = math.nan
    if suffix not in _SUFFIXES or not math.isfinite(value) or value <= 0:
        raise ValueError(
            f"bad size {text!r}: a positive number with an optional K, M, G (KiB, MiB, GiB) "
            "or KB, MB, GB suffix, e.g. 256M or 1G"
        )
    nbytes = int(round(value * _SUFFIXES[suffix]))
    if nbytes < 1:
        raise ValueError(f"bad size {text!r}: less than one byte")
    return nbytes


def parse_sizes(text: str) -> list[int]:
    """Comma-separated sizes (see :func:`parse_size`)."""
    sizes = [parse_size(part) for part in text.split(",") if part.strip()]
    if not sizes:
        raise ValueError("no sizes given")
    return sizes


def parse_ints(text: str, low: int = 1, high: int = 1_000_000) -> list[int]:
    """Comma-separated integers within [low, high], e.g. ``1,2,4,8``."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            value = int(part)
        except ValueError:
            raise ValueError(f"not an integer: {part!r}") from None
        if not low <= value <= high:
            raise ValueError(f"{value} is outside {low}–{high}")
        out.append(value)
    if not out:
        raise ValueError("no numbers given")
    return out


def parse_matrix(text: str) -> tuple[int, int]:
    """``ROWSxCOLS``, e.g. ``8192x28672``."""
    parts = text.lower().replace("×", "x").split("x")
    try:
        rows, cols = (int(p) for p in parts)
    except ValueError:
        raise ValueError(f"bad matrix {text!r}: ROWSxCOLS, e.g. 8192x28672") from None
    if rows < 1 or cols < 1:
        raise ValueError(f"bad matrix {text!r}: both sides at least 1")
    return rows, cols
