"""The GPU measurements. torch is imported inside the functions only, so this module imports
(and the kit prints a clear message) where torch is missing.

Every function returns raw samples in milliseconds; :mod:`tools.capture.output` turns them into
rows. All of them run on one device, set by :func:`use_device` after the cold-start child has
run (on CUDA 12 setting a device creates its context).
"""

from __future__ import annotations

import subprocess
import time

from tools.capture.output import SMI_FIELDS, parse_smi

INSTALL_HINT = (
    "pip install -e '.[capture]' in this repository, or run it with the Python of an "
    "environment that has torch with CUDA"
)


class Unavailable(Exception):
    """No torch, or no CUDA GPU: the kit cannot measure anything here (exit status 2)."""


def load_torch():
    """torch, or :class:`Unavailable` with a one-line message."""
    try:
        import torch
    except ImportError:
        raise Unavailable(f"PyTorch is not installed: {INSTALL_HINT}") from None
    except OSError as exc:  # a torch whose CUDA libraries do not load
        raise Unavailable(f"PyTorch could not be loaded ({exc}): {INSTALL_HINT}") from None
    return torch


def check_device(index: int) -> int:
    """Fails with :class:`Unavailable` unless torch sees a CUDA GPU number ``index``; returns
    the number of GPUs it sees. Asks for the device count only, which creates no CUDA context,
    so that the cold-start child's context is the first one."""
    torch = load_torch()
    if not torch.cuda.is_available():
        build = torch.version.cuda or "a CPU-only build"
        raise Unavailable(
            f"PyTorch {torch.__version__} ({build}) sees no CUDA GPU: run this on a GPU node "
            "(check nvidia-smi and CUDA_VISIBLE_DEVICES)"
        )
    count = torch.cuda.device_count()
    if not 0 <= index < count:
        raise Unavailable(f"--device {index}: this node has {count} visible GPU(s), 0–{count - 1}")
    return count


def use_device(index: int):
    """Make GPU ``index`` current (creates its context); returns the torch.device."""
    torch = load_torch()
    torch.cuda.set_device(index)
    return torch.device("cuda", index)


def nvidia_smi() -> list[dict]:
    """nvidia-smi's view of the GPUs (clocks, power limit, driver), or [] without nvidia-smi."""
    try:
        proc = subprocess.run(
            ["nvidia-smi", f"--query-gpu={','.join(SMI_FIELDS)}", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    return parse_smi(proc.stdout) if proc.returncode == 0 else []


def device_info(index: int) -> dict:
    """What torch says about the build and the GPU; a field torch lacks is left out."""
    torch = load_torch()
    info = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "gpu_count": torch.cuda.device_count(),
        "device": index,
    }
    try:
        info["cudnn"] = torch.backends.cudnn.version()
    except Exception:  # optional
        pass
    p = torch.cuda.get_device_properties(index)
    gpu = {"name": p.name, "capability": f"{p.major}.{p.minor}", "memory_bytes": p.total_memory}
    for attr, key in (
        ("multi_processor_count", "sms"),
        ("L2_cache_size", "l2_bytes"),
        ("uuid", "uuid"),
    ):
        if hasattr(p, attr):
            gpu[key] = str(getattr(p, attr)) if attr == "uuid" else getattr(p, attr)
    info["gpu"] = gpu
    return info


def _sync_time(torch, fn) -> float:
    """Milliseconds between two CUDA events around ``fn()`` on an idle stream."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def measure_launch(device, kernels, repeats: int) -> list[tuple[int, list[float], list[float]]]:
    """A chain of ``n`` empty kernels launched one by one (eager) against one replay of the same
    chain captured as a CUDA graph, for each ``n`` in ``kernels``.

    The kernel is ``x.zero_()`` on a one-element tensor: one fill kernel that does nothing worth
    timing on the GPU (about a microsecond), in place (no allocation), with no scalar argument to
    wrap or type-promote, so the time is the launch path (Python, the dispatcher, the CUDA
    driver) and not the work. Each chain starts on an idle stream; the GPU then waits for every
    launch, so the events around it measure how fast the CPU issues kernels."""
    torch = load_torch()
    x = torch.zeros(1, device=device)
    out = []
    for n in kernels:

        def chain(n=n):
            for _ in range(n):
                x.zero_()

        # warm up on a side stream, as torch asks before a capture
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            for _ in range(3):
                chain()
        torch.cuda.current_stream(device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            chain()
        for _ in range(3):
            graph.replay()  # the first replay uploads the graph
        eager = [_sync_time(torch, chain) for _ in range(repeats)]
        replay = [_sync_time(torch, graph.replay) for _ in range(repeats)]
        out.append((int(n), eager, replay))
        del graph
    return out


def measure_h2d(device, sizes, repeats: int) -> list[tuple[str, int, list[float]]]:
    """Host-to-device copies of each size from pinned (page-locked) and pageable host memory.

    Wall-clock time from an idle GPU to the copy's end (``copy_`` then synchronise), which is
    what a weight loader waits for; a pageable copy is staged by the driver through a pinned
    buffer, which is what makes it slower. The host buffer is written first so its pages exist;
    one warm-up copy precedes the repeats."""
    torch = load_torch()
    out = []
    for nbytes in sizes:
        dst = torch.empty(nbytes, dtype=torch.uint8, device=device)
        pageable = torch.ones(nbytes, dtype=torch.uint8)
        for mode in ("pinned", "pageable"):
            src = pageable.pin_memory() if mode == "pinned" else pageable
            samples = []
            for i in range(repeats + 1):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                dst.copy_(src, non_blocking=True)
                torch.cuda.synchronize()
                if i:  # the first copy is the warm-up
                    samples.append((time.perf_counter() - t0) * 1e3)
            out.append((mode, int(nbytes), samples))
            del src
        del dst, pageable
        torch.cuda.empty_cache()
    return out


def measure_bandwidth(device, rows: int, cols: int, dtype: str, batches, repeats: int, copies):
    """A decode-like product ``y = x @ W.T`` (``F.linear``, the kernel a decode step's linear
    layers run) of a (rows × cols) weight with ``batch`` activations, for each batch.

    ``copies`` distinct weight matrices are used round-robin so that L2 never serves a repeat.
    Each product is timed on the GPU by its own pair of events; the repeats are queued without
    synchronising in between, so the GPU never waits for the CPU. Returns
    ``[(batch, ms_samples), …]``."""
    torch = load_torch()
    import torch.nn.functional as F

    dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[dtype]
    weights = [
        torch.empty(rows, cols, dtype=dt, device=device).normal_(0, 0.02) for _ in range(copies)
    ]
    out = []
    for batch in batches:
        x = torch.randn(batch, cols, dtype=dt, device=device)
        for w in weights:  # warm-up: cuBLAS picks its kernel, clocks ramp
            F.linear(x, w)
        events = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(repeats)
        ]
        torch.cuda.synchronize()
        for i, (start, end) in enumerate(events):
            start.record()
            F.linear(x, weights[i % copies])
            end.record()
        torch.cuda.synchronize()
        out.append((int(batch), [s.elapsed_time(e) for s, e in events]))
        del x
    del weights
    torch.cuda.empty_cache()
    return out


def free_bytes(device) -> int | None:
    """Free GPU memory in bytes, or None when torch cannot say."""
    torch = load_torch()
    try:
        return int(torch.cuda.mem_get_info(device)[0])
    except Exception:  # optional
        return None
