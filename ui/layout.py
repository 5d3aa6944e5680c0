"""Shared page furniture: safe text, downloads, number formatting."""

from __future__ import annotations

import io

import pandas as pd
import streamlit as st

from model import codecs
from model.presets import hardware_presets, model_presets
from model.scenario import Scenario
from ui.text import duration, md_escape, share  # noqa: F401 - re-exported for the pages


def _flat(prefix: str, value) -> dict:
    if isinstance(value, dict):
        return {
            k: v for key, sub in value.items() for k, v in _flat(f"{prefix}.{key}", sub).items()
        }
    return {prefix: value}


def spec_name(spec, presets: dict) -> str:
    """A hardware or model name for a caption, escaped, saying where the spec differs from
    the preset whose id it carries (a link's ``model.params_b=70`` keeps the preset's id and
    name): "Llama 3.1 70B (params_b 70, the preset's 70.55)"."""
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
        what = f"{key[1:]} {_value(mine.get(key))}, the preset's {_value(theirs.get(key))}"
    else:
        what = "changed from the preset: " + ", ".join(k[1:] for k in changed[:4])
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
                f"{s.gpus}× {spec_name(s.hardware, hardware_presets())}",
                *details,
            ]
        )
    )


def weights_size_notice(mem: dict, s: Scenario, figures: str) -> None:
    """Beside the figures a pinned weights size affects: ``weights_gb`` fixes the size, so a
    dtype what-if does not change it (``figures`` says which ones use it)."""
    if not mem["weights_gb_set"]:
        return
    st.caption(
        f":material/push_pin: Weights fixed at {fmt(mem['weights_gb'], 4)} GB by `weights_gb`, "
        f"not params × bytes of {s.weights_dtype.upper()} ({fmt(mem['weights_dtype_gb'], 4)} "
        f"GB): {figures}. A change of dtype keeps it; clear it (sidebar, Overheads and "
        "efficiencies) to size the weights from the dtype."
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


def breakdown(figures: dict, sections: tuple[str, ...]) -> pd.DataFrame:
    """Show the named sections of ``evaluate()``-style figures as one table (section, figure,
    value); returns the raw frame for the CSV download."""
    st.subheader("Breakdown")
    frame = pd.DataFrame(
        [(sec, k, v) for sec in sections for k, v in figures[sec].items()],
        columns=["section", "figure", "value"],
    )
    st.dataframe(
        frame.assign(
            value=[f"{v:.6g}" if isinstance(v, float) else str(v) for v in frame["value"]]
        ),
        hide_index=True,
        width="stretch",
        height=300,
    )
    return frame


def downloads(s: Scenario, tables: dict[str, pd.DataFrame], stem: str) -> None:
    """Download buttons: the scenario as YAML and each table as CSV.

    The files are made only when a button is clicked (a callable ``data``), so the page's
    run does not pay for YAML and CSV text nobody asked for.
    """
    cols = st.columns(1 + len(tables))
    cols[0].download_button(
        "Scenario (YAML)",
        lambda: codecs.to_yaml(s),
        file_name=f"{stem}-scenario.yaml",
        mime="application/x-yaml",
        width="stretch",
        on_click="ignore",
    )
    for col, (name, frame) in zip(cols[1:], tables.items(), strict=True):
        col.download_button(
            f"{name} (CSV)",
            lambda frame=frame: _csv(frame),
            file_name=f"{stem}-{name.lower().replace(' ', '-')}.csv",
            mime="text/csv",
            width="stretch",
            on_click="ignore",
        )


def _csv(frame: pd.DataFrame) -> str:
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    return buf.getvalue()


def lazy_tabs(labels: list[str], key: str):
    """Tabs whose content is built only while open (``on_change="rerun"``): a page runs,
    sends and redraws one tab's charts per widget change instead of all of them. The first tab
    is open on arrival; the open tab is kept per session (``key``), not in the share link."""
    return st.tabs(labels, key=key, on_change="rerun")
