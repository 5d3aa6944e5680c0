"""The landing page's summary, declared once: every lens's first figures from one call
(:func:`model.evaluate.summary`), each with its delta against the pinned baseline."""

from __future__ import annotations

from model import serving
from model.evaluate import summary
from ui import serving_worker
from ui.layout import fmt
from ui.lens import Lens, Metric, Metrics, Page, View
from ui.lenses.common import REQUEST_SHORT, STRATEGY, economics_figures, ms_latency, seconds
from ui.text import step_ms

DECODE = Metrics(
    (
        Metric("Aggregate tok/s", "decode.tokens_per_s", better="higher"),
        Metric("Step time", "decode.t_step_ms", show=step_ms, unit="ms"),
        Metric("Bound", "decode.bound", bound=True),
        Metric(
            "AI / ridge [FLOP/B]",
            value=lambda v: (
                f"{fmt(v.f['roofline']['arithmetic_intensity'])} / "
                f"{v.f['roofline']['ridge_flop_per_byte']:.0f}"
            ),
            delta=False,
            help="Arithmetic intensity (FLOPs per byte read) of this step / the ridge point of the "
            "GPU: below the ridge the step waits on memory, above it on the arithmetic.",
        ),
        Metric("Max batch in HBM", "memory.max_batch", show=lambda x: f"{x:,}", better="higher"),
    ),
    caption=lambda v: (
        f"One request of {v.f['request']['prompt_tokens']:,} prompt and "
        f"{v.f['request']['output_tokens']:,} output tokens at batch {v.s.batch:,}:"
    ),
)

LAUNCH = Metrics(
    (
        Metric(
            "Kernels / step",
            "launch.kernels",
            show=lambda x: f"{x:,}",
            delta=False,
            help="eager launches per decode step",
        ),
        Metric(
            "Eager launch time",
            "launch.t_launch_eager_ms",
            show=ms_latency,
            unit="ms",
            help="Kernels per step × the CPU cost τ of one launch, paid when graphs are off.",
        ),
        Metric("Step, eager", "launch.t_step_eager_ms", show=ms_latency, unit="ms"),
        Metric(
            "Step, graph",
            "launch.t_step_graph_ms",
            show=ms_latency,
            unit="ms",
            help=lambda v: f"mode: {v.f['launch']['graph_mode']}",
        ),
        Metric(
            "Graph speed-up",
            "launch.graph_speedup",
            show=lambda x: f"{x:.2f}×",
            better="higher",
            unit="×",
            help="Eager step time ÷ graph step time at this batch.",
        ),
        Metric(
            "Graphs captured",
            "launch.graphs_captured",
            show=lambda x: f"{x:,}",
            delta=False,
            help=lambda v: (
                f"{v.f['launch']['capture_s']:.1f} s of start-up, "
                f"{v.f['launch']['graph_memory_gb']:.2f} GB per GPU"
            ),
        ),
    )
)


def _weights_help(v: View) -> str:
    cs = v.f["cold_start"]
    return (
        f"{v.s.loader} from {v.s.storage}: read {cs['weights_read_s']:,.1f} s, "
        + (f"host pass {cs['weights_host_s']:,.1f} s, " if cs["weights_host_s"] else "")
        + f"host-to-device copy (H2D) {cs['weights_h2d_s']:.2f} s, "
        + ("overlapped" if cs["overlap"] else "in series")
    )


COLD_START = Metrics(
    (
        Metric("Time to ready", "cold_start.total_s", show=seconds, unit="s"),
        Metric(
            "Floor (items 1–3)",
            "cold_start.floor_s",
            show=seconds,
            unit="s",
            help="Process init + CUDA context + allocator: what no loader crosses.",
        ),
        Metric(
            "4 Weights → HBM", "cold_start.weights_s", show=seconds, unit="s", help=_weights_help
        ),
        Metric(
            "5 Graphs + JIT",
            "cold_start.graphs_jit_s",
            show=seconds,
            unit="s",
            help="torch.compile's just-in-time (JIT) compilation and the capture of the CUDA "
            "graphs.",
        ),
        Metric(
            "Optimised",
            "cold_start_optimised.total_s",
            show=seconds,
            unit="s",
            help="overlapping loader, warm compile cache, bounded capture, lean environment",
        ),
    )
)

SCALE_TO_ZERO = Metrics(
    STRATEGY.items,
    lead=STRATEGY.lead,
    caption=lambda v: (
        f"Traffic profile {v.s.traffic} × {v.s.rate_scale:g} "
        f"({v.f['economics']['requests_per_day']:,.0f} requests a day), idle timeout "
        f"{v.s.idle_timeout_s:g} s, start-up SLA {v.s.sla_s:g} s."
    ),
)


def _compute(s, trace=None) -> dict:
    serving_worker.prime(s)
    return {**summary(s), "serving_summary": serving.replica_summary(s.effective())}


def _figures(r: dict) -> dict:
    return {**r, **economics_figures(r["economics"])}


_BASIS = {
    "slo": "the highest rate whose p99 TTFT and TPOT meet the Serving lens's SLO",
    "saturation": "even light load misses the SLO: what a replica completes at saturation",
    "budget": "one request's figures: the capacity search is past this server's budget",
    "request": "one request's figures",
}


def _serves(v: View) -> bool:
    return bool(v.f["serving_summary"].get("fits"))


SERVING = Metrics(
    (
        Metric(
            "Replica capacity",
            "serving_summary.capacity_per_s",
            show=lambda x: f"{x:,.3g} req/s",
            better="higher",
            unit="req/s",
            help=lambda v: _BASIS.get(v.f["serving_summary"]["basis"], ""),
            when=_serves,
        ),
        Metric(
            lambda v: f"Replicas for {v.s.request_rate} req/s",
            "serving_summary.replicas_needed",
            show=lambda x: "—" if x is None else f"{x:,}",
            unit="",
            help="the scenario's request rate ÷ a replica's capacity, rounded up",
            when=_serves,
        ),
        Metric(
            "TTFT, light load",
            "serving_summary.ttft_ms",
            show=ms_latency,
            unit="ms",
            help="Time to first token (queue, front end and prefill) of a request at light load.",
            when=_serves,
        ),
        Metric(
            "TPOT, light load",
            "serving_summary.tpot_ms",
            show=ms_latency,
            unit="ms",
            help="Time per output token (one decode step) at light load.",
            when=_serves,
        ),
    ),
    caption=lambda v: (
        f"One replica is {v.s.gpus} GPU(s) under the {v.s.engine_profile.name} profile, sized "
        f"by runs of {v.s.prompt_tokens:,}-token prompts and {v.s.output_tokens:,}-token "
        f"outputs; the rate is the scenario's request rate ({v.s.request_rate} req/s, set on the "
        "Serving page)."
        if _serves(v)
        else "The scenario cannot serve one request: its weights or one request's KV cache "
        "do not fit (the Serving page says which)."
    ),
)


PAGE = Page(
    key="home",
    file="app.py",
    label="Home",
    icon=":material/home:",
    emoji="🧮",
)


HOME = Lens(
    page=PAGE,
    title="Summary",
    slug="home",
    compute=_compute,
    figures=_figures,
    metrics={
        "decode": DECODE,
        "request": REQUEST_SHORT,
        "launch": LAUNCH,
        "cold_start": COLD_START,
        "scale_to_zero": SCALE_TO_ZERO,
        "serving": SERVING,
    },
    texts={
        "fit": lambda v: (
            None
            if v.f["memory"]["weights_fit"]
            else f"The weights ({fmt(v.f['memory']['weights_per_gpu_gb'])} GB per GPU) do not fit "
            f"in {fmt(v.f['memory']['usable_per_gpu_gb'])} GB usable HBM per GPU."
        ),
        "fallback": lambda v: (
            f"Batch {v.s.batch} is above the largest captured size "
            f"({v.f['launch']['largest_capture_size']}): it runs eager."
            if v.f["launch"]["eager_fallback"]
            else None
        ),
    },
)
