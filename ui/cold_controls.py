"""The Cold start page's own controls: loader, storage, streams, compile cache, sleep level,
and the item timings. Every change rewrites the URL like the sidebar's widgets."""

from __future__ import annotations

import streamlit as st

from model.presets import cold_start_presets
from model.scenario import Scenario
from ui import state
from ui.sidebar import _on_field, _sync
from ui.state import field_widget
from ui.text import GLOSSARY, release_product


def cold_controls(s: Scenario) -> None:
    p = cold_start_presets()
    c = st.columns([3, 3, 2, 2, 2])
    c[0].selectbox(
        "Loader",
        list(p.loaders),
        key=_sync("w_loader", s.loader),
        format_func=lambda i: p.loaders[i].name,
        on_change=_on_field,
        args=("loader",),
        help="vLLM's --load-format. Overlapping loaders copy to the GPU while reading.",
    )
    c[1].selectbox(
        "Storage tier",
        list(p.storage),
        key=_sync("w_storage", s.storage),
        format_func=lambda i: p.storage[i].name,
        on_change=_on_field,
        args=("storage",),
        help="Where the checkpoint is read from; each tier has its own bandwidth in total and "
        "per read stream.",
    )
    field_widget(
        c[2].number_input,
        "Read streams",
        "concurrency",
        s.concurrency,
        step=1,
        value=None,
        placeholder=f"auto ({p.loaders[s.loader].default_concurrency})",
        help="Read streams the loader opens (1–1024). Empty = the loader's default.",
    )
    c[3].toggle(
        "Compile cache",
        key=_sync("w_compile_cache", s.compile_cache),
        on_change=_on_field,
        args=("compile_cache",),
        help="torch.compile's artefacts from an earlier start-up are present (a warm cache).",
    )
    c[4].selectbox(
        "Sleep level",
        [0, 1, 2],
        key=_sync("w_sleep_level", s.sleep_level),
        format_func=lambda v: {0: "0 (off)", 1: "1 (weights in RAM)", 2: "2 (discarded)"}[v],
        on_change=_on_field,
        args=("sleep_level",),
        help=GLOSSARY["Sleep mode"] + " Either way the process, context, allocator and graphs "
        "stay alive.",
    )
    levers(s)
    box = st.expander(
        "Item seconds, bandwidth and compile timings", key="x_cold_items", on_change="rerun"
    )
    if box.open:  # built only while open
        with box:
            a, b, c2, d = st.columns(4)
            for col, field, label in (
                (a, "process_init_s", "1 process init [s]"),
                (b, "cuda_context_s", "2 CUDA context [s]"),
                (c2, "allocator_s", "3 allocator [s]"),
            ):
                field_widget(
                    col.number_input,
                    label,
                    field,
                    getattr(s, field),
                    step=0.5,
                    help="Seconds this start-up item takes.",
                )
            field_widget(
                d.number_input,
                "H2D per GPU [GB/s]",
                "hardware.h2d_gb_s",
                s.hardware.h2d_gb_s,
                step=1.0,
                help="Host-to-device (H2D) copy bandwidth per GPU (PCIe Gen5 x16 ≈ 50).",
            )
            tier = p.storage[s.storage]
            engine = s.engine_defaults()  # compile times are the engine profile's
            raw = s.raw  # empty (auto) unless the scenario sets them
            for col, field, label, auto, whose in (
                (a, "storage_gb_s", "Storage aggregate [GB/s]", tier.aggregate_gb_s, "tier's"),
                (b, "stream_gb_s", "One stream [GB/s]", tier.per_stream_gb_s, "tier's"),
                (c2, "compile_s", "Cold compile [s]", engine["compile_s"], "engine's"),
                (
                    d,
                    "compile_cached_s",
                    "Cached compile [s]",
                    engine["compile_cached_s"],
                    "engine's",
                ),
            ):
                field_widget(
                    col.number_input,
                    label,
                    field,
                    getattr(raw, field),
                    step=0.5,
                    value=None,
                    placeholder=f"auto ({auto:g})",
                    help=f"Empty = the {whose} {auto:g}.",
                )
    state.adopt_browser_values()


def _on_capture_lever() -> None:
    from ui.buckets import BUCKET_PRESETS, _on_preset

    label = st.session_state.get("w_capture_lever")
    if label in BUCKET_PRESETS:
        _on_preset(BUCKET_PRESETS[label])


def optimised_pairs(s: Scenario) -> tuple[list[tuple[str, str]], tuple[str, ...]]:
    """The link's changes that turn ``s`` into its optimised start-up
    (:func:`model.cold_start.optimised`): the keys to set, and those to drop back to auto."""
    from model import codecs
    from model.cold_start import optimised

    mine, theirs = dict(codecs.to_params(s)), dict(codecs.to_params(optimised(s)))
    pairs = [(k, v) for k, v in theirs.items() if mine.get(k) != v]
    return pairs, tuple(k for k in mine if k not in theirs)


def _on_optimise(pairs: list, drops: tuple) -> None:
    state.apply_change(pairs, drop_prefixes=drops)


def levers(s: Scenario) -> None:
    """The second row of the page's knobs (issue 40, items 8): the CUDA-graph capture sizes
    (item 5's biggest lever), the engine release, and one action that applies the optimised
    start-up's settings to the scenario."""
    from model.cold_start import optimised_changes
    from ui.buckets import BUCKET_PRESETS

    c = st.columns([3, 3, 6], vertical_alignment="bottom")
    current = next((k for k, v in BUCKET_PRESETS.items() if tuple(s.capture_sizes) == v), None)
    custom = f"custom ({len(s.capture_sizes)} sizes)"
    options = list(BUCKET_PRESETS) + ([] if current else [custom])
    c[0].selectbox(
        "CUDA-graph capture sizes",
        options,
        key=_sync("w_capture_lever", current or custom),
        format_func=lambda k: f"{k}: {len(BUCKET_PRESETS[k])} sizes" if k in BUCKET_PRESETS else k,
        on_change=_on_capture_lever,
        help="Item 5 captures one graph per size: fewer sizes start faster; a batch above the "
        "largest runs eager. Edit the list itself under the Capture sizes tab.",
    )
    release_control(s, c[1])
    pairs, drops = optimised_pairs(s)
    changes = optimised_changes(s)
    c[2].button(
        "Apply the optimised settings",
        key=state.watch_widget("w_apply_optimised", False),
        on_click=_on_optimise,
        args=(pairs, drops),
        disabled=not (pairs or drops),
        icon=":material/bolt:",
        help=(
            "Sets " + "; ".join(changes) + " (the Optimised figure's start-up)"
            if changes
            else "The scenario already has the optimised start-up's settings."
        ),
    )


def release_label(fig, engine_id: str = "vllm") -> str:
    """A profile version as a reader names it: its releases, or the revision it is."""
    product = release_product(engine_id)
    if fig.releases:
        lo, _, hi = fig.releases.partition("-")
        if hi.startswith("0.99"):
            return f"{product} {lo} and later"
        return f"{product} {lo}.x" if hi in ("", lo) else f"{product} {lo}–{hi}"
    return f"revision {fig.version}"


_RELEASE_HELP = {
    "vLLM": "The release the numbers are for: V1 0.8–0.10 capture piecewise graphs at ~0.4 s "
    "each, 0.11 and later full and piecewise graphs ~10× faster; V0 0.2–0.4 captured its 35 "
    "graphs at ~0.16 s each, 0.6–0.10 at ~0.4 s; V0 0.7.x ran DeepSeek's latent-attention "
    "layers ~5× slower than 2026 kernels. A start-up log that states its release sets it on "
    "the Measurements page.",
    "SGLang": "The release the numbers are for: SGLang 0.4.x (early 2025) ran DeepSeek-V3/R1 "
    "at ~0.6 ms per layer beyond its bytes, 0.5 and later at ~0.04 ms; dense models and "
    "other mixtures of experts are the same in both.",
}


def release_control(s: Scenario, where=None) -> None:
    """The engine release the start-up numbers are for (the fact that narrows the capture
    range most): the profile's current numbers or a band of earlier releases (``vllm@0.9``,
    ``vllm-v0@0.4``). Shown for a profile that has release bands; the link carries the
    choice."""
    profile = s.engine_profile
    if not profile.bands:
        return
    options = [profile.version] + [b.version for b in profile.bands]
    if s.engine_version not in options:  # a pinned earlier revision stays selectable
        options.append(s.engine_version)
    where = where or st
    product = release_product(s.engine_id)
    where.selectbox(
        f"{product} release",
        options,
        key=_sync("w_engine_release", s.engine_version),
        format_func=lambda v: release_label(profile.figures(v), s.engine_id),
        on_change=_on_release,
        args=(s.engine_id,),
        help=_RELEASE_HELP[product],
    )


def decode_release_control(s: Scenario) -> None:
    """The release select on the Roofline lens, where the release moves the decode step: a
    latent-attention model (DeepSeek-V2/V3/R1) on a profile whose bands differ in its MLA
    figure (``sglang@0.4``, ``vllm-v0@0.7``: early-2025 kernels). Nothing for any other model."""
    profile = s.engine_profile
    if not s.model.kv_lora_rank or not any(
        b.mla_us_per_layer != profile.mla_us_per_layer for b in profile.bands
    ):
        return
    left, _ = st.columns([1, 3])
    release_control(s, left)


def _on_release(engine_id: str) -> None:
    version = st.session_state["w_engine_release"]
    state.apply_change([("engine", f"{engine_id}@{version}")])
