"""Does one session's upload slow another session's page? (issue 22)

Two sessions in one process, as two browser tabs share one Streamlit server: session B re-runs
the Roofline page with a changed batch (AppTest), timed; meanwhile session A reads crafted
uploads, one after another, exactly as the Measurements page's uploader callback and the Scale
to zero page's trace uploader do (``ui.measure_data._import``, ``ui.serving_worker.read_file``).
The files are the kind every importer has to scan whole before refusing: a 4.9 MB single line
of ``1,1,1,…`` (a CSV of one row and 2.4 million columns) and the same bytes as a trace.

Reported: B's median and worst run alone, while A reads in the worker process (the app's way)
and while A reads in its own thread (``WHATIF_SERVING_INLINE=1``, the old way).

    .venv/bin/python -m benchmarks.upload_contention [--runs 40]
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time

from benchmarks.serving_contention import b_runs  # session B: Roofline re-runs, timed

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRAFTED = b"1," * 2_450_000  # 4.9 MB, one line


def a_loop(stop: threading.Event) -> int:
    from model.errors import ScenarioError
    from ui import serving_worker

    done = 0
    while not stop.is_set():
        for kind in ("import", "trace"):
            try:
                serving_worker.read_file(kind, f"crafted-{done}.csv", CRAFTED)
            except ScenarioError:
                pass
            done += 1
    return done


def measure(label: str, busy: bool, n: int, sessions: int = 1) -> list[float]:
    stop = threading.Event()
    counts: list[int] = []
    threads = [
        threading.Thread(target=lambda: counts.append(a_loop(stop))) for _ in range(sessions)
    ]
    if busy:
        for th in threads:
            th.start()
        time.sleep(0.5)
    runs = b_runs(n)
    stop.set()
    if busy:
        for th in threads:
            th.join()
    print(
        f"{label:<58} Roofline run median {statistics.median(runs) * 1000:6.0f} ms, "
        f"worst {max(runs) * 1000:6.0f} ms"
        + (f"  ({sum(counts)} crafted files read)" if busy else "")
    )
    return runs


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    alone = measure("B alone", False, args.runs)
    worker = measure("B while 1 session uploads, read in the worker", True, args.runs)
    three = measure("B while 3 sessions upload, read in the workers", True, args.runs, 3)
    os.environ["WHATIF_SERVING_INLINE"] = "1"
    inline = measure("B while 1 session uploads, read in its own thread", True, args.runs)
    base = statistics.median(alone)
    for name, runs in (("worker", worker), ("3 sessions, workers", three), ("inline", inline)):
        print(f"  {name:<22} median ×{statistics.median(runs) / base:.2f} of alone")
