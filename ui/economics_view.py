"""The Scale to zero page's own controls (traffic, prices, SLA, strategies' keys), the trace
kept in the session, and its layout pieces. Every key change rewrites the URL like the
sidebar's widgets.

A trace that was read is put in the data-set store, as the Measurements page stores a data
set, and the link carries its id (``trace=<id>``): a reviewer who opens the link replays the
same trace. When it cannot be stored (the store unavailable, the session's sharing bound) the
page says that the link does not carry it; a link whose trace cannot be opened says so too,
keeps the id while the store is only unavailable, and tries again on the next run."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from model.errors import ScenarioError
from model.scenario import Scenario
from ui import state
from ui.state import field_widget
from ui.text import GLOSSARY, md_escape

TRACE = "_whatif_trace"
TRACE_ERROR = "_whatif_trace_error"
TRACE_VERSION = "_whatif_trace_version"  #: bumped whenever the trace changes
TRACE_ID = "_whatif_trace_id"  #: the store id of the trace held (None: this session only)
TRACE_NOTICES = "_whatif_trace_notices"  #: what sharing the trace could not do
TRACE_TRIED = "_whatif_trace_tried"  #: link ids that were opened, or failed for good
LENS_CACHE = "_whatif_economics_cache"


def lens(s: Scenario, baseline: bool = False) -> dict:
    """:func:`model.economics.economics_lens` for the scenario (or, with ``baseline``, the
    pinned baseline ``s``) and the session's trace, kept for the next run while neither
    changes (a replay of a 5 MB trace, with its idle-timeout and break-even sweeps, takes
    ~0.6 s; a tab switch should cost nothing)."""
    from model import codecs
    from model.economics import economics_lens

    key = (codecs.to_query(s), st.session_state.get(TRACE_VERSION, 0))
    slot = LENS_CACHE + ("_baseline" if baseline else "")
    from ui import serving_worker

    def compute():
        # the replica's capacity, searched off the session's thread
        return economics_lens(s, trace(), serving_worker.search(s))

    return state.session_cached(slot, key, compute)


def _trace_changed() -> None:
    st.session_state[TRACE_VERSION] = st.session_state.get(TRACE_VERSION, 0) + 1


def trace():
    """The trace this session replays (uploaded here, or named by the link), or None."""
    _sync_from_link()
    return st.session_state.get(TRACE)


def notices() -> list[str]:
    """What sharing the trace could not do (markdown, user text escaped)."""
    return list(st.session_state.get(TRACE_NOTICES, []))


def _notice(text: str) -> None:
    found = st.session_state.setdefault(TRACE_NOTICES, [])
    if text not in found:
        found.append(text)


def _hold(tr, trace_id: str | None) -> None:
    st.session_state[TRACE] = tr
    st.session_state[TRACE_ID] = trace_id
    _trace_changed()


def _sync_from_link() -> None:
    """Open the trace the link names when it is not the one held (a fresh session from a share
    link, or a link edited by hand). Cheap when nothing is new: one comparison."""
    wanted = state.trace_link()
    held = st.session_state.get(TRACE_ID)
    if wanted is None:
        if held is not None:  # the link no longer names the shared trace held
            _hold(None, None)
        return
    if wanted == held or wanted in st.session_state.get(TRACE_TRIED, set()):
        return
    _open(wanted)


def _open(trace_id: str) -> None:
    import datastore
    from ui import measure_data, serving_worker

    tried = st.session_state.setdefault(TRACE_TRIED, set())
    st.session_state[TRACE_NOTICES] = []
    try:
        datastore.check_id(trace_id)
    except datastore.InvalidId:
        tried.add(trace_id)
        _notice(
            "The link's `trace` field is not a stored trace's id (64 lowercase hexadecimal "
            "characters); the page replays the traffic profile instead."
        )
        state.set_trace_link(None)
        return
    store = measure_data.session_store()
    try:
        found = store.get(trace_id, reader=measure_data.client_key())
    except datastore.Unavailable as exc:
        if not measure_data.store_down(store, exc):  # this one entry, not the store
            tried.add(trace_id)
            _notice(
                f"The link's request trace (`{trace_id[:12]}…`) could not be read (the store "
                "answers, this one entry does not); the page replays the traffic profile."
            )
            state.set_trace_link(None)
            return
        _notice(
            f"The link's request trace (`{trace_id[:12]}…`) could not be opened just now: the "
            "server's data-set store is unavailable. The page shows the traffic profile "
            "meanwhile (these figures are not the link author's); the link keeps the trace, "
            f"and the page tries again on your next change or reload from "
            f"{measure_data.PAUSE_S:g} s on."
        )
        return  # not tried: the next run tries again
    tried.add(trace_id)
    if found is None:
        _notice(
            "The link's request trace is no longer stored; the page replays the traffic "
            "profile instead, so its figures are not the ones the link's author saw."
        )
        state.set_trace_link(None)
        return
    try:
        tr = serving_worker.read_file("trace", found.name, found.data)
    except ScenarioError as exc:  # stored traces were read once; a changed reader may refuse
        _notice(
            f"The link's request trace **{md_escape(found.name)}** could not be read again "
            f"({md_escape(exc.message)}); the page replays the traffic profile instead."
        )
        state.set_trace_link(None)
        return
    _hold(tr, trace_id)


def _on_trace() -> None:
    from ui import measure_data, serving_worker

    st.session_state[TRACE_ERROR] = None
    st.session_state[TRACE_NOTICES] = []
    upload = st.session_state.get("w_trace_upload")
    if upload is None:
        return
    data = upload.getvalue()
    try:
        tr = serving_worker.read_file("trace", upload.name, data)
    except ScenarioError as exc:
        st.session_state[TRACE_ERROR] = (upload.name, exc.message)
        return
    trace_id = measure_data._share(upload.name, data, notice=_notice)  # noqa: SLF001
    if trace_id is not None:
        st.session_state.setdefault(TRACE_TRIED, set()).add(trace_id)
    _hold(tr, trace_id)
    state.set_trace_link(trace_id)


def _on_traffic() -> None:
    """A traffic profile comes with its request size: picking one sets the prompt and output
    tokens to its means (editable in the sidebar afterwards)."""
    from model.traffic import traffic_profiles

    pid = st.session_state["w_traffic"]
    p = traffic_profiles().get(pid)
    pairs = [("traffic", pid)]
    if p is not None:
        pairs += [("prompt_tokens", str(p.prompt_tokens)), ("output_tokens", str(p.output_tokens))]
    state.apply_change(pairs)


def _drop_trace() -> None:
    _hold(None, None)
    st.session_state[TRACE_ERROR] = None
    st.session_state[TRACE_NOTICES] = []
    state.set_trace_link(None)


def _shown(value) -> str:
    """A trace summary's value as read: 4 significant digits with separators (5.530, 14,000),
    whole numbers without a decimal part, nothing for None."""
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"


def controls(s: Scenario) -> None:
    from model.traffic import traffic_profiles

    profiles = traffic_profiles()
    tr = trace()
    c = st.columns([3, 2, 2, 2, 2])
    c[0].selectbox(
        "Traffic profile",
        list(profiles),
        key=state.sync_widget("w_traffic", s.traffic),
        format_func=lambda i: profiles[i].name,
        on_change=_on_traffic,
        disabled=tr is not None,
        help="A request rate per hour of day (Poisson within the hour); picking one sets the "
        "prompt and output tokens to its means (editable in the sidebar). An uploaded trace "
        "replaces it.",
    )
    field_widget(
        c[1].number_input,
        "Rate scale",
        "rate_scale",
        s.rate_scale,
        step=0.1,
        format="%g",
        help="Multiplies the arrival rate; on a trace it compresses (> 1) or stretches (< 1) "
        "its time axis, keeping its shape.",
    )
    field_widget(
        c[2].number_input,
        "Idle timeout [s]",
        "idle_timeout_s",
        s.idle_timeout_s,
        step=30.0,
        help="A replica stops (or sleeps) after this long without requests (1 s to a day).",
    )
    field_widget(
        c[3].number_input,
        "Start-up SLA [s]",
        "sla_s",
        s.sla_s,
        step=1.0,
        help=GLOSSARY["SLA"],
    )
    field_widget(
        c[4].number_input,
        "Penalty per miss [USD]",
        "sla_penalty_usd",
        s.sla_penalty_usd,
        step=0.01,
        format="%g",
        help="What one request that waits longer than the SLA costs.",
    )
    box = st.expander(
        "Warm floor, pre-warm hours, sleep mode and price", key="x_warm_floor", on_change="rerun"
    )
    if box.open:  # built only while open
        with box:
            d = st.columns(4)
            field_widget(
                d[0].number_input,
                "Warm replicas",
                "warm_replicas",
                s.warm_replicas,
                step=1,
                value=None,
                placeholder="auto (what the peak needs)",
                help="Replicas kept warm at all times (the warm floor); empty = what the peak hour needs.",
            )
            field_widget(
                d[1].text_input,
                "Pre-warm hours",
                "prewarm_hours",
                s.prewarm_hours,
                help="Hours kept warm by the pre-warm strategy: 8-18, 7-12,13-19, 22-6 across "
                "midnight, or none.",
            )
            field_widget(
                d[2].number_input,
                "Shared while asleep",
                "shared_while_asleep",
                s.shared_while_asleep,
                step=0.1,
                help="Share of an asleep replica's GPU time another model pays for (0 = billed in "
                "full).",
            )
            field_widget(
                d[3].number_input,
                "Price [USD/GPU-hour]",
                "gpu_hour_usd",
                s.raw.gpu_hour_usd,
                step=0.1,
                value=None,
                placeholder=f"auto ({s.hardware.gpu_hour_usd:g})",
                help="Price of one GPU-hour; empty = the hardware preset's indicative price.",
            )
    state.adopt_browser_values()


def trace_area() -> None:
    from model.readers.traces import trace_template

    tr = trace()
    with st.expander("Replay a request trace", expanded=tr is not None):
        st.file_uploader(
            "Trace: a CSV (plain `arrival_s[,input_tokens,output_tokens]`, the Azure LLM "
            "inference trace, or BurstGPT) or Mooncake JSON Lines with prefix block ids "
            "(5 MB at most)",
            key=state.watch_widget("w_trace_upload", None),
            on_change=_on_trace,
        )
        a, b = st.columns(2)
        a.download_button(
            "Template (plain form)",
            trace_template(),
            file_name="whatif-trace-template.csv",
            mime="text/csv",
            on_click="ignore",
        )
        if tr is not None:
            b.button("Drop the trace (back to the profile)", on_click=_drop_trace)
            summary = tr.summary()
            st.dataframe(
                pd.DataFrame(
                    {"what": list(summary), "value": [_shown(v) for v in summary.values()]}
                ),
                hide_index=True,
                width="stretch",
            )
            for note in tr.notices:
                st.info(md_escape(note))
            if tr.problems:
                st.dataframe(
                    pd.DataFrame([{"where": p.where, "why": p.message} for p in tr.problems]),
                    hide_index=True,
                    width="stretch",
                )
    err = st.session_state.get(TRACE_ERROR)
    if err:
        st.error(f"**{md_escape(err[0])}**: {md_escape(err[1])}")
    for text in notices():  # markdown with user text escaped
        st.warning(text, icon=":material/database:")
    if tr is not None and st.session_state.get(TRACE_ID) is None:
        st.warning(
            f"The trace **{md_escape(tr.name)}** is in this session only: the share link does "
            "not carry it, so a reviewer who opens the link sees the traffic profile's "
            "figures, not these.",
            icon=":material/link_off:",
        )
