"""Shared page furniture: safe text, downloads, number formatting."""

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
from model.presets import hardware_presets, model_presets
from model.scenario import Scenario
from ui import export, state
from ui.text import (  # noqa: F401 - re-exported for the pages
    GLOSSARY,
    duration,
    field_name,
    gpus_text,
    key_name,
    latency,
    md_escape,
    share,
)

IDEAL_ENGINE = "ideal"


def _flat(prefix: str, value) -> dict:
    if isinstance(value, dict):
        return {
            k: v for key, sub in value.items() for k, v in _flat(f"{prefix}.{key}", sub).items()
        }
    return {prefix: value}


def spec_name(spec, presets: dict) -> str:
    """A hardware or model name for a caption, escaped, saying where the spec differs from
    the preset whose id it carries (a link's ``model.params_b=70`` keeps the preset's id and
    name): "Llama 3.1 70B (parameters [B] 70, the preset's 70.55)"."""
    name = md_escape(spec.name)
    preset = presets.get(spec.id)
    if preset is None:
        return name  # an inline spec: its name is all there is
    skip = {"id", "name", "sources"}
    mine = _flat("", spec.model_dump(exclude=skip))
    theirs = _flat("", preset.model_dump(exclude=skip))
    changed = [k for k in sorted(mine.keys() | theirs.keys()) if mine.get(k) != theirs.get(k)]
    if not changed:
        return name
    if len(changed) == 1:
        key = changed[0]
        what = (
            f"{field_name(key[1:])} {_value(mine.get(key))}, the preset's {_value(theirs.get(key))}"
        )
    else:
        what = "changed from the preset: " + ", ".join(field_name(k[1:]) for k in changed[:4])
        what += ", …" if len(changed) > 4 else ""
    return f"{name} ({md_escape(what)})"


def _value(v) -> str:
    return "none" if v is None else f"{v:g}" if isinstance(v, float) else str(v)


def scenario_caption(s: Scenario, *details: str) -> None:
    """The line under a page's title: the model, the dtype, GPUs × hardware, then the page's
    ``details``. The names are user text (a link or a YAML file sets them) and are escaped
    here, with what differs from their presets; ``details`` must be the page's own text,
    never user text."""
    st.caption(
        " · ".join(
            [
                spec_name(s.model, model_presets()),
                s.weights_dtype.upper(),
                f"{gpus_text(s)} {spec_name(s.hardware, hardware_presets())}",
                *details,
            ]
        )
    )


def key_value(s: Scenario, key: str) -> float:
    """The value the scenario computes with for a calibratable key (dotted hardware keys too)."""
    s = s.effective()
    return s.hardware.h2d_gb_s if key == "hardware.h2d_gb_s" else getattr(s, key)


def calibrated_values(s: Scenario) -> str:
    """``key = value unit`` of every calibrated key (the values the scenario computes with):
    "host work = 1.424 ms", "HBM bandwidth efficiency = 0.82" (a share has no unit)."""
    from model.calibrate import UNITS

    return ", ".join(
        f"{key_name(key)} = {key_value(s, key):.4g} {UNITS.get(key, '')}".rstrip()
        for key in s.calibrated or []
    )


def calibration_notice(s: Scenario) -> None:
    """On the landing page: which keys were fitted to measurements, with their values and a
    link to the Measurements page (nothing when the scenario is not calibrated)."""
    if not s.calibrated:
        return
    st.info(
        "Calibrated to measurements: "
        + md_escape(calibrated_values(s))
        + ". These values replace the engine profile's; the Measurements page shows the fit.",
        icon=":material/straighten:",
    )
    st.page_link(
        "pages/6_Measurements.py", label="Open the Measurements lens", icon=":material/straighten:"
    )


def _short(value: float) -> str:
    """1.0, 0.5, 0.125, 12: one decimal at least, at most three significant digits."""
    return f"{value:.1f}" if round(value, 1) == value else f"{value:.3g}"


def assumptions(s: Scenario, focus: str = "decode") -> str:
    """The assumption line's text (markdown, escaped): the engine profile in effect and the
    values of it the page's figures use. ``focus`` is ``decode`` (efficiencies, host work,
    launches, all-reduce) or ``cold_start`` (graphs mode, capture and compile times)."""
    s = s.effective()
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


def equal_row(key: str, where=None):
    """A row whose items share its width equally, drawn as ``st.columns(n)`` draws n items,
    stacked under 640 px as columns stack (:data:`ui.export.SCREEN_CSS`), but as one block:
    columns put every item in a column and a block of its own, and every commit of Streamlit's
    frontend after a rerun request renders each column's wrappers again, changed or not (about
    ten components each: ``benchmarks/react_renders.py``, issue 22). ``key``: unique on the
    page; ``where``: st (the default) or st.sidebar."""
    return (where or st).container(horizontal=True, gap="small", key=f"{export.EQUAL_ROW}_{key}")


def assumption_line(s: Scenario, focus: str = "decode", lens: str | None = None) -> None:
    """The line under a page's headline metrics: which engine profile the figures assume and
    its efficiencies, with a one-click switch to ideal physics (or, from ideal, to the default
    engine), the profile's sources as plain text and how far off the lens's figures can be
    (``lens``: its key in :data:`model.accuracy.LENS_CATEGORIES`; None: every category)."""
    s = s.effective()
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


#: what each value of ``decode.bound`` / ``request.prefill_bound`` means (a metric's help)
BOUND_HELP = {
    "memory": "Reading the weights and the KV cache from HBM takes longest.",
    "compute": "The FLOPs take longest: the step is past the ridge point (enough FLOPs per "
    "byte read that the arithmetic, not memory, sets the pace).",
    "communication": "The tensor-parallel all-reduce takes longer than the HBM reads and the "
    "FLOPs: faster links or fewer GPUs help more than quantising.",
    "overhead": "Launches and host work take longer than the GPU's work: the GPU waits for "
    "the CPU (CUDA graphs and a lighter host loop help).",
}


def weights_size_notice(mem: dict, s: Scenario, figures: str) -> None:
    """Beside the figures a pinned weights size affects: ``weights_gb`` fixes the size, so a
    dtype what-if does not change it (``figures`` says which ones use it)."""
    if not mem["weights_gb_set"]:
        return
    st.caption(
        f":material/push_pin: Weights fixed at {fmt(mem['weights_gb'], 4)} GB by Weights size "
        f"[GB] (sidebar, Overheads and efficiencies), not the size the dtype gives, "
        f"{s.weights_dtype.upper()} ({fmt(mem['weights_dtype_gb'], 4)} GB): {figures}. A change "
        "of dtype keeps it; empty that box to size the weights from the dtype."
    )


def fmt(value: float, digits: int = 3) -> str:
    """A number with ``digits`` significant digits and thousands separators."""
    if value is None:
        return "–"
    if abs(value) >= 10**digits:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"


def fit_warning(mem: dict, s: Scenario, what: str = "the figures below") -> None:
    """The shared 'does not fit' message: weights (plus graphs) over the usable HBM per GPU,
    or a batch over what the KV cache holds at this context."""
    if not mem["weights_fit"]:
        st.error(
            f"The weights do not fit: {fmt(mem['weights_per_gpu_gb'])} GB per GPU (plus "
            f"{fmt(mem['graph_memory_gb'])} GB of graphs) against {fmt(mem['usable_per_gpu_gb'])} "
            f"GB usable of {fmt(mem['hbm_per_gpu_gb'])} GB. Add GPUs or quantise; {what} assume "
            "it ran anyway."
        )
    elif not mem["batch_fits"]:
        st.warning(
            f"Batch {s.batch} does not fit the KV cache at this context: at most "
            f"{mem['max_batch']:,} sequences fit."
        )


def breakdown(figures: dict, sections: tuple[str, ...], base: dict | None = None) -> pd.DataFrame:
    """Show the named sections of ``evaluate()``-style figures as one table (section, figure,
    value, and the pinned baseline's value beside it, from its figures ``base``); returns the
    wide frame for the CSV download: one row for the scenario and one for the baseline, one
    typed column per ``section.figure`` (:func:`ui.export.wide_figures`)."""
    st.subheader("Breakdown")
    if base is not None:
        base = {sec: base[sec] for sec in sections if sec in base}
    table = export.long_figures(figures, sections, base)
    key = "_".join(sections)
    # the grid scrolls on screen and prints only the rows in view: paper gets the full table
    with st.container(key=f"{export.SCREEN_ONLY}_{key}"):
        st.dataframe(table, hide_index=True, width="stretch", height=300)
    with st.container(key=f"{export.PRINT_ONLY}_{key}"):
        st.table(table, hide_index=True)
    ctx = export.context()
    rows = [("this scenario", ctx.label if ctx else "", figures)]
    if base is not None:
        rows.append(("baseline", (ctx and ctx.base_label) or "", base))
    return export.wide_figures(rows, sections)


def downloads(s: Scenario, tables: dict[str, pd.DataFrame], stem: str) -> None:
    """Download buttons: the scenario as YAML and each table as CSV.

    Each file is named ``<scenario>-<stem>-<table>`` (:mod:`ui.export`: the model, dtype,
    GPUs × hardware, batch and a hash of the share link), and carries the scenario's label and
    share link in a first comment line; the CSV numbers are rounded to 6 significant digits and
    integral columns written as integers. The files are made only when a button is clicked (a
    callable ``data``), so the page's run does not pay for YAML and CSV text nobody asked for.
    """
    ctx = export.context(s)
    cols = st.columns(1 + len(tables))
    cols[0].download_button(
        "Scenario (YAML)",
        lambda: export.yaml_text(s, ctx),
        file_name=ctx.file("scenario", "yaml", page=stem),
        mime="application/x-yaml",
        width="stretch",
        on_click="ignore",
    )
    for col, (name, frame) in zip(cols[1:], tables.items(), strict=True):
        col.download_button(
            f"{name} (CSV)",
            lambda frame=frame: _csv(frame, ctx.comment),
            file_name=ctx.file(name, "csv", page=stem),
            mime="text/csv",
            width="stretch",
            on_click="ignore",
        )


def _csv(frame: pd.DataFrame, comment: str | None = None) -> str:
    """The table as CSV (:func:`ui.export.csv_text`): a ``# comment`` first line, numbers
    clean, integers as integers."""
    return export.csv_text(frame, comment)


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


def parallel_notice(s: Scenario) -> None:
    """Beside the decode figures when the replica has data-parallel ranks or expert parallelism
    (issue 42 §3): the step the charts break down is one rank's, whose MoE layers carry every
    rank's tokens; tok/s are all ranks'."""
    if s.data_parallel == 1 and not s.expert_parallel:
        return
    d = s.data_parallel
    moe = bool(s.model.experts)
    experts = (
        f" Its MoE layers carry all {d} ranks' tokens over the experts spread "
        f"{'whole' if s.expert_parallel else 'sliced'} on all {s.replica_gpus} GPUs, and "
        "exchange them each layer."
        if moe and d > 1
        else " The experts are whole on each of its GPUs."
        if s.expert_parallel
        else ""
    )
    st.caption(
        f":material/grid_view: {md_escape(gpus_text(s))} GPUs: the step the charts break down is "
        f"one rank's ({s.gpus} GPU(s), batch {s.batch:,} of its own, its own KV cache)"
        + (f"; tok/s are all {d} ranks'." if d > 1 else ".")
        + experts
        + (
            " A dense model's ranks are independent replicas behind one server."
            if not moe and d > 1
            else ""
        )
    )


def speculative_notice(dec: dict, mem: dict, s: Scenario) -> None:
    """Beside the decode figures when speculative decoding is on (issue 42): the step is the
    verify of k + 1 tokens per sequence plus k drafter steps, and emits τ tokens per sequence;
    the drafter's weights come out of the cache. ``dec`` and ``mem``: the lens's ``decode`` and
    ``memory`` figures."""
    if not dec.get("accepted_tokens_per_step") or dec.get("speculative", "none") == "none":
        return
    k = dec["num_speculative_tokens"]
    speed = dec.get("spec_speedup")
    cross = dec.get("spec_crossover_batch")
    tail = (
        f"; it stops paying above a batch of {cross:,.0f}"
        if cross is not None
        else "; it pays at every batch that fits"
    )
    drafter = mem.get("drafter_weights_gb") or 0.0
    weights = (
        f" The drafter's {fmt(drafter)} GB of weights and its KV come out of the cache."
        if drafter
        else ""
    )
    st.caption(
        f":material/fast_forward: Speculative decoding ({md_escape(dec['speculative'])}, k = {k}, "
        f"α = {dec['spec_acceptance']:.2f}): a step is the verify of {k + 1} tokens per "
        f"sequence, {fmt(dec['t_verify_ms'])} ms (the step the charts break down), plus {k} "
        f"drafter steps, {fmt(dec['t_draft_ms'])} ms, and emits "
        f"{dec['accepted_tokens_per_step']:.2f} tokens per sequence: "
        f"{fmt(dec['t_token_ms'])} ms per output token, "
        f"{fmt(speed)}× the tokens per second of no speculation at this batch{tail}.{weights}"
    )
