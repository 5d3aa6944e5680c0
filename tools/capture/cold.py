"""Cold start in a fresh process: Python start, ``import torch``, CUDA context.

The parent does not import torch for this: it spawns ``python -c CHILD`` with its spawn time on
the command line, and the child reports, on one stdout line, how long the interpreter took to
reach its first line, ``import torch``, and ``torch.cuda.init()`` plus the first tensor on the
GPU (synchronised). Both sides read ``time.monotonic()``, a system-wide clock on Linux
(CLOCK_MONOTONIC), so the parent's spawn time and the child's times are comparable.

A fresh process is the only way to measure a context that is really new: in a process that has
touched the GPU, the driver is loaded and the context exists.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

MARK = "CAPTURE_COLD "

#: run as ``python -c CHILD SPAWN_TIME DEVICE``; imports nothing before ``time`` and ``sys``
CHILD = f"""\
import time, sys
t0 = time.monotonic()
import torch
t1 = time.monotonic()
torch.cuda.init()
x = torch.empty(1, device="cuda:" + sys.argv[2])
torch.cuda.synchronize(x.device)
t2 = time.monotonic()
spawn = float(sys.argv[1])
print({MARK!r} + '{{"python_s": %.6f, "import_s": %.6f, "context_s": %.6f}}'
      % (t0 - spawn, t1 - t0, t2 - t1), flush=True)
"""


def parse_child(stdout: str) -> dict:
    """The child's figures from its stdout (the last line starting with :data:`MARK`; torch
    may print warnings around it). Raises ValueError when there is none."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARK):
            data = json.loads(line[len(MARK) :])
            return {k: float(data[k]) for k in ("python_s", "import_s", "context_s")}
    raise ValueError("the child process printed no measurement")


def run_child(device: int = 0, python: str | None = None, env: dict | None = None, timeout=600):
    """One fresh process; its figures (see :func:`parse_child`). A child that fails raises
    RuntimeError with the last line it wrote to stderr."""
    spawn = time.monotonic()
    proc = subprocess.run(
        [python or sys.executable, "-c", CHILD, repr(spawn), str(int(device))],
        capture_output=True,
        text=True,
        env=env if env is not None else dict(os.environ),
        timeout=timeout,
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"the cold-start child exited with {proc.returncode}: {last}")
    return parse_child(proc.stdout)


def measure_cold_start(device: int = 0, runs: int = 3, **kwargs) -> list[dict]:
    """``runs`` fresh processes one after the other; the first one's figures come first (its
    ``import torch`` may have read from disk, the later ones from the page cache)."""
    return [run_child(device, **kwargs) for _ in range(max(1, runs))]
