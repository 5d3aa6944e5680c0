"""The assumption line under a page's headline metrics: the engine profile in effect and its
values, the switch to ideal physics, the profile's sources and how far off the figures can be."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from model.engines import (
    DEFAULT_ENGINE,
    ENGINE_KNOBS,
    bw_share,
    engine_profiles,
    gemm_extra_us,
)
from model.scenario import Scenario
from ui import state
from ui.text import (
    key_name,
    md_escape,
)

IDEAL_ENGINE = "ideal"


def _short(value: float) -> str:
    """1.0, 0.5, 0.125, 12: one decimal at least, at most three significant digits."""
    return f"{value:.1f}" if round(value, 1) == value else f"{value:.3g}"


def assumptions(s: Scenario, focus: str = "decode") -> str:
    """The assumption line's text (markdown, escaped): the engine profile in effect and the
    values of it the page's figures use. ``focus`` is ``decode`` (efficiencies, host work,
    launches, all-reduce) or ``cold_start`` (graphs mode, capture and compile times)."""
    ideal = s.engine_id == IDEAL_ENGINE
    if focus == "cold_start":
        compile_text = (
            f"torch.compile {_short(s.compile_s)} s cold, {_short(s.compile_cached_s)} s cached"
            if s.compile_s
            else "no torch.compile"
        )
        items = [
            f"{md_escape(s.cuda_graphs)} CUDA graphs",
            f"{s.capture_s_per_graph:.3g} s per graph capture",
            compile_text,
        ]
    else:
        host = f"{_short(s.host_ms)} ms host work per step"
        if s.host_us_per_seq:
            host += f" + {s.host_us_per_seq:g} µs per sequence"
            if s.async_scheduling_on:
                host += " (overlapping the GPU: async scheduling)"
        if ideal and s.bw_efficiency == 1 and s.flops_efficiency == 1:
            peaks = "100 % of HBM bandwidth and of peak FLOPS"
        else:
            share = bw_share(s.engine_figures, s.hardware.id)
            on_gpu = (
                f" (this GPU's GEMMs reach {share:.2f}× an H100's share)"
                if s.bw_efficiency_auto and share != 1
                else ""
            )
            peaks = (
                f"{s.bw_efficiency:.0%} of HBM bandwidth{on_gpu}, {s.flops_efficiency:.0%} of peak "
                f"FLOPS in decode and {s.prefill_efficiency:.0%} in prefill"
            ).replace("%", " %")
        if s.engine_figures.per_kernel_roofline:  # model.roofline.gpu_time
            peaks += "; GEMMs and attention each at their own roof"
        fig = s.engine_figures
        if fig.prefill_attn_efficiency:  # model.decode.prefill_attention_scale
            peaks += (
                f"; prefill attention up to {fig.prefill_attn_efficiency:.0%} of the BF16 peak, "
                f"half that at {fig.prefill_attn_kv_half:,.0f} tokens of context"
            ).replace("%", " %")
        gemm = gemm_extra_us(s.engine_figures, s.hardware.id)
        if gemm:  # a GPU slower than the H100 to start a kernel (presets/engines-EVIDENCE.md)
            peaks += f", {gemm:g} µs more per GEMM than an H100 (its kernels' floor)"
        items = [
            peaks,
            host,
            f"{s.launch_us:g} µs per launch",
            f"{s.allreduce_latency_us:g} µs per all\u2011reduce"
            if s.allreduce_latency_us
            else "no all\u2011reduce latency",
        ]
    name = md_escape(s.engine_profile.name)
    if ideal:
        text = f"**{name}**: datasheet upper bounds, not a prediction — " + ", ".join(items)
    else:
        text = f"**{name}** profile: " + ", ".join(items)
    own = [k for k in ENGINE_KNOBS if k not in s.from_engine()]
    if own:
        text += " · set by this scenario instead: " + ", ".join(md_escape(key_name(k)) for k in own)
    return text


def assumption_line(s: Scenario, focus: str = "decode", lens: str | None = None) -> None:
    """The line under a page's headline metrics: which engine profile the figures assume and
    its efficiencies, with a one-click switch to ideal physics (or, from ideal, to the default
    engine), the profile's sources as plain text and how far off the lens's figures can be
    (``lens``: its key in :data:`model.accuracy.LENS_CATEGORIES`; None: every category)."""
    ideal = s.engine_id == IDEAL_ENGINE
    if ideal:
        target = DEFAULT_ENGINE
        tail = " — a real engine is slower:"
        label = f"use the {md_escape(engine_profiles()[DEFAULT_ENGINE].name)} profile"
    else:
        target = IDEAL_ENGINE
        tail = " — ideal physics is one click away:"
        label = "switch to ideal physics"
    row = st.container(horizontal=True, vertical_alignment="center", gap="small")
    row.caption(assumptions(s, focus) + tail, width="content")
    row.button(
        label,
        key=state.watch_widget("w_engine_switch", False),
        type="tertiary",
        icon=":material/swap_horiz:",
        on_click=state.apply_change,
        args=([("engine", target)],),
        help=f"Sets the sidebar's Engine to {md_escape(engine_profiles()[target].name)}; the "
        "other settings stay as they are.",
    )
    # both panels are built only while open: the sources' markdown (60-odd lines with links)
    # and the accuracy table were built, sent and re-rendered hidden on every change
    # their one-line help opens each panel, not a hover tooltip on its button: a popover's
    # tooltip is ~28 components the frontend renders again at every commit of a change
    # (benchmarks/react_renders.py, issue 22)
    sources = row.popover(
        "Sources",
        icon=":material/menu_book:",
        type="tertiary",
        key="p_sources",
        on_change="rerun",
    )
    if sources.open:
        with sources:
            st.caption("Where each of the engine profile's numbers comes from.")
            engine_sources(s)
    far = row.popover(
        "How far off?",
        icon=":material/straighten:",
        type="tertiary",
        key="p_accuracy",
        on_change="rerun",
    )
    if far.open:
        with far:
            st.caption(
                "The defaults' error against published measurements of real servers, for the "
                "figures this page shows: in-sample and held out."
            )
            accuracy_panel(lens)


def accuracy_panel(lens: str | None = None, expanded_note: bool = False) -> None:
    """How far off can this be? Per figure category, the median and worst error of the
    defaults against the project's published measurements, how many there are, how many the
    engine profiles were fitted on, and the same for measurements held out (added after the
    profiles were fixed). Static figures (``presets/accuracy.json``): nothing is computed."""
    from model import accuracy

    cats = None if lens is None else accuracy.LENS_CATEGORIES.get(lens)
    rows = accuracy.rows(cats)
    st.markdown("**How far off can this be?**")
    st.caption(
        "The engine profiles' defaults (vLLM unless named) against published measurements of "
        "real servers, each with its source (tests/data in the repository). In-sample: the "
        "measurements the profiles were fitted on or chosen with in view ('fitted on' counts "
        "the first). Held out: measurements added after the profiles were fixed, fitted on by "
        "nothing; 'in view of a later change' counts those whose errors had been seen when a "
        "later profile number was chosen (from another source, but not blind), and the blind "
        "median leaves them out: trust that one most. 'Inside range' is the share of start-up "
        "measurements inside the range the pages draw. Ideal physics is further off: an upper "
        "bound."
    )
    if not rows:
        st.caption("No published measurements of these figures yet.")
        return
    # as text: a category without held-out rows reads "—", not a blank or "nan"
    frame = pd.DataFrame(
        [
            {
                k: ("—" if v is None else f"{v:g}" if isinstance(v, float) else v)
                for k, v in r.items()
            }
            for r in rows
        ]
    ).set_index("figures")
    st.dataframe(frame, width="stretch")
    if expanded_note:
        st.caption(
            "Re-measured with `python -m tools.published --write` (and "
            "`python -m tools.published_serving` for the Serving figures); the test suite "
            "fails when this table is out of date."
        )


def _knob_order(key: str) -> tuple[int, str]:
    """The scenario's knobs first, in their order, then the profile's other fields."""
    return (ENGINE_KNOBS.index(key), "") if key in ENGINE_KNOBS else (len(ENGINE_KNOBS), key)


def engine_sources(s: Scenario) -> None:
    """The profile's description and the source of every number, as plain (escaped) text."""
    profile, figures = s.engine_profile, s.engine_figures
    version = s.engine_version
    head = f"**{md_escape(profile.name)}**, version {md_escape(version)}"
    if version != profile.version:
        head += f" (an earlier version; the current one is {md_escape(profile.version)})"
    st.markdown(head)
    if profile.description:
        st.caption(md_escape(profile.description))
    st.markdown(
        "\n".join(f"- {md_escape(key)}: {md_escape(text)}" for key, text in figures.sources.items())
    )
