"""The Plan page, declared once: which GPU and how many (issue 43, section 1). It has no lens
of its own: its rows come from :mod:`model.plan`, each a capacity search of the Serving lens."""

from __future__ import annotations

from ui.lens import Page

PAGE = Page(
    key="plan",
    file="pages/8_Plan.py",
    label="Plan",
    icon=":material/shopping_cart:",
    emoji="🛒",
)
