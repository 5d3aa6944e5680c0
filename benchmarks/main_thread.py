"""How long the browser's main thread works between a widget change and the headline metric.

    .venv/bin/python benchmarks/main_thread.py [--changes 10] [--only "Roofline"]
        [--compare base=/path/to/another/checkout]

Why it exists (issue 22): on a lens page the renderer's main thread is busy for nearly all of
the time between the Enter and the headline's new value (React's commits, styles, layout,
paint), so work taken off it shows up in the headline almost one for one, while the
headline's own time swings ±15 % between runs on a 2-core machine. This script records a
Chromium trace around each change of the browser_speed cases (one tab per page and copy,
round-robin) and reports, per page, the median over the changes of

* ``metric``: ms from the Enter to the headline metric's new text (as browser_speed measures
  it, here under tracing, so a little slower);
* ``busy``: ms of that window the renderer's main thread spent in top-level tasks (wall; a
  task that runs past the headline counts up to it);
* ``cpu``: the same tasks' thread CPU time (pro rata for such a task).

Read ``busy`` and ``cpu`` against the minimal page and across copies (``--compare``). A
benchmark, not a test.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import browser_speed as bs  # noqa: E402

CATEGORIES = [
    "devtools.timeline",
    "blink.user_timing",
    "toplevel",
    "disabled-by-default-devtools.timeline",
]
TASKS = ("RunTask", "ThreadControllerImpl::RunTask")
ARM = "([m]) => { performance.mark('bench-arm'); window.__bench.arm(m, 300, 60000); }"


def one_change(browser, pg, case: bs.Case, step: int) -> tuple[float, float, float]:
    """(metric ms, busy ms, cpu ms) of one change of ``case`` in tab ``pg``."""
    browser.start_tracing(page=pg, categories=CATEGORIES)
    bs.make_change(pg, case, step, arm=lambda: pg.evaluate(ARM, [case.metric]))
    res = pg.evaluate("() => window.__bench.pending")
    events = json.loads(browser.stop_tracing())["traceEvents"]
    arm = next(e for e in events if e.get("name") == "bench-arm")
    t0, t1 = arm["ts"], arm["ts"] + res["metric"] * 1000
    tasks = sorted(
        (
            e
            for e in events
            if e.get("ph") == "X"
            and (e.get("pid"), e.get("tid")) == (arm["pid"], arm["tid"])
            and e.get("name") in TASKS
            and t0 <= e["ts"] <= t1
        ),
        key=lambda e: e["ts"],
    )
    busy = cpu = end = 0
    for e in tasks:  # top-level tasks only (one nested in a counted task is inside it),
        if e["ts"] < end:  # the part of each inside the window (CPU pro rata)
            continue
        dur = e.get("dur", 0)
        end = e["ts"] + dur
        inside = max(0, min(end, t1) - e["ts"])
        busy += inside
        cpu += e.get("tdur", 0) * (inside / dur if dur else 0)
    pg.evaluate("() => window.__bench.settled(300, 60000)")
    return res["metric"], busy / 1000, cpu / 1000


def main() -> int:
    args = bs.tool_arguments(__doc__.splitlines()[0])
    cases = bs.pick_cases(bs.default_cases(), args.only)
    with bs.served_browser("main-thread-", bs.compare_dirs(args.compare)) as (servers, browser):
        tabs = []
        for case in cases:
            for label, srv in servers.items():
                if (case.server == "minimal") != (label == "minimal"):
                    continue
                _, pg = bs.open_case(browser, srv.base, case)
                name = case.name if label in ("app", "minimal") else f"{case.name} [{label}]"
                tabs.append((name, case, pg, []))
        for step in range(args.changes):
            for _, case, pg, out in tabs:
                out.append(one_change(browser, pg, case, step))
        print(
            f"{'page · scenario':<52}{'metric ms':>10}{'busy ms':>9}{'cpu ms':>8}   (median of {args.changes} changes)"
        )
        for name, _, _, out in tabs:
            cols = [statistics.median(x[i] for x in out) for i in range(3)]
            print(
                f"{name:<52}"
                + "".join(f"{c:>{w}.1f}" for c, w in zip(cols, (10, 9, 8), strict=True))
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
