"""Baseline and compare: the pinned baseline's figures beside the scenario's.

"Pin as baseline" (sidebar) puts a copy of the scenario into the link as ``base.*`` keys
(:func:`ui.state.pin_baseline`). A page then computes its lens once more for the baseline
(:func:`ui.lens_view.run`, kept in the session while the baseline is unchanged), gives every
headline metric its delta against the baseline (:class:`Deltas`), and draws the baseline in
its charts (:func:`ui.chart_view.chart`).
"""

from __future__ import annotations

from model import codecs
from model.compare import is_number, lookup
from model.scenario import Scenario
from ui import state


def baseline() -> Scenario | None:
    """This run's pinned baseline, or None."""
    return state.baseline()


def changed_keys(s: Scenario, b: Scenario) -> list[str]:
    """The link keys whose values differ between ``s`` and ``b`` (either side's)."""
    mine, theirs = dict(codecs.to_params(s)), dict(codecs.to_params(b))
    return [k for k in dict.fromkeys([*mine, *theirs]) if mine.get(k) != theirs.get(k)]


def _number(value: float) -> str:
    """A difference with three significant digits and thousands separators."""
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:+,.0f}"
    return f"{value:+.3g}"


def delta_text(current: float, base: float, unit: str = "") -> str | None:
    """``+2.31 ms (+15 %)``: the change from ``base`` to ``current``; None when they are equal
    to 9 significant digits. A ``fraction`` (a figure shown as a percentage) changes in
    percentage points: ``+5.0 pp``."""
    diff = current - base
    if abs(diff) <= 1e-9 * max(abs(current), abs(base), 1e-300):
        return None
    if unit == "fraction":  # shown as a percentage: the change in percentage points
        return f"{diff * 100:+.1f} pp" if abs(diff) >= 0.001 else f"{diff * 100:+.2f} pp"
    text = _number(diff)
    if unit == "$":
        text = f"{text[0]}${text[1:]}" if text[0] in "+-" else f"${text}"
    elif unit:
        text += f" {unit}"
    if base:
        ratio = diff / abs(base)
        pct = f"{ratio:+.0%}" if abs(ratio) >= 0.01 else f"{ratio:+.1%}"
        text += f" ({pct.replace('%', ' %')})" if abs(ratio) < 10 else f" (×{current / base:.3g})"
    return text


class Deltas:
    """Delta arguments for ``st.metric`` against the baseline's figures.

    ``d = Deltas(figures, base_figures)``; ``col.metric(label, value, **d("decode.t_step_ms",
    "lower", "ms"))``. ``better`` is ``lower`` (times, costs: a rise shows red), ``higher``
    (throughput: a rise shows green) or ``None`` (grey). Without a baseline every call returns
    ``{}``, so a page reads the same with and without one.
    """

    def __init__(self, figures: dict, base_figures: dict | None):
        self.figures = figures
        self.base = base_figures

    def __bool__(self) -> bool:
        return self.base is not None

    def __call__(self, path: str, better: str | None = "lower", unit: str = "") -> dict:
        if self.base is None:
            return {}
        return metric_delta(lookup(self.figures, path), lookup(self.base, path), better, unit)


def metric_delta(current, base, better: str | None = "lower", unit: str = "") -> dict:
    """``st.metric`` keyword arguments for the change from ``base`` to ``current``."""
    same = {"delta": "= baseline", "delta_color": "off", "delta_arrow": "off"}
    if base is None or current is None:
        return {}
    if not (is_number(current) and is_number(base)):
        if current == base:
            return same
        return {"delta": f"baseline: {base}", "delta_color": "off", "delta_arrow": "off"}
    text = delta_text(float(current), float(base), unit)
    if text is None:
        return same
    color = {"lower": "inverse", "higher": "normal"}.get(better or "", "off")
    return {"delta": text, "delta_color": color}
