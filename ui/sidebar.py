"""The shared sidebar: scenario picker, hardware, model, dtype, GPUs, batch, context, graphs,
overheads and efficiencies, and the share link. Every widget writes the URL on change."""

from __future__ import annotations

from typing import Any

import streamlit as st

from model import codecs
from model.engines import ENGINE_KNOBS, engine_profiles
from model.errors import ScenarioError
from model.overrides import DTYPE_KEYS, resolve
from model.presets import hardware_presets, model_presets, scenario_description, scenario_names
from model.scenario import CUDA_GRAPHS_MODES, LAUNCH_MODELS, Scenario
from model.units import WEIGHTS_DTYPES
from ui import compare, export, report, state
from ui.lenses import PAGES
from ui.text import GLOSSARY, key_name, md_escape, modified_caption, scenario_label
from ui.views import equal_row

DEFAULTS_LABEL = "(built-in defaults)"


def _text(value: Any) -> str:
    return codecs._text(value)  # noqa: SLF001 - the one text form the URL uses


_on_field = state.on_field
field_widget = state.field_widget


def _on_preset(kind: str) -> None:
    # another model opens in its checkpoint's dtypes (model.overrides.DTYPE_KEYS)
    drop = (kind, *DTYPE_KEYS) if kind == "model" else (kind,)
    state.apply_change([(kind, st.session_state[f"w_{kind}"])], drop_prefixes=drop)


def _on_scenario() -> None:
    name = st.session_state["w_scenario"]
    state.write_scenario(resolve([("scenario", name)] if name != DEFAULTS_LABEL else [])[0])


def _on_yaml_upload() -> None:
    upload = st.session_state.get("w_yaml")
    if upload is None:
        return
    scenario, errors = codecs.from_yaml_upload(upload.getvalue())
    if scenario is not None:
        state.write_scenario(scenario)
    if errors:
        st.session_state["_whatif_widget_errors"] = [str(e) for e in errors]


def _option(preset_id: str, spec, presets: dict) -> str:
    """A Hardware/Model option's text (plain text: select boxes render no markdown). The
    scenario's own option says when its spec is inline or differs from the preset it names."""
    if preset_id != spec.id:
        return presets[preset_id].name
    if preset_id not in presets:
        return f"{spec.name} (inline)"
    same = spec.model_dump(exclude={"sources"}) == presets[preset_id].model_dump(
        exclude={"sources"}
    )
    name = presets[preset_id].name
    return name if same else f"{name} (modified: see the page caption)"


_sync = state.sync_widget


def page_list() -> None:
    """The pages, at the top of the sidebar (the scenario travels in the session)."""
    from streamlit.errors import StreamlitPageNotFoundError

    nav = st.sidebar.container(key="whatif_nav")
    # Streamlit's own list would name the landing page after its file ("app"), so
    # ``client.showSidebarNavigation`` is off and the declared pages (ui.lenses.PAGES) are
    # listed with ``st.page_link``; they stay auto-discovered (SPEC 2)
    for page in PAGES:
        try:
            nav.page_link(page.file, label=page.label, icon=page.icon, width="stretch")
        except StreamlitPageNotFoundError:  # a page run on its own (AppTest): no app to list
            return


def sidebar(s: Scenario, page: str, errors: list[ScenarioError]) -> None:
    """Draw the shared sidebar for scenario ``s`` on ``page`` (a key of ``ui.lenses.PAGE_OF``):
    the page list, then the review kit (share link, baseline, export: what a reviewer reaches
    for first), then the scenario's widgets. The kit is filled last, after the widgets have
    had their say, so its link is this run's."""
    state.flush_url()  # a callback's link: sent now, after the headline figures
    sb = st.sidebar
    page_list()
    kit = sb.container(key="whatif_kit")
    names = [DEFAULTS_LABEL] + scenario_names()
    sb.selectbox(
        "Scenario",
        names,
        key=_sync("w_scenario", s.scenario or DEFAULTS_LABEL),
        on_change=_on_scenario,
        help="A named preset: the base the other settings override.",
    )
    about = [scenario_description(s.scenario)] if s.scenario else []
    modified = modified_caption(s)
    if modified:
        about.append(f"**{md_escape(modified)}**")
    if about:
        sb.caption("  \n".join(about))

    hw = hardware_presets()
    hw_ids = list(hw) + ([s.hardware.id] if s.hardware.id not in hw else [])
    sb.selectbox(
        "Hardware",
        hw_ids,
        key=_sync("w_hardware", s.hardware.id),
        format_func=lambda i: _option(i, s.hardware, hw),
        on_change=_on_preset,
        args=("hardware",),
    )
    models = model_presets()
    model_ids = list(models) + ([s.model.id] if s.model.id not in models else [])
    sb.selectbox(
        "Model",
        model_ids,
        key=_sync("w_model", s.model.id),
        format_func=lambda i: _option(i, s.model, models),
        on_change=_on_preset,
        args=("model",),
    )
    profiles = engine_profiles()
    engine_ids = list(profiles) + ([s.engine_id] if s.engine_id not in profiles else [])
    sb.selectbox(
        "Engine",
        engine_ids,
        key=_sync("w_engine", s.engine_id),
        format_func=lambda i: profiles[i].name if i in profiles else i,
        on_change=_on_field,
        args=("engine",),
        help="The serving engine whose measured overheads and efficiencies apply. 'Ideal "
        "physics' is the datasheet upper bound the source posts' worked examples use.",
    )
    c1 = c2 = equal_row("dtype_gpus", sb)
    c1.selectbox(
        "Weights dtype",
        WEIGHTS_DTYPES,
        key=_sync("w_weights_dtype", s.weights_dtype),
        on_change=_on_field,
        args=("weights_dtype",),
        help="Bytes per weight: FP8 and INT4 read less from HBM per step and fit more KV cache.",
    )
    field_widget(
        c2.number_input,
        "GPUs (TP)",
        "gpus",
        s.gpus,
        step=1,
        help="GPUs per replica. " + GLOSSARY["TP (tensor parallelism)"],
    )
    ckpt = s.model.checkpoint_dtype or "bf16"
    if s.weights_dtype != ckpt:
        sb.caption(
            f"The checkpoint stores {ckpt.upper()} weights; {s.weights_dtype.upper()} assumes "
            "a converted or quantised one."
        )
    else:
        sb.caption(f"Weights as the checkpoint stores them ({ckpt.upper()}).")
    if s.weights_gb is not None:
        sb.caption(
            f"Weights size fixed at {s.weights_gb:,.3g} GB (Overheads and efficiencies, "
            "Weights size): the dtype now sets only the compute roof. Empty that box to use "
            "params × bytes per param."
        )
    c1 = c2 = equal_row("batch_context", sb)
    field_widget(
        c1.number_input,
        "Batch",
        "batch",
        s.batch,
        step=1,
        help="Concurrent sequences in a decode step.",
    )
    field_widget(
        c2.number_input,
        "Context tokens",
        "context_tokens",
        s.context_tokens,
        step=256,
        help="KV-cache tokens each sequence reads per decode step (0 = weights only). "
        + GLOSSARY["KV cache"],
    )
    c1 = c2 = equal_row("prompt_output", sb)
    field_widget(
        c1.number_input,
        "Prompt tokens",
        "prompt_tokens",
        s.prompt_tokens,
        step=256,
        help="Tokens of one request's prompt: its prefill sets the time to first token.",
    )
    field_widget(
        c2.number_input,
        "Output tokens",
        "output_tokens",
        s.output_tokens,
        step=64,
        help="Tokens of one request's answer: one decode step each.",
    )
    sb.selectbox(
        "CUDA graphs",
        CUDA_GRAPHS_MODES,
        key=_sync("w_cuda_graphs", s.cuda_graphs),
        on_change=_on_field,
        args=("cuda_graphs",),
        help="none: every kernel launched one by one (vLLM's enforce-eager). piecewise: "
        "graphs between the attention layers, attention launched kernel by kernel. "
        "full_decode_only: one graph per decode step. full_and_piecewise (vLLM's default): full "
        "graphs for decode, piecewise for mixed steps.",
    )
    # lazy (built only while open): twelve hidden widgets cost every run, server and browser
    # (NOTES-speed.md); sync_widget re-seeds them from the scenario when the panel opens
    box = sb.expander("Overheads and efficiencies", key="x_overheads", on_change="rerun")
    if box.open:
        with box:
            _overheads(s)
    yaml_box = sb.expander("Load a scenario YAML", key="x_yaml", on_change="rerun")
    if yaml_box.open:
        yaml_box.file_uploader(
            "Scenario YAML",
            type=["yaml", "yml"],
            key=state.watch_widget("w_yaml"),
            on_change=_on_yaml_upload,
            help="A mapping of the public keys (as downloaded from any page). Read with "
            "yaml.safe_load only; at most 100 kB.",
        )
    if sb.button("Reset to the scenario's preset", width="stretch"):
        state.write_scenario(resolve([("scenario", s.scenario)] if s.scenario else [])[0])
        st.rerun()
    state.adopt_browser_values()
    with kit:
        share = export.context(s, page).link  # made once a run; the charts' captions carry it
        st.markdown("**Share link** (exactly this view, the open tab included)")
        st.code(share, language=None, wrap_lines=True)
        size = codecs.link_size(s) + codecs.query_size(state.link_extras())
        if size > codecs.MAX_QUERY_CHARS:
            st.warning(
                f"This link's query is {size:,} characters, over the {codecs.MAX_QUERY_CHARS:,} "
                "a link may carry: share the scenario YAML (download on the page) instead."
            )
        baseline_section(s)
        report.sidebar_section(s, page)  # the report, the charts' format, print CSS
        st.divider()


def _overheads(s: Scenario) -> None:
    """The "Overheads and efficiencies" panel's widgets (drawn inside its expander)."""
    own = [k for k in ENGINE_KNOBS if k not in s.from_engine()]
    if own:
        st.caption("Set here instead of the engine's: " + ", ".join(key_name(k) for k in own) + ".")
        st.button(
            "Use the engine's values",
            key="w_engine_values",
            on_click=state.apply_change,
            args=([(k, "auto") for k in own],),
        )
    else:
        st.caption("Every value below is the engine profile's; change one to override it.")
    a, b = st.columns(2)
    field_widget(
        a.number_input,
        "Launch τ [µs]",
        "launch_us",
        s.launch_us,
        step=0.5,
        format="%.4g",
        help=GLOSSARY["Launch cost τ"],
    )
    field_widget(
        b.number_input,
        "Host work [ms]",
        "host_ms",
        s.host_ms,
        step=0.1,
        format="%.2f",
        help="CPU work every step pays that CUDA graphs do not remove: scheduling, sampling, "
        "synchronisation.",
    )
    field_widget(
        a.number_input,
        "Kernels / layer",
        "kernels_per_layer",
        s.kernels_per_layer,
        step=1,
        help="GPU kernels one layer launches in an eager decode step.",
    )
    field_widget(
        b.number_input,
        "Kernels / step",
        "kernels",
        s.kernels,
        step=10,
        value=None,
        placeholder="auto",
        help="Empty = layers × kernels per layer.",
    )
    a, b = st.columns(2)
    field_widget(
        a.number_input,
        "Weights size [GB]",
        "weights_gb",
        s.weights_gb,
        step=1.0,
        format="%.3f",
        value=None,
        placeholder="auto",
        help="Empty = params × bytes per param. Set it for checkpoints that keep some "
        "tensors wider (AWQ keeps 16-bit embeddings). A dtype change keeps it.",
    )
    field_widget(
        b.number_input,
        "Capture s / graph",
        "capture_s_per_graph",
        s.capture_s_per_graph,
        step=0.05,
        format="%.2f",
        help="Start-up seconds to capture one CUDA graph (vLLM logs: 0.2–0.4 s).",
    )
    st.radio(
        "Launch model",
        LAUNCH_MODELS,
        horizontal=True,
        key=_sync("w_launch_model", s.launch_model),
        on_change=_on_field,
        args=("launch_model",),
        help="additive: the CPU launches after the GPU finishes, T_gpu + N·τ + host (as the "
        "source posts count). pipelined: the CPU runs ahead, max(T_gpu, N·τ) + host.",
    )
    field_widget(
        st.number_input,
        "Bandwidth efficiency",
        "bw_efficiency",
        s.bw_efficiency,
        step=0.01,
        format="%.3f",
        help="Share of the datasheet HBM bandwidth decode reads reach.",
    )
    field_widget(
        st.number_input,
        "FLOPS efficiency (decode)",
        "flops_efficiency",
        s.flops_efficiency,
        step=0.01,
        format="%.3f",
        help="Share of the datasheet peak FLOPS decode reaches.",
    )
    field_widget(
        st.number_input,
        "FLOPS efficiency (prefill)",
        "prefill_efficiency",
        s.prefill_efficiency,
        step=0.01,
        format="%.3f",
        help="Share of the datasheet peak FLOPS the prompt's prefill reaches.",
    )
    field_widget(
        st.number_input,
        "All-reduce latency [µs]",
        "allreduce_latency_us",
        s.allreduce_latency_us,
        step=1.0,
        format="%.3g",
        help="Fixed cost of one tensor-parallel all-reduce (two per layer per step).",
    )
    field_widget(
        st.number_input,
        "HBM bandwidth [TB/s]",
        "hardware.hbm_bandwidth_tb_s",
        s.hardware.hbm_bandwidth_tb_s,
        step=0.05,
        format="%.3f",
        help="The GPU memory's datasheet bandwidth (the hardware preset's unless changed).",
    )


def baseline_section(s: Scenario) -> None:
    """Pin the scenario as the baseline, or say what the pinned one is and how the scenario
    differs from it; swap, re-pin, clear, and the compare page. Drawn in the sidebar's kit
    (the caller's ``with``)."""
    sb = st
    b = state.baseline()
    sb.markdown("**Baseline**")
    if b is None:
        sb.button(
            "Pin as baseline",
            key=state.watch_widget("w_pin", False),
            icon=":material/push_pin:",
            width="stretch",
            on_click=state.pin_baseline,
            args=(s,),
            help="Keep this scenario as the baseline. Then change anything: every page shows "
            "each headline figure's change against the baseline and draws the baseline "
            "(dashed) in its charts. The share link carries both.",
        )
        return
    keys = compare.changed_keys(s, b)
    differs = (
        "The scenario differs in: "
        + ", ".join(dict.fromkeys(md_escape(key_name(k)) for k in keys))
        + "."
        if keys
        else "The scenario is the same as the baseline: change something to compare."
    )
    sb.caption(f":material/push_pin: Baseline: {md_escape(scenario_label(b))}. {differs}")
    actions = (
        ("Re-pin", "w_repin", state.pin_baseline, (s,), "Make the current scenario the baseline."),
        (
            "Swap",
            "w_swap",
            state.swap_baseline,
            (s,),
            "Open the baseline as the scenario, and keep the current scenario as the baseline.",
        ),
        ("Clear", "w_unpin", state.clear_baseline, (), "Drop the baseline."),
    )
    for col, (label, key, callback, args, help_text) in zip(
        sb.columns(len(actions)), actions, strict=True
    ):
        col.button(
            label,
            key=state.watch_widget(key, False),
            on_click=callback,
            args=args,
            help=help_text,
            width="stretch",
        )
    sb.caption("The Compare page (in the page list above) puts them side by side.")
