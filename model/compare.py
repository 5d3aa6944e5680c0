"""Scenarios side by side: the headline figures of every lens for up to four scenarios, one
column each, with each figure's change against the first (the Compare page and the exports).

The figures are :func:`model.evaluate.summary`'s; nothing is computed here that a lens does not
show itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from model.evaluate import summary
from model.scenario import Scenario

MAX_SCENARIOS = 4


@dataclass(frozen=True)
class Row:
    """One figure of the table: its label, where it is in ``summary()``, its unit, which way is
    better (``lower``, ``higher`` or None) and how many significant digits it is shown with."""

    section: str
    label: str
    path: str
    unit: str = ""
    better: str | None = "lower"
    digits: int = 3


def lookup(figures: dict, path: str):
    """The value at a dotted ``path`` of a figures dict, or None where there is none."""
    value = figures
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def with_best(figures: dict) -> dict:
    """``figures`` with the recommended strategy's total and cold starts beside the
    ``economics`` section's strategies (``best_total_usd_per_day``, ``best_cold_starts_per_day``)."""
    eco = figures.get("economics")
    if eco:
        best = eco[eco["recommended"]]
        eco = {
            **eco,
            "best_total_usd_per_day": best["total_usd_per_day"],
            "best_cold_starts_per_day": best["cold_starts_per_day"],
        }
        figures = {**figures, "economics": eco}
    return figures


def is_number(value) -> bool:
    """A finite int or float (not a bool, a text figure such as a bound, or None)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def change(value, first) -> float | None:
    """The relative change of ``value`` against ``first`` (None when either is not a finite
    number or ``first`` is 0)."""
    ok = is_number(value) and is_number(first)
    return (value - first) / abs(first) if ok and first else None


def compare(scenarios: list[Scenario], rows: tuple[Row, ...], summarise=summary) -> list[dict]:
    """One dict per row of ``rows`` (each lens declares its own; :data:`ui.lenses.ROWS` is
    them all, in the lenses' order): ``section``, ``label``, ``unit``, ``better``,
    ``values`` (one per scenario, in order), ``changes`` (each value's relative change against
    the first scenario's; None for the first and for text) and ``differs`` (whether any value
    differs from the first)."""
    if not 1 <= len(scenarios) <= MAX_SCENARIOS:
        raise ValueError(f"compare takes 1 to {MAX_SCENARIOS} scenarios, got {len(scenarios)}")
    # ``summarise(s)``: every figure of a scenario (the app's adds the Serving lens's, computed
    # where it cannot stall other sessions)
    figures = [with_best(summarise(s)) for s in scenarios]
    out = []
    for row in rows:
        values = [lookup(f, row.path) for f in figures]
        first = values[0]
        out.append(
            {
                "section": row.section,
                "label": row.label,
                "unit": row.unit,
                "better": row.better,
                "digits": row.digits,
                "values": values,
                "changes": [None] + [change(v, first) for v in values[1:]],
                "differs": any(_differs(v, first) for v in values[1:]),
            }
        )
    return out


def _differs(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        try:
            return not math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
        except (TypeError, ValueError):
            return True
    return a != b
