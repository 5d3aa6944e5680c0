"""A page's entry point (issue 41, item 5: out of the sidebar): every page's first call,
:func:`page_scenario` (the scenario from the link or the session, its warnings, the linked data
sets), and :func:`draw_sidebar`, which pauses after the headline figures and then draws the
sidebar (:func:`ui.sidebar.sidebar`)."""

from __future__ import annotations

import streamlit as st

from model.scenario import Scenario
from ui import export, refreeze_after_imports, state, streamlit_internals
from ui.lenses import PAGE_OF
from ui.settings import env_number
from ui.sidebar import sidebar
from ui.text import md_escape

_PENDING = "_whatif_pending_sidebar"


def _headline_pause_s() -> float:
    """``WHATIF_HEADLINE_PAUSE_MS`` (default 25, 0 turns it off, at most 200) in seconds; a
    value that is not a number in that range keeps the default."""
    return env_number("WHATIF_HEADLINE_PAUSE_MS", 25, 0, 200) / 1000


#: The pause between a page's headline figures and the rest of it (issue 22). When a change
#: reruns a page, the browser commits whatever deltas have arrived in one React render; the
#: server sends a page's ~100-150 deltas within ~30 ms, so the headline metrics were committed
#: together with the sidebar, every chart's Plotly re-plot and the rest of the page (a single
#: 100-300 ms main-thread task in Chromium's long-animation-frame entries). A short pause after
#: the headline figures lets the browser paint them first; the rest follows 25 ms later.
#: Measured in benchmarks/NOTES-speed.md ("Headline first"). The script goes on building the
#: rest of the page meanwhile; what it sends is held until the pause ends
#: (:func:`ui.streamlit_internals.hold`), so a run takes the longer of the two, not their sum.
HEADLINE_PAUSE_S = _headline_pause_s()


def _pause(seconds: float) -> None:
    streamlit_internals.hold(seconds)


def draw_sidebar() -> None:
    """Draw the sidebar that ``page_scenario(..., defer=True)`` held back. Pages call it right
    after their headline metrics, so the metrics' deltas leave the server before the sidebar's
    twenty-odd widgets are built (the sidebar's place on screen does not depend on when it is
    drawn; benchmarks/NOTES-speed.md, lever 04), and first pause for
    :data:`HEADLINE_PAUSE_S`, so the browser paints the headline before the rest arrives."""
    if HEADLINE_PAUSE_S > 0:
        _pause(HEADLINE_PAUSE_S)
    pending = st.session_state.pop(_PENDING, None)
    if pending is not None:
        sidebar(*pending)


def _open_linked_data() -> None:
    """Open the measurement data sets a link names (``data=``) on whichever page it opens, and
    say here what could not be opened (a data set no longer stored, a malformed id, the store
    unavailable); the Measurements page lists these notices itself."""
    from ui import measure_data  # the importers: only for links that carry data sets

    before = set(measure_data.notices())
    measure_data.sync_from_link()
    for text in measure_data.notices():
        if text not in before:
            st.warning(text, icon=":material/database:")  # markdown with user text escaped


def page_scenario(page: str, defer: bool = False) -> Scenario:
    """Every page's first call: scenario from URL/session, warnings, and the sidebar (now, or
    at :func:`draw_sidebar` with ``defer``)."""
    refreeze_after_imports()  # the last run's imports are live now: keep gc.collect off them
    scenario, errors = state.load_scenario(page)
    if not PAGE_OF[page].has_tabs and state.open_tab() is not None:
        state.forget_tab()  # a tab on a page that has none: the link drops it
    widget_errors = st.session_state.pop("_whatif_widget_errors", [])
    notice = state.baseline_notice()
    if notice:
        st.warning(
            "The baseline in the link was dropped, because one of its settings is not valid "
            f"({md_escape(notice)}). The scenario itself is shown as the link gives it."
        )
    if errors or widget_errors:
        lines = [f"- {md_escape(e.key or 'link')}: {md_escape(e.message)}" for e in errors]
        lines += [f"- {md_escape(text)}" for text in widget_errors]
        st.warning(
            "Some settings were not accepted and are left at the scenario's values:\n\n"
            + "\n".join(lines)
        )
    if state.data_ids() and page != "measurements":
        _open_linked_data()
    export.remember(scenario, page)  # the exports name their files after the scenario and page
    if defer:
        st.session_state[_PENDING] = (scenario, page, errors)
    else:
        sidebar(scenario, page, errors)
    return scenario
