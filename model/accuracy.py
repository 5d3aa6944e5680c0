"""How far off can this be? The defaults' error against published measurements (issue 20).

``presets/accuracy.json`` is written by ``python -m tools.published --write`` from the
project's two tables of published measurements (``tests/data/published_measurements.csv``,
``tests/data/published_serving.csv``) and kept current by ``tests/test_accuracy.py``: per
figure category, the number of measurements, the median and worst relative error of the
defaults, and for the ranged start-up figures the share inside their range, apart for the rows
the engine profiles were fitted on or chosen with in view (in-sample) and the rows added after
they were fixed (held out). The app reads the summary; it never recomputes it (a run of the
tables takes seconds, and every session would wait for it).
"""

from __future__ import annotations

import json
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

from model.datafiles import PRESETS_DIR

_STRICT = ConfigDict(extra="forbid", allow_inf_nan=False)


class Split(BaseModel):
    """One category's figures for one split."""

    model_config = _STRICT
    n: int = Field(ge=0)
    median_pct: float | None = Field(None, ge=0)
    worst_pct: float | None = Field(None, ge=0)
    fitted: int = Field(0, ge=0, description="measurements a profile number was fitted on")
    ranged: int = Field(0, ge=0)
    in_range_pct: float | None = Field(None, ge=0, le=100)
    in_view: int = Field(
        0,
        ge=0,
        description="held-out measurements whose errors were in view when a later profile "
        "number was chosen (not fitted on, but not blind either)",
    )
    blind_median_pct: float | None = Field(
        None, ge=0, description="median error of the held-out measurements no choice saw"
    )


class Category(BaseModel):
    model_config = _STRICT
    in_sample: Split
    held_out: Split


class Accuracy(BaseModel):
    model_config = _STRICT
    note: str = ""
    engine_versions: dict[str, str]
    categories: dict[str, Category]
    overall: Category


#: the decode-step rows by the kind of run (dense on NVIDIA is where the figure is firm)
DECODE_FAMILIES = (
    "decode step: dense models, NVIDIA",
    "decode step: mixture of experts, NVIDIA",
    "decode step: AMD MI300X",
)

#: the serving rows again by the kind of figure (issue 39: TTFT, TPOT/ITL, throughput, E2E),
#: whatever the load; each serving figure falls in one
SERVING_METRICS = (
    "serving: time to first token",
    "serving: TPOT and ITL",
    "serving: throughput",
    "serving: end-to-end latency",
)

#: the categories each lens's figures fall in (the panel beside its assumption line)
LENS_CATEGORIES = {
    "roofline": ("decode step", *DECODE_FAMILIES, "memory"),
    "launch": ("decode step", *DECODE_FAMILIES, "start-up", "memory"),
    "cold_start": ("start-up", "sleep wake"),
    "scale_to_zero": ("start-up", "sleep wake", "serving, light load"),
    "serving": (
        "serving, concurrency 1",
        "serving, light load",
        "serving, saturation",
        *SERVING_METRICS,
        "time to first token",
    ),
}


@lru_cache(maxsize=1)
def accuracy() -> Accuracy:
    """The recorded summary (``presets/accuracy.json``), validated."""
    raw = json.loads((PRESETS_DIR / "accuracy.json").read_text(encoding="utf-8"))
    return Accuracy.model_validate(raw)


def rows(categories=None) -> list[dict]:
    """One row per category (all, or those named), held-out and in-sample side by side."""
    acc = accuracy()
    names = list(acc.categories) if categories is None else list(categories)
    out = []
    for name in names:
        cat = acc.categories.get(name)
        if cat is None:
            continue
        # the held-out figures first (the ones to trust), the blind median beside them
        held = cat.held_out
        row = {
            "figures": name,
            "held out: n": held.n,
            "held out: median error [%]": held.median_pct,
            "held out, blind: median error [%]": (
                held.blind_median_pct if held.in_view else held.median_pct
            ),
            "held out: in view of a later change": held.in_view,
            "held out: worst [%]": held.worst_pct,
            "held out: inside range [%]": held.in_range_pct,
        }
        sp = cat.in_sample
        row["in-sample: n"] = sp.n
        row["in-sample: median error [%]"] = sp.median_pct
        row["in-sample: worst [%]"] = sp.worst_pct
        row["in-sample: inside range [%]"] = sp.in_range_pct
        row["fitted on"] = sp.fitted
        out.append(row)
    return out


def headline(categories) -> str:
    """One line for a lens's assumption line: median error in-sample and held out per
    category named, with the count of measurements."""
    acc = accuracy()
    parts = []
    # the panel has the finer splits; the line keeps to the categories they split
    for name in [c for c in categories if c not in (*DECODE_FAMILIES, *SERVING_METRICS)]:
        cat = acc.categories.get(name)
        if cat is None or not cat.in_sample.n:
            continue
        text = f"{name} {cat.in_sample.median_pct:g} % in-sample (n={cat.in_sample.n})"
        if cat.held_out.n:
            text += f", {cat.held_out.median_pct:g} % held out (n={cat.held_out.n})"
        else:
            text += ", none held out yet"
        parts.append(text)
    return "; ".join(parts)
