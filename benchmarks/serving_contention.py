"""Does one session's Serving computation slow another session's page? (issue 19)

Two AppTest sessions in one process, as two browser tabs share one Streamlit server: session B
re-runs the Roofline page with a changed batch, timed; meanwhile session A opens the Serving
page for new scenarios (each a fresh computation of the whole lens). Reported: B's median and
worst script run alone, while A computes in the worker process (the app's way), and while A
computes in its own thread (``WHATIF_SERVING_INLINE=1``, what the worker avoids).

    .venv/bin/python -m benchmarks.serving_contention [KEY=VALUE ...]

Extra ``KEY=VALUE`` pairs join session A's links (``speculative=draft
num_speculative_tokens=16``: the heaviest a lever can make A's computation).
"""

from __future__ import annotations

import os
import statistics
import threading
import time

from streamlit.testing.v1 import AppTest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def page(name: str) -> AppTest:
    return AppTest.from_file(os.path.join(ROOT, "pages", name), default_timeout=300)


def b_runs(n: int) -> list[float]:
    at = page("1_Roofline.py")
    at.run()
    out = []
    for i in range(n):
        at.query_params["batch"] = str(2 + i % 30)
        t = time.perf_counter()
        at.run()
        out.append(time.perf_counter() - t)
    return out


EXTRA: list[tuple[str, str]] = []  #: the command line's KEY=VALUE pairs for session A


def a_loop(stop: threading.Event, seed0: int) -> int:
    done = 0
    while not stop.is_set():
        at = page("2_Serving.py")
        at.query_params["request_rate"] = "6"
        for key, value in EXTRA:
            at.query_params[key] = value
        at.query_params["seed"] = str(seed0 + done)
        at.run()
        done += 1
    return done


def measure(label: str, busy: bool, seed0: int, n: int = 40) -> None:
    stop = threading.Event()
    count = [0]
    th = None
    if busy:
        th = threading.Thread(target=lambda: count.__setitem__(0, a_loop(stop, seed0)))
        th.start()
        time.sleep(0.5)
    runs = b_runs(n)
    stop.set()
    if th:
        th.join()
    print(
        f"{label:<44} Roofline run median {statistics.median(runs) * 1000:6.0f} ms, "
        f"worst {max(runs) * 1000:6.0f} ms"
        + (f"  (A computed {count[0]} scenarios)" if busy else "")
    )


if __name__ == "__main__":
    import sys

    EXTRA.extend(tuple(a.split("=", 1)) for a in sys.argv[1:])
    measure("B alone", False, 0)
    measure("B while A computes in the worker", True, 1000)
    os.environ["WHATIF_SERVING_INLINE"] = "1"
    measure("B while A computes in its own thread", True, 2000)
