"""A grid over engine-profile numbers, scored on the published serving table's two halves
(issue 39's discipline: choose on the fit half, report the held-out half apart).

Each point sets the given keys on every run of ``tests/data/published_serving.csv``
(:func:`tools.published_serving.compare`) and prints the median |error| of the fit half and of
the held-out half, overall and per load class::

    python -m tools.serving_grid '{"frontend_queued_ms": [4, 12], "api_us_per_token": [0, 300]}'
    python -m tools.serving_grid --only vllm '{"frontend_queued_ms": [4, 12]}'

``--only ENGINE`` sets the keys only on the runs an engine profile's current numbers serve (its
current version, the bands that take them, e.g. ``vllm@0.11``, and for vLLM the older rows
compared at the default profile; not a band that states its own, as ``vllm@0.9``), the others
keeping their profile's: how revision 2026.12.7's numbers were chosen. A point is
about 3 s on this machine. Nothing is written.
"""

from __future__ import annotations

import itertools
import json
import sys
from functools import lru_cache
from statistics import median

from tools import published_serving

CLASSES = published_serving.LOAD_CLASSES


def _served_by(only: str):
    """Whether a run is served by ``only``'s current numbers: its current version, a band
    whose :data:`SWEPT` numbers are the current ones (a band stating its own keeps them), and,
    for the default engine, the older rows compared at the default profile."""
    from model import engines

    profile = engines.engine_profiles()[only]
    now = profile.figures()

    def same(band) -> bool:
        return all(getattr(band, k) == getattr(now, k) for k in SWEPT)

    current = {engines.normalise(only)} | {f"{only}@{b.version}" for b in profile.bands if same(b)}
    if only == engines.DEFAULT_ENGINE:
        current.add(None)
    runs = published_serving.runs()
    return lambda run: published_serving.engine_of(runs[run][0]) in current


#: the engine numbers a grid sets (a band stating one of them keeps its own)
SWEPT = {"host_us_per_seq", "api_us_per_token", "frontend_us_per_token", "frontend_queued_ms"}


@lru_cache(maxsize=1)
def _baseline() -> tuple:
    """The table compared at the profiles' own numbers: the same at every grid point, so it
    is computed once."""
    return tuple(r for r in published_serving.compare() if "metric" in r)


def score(only: str | None = None, **extra) -> dict:
    """Median |error| [%] of the fit and held-out halves, overall and per load class; with
    ``only``, the keys are set on that engine's current runs alone (:func:`_served_by`)."""
    records = [r for r in published_serving.compare(**extra) if "metric" in r]
    if only:
        mine = _served_by(only)
        base = _baseline()
        records = [r for r in records if mine(r["run"])] + [r for r in base if not mine(r["run"])]
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
    only = None
    if len(argv) == 3 and argv[0] == "--only":
        only, argv = argv[1], argv[2:]
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
        print(json.dumps({"set": point, "median_abs_error_pct": score(only, **point)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
