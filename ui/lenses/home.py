"""The landing page's summary, declared once: every lens's first figures from one call
(:func:`model.evaluate.summary`), each with its delta against the pinned baseline."""

from __future__ import annotations

from model import serving
from model.evaluate import summary
from ui import serving_worker
from ui.lens import Lens, Metric, Metrics, Page, View
from ui.lenses import cold_start, launch, roofline
from ui.lenses.common import REQUEST_SHORT, STRATEGY, economics_figures, ms_latency
from ui.text import fmt

DECODE = Metrics(
    (
        Metric.of(roofline.DECODE_TOKENS_PER_S),
        Metric.of(roofline.DECODE_T_STEP_MS),
        Metric.of(roofline.DECODE_BOUND),
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
        Metric.of(roofline.MEMORY_MAX_BATCH),
    ),
    caption=lambda v: (
        f"One request of {v.f['request']['prompt_tokens']:,} prompt and "
        f"{v.f['request']['output_tokens']:,} output tokens at batch {v.s.batch:,}:"
    ),
)

LAUNCH = Metrics(
    (
        Metric.of(launch.LAUNCH_KERNELS, delta=False),
        Metric.of(launch.LAUNCH_T_LAUNCH_EAGER_MS),
        Metric.of(launch.LAUNCH_T_STEP_EAGER_MS),
        Metric.of(launch.LAUNCH_T_STEP_GRAPH_MS),
        Metric.of(launch.LAUNCH_GRAPH_SPEEDUP),
        Metric.of(launch.LAUNCH_GRAPHS_CAPTURED, delta=False),
    )
)


COLD_START = Metrics(
    (
        Metric.of(cold_start.COLD_START_TOTAL_S),
        Metric.of(cold_start.COLD_START_FLOOR_S),
        Metric.of(cold_start.COLD_START_WEIGHTS_S),
        Metric.of(cold_start.COLD_START_GRAPHS_JIT_S),
        Metric.of(cold_start.COLD_START_OPTIMISED_TOTAL_S),
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
    found = serving_worker.search(s)  # in a worker, never in the session's thread
    return {
        **summary(s, search=found),
        "serving_summary": serving.replica_summary(s, found),
    }


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
