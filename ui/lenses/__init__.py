"""Every lens, declared once (:mod:`ui.lens`): one module per lens, and here the registry the
report and the Compare table walk.

- :mod:`ui.lenses.home`: the landing page's summary;
- :mod:`ui.lenses.roofline`, :mod:`ui.lenses.launch`, :mod:`ui.lenses.cold_start`,
  :mod:`ui.lenses.scale_to_zero`, :mod:`ui.lenses.serving`: the lens pages;
- :mod:`ui.lenses.common`: metric rows shared by more than one of them.
"""

from __future__ import annotations

from model import compare as _compare
from model.compare import Row
from model.scenario import Scenario
from ui.lens import Lens
from ui.lenses.cold_start import COLD_START
from ui.lenses.launch import LAUNCH
from ui.lenses.roofline import ROOFLINE
from ui.lenses.scale_to_zero import SCALE_TO_ZERO
from ui.lenses.serving import SERVING

#: the lenses of the report and the Compare table, in their order
LENSES: tuple[Lens, ...] = (ROOFLINE, LAUNCH, COLD_START, SCALE_TO_ZERO, SERVING)
#: the Compare table's rows: each lens's own, in the lenses' order
ROWS: tuple[Row, ...] = tuple(row for lens in LENSES for row in lens.rows)


def compare(scenarios: list[Scenario]) -> list[dict]:
    """The Compare table (:func:`model.compare.compare`) over every lens's rows, each row read
    from its own lens's computation (a new lens's rows have values without a special case;
    issue 41)."""

    def summarise(s: Scenario) -> dict:
        figures: dict = {}
        for lens in LENSES:
            figures.update(lens.figures(lens.compute(s, None)))
        return figures

    return _compare.compare(scenarios, ROWS, summarise)
