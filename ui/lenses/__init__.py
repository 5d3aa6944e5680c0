"""Every page and lens, declared once (:mod:`ui.lens`), and the registry that everything else
walks: the navigation, the report, the Compare table, the golden cases and the contract test.

A module here declares its page (``PAGE``, a :class:`ui.lens.Page`) and, for a lens, its lens
(a :class:`ui.lens.Lens` with that page). Nothing registers them by hand: importing this
package imports every module in it and collects what they declare, so a new lens is a page
file and one module here (``docs/extending.md``).

- :mod:`ui.lenses.home`: the landing page's summary;
- :mod:`ui.lenses.roofline`, :mod:`ui.lenses.serving`, :mod:`ui.lenses.launch`,
  :mod:`ui.lenses.cold_start`, :mod:`ui.lenses.scale_to_zero`: the lens pages;
- :mod:`ui.lenses.measurements`: the measured points over the model's curves;
- :mod:`ui.lenses.compare_page`: the Compare page (no lens of its own);
- :mod:`ui.lenses.common`: metric rows shared by more than one of them (no page).
"""

from __future__ import annotations

import importlib
import pkgutil

from model import compare as _compare
from model.compare import Row
from model.scenario import Scenario
from ui.lens import Lens, Page


def _declared() -> tuple[list[Page], list[Lens]]:
    pages: dict[str, Page] = {}
    lenses: dict[str, Lens] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        page = getattr(module, "PAGE", None)
        if page is None:
            continue
        if page.key in pages:
            raise ValueError(f"page {page.key!r} is declared twice ({info.name})")
        pages[page.key] = page
        for value in vars(module).values():
            if isinstance(value, Lens) and value.page is page:
                lenses[page.key] = value
    return (
        sorted(pages.values(), key=lambda p: p.order),
        [lens for lens in lenses.values() if lens.order],
    )


_PAGES, _LENSES = _declared()
#: every page, in the navigation's order (the landing page first)
PAGES: tuple[Page, ...] = tuple(_PAGES)
#: the page of each key
PAGE_OF: dict[str, Page] = {p.key: p for p in PAGES}
#: the lenses of the report and the Compare table, in their order (a lens with ``order`` 0,
#: such as the landing page's summary or Measurements, has no section and no rows)
LENSES: tuple[Lens, ...] = tuple(sorted(_LENSES, key=lambda lens: lens.order))
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
