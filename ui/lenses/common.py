"""Metric rows more than one lens shows: one request's latency (the Roofline page and the
landing page) and the recommended strategy of Scale to zero (its page and the landing page)."""

from __future__ import annotations

from model.compare import with_best
from model.economics import STRATEGY_NAMES
from ui.lens import Figure, Metric, Metrics, View
from ui.text import BOUND_HELP, GLOSSARY, fmt, latency


def _chunking(v: View) -> str:
    req = v.f["request"]
    if req["prefill_chunks"] > 1:
        return (
            f"{req['prompt_tokens']:,} prompt tokens in {req['prefill_chunks']} chunks of up to "
            f"{req['prefill_chunk_tokens']:,}"
        )
    return f"{req['prompt_tokens']:,} prompt tokens in one chunk"


def _split(v: View) -> str:
    req = v.f["request"]
    return (
        f"compute {req['prefill_t_compute_ms']:.2f} ms, memory {req['prefill_t_memory_ms']:.2f} "
        f"ms, all-reduce {req['prefill_t_comm_ms']:.2f} ms, launches "
        f"{req['prefill_t_launch_ms']:.2f} ms"
    )


def ms_latency(ms: float) -> str:
    """A figure in ms shown as a latency (``35.3 ms``, ``2.17 s``)."""
    return latency(ms / 1e3)


def seconds(x: float) -> str:
    """A start-up figure in s: ``115.7 s``."""
    return f"{x:,.1f} s"


REQUEST_TTFT_MS = Figure(
    "request.ttft_ms",
    "TTFT",
    name="Time to first token",
    show=ms_latency,
    unit="ms",
    help=lambda v: (
        f"Time to first token at light load: the engine's front-end time "
        f"({v.f['request']['frontend_ms']:g} ms: HTTP, chat template, tokenisation), the "
        f"prefill ({_chunking(v)}) and one host step per chunk."
    ),
)


TTFT = Metric.of(REQUEST_TTFT_MS)
PREFILL = (
    Metric(
        "Prefill",
        "request.prefill_ms",
        show=ms_latency,
        unit="ms",
        help=lambda v: f"{_chunking(v)}: {_split(v)}.",
    ),
    Metric(
        "Prefill bound",
        "request.prefill_bound",
        value=lambda v: v.f["request"]["prefill_bound"],
        help=lambda v: BOUND_HELP.get(v.f["request"]["prefill_bound"]),
        better=None,
    ),
)
REQUEST_TPOT_MS = Figure(
    "request.tpot_ms",
    "TPOT",
    name="Time per output token",
    show=ms_latency,
    unit="ms",
    help=lambda v: f"Time per output token: one decode step at batch {v.f['request']['batch']:,}.",
)


REQUEST_E2E_S = Figure(
    "request.e2e_s",
    "End-to-end",
    name="End-to-end latency",
    show=latency,
    unit="s",
    help=lambda v: (
        f"TTFT + ({v.f['request']['output_tokens']:,} − 1) × TPOT for "
        f"{v.f['request']['output_tokens']:,} output tokens."
    ),
)


REQUEST_REQUESTS_PER_S = Figure(
    "request.requests_per_s",
    "Requests/s",
    name="Requests per second",
    better="higher",
    unit="req/s",
    help=lambda v: (
        f"At batch {v.f['request']['batch']:,}: each request's prefill alone on the "
        f"GPU plus its share of {v.f['request']['output_tokens']:,} decode steps "
        f"({fmt(v.f['request']['output_tokens_per_s'])} output tok/s)."
    ),
)


LATENCY = (
    Metric.of(REQUEST_TPOT_MS),
    Metric.of(REQUEST_E2E_S),
    Metric.of(REQUEST_REQUESTS_PER_S),
)

#: one request, all of it (the Roofline page)
REQUEST = Metrics((TTFT, *PREFILL, *LATENCY))
#: one request without the prefill's split (the landing page)
REQUEST_SHORT = Metrics((TTFT, *LATENCY))


# --- Scale to zero: the recommended strategy ---------------------------------------------------


def _lead(v: View) -> str:
    eco = v.f["economics"]
    if v.base is None:
        against = "against the warm floor"
    else:
        base = v.base.f["economics"]
        against = (
            f"against the baseline's recommended strategy ({STRATEGY_NAMES[base['recommended']]})"
        )
    return (
        f"**Recommended: {STRATEGY_NAMES[eco['recommended']]}** — the lowest total of GPU time "
        f"and SLA penalties for this traffic; its figures below, {against}."
    )


def break_even_text(be: float | None) -> str:
    """The break-even cold start as shown: 0 means scaling to zero never pays, None that it
    pays even with an hour-long cold start."""
    return "never pays" if be == 0 else ("> 1 h" if be is None else f"{be:,.0f} s")


def _vs_warm(v: View) -> dict:
    rec, warm = v.f["recommended"], v.f["economics"]["warm"]
    diff = rec["total_usd_per_day"] - warm["total_usd_per_day"]
    if abs(diff) < 0.005:
        return {"delta": "= warm floor", "delta_color": "off", "delta_arrow": "off"}
    return {
        "delta": f"{'-' if diff < 0 else '+'}${abs(diff):,.2f} vs warm",
        "delta_color": "inverse",
    }


#: the recommended strategy's figures: against the warm floor, or against the baseline's
#: recommended strategy (``recommended.*`` is the recommended strategy's section)
STRATEGY = Metrics(
    (
        Metric(
            "Total per day",
            "recommended.total_usd_per_day",
            show=lambda x: f"${x:,.2f}",
            unit="$",
            help="GPU-hours × price plus the SLA penalties, per day.",
            alone=_vs_warm,
        ),
        Metric(
            "Cold starts / day",
            "recommended.cold_starts_per_day",
            show=lambda x: f"{x:,.1f}",
            help="Start-ups from zero: each one makes the requests that arrive during it wait.",
        ),
        Metric(
            "p99 wait",
            "recommended.p99_wait_s",
            show=lambda x: f"{x:,.1f} s",
            unit="s",
            help=lambda v: (
                f"{GLOSSARY['p99 wait']} The worst wait: "
                f"{v.f['recommended']['worst_wait_s']:,.1f} s."
            ),
        ),
        Metric(
            "SLA misses / day",
            "recommended.sla_misses_per_day",
            show=lambda x: f"{x:,.1f}",
            help="Requests a day that wait longer than the start-up SLA, each paying the penalty.",
        ),
        Metric(
            "Break-even cold start",
            "economics.break_even_cold_start_s",
            show=break_even_text,
            better="higher",
            unit="s",
            help=lambda v: (
                "The cold start below which scaling to zero is cheaper than the warm "
                f"floor; this scenario's is {v.f['economics']['cold_start_s']:,.0f} s (optimised "
                f"{v.f['economics']['cold_start_optimised_s']:,.0f} s)"
            ),
        ),
    ),
    lead=_lead,
)


def economics_figures(eco: dict) -> dict:
    """The Scale to zero figures in the summary's namespace: ``economics`` (with the
    recommended strategy's total and cold starts as ``best_*``, the Compare table's rows) and
    ``recommended`` (the recommended strategy's section)."""
    return {**with_best({"economics": eco}), "recommended": eco[eco["recommended"]]}
