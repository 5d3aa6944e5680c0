"""Speed of the Serving lens with speculative decoding against the same run without it
(issue 42: within 1.5×): one run of 1,000 and of 100,000 requests, the capacity search with
its sweep, and the whole lens (run, search, sweep, Pareto), on the default scenario at
10 req/s, each method against ``speculative=none``.

    .venv/bin/python -m benchmarks.speculative_speed
"""

from __future__ import annotations

from benchmarks.serving_speed import timed
from model import serving
from model.overrides import resolve


def main() -> None:
    cases = {
        "run, 1,000 requests": (lambda s: serving.run(s), 3),
        "run, 100,000 requests": (
            lambda s: serving.run(s.model_copy(update={"num_requests": 100_000})),
            1,
        ),
        "capacity search + sweep": (lambda s: serving.capacity(s), 1),
        "whole lens": (lambda s: serving.serving_lens(s), 1),
    }
    for method in ("ngram", "eagle3", "draft"):
        base = resolve([("request_rate", "10")])[0]
        spec = resolve([("request_rate", "10"), ("speculative", method)])[0]
        for name, (fn, repeat) in cases.items():
            t0 = timed(lambda fn=fn, s=base: fn(s), repeat)
            t1 = timed(lambda fn=fn, s=spec: fn(s), repeat)
            print(f"{method:6} {name:26} none {t0:7.2f} s  {method} {t1:7.2f} s  {t1 / t0:.2f}×")


if __name__ == "__main__":
    main()
