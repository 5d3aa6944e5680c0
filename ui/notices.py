"""Notices beside a lens's figures: calibrated keys, a pinned weights size, what does not fit,
data-parallel ranks and speculative decoding."""

from __future__ import annotations

import streamlit as st

from model.scenario import Scenario
from ui.scenario_caption import calibrated_values
from ui.text import (
    fmt,
    gpus_text,
    md_escape,
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
