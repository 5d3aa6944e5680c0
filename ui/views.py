"""How a page is laid out: rows whose items share the width, views shown one at a time (lazy
tabs), and the landing page's glossary."""

from __future__ import annotations

import streamlit as st

from ui import export, state
from ui.text import (
    GLOSSARY,
)


def equal_row(key: str, where=None):
    """A row whose items share its width equally, drawn as ``st.columns(n)`` draws n items,
    stacked under 640 px as columns stack (:data:`ui.export.SCREEN_CSS`), but as one block:
    columns put every item in a column and a block of its own, and every commit of Streamlit's
    frontend after a rerun request renders each column's wrappers again, changed or not (about
    ten components each: ``benchmarks/react_renders.py``, issue 22). ``key``: unique on the
    page; ``where``: st (the default) or st.sidebar."""
    return (where or st).container(horizontal=True, gap="small", key=f"{export.EQUAL_ROW}_{key}")


class LazyTab:
    """One view of :func:`lazy_tabs`: ``open`` says whether it is the one shown this run;
    ``with tab:`` writes into it (only the open one has a place on the page)."""

    def __init__(self, label: str, container=None):
        self.label = label
        self.open = container is not None
        self._container = container

    def __enter__(self):
        if self._container is None:
            raise RuntimeError(f"the view {self.label!r} is not open this run: check .open first")
        return self._container.__enter__()

    def __exit__(self, *exc):
        return self._container.__exit__(*exc)


def lazy_tabs(labels: list[str], key: str) -> list[LazyTab]:
    """Views of a page, one shown at a time and built only while shown: a page runs, sends and
    redraws one view's charts per widget change instead of all of them. The open view is in
    the link (``tab=<label>``, none for the first): a link opens on the view its author had
    open, and a link naming a view this page does not have opens the first one.

    The picker is a segmented control, not ``st.tabs``: Streamlit's tab panel (react-aria's
    ``TabPanel``) walks its whole panel's DOM for a focusable element after every render and
    on every mutation inside it (``useHasTabbableChild``: 33-43 walks, up to 18,000 nodes and
    8-24 ms a change through the Plotly charts' SVG, ``benchmarks/dom_walks.py``), around the
    headline metrics' render (benchmarks/NOTES-speed.md, "Where the headline waits in the
    browser"). The segmented control does not. ``required=True`` and the value seeded here
    keep one view selected."""
    wanted = state.open_tab(arrival=True)
    default = wanted if wanted in labels else None
    if wanted is not None and default is None:
        # not one of this page's views (a hand-edited link): the link drops it, and the run
        # starts again so the sidebar's share link, drawn before the views, says so too
        state.forget_tab()
        st.rerun()
    if st.session_state.get(key) not in labels:  # first run on the page, or a view gone
        st.session_state[key] = default or labels[0]
    shown = st.segmented_control(
        "View",
        labels,
        key=key,
        required=True,
        on_change=_on_tab,
        args=(key, labels[0]),
        label_visibility="collapsed",
        width="stretch",
    )
    place = st.container()
    return [LazyTab(label, place if label == shown else None) for label in labels]


def _on_tab(key: str, first: str) -> None:
    label = st.session_state.get(key)
    state.set_open_tab(label, first=label == first)


def glossary() -> None:
    """The landing page's glossary: one line for each term the pages use."""
    box = st.expander(
        "Terms used on these pages",
        icon=":material/menu_book:",
        key="x_glossary",
        on_change="rerun",
    )
    if box.open:  # built only while open
        with box:
            st.markdown("\n".join(f"- **{term}**: {line}" for term, line in GLOSSARY.items()))
