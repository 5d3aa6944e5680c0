"""A grid over engine-profile numbers, scored on the published serving table's two halves
(issue 39's discipline: choose on the fit half, report the held-out half apart).

Each point sets the given keys on every run of ``tests/data/published_serving.csv``
(:func:`tools.published_serving.compare`) and prints the median |error| of the fit half and of
the held-out half, overall and per load class::

    python -m tools.serving_grid '{"frontend_queued_ms": [4, 12], "api_us_per_token": [0, 300]}'

A point is about 3 s on this machine. Nothing is written.
"""

from __future__ import annotations

import itertools
import json
import sys
from statistics import median

from tools import published_serving

CLASSES = published_serving.LOAD_CLASSES


def score(**extra) -> dict:
    """Median |error| [%] of the fit and held-out halves, overall and per load class."""
    records = [r for r in published_serving.compare(**extra) if "metric" in r]
    out = {}
    for held_out in (False, True):
        half = [r for r in records if r["held_out"] == held_out]
        name = "held_out" if held_out else "fit"
        out[f"{name}_all"] = round(100 * median(abs(r["error"]) for r in half), 1)
        for cls in CLASSES:
            errs = [abs(r["error"]) for r in half if r["class"] == cls]
            out[f"{name}_{cls.replace(' ', '_')}"] = round(100 * median(errs), 1) if errs else None
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        grid = json.loads(argv[0])
        if not isinstance(grid, dict) or not all(isinstance(v, list) and v for v in grid.values()):
            raise ValueError
    except ValueError:
        print("serving_grid: give a JSON object of key → non-empty list of values", file=sys.stderr)
        return 2
    keys = list(grid)
    for values in itertools.product(*grid.values()):
        point = dict(zip(keys, values, strict=True))
        print(json.dumps({"set": point, "median_abs_error_pct": score(**point)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
