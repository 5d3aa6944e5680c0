"""Speed of the Serving lens with prefill/decode disaggregation against the same run without it
(issue 42: within 1.5×): one run of 1,000 and of 100,000 requests, the capacity search with its
sweep, the whole lens (run, search, sweep, Pareto), and the Disaggregation view the page runs
apart, on the default scenario at 10 req/s (past one engine's capacity: its saturated run takes
fewer, larger steps) and 4 req/s (below both), 1P1D and 1P2D against ``disaggregated=false``.

    .venv/bin/python -m benchmarks.disagg_speed
"""

from __future__ import annotations

from benchmarks.serving_speed import timed
from model import disagg, serving
from model.overrides import resolve


def _cold(fn):
    """``fn`` with the module caches emptied first (each timing computes from scratch)."""

    def run(s):
        for cache in (serving._MAX_RATE, serving._SWEEPS, serving._PARETOS, disagg._POOLS):
            cache.clear()
        return fn(s)

    return run


def main() -> None:
    cases = {
        "run, 1,000 requests": (lambda s: serving.run(s), 3),
        "run, 100,000 requests": (
            lambda s: serving.run(s.model_copy(update={"num_requests": 100_000})),
            1,
        ),
        "capacity search + sweep": (_cold(serving.capacity), 2),
        "whole lens": (_cold(serving.serving_lens), 2),
    }
    for rate, split in (("10", (1, 1)), ("10", (1, 2)), ("4", (1, 1))):
        base = resolve([("request_rate", rate)])[0]
        pairs = [
            ("request_rate", rate),
            ("disaggregated", "true"),
            ("prefill_instances", str(split[0])),
            ("decode_instances", str(split[1])),
        ]
        dis = resolve(pairs)[0]
        name = f"{split[0]}P{split[1]}D at {rate} req/s"
        for case, (fn, repeat) in cases.items():
            t0 = timed(lambda fn=fn, s=base: fn(s), repeat)
            t1 = timed(lambda fn=fn, s=dis: fn(s), repeat)
            print(f"{name} {case:26} one engine {t0:7.2f} s  {name} {t1:7.2f} s  {t1 / t0:.2f}×")
        view = timed(lambda s=dis: _cold(serving.disagg_view)(s), 2)
        print(f"{name} {'Disaggregation view':26} {view:7.2f} s (run only while open)")


if __name__ == "__main__":
    main()
