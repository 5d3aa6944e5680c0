"""Measure each page's server-side run time (AppTest) against a minimal one-chart page.

    .venv/bin/python benchmarks/page_speed.py [--runs 20]

Prints, per page and scenario, the median and p90 run time of a rerun (the script re-executed
as after a widget change, warm imports) and the ratio to the minimal page, plus the core call
alone (``roofline_lens``: the batch sweep 1–4096 in one vectorised call; ``launch_lens``: one
vectorised sweep per graphs mode).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from model.cold_start import cold_start_lens  # noqa: E402
from model.evaluate import launch_lens, roofline_lens, sweep  # noqa: E402
from model.overrides import resolve  # noqa: E402

CASES = [
    ("benchmarks/minimal_page.py", None),
    ("app.py", "default"),
    ("pages/1_Roofline.py", "default"),
    ("pages/1_Roofline.py", "seed-3b-4090"),
    ("pages/1_Roofline.py", "mixtral-fp8-2xh100"),
    ("pages/2_Launch_overhead.py", "default"),
    ("pages/2_Launch_overhead.py", "seed-70b-eager-4xh100"),
    ("pages/2_Launch_overhead.py", "seed-qa-awq-5.5gib"),
    ("pages/3_Cold_start.py", "seed-70b-fp8-cold-start"),
    ("pages/3_Cold_start.py", "seed-70gb-network-5gbs"),
]


def time_page(page: str, scenario: str | None, runs: int) -> list[float]:
    at = AppTest.from_file(str(ROOT / page), default_timeout=60)
    if scenario:
        at.query_params["scenario"] = scenario
    at.run()  # warm: imports, preset loading
    assert not at.exception, [e.value for e in at.exception]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
    return times


def time_call(fn, runs: int) -> list[float]:
    fn()
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[int(0.9 * (len(ordered) - 1))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    base = None
    print(f"{'page':32} {'scenario':22} {'median ms':>10} {'p90 ms':>8} {'× minimal':>10}")
    for page, scenario in CASES:
        med, p90 = summary(time_page(page, scenario, args.runs))
        base = base or med
        print(
            f"{page:32} {scenario or '-':22} {med * 1e3:10.1f} {p90 * 1e3:8.1f} {med / base:10.2f}"
        )
    s = resolve([("scenario", "default")])[0]
    med, p90 = summary(time_call(lambda: roofline_lens(s), args.runs))
    print(f"{'core: roofline_lens(default)':55} {med * 1e3:10.2f} {p90 * 1e3:8.2f}")
    med, p90 = summary(time_call(lambda: launch_lens(s), args.runs))
    print(f"{'core: launch_lens(default), 4 mode sweeps':55} {med * 1e3:10.2f} {p90 * 1e3:8.2f}")
    med, p90 = summary(time_call(lambda: cold_start_lens(s), args.runs))
    print(
        f"{'core: cold_start_lens(default), 5 tier sweeps':55} {med * 1e3:10.2f} {p90 * 1e3:8.2f}"
    )
    med, p90 = summary(time_call(lambda: sweep(s, range(1, 4097)), args.runs))
    print(f"{'core: sweep(batch 1..4096), one call':55} {med * 1e3:10.2f} {p90 * 1e3:8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
