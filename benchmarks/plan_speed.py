"""Speed of the plan (issue 43: the default model across every hardware preset within 15 s cold
and 1 s cached on this machine).

- cold, the command line: ``python -m whatif plan --json`` in a fresh interpreter (imports, a
  process per CPU, every capacity search computed);
- cold, one process: :func:`model.plan.plan` with the module caches empty, one job after another;
- cached, the page: every preset's row through :func:`ui.serving_worker.plan_row` a second time
  (the rows the first pass left in the server's cache; the first pass runs inline here);
- cached, one process: :func:`model.plan.plan` again in the same process (the capacity searches
  and one-run checks memoised by the Serving lens's caches).

    .venv/bin/python -m benchmarks.plan_speed
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _wall(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    cli = _wall(
        lambda: subprocess.run(
            [sys.executable, "-m", "whatif", "plan", "--json"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
    )
    print(f"cold, whatif plan --json ({os.cpu_count()} CPUs): {cli:.2f} s")

    from model import plan, serving
    from model.overrides import resolve

    s = resolve([], strict=True)[0]
    for cache in (serving._MAX_RATE, serving._SWEEPS, serving._MEETS):
        cache.clear()
    one = _wall(lambda: plan.plan(s))
    print(f"cold, one process: {one:.2f} s")
    again = _wall(lambda: plan.plan(s))
    print(f"cached, one process (the Serving lens's caches): {again:.2f} s")

    os.environ["WHATIF_SERVING_INLINE"] = "1"
    from ui import serving_worker

    jobs = plan.jobs(s, plan.target_rate(s), plan.prices(None, s))
    for job in jobs:
        serving_worker.plan_row(job, "bench")
    page = _wall(lambda: [serving_worker.plan_row(job, "bench") for job in jobs])
    print(f"cached, the page's rows ({len(jobs)} presets): {page * 1000:.1f} ms")


if __name__ == "__main__":
    main()
