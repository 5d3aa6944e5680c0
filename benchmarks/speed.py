"""Both speed benchmarks in one run, side by side: the server side (AppTest, ``page_speed``)
and Chromium (``browser_speed``), each against the minimal page.

    .venv/bin/python benchmarks/speed.py [--runs 12] [--rounds 10] [--json FILE]

About two to three minutes on two cores. The requirement these check: every page's server run
≤ 1.5× the minimal page's, and in Chromium the headline metric updates within 2× the minimal
page's time; the verdict lines at the end say which cases miss. The server side is read two
ways: the script run alone (AppTest, ``page_speed``) and the live server's whole run for the
change including the ``gc.collect(2)`` Streamlit does after every run (``browser_speed``'s
server column), which is what the server is busy with and what the browser waits for.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import browser_speed  # noqa: E402
import page_speed  # noqa: E402

SERVER_LIMIT = 1.5
BROWSER_LIMIT = 2.0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=12, help="server-side runs per page")
    parser.add_argument("--rounds", type=int, default=10, help="browser changes per page")
    parser.add_argument("--quiet-ms", type=int, default=400)
    parser.add_argument("--json", help="also write the raw timings to this file")
    parser.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="LABEL=DIR",
        help="browser side: also serve the app from DIR (another checkout) in the same rounds",
    )
    args = parser.parse_args()
    started = time.monotonic()

    server_out = io.StringIO()
    server = page_speed.run(args.runs, "change", core=False, out=server_out)
    server_s = time.monotonic() - started
    browser_out = io.StringIO()
    compare = dict(item.split("=", 1) for item in args.compare)
    browser = browser_speed.run(args.rounds, args.quiet_ms, out=browser_out, compare=compare)
    total_s = time.monotonic() - started

    print(server_out.getvalue())
    print(browser_out.getvalue())
    misses = []
    base = page_speed.summary(server[0].script)[0]
    for c in server[1:]:
        ratio = page_speed.summary(c.script)[0] / base
        if ratio > SERVER_LIMIT:
            misses.append(f"server (AppTest script)  {c.page} · {c.scenario}: {ratio:.2f}×")
    bmin = next(c for c in browser if c.server == "minimal")
    bbase = browser_speed._summary(bmin.metric_ms)[0]
    live = [a + b for a, b in zip(bmin.server_ms, bmin.gc_ms, strict=True)]
    lbase = browser_speed._summary(live)[0]
    for c in browser:
        if c is bmin or c.server != "app":
            continue
        ratio = (
            browser_speed._summary([a + b for a, b in zip(c.server_ms, c.gc_ms, strict=True)])[0]
            / lbase
        )
        if ratio > SERVER_LIMIT:
            misses.append(f"server (live run + GC)   {c.name}: {ratio:.2f}×")
        ratio = browser_speed._summary(c.metric_ms)[0] / bbase
        if ratio > BROWSER_LIMIT:
            misses.append(f"browser metric           {c.name}: {ratio:.2f}×")
    print(
        f"Verdict: server ≤ {SERVER_LIMIT}× minimal (two readings: the AppTest script run alone, "
        f"and the live server's run plus its post-run gc.collect), browser metric ≤ "
        f"{BROWSER_LIMIT}× minimal: " + ("all met" if not misses else f"{len(misses)} missed")
    )
    for line in misses:
        print("  " + line)
    print(
        f"({server_s:.0f} s server side, {total_s - server_s:.0f} s browser, load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
    )
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "server": [
                        {"page": c.page, "scenario": c.scenario, "script_s": c.script,
                         "cpu_s": c.cpu, "apptest_s": c.apptest}
                        for c in server
                    ],
                    "browser": [
                        {"case": c.name, "metric_ms": c.metric_ms, "settle_ms": c.settle_ms,
                         "counts": c.counts}
                        for c in browser
                    ],
                },
                indent=1,
            )
        )  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
