"""Replay benchmark (issue: "a day with one million requests replayed in under 2 s").

Times :func:`model.economics.replay_strategies` (all five strategies) and one bare
:func:`model.economics.replay` over a day of one million Poisson arrivals with per-request
token counts, for the built-in scenario. Run: ``.venv/bin/python benchmarks/economics_replay.py``.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np

from model.economics import replay, replay_strategies, service_of
from model.overrides import resolve


def main(n: int = 1_000_000) -> None:
    rng = np.random.default_rng(0)
    arrival = np.sort(rng.uniform(0.0, 86400.0, n))
    trace = SimpleNamespace(
        arrival_s=arrival,
        input_tokens=rng.integers(50, 4000, n),
        output_tokens=rng.integers(10, 800, n),
        rows_refused=0,
        start=None,
    )
    s, _ = resolve({"idle_timeout_s": 60})
    svc = service_of(s)
    t0 = time.perf_counter()
    replay(arrival, 2.0, 60.0, svc.cold_s, 86400.0)
    t1 = time.perf_counter()
    out = replay_strategies(s, trace, svc)
    t2 = time.perf_counter()
    print(f"{n:,} requests: one replay {t1 - t0:.2f} s; all five strategies {t2 - t1:.2f} s")
    print("cold starts/day, scale to zero:", round(out["scale_to_zero"]["cold_starts_per_day"], 1))


if __name__ == "__main__":
    main()
