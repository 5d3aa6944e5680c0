"""The capture-bucket editor of the Launch overhead page (the seed's knob 3)."""

from __future__ import annotations

import streamlit as st

from model.scenario import VLLM_CAPTURE_SIZES, Scenario
from ui import state
from ui.text import md_escape

BUCKET_PRESETS = {
    "vLLM default": VLLM_CAPTURE_SIZES,
    "bounded (1 to 64)": (1, 2, 4, 8, 16, 24, 32, 64),
    "powers of 2": tuple(2**i for i in range(10)),
}
ERRORS_KEY = "_whatif_bucket_errors"


def _apply(text: str) -> None:
    state.apply_change([("capture_sizes", text)])
    errors = st.session_state.get("_whatif_widget_errors")
    if errors:
        st.session_state[ERRORS_KEY] = list(errors)


def _on_text() -> None:
    _apply(st.session_state["w_capture_sizes"])


def _on_preset(sizes: tuple[int, ...]) -> None:
    _apply(",".join(str(x) for x in sizes))


def bucket_editor(s: Scenario) -> None:
    """A text box with the capture sizes, three preset lists, and the rejection message
    (naming the field and what it accepts) right under the box."""
    st.text_area(
        "Capture sizes",
        key=state.sync_widget("w_capture_sizes", ", ".join(str(x) for x in s.capture_sizes)),
        on_change=_on_text,
        height=90,
        help="Batch sizes captured as CUDA graphs: comma-separated integers, strictly "
        "increasing, each 1–65536, at most 512 of them. Press Ctrl+Enter or click away to apply.",
    )
    cols = st.columns(len(BUCKET_PRESETS))
    for i, (col, (label, sizes)) in enumerate(zip(cols, BUCKET_PRESETS.items(), strict=True)):
        col.button(
            label,
            key=state.watch_widget(f"w_bucket_preset_{i}", False),
            on_click=_on_preset,
            args=(sizes,),
            width="stretch",
            disabled=tuple(s.capture_sizes) == tuple(sizes),
            help=f"{len(sizes)} sizes: {', '.join(str(x) for x in sizes[:12])}"
            + (", …" if len(sizes) > 12 else ""),
        )
    state.adopt_browser_values()
    for text in st.session_state.pop(ERRORS_KEY, []):
        st.error(f"Not applied: {md_escape(text)}")
