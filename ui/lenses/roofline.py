"""The Roofline lens, declared once (SPEC 4.1): is decode memory-, compute- or overhead-bound,
and what do graphs, FP8/INT4 and batching buy?"""

from __future__ import annotations

import pandas as pd

from model.compare import Row
from model.evaluate import roofline_lens
from ui import measure_data, roofline_charts
from ui.lens import Chart, Column, Figure, Lens, Metric, Metrics, Page, Table, View
from ui.lenses import common
from ui.lenses.common import REQUEST
from ui.measure_charts import with_measured
from ui.text import fmt, step_ms


def _step_help(v: View) -> str:
    dec = v.f["decode"]
    return (
        f"GPU {dec['t_gpu_ms']:.3f} ms (memory {dec['t_memory_ms']:.3f}, compute "
        f"{dec['t_compute_ms']:.3f}, all-reduce {dec['t_comm_ms']:.3f}) + launch "
        f"{dec['t_launch_ms']:.3f} ms + {_host(dec)}"
    )


def _host(dec: dict) -> str:
    """The host term, with the fixed GPU work per layer it holds named apart where there is
    some (a mixture-of-experts layer's routing, a latent-attention layer's small kernels, the
    GEMM floors of a GPU slower to start a kernel than the H100)."""
    fixed = dec.get("t_layer_fixed_ms", 0.0)
    if fixed <= 0:
        return f"host {dec['t_host_ms']:.3f} ms"
    return (
        f"host {dec['t_host_ms'] - fixed:.3f} ms + fixed work per layer (MoE routing, MLA "
        f"kernels, GEMM floors) {fixed:.3f} ms"
    )


def _split(v: View) -> str:
    dec = v.f["decode"]
    mem, cmp = dec["t_memory_ms"], dec["t_compute_ms"]
    kernels = dec["t_gpu_ms"] - dec["t_comm_ms"]
    roofs = f"memory {mem:.3f} ms · compute {cmp:.3f} ms"
    if kernels > max(mem, cmp) * (1 + 1e-9):  # GEMMs and attention at their own roofs
        roofs = (
            f"GPU kernels {kernels:.3f} ms, the GEMMs' roof and then attention's (all bytes "
            f"{mem:.3f} ms, all FLOPs {cmp:.3f} ms)"
        )
    return (
        f"Step split: {roofs} · "
        f"all-reduce {dec['t_comm_ms']:.3f} ms · launch {dec['t_launch_ms']:.3f} ms "
        f"({dec['launches']} launches) · {_host(dec)}"
        + (f" · drafts {dec['t_draft_ms']:.3f} ms" if dec.get("t_draft_ms") else "")
    )


def _ai(v: View) -> str:
    rf = v.f["roofline"]
    return f"{fmt(rf['arithmetic_intensity'])} / {rf['ridge_flop_per_byte']:.0f}"


DECODE_TOKENS_PER_S = Figure(
    "decode.tokens_per_s",
    "Aggregate tok/s",
    name="Aggregate throughput",
    better="higher",
    unit="tok/s",
)


DECODE_TOKENS_PER_S_PER_SEQ = Figure(
    "decode.tokens_per_s_per_seq",
    "Per-sequence tok/s",
    name="Per-sequence throughput",
    better="higher",
    unit="tok/s",
)


DECODE_T_STEP_MS = Figure(
    "decode.t_step_ms",
    "Step time",
    show=step_ms,
    unit="ms",
    help=_step_help,
)


DECODE_BOUND = Figure(
    "decode.bound",
    "Bound",
    better=None,
    bound=True,
)


MEMORY_MAX_BATCH = Figure(
    "memory.max_batch",
    "Max batch in HBM",
    show=lambda x: f"{x:,}",
    better="higher",
    unit="sequences",
    help=lambda v: (
        f"Sequences whose KV cache fits at {max(v.s.context_tokens, 1):,} "
        "context tokens, in the GPU memory left after the weights and the CUDA graphs."
    ),
)


HEADLINE = Metrics(
    (
        Metric.of(DECODE_TOKENS_PER_S),
        Metric.of(DECODE_TOKENS_PER_S_PER_SEQ),
        Metric.of(DECODE_T_STEP_MS),
        Metric.of(DECODE_BOUND),
        Metric(
            "AI vs ridge",
            "roofline.arithmetic_intensity",
            value=_ai,
            better=None,
            unit="FLOP/B",
            help=lambda v: (
                "Arithmetic intensity (FLOPs per byte read) of this step against the "
                f"ridge point of the compute dtype ({v.f['roofline']['compute_dtype']}): below the "
                "ridge the step waits on memory, above it on the arithmetic."
            ),
        ),
        Metric.of(MEMORY_MAX_BATCH),
    ),
    caption=_split,
)


def _roofline(v: View):
    rf = v.f["roofline"]
    return roofline_charts.roofline_figure(
        v.s,
        v.r["sweep"],
        v.r["current_index"],
        rf["ridge_flop_per_byte"],
        rf["compute_dtype"],
        v.f["request"],
    )


def _step_time(v: View):
    return roofline_charts.step_composition_figure(
        v.r["sweep"],
        v.s.batch,
        v.r["ridge_batch"],
        v.f["memory"]["max_batch"],
        None if v.s.cuda_graphs == "none" else max(v.s.capture_sizes),
    )


MEASURED_STEPS = {"step_ms", "tpot_ms"}


def _measured_steps(fig, v: View):
    return with_measured(fig, measure_data.lens_points(MEASURED_STEPS))


def _measured_note(v: View) -> str | None:
    measured = measure_data.lens_points(MEASURED_STEPS)
    if not measured:
        return None
    return (
        f"Diamonds: {len(measured)} measured steps uploaded on the Measurements page, at "
        "their own context and graphs mode (the curves are this scenario's)."
    )


def _amdahl(v: View) -> str:
    am = v.r["amdahl"]
    return (
        f"**Amdahl's estimate for INT4.** Reading the weights is f = {am['fraction']:.0%} of the "
        "BF16 eager "
        f"step; INT4 speeds them up {am['weights_speedup']:.3g}× (the table's weights), so "
        f"1 / ((1 − f) + f/{am['weights_speedup']:.3g}) = "
        f"**{am['estimate']:.2f}×**; the table's INT4 row gives {am['table']:.2f}×."
    )


def _ms(label: str) -> Column:
    return Column(label, "%.3f")


PAGE = Page(
    key="roofline",
    file="pages/1_Roofline.py",
    label="Roofline",
    icon=":material/show_chart:",
    emoji="📈",
    tabs=(
        "Roofline and step time",
        "HBM per GPU",
        "BF16/INT4 × CUDA graphs",
        "Breakdown and downloads",
    ),
    tab_key="t_roofline",
)


ROOFLINE = Lens(
    page=PAGE,
    order=1,
    title="Roofline",
    slug="roofline",
    compute=lambda s, trace=None: roofline_lens(s),
    figures=lambda r: r["figures"],
    metrics={"headline": HEADLINE, "request": REQUEST},
    charts=(
        Chart("roofline", _roofline),
        Chart("step-time", _step_time, measured=_measured_steps, note=_measured_note),
        Chart("hbm", lambda v: roofline_charts.memory_figure(v.f["memory"])),
    ),
    tables=(
        Table(
            "seed-table",
            lambda v: pd.DataFrame(v.r["seed_table"]),
            columns={
                "configuration": Column("configuration"),
                "t_hbm_ms": _ms("GPU time [ms]"),
                "t_fixed_ms": _ms("launches + host [ms]"),
                "t_step_ms": _ms("step [ms]"),
                "speedup": _ms("vs BF16 eager"),
                "tokens_per_s": Column("tok/s", "%.1f"),
            },
            report="BF16/INT4 × CUDA graphs",
            download="INT4 table",
        ),
        Table(
            "sweep",
            lambda v: pd.DataFrame({k: val for k, val in v.r["sweep"].items()}),
            download="Batch sweep",
        ),
    ),
    breakdown=("roofline", "decode", "request", "memory"),
    downloads=("sweep", "seed-table"),
    rows=(
        DECODE_TOKENS_PER_S.row("Decode"),
        DECODE_TOKENS_PER_S_PER_SEQ.row("Decode"),
        DECODE_T_STEP_MS.row("Decode"),
        DECODE_BOUND.row("Decode"),
        MEMORY_MAX_BATCH.row("Decode"),
        Row("Decode", "Weights per GPU", "memory.weights_per_gpu_gb", "GB"),
        common.REQUEST_TTFT_MS.row("Request"),
        common.REQUEST_TPOT_MS.row("Request"),
        common.REQUEST_E2E_S.row("Request"),
        common.REQUEST_REQUESTS_PER_S.row("Request"),
    ),
    texts={"amdahl": _amdahl},
)
