"""The Compare page, declared once: it has no lens of its own (its rows are every lens's
:attr:`ui.lens.Lens.rows`, walked by :func:`ui.lenses.compare`)."""

from __future__ import annotations

from ui.lens import Page

PAGE = Page(
    key="compare",
    file="pages/7_Compare.py",
    label="Compare",
    icon=":material/compare_arrows:",
    emoji="🆚",
)
