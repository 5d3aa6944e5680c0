"""What the published-figure checks of issue 42 share (tools/published_speculative.py,
published_disagg.py, published_parallel.py): reading a transcribed table, the error
statistics, the ratios of published pairs, and rewriting a docs page's generated table."""

from __future__ import annotations

import csv
from pathlib import Path
from statistics import median


def read_rows(table: Path) -> list[dict]:
    """A transcribed CSV table's rows."""
    with table.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def error_stats(records: list[dict]) -> dict:
    """``n``, ``median`` and ``worst`` of the records' ``error`` (None without records)."""
    errs = [r["error"] for r in records]
    return {
        "n": len(errs),
        "median": median(errs) if errs else None,
        "worst": max(errs) if errs else None,
    }


def pct(x) -> str:
    """A share as the docs pages print it ("12.3 %", "—" for none)."""
    return "—" if x is None else f"{100 * x:.1f} %"


def lever_ratios(figures: list[dict], base: str) -> list[dict]:
    """Each published pair's ratio per metric: every side other than ``base`` over ``base``,
    measured and modelled, with the ratio's error; ``figures`` are records with ``pair``,
    ``side``, ``metric``, ``measured``, ``predicted``, ``id`` and ``row``."""
    by = {(r["pair"], r["metric"], r["side"]): r for r in figures}
    out = []
    for (pair, metric, side), alt in by.items():
        ref = by.get((pair, metric, base))
        if side == base or ref is None:
            continue
        want = alt["measured"] / ref["measured"]
        got = alt["predicted"] / ref["predicted"] if ref["predicted"] else float("inf")
        out.append(
            {
                "id": f"{ref['id']}/{alt['id']}",
                "pair": pair,
                "side": side,
                "split": alt.get("split", "held_out"),
                "metric": metric,
                "measured": want,
                "predicted": got,
                "error": abs(got - want) / want,
                "direction": (got > 1) == (want > 1),
                "row": alt["row"],
            }
        )
    return out


def write_between(page: Path, begin: str, end: str, body: str) -> None:
    """Replace what stands between the markers ``begin`` and ``end`` of ``page`` by ``body``."""
    text = page.read_text(encoding="utf-8")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    page.write_text(f"{head}{begin}\n{body}\n{end}{tail}", encoding="utf-8")
