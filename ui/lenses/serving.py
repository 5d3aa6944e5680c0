"""The Serving lens, declared once (SPEC 4.6): a server under load, its capacity within the
SLO, and the GPUs a rate needs. Computed off the server's interpreter
(:mod:`ui.serving_worker`)."""

from __future__ import annotations

import math
from collections import OrderedDict

import pandas as pd

from model import codecs, layouts, serving, spec_gain, speculative
from ui import measure_data, serving_charts, serving_worker, streamlit_internals
from ui.chart_common import base_layout, figure
from ui.lens import Chart, Column, Figure, Lens, Metric, Metrics, Page, Table, View
from ui.lenses.common import ms_latency
from ui.text import GLOSSARY, md_escape, plotly_text


def _fits(v: View) -> bool:
    return bool(v.r.get("fits"))


def _or_dash(show):
    return lambda x: "—" if x is None else show(x)


def _rate(x: float) -> str:
    """A request rate in a metric: three significant digits, fewer where the number would pass
    four characters, so a row of six metrics fits at 1440 px ("0.977 req/s" was cut to
    "0.977 r…"; it reads 0.98 req/s)."""
    return f"{_rate_bare(x)} req/s"


def _rate_bare(x: float) -> str:
    """:func:`_rate` without its unit, for a metric whose label states it: the run's row holds
    seven metrics, where "0.98 req/s" is cut to "0.98 r…" at 1440 px."""
    for digits in (3, 2, 1):
        text = f"{x:.{digits}g}"
        if len(text) <= 4 and "e" not in text:
            return text
    return f"{x:,.0f}"


def _count(x) -> str:
    return f"{int(x):,}"


def _slo(v: View) -> str:
    s = v.s
    return (
        f"SLO: TTFT ≤ {s.ttft_slo_ms:g} ms and TPOT ≤ {s.tpot_slo_ms:g} ms for "
        f"{s.slo_attainment:.0%} of requests"
    )


def _peak(v: View) -> str:
    peak = v.f["capacity"]["peak_hour"]
    if peak["replicas_needed"] is None:
        return ""
    return (
        f". The traffic profile's busiest hour ({peak['traffic']}, {peak['request_rate']:.3g} "
        f"req/s) needs {peak['replicas_needed']:,} replica(s), {peak['gpus_needed']:,} GPUs"
    )


def _replicas_help(v: View) -> str:
    cap = v.f["capacity"]
    s = v.s
    if s.request_rate == "inf":
        return "request_rate is inf (all at once): no steady rate to size for."
    if not cap.get("max_request_rate"):
        return "One replica misses the SLO even at light load: no number of replicas meets it."
    return (
        f"⌈{float(s.request_rate):g} req/s ÷ {cap['max_request_rate']:.3g} req/s per replica⌉; "
        f"each replica is {s.replica_gpus} GPU(s) ("
        + (
            f"{s.prefill_instances} prefill and {s.decode_instances} decode instances)."
            if s.disaggregated
            else f"tensor parallel {s.gpus} × {s.data_parallel} data-parallel ranks)."
            if s.data_parallel > 1
            else f"tensor parallel {s.gpus})."
        )
    )


SERVING_P99_TTFT_MS = Figure(
    "serving.p99_ttft_ms",
    "p99 TTFT",
    name="p99 TTFT under load",
    show=_or_dash(ms_latency),
    unit="ms",
    help=lambda v: (
        "99th percentile time to first token, from the moment the client "
        "sends the request (queue, front-end time, prefill chunks)."
    ),
)


SERVING_P99_TPOT_MS = Figure(
    "serving.p99_tpot_ms",
    "p99 TPOT",
    name="p99 TPOT under load",
    show=_or_dash(ms_latency),
    unit="ms",
    help="99th percentile of each request's (end-to-end − TTFT) / (output tokens − 1), "
    "as vLLM's benchmark computes it.",
)


SERVING_OUTPUT_THROUGHPUT = Figure(
    "serving.output_throughput",
    "Output tok/s",
    name="Output throughput",
    show=lambda x: f"{x:,.0f}",
    better="higher",
    unit="tok/s",
    help="Output tokens per second over the run, one replica.",
)


CAPACITY_MAX_REQUEST_RATE = Figure(
    "capacity.max_request_rate",
    "Max rate within SLO",
    name="Max request rate within SLO",
    show=_rate,
    better="higher",
    unit="req/s",
    help=lambda v: f"The largest arrival rate one replica holds. {_slo(v)}.",
)


CAPACITY_REPLICAS_NEEDED = Figure(
    "capacity.replicas_needed",
    "Replicas needed",
    show=_or_dash(_count),
    unit="replicas",
    help=_replicas_help,
)


CAPACITY_GPUS_NEEDED = Figure(
    "capacity.gpus_needed",
    "GPUs needed",
    show=_or_dash(_count),
    unit="GPUs",
    help=_replicas_help,
)


HEADLINE = Metrics(
    (
        Metric.of(SERVING_P99_TTFT_MS, when=_fits),
        Metric.of(SERVING_P99_TPOT_MS, when=_fits),
        Metric.of(SERVING_OUTPUT_THROUGHPUT, when=_fits),
        Metric.of(CAPACITY_MAX_REQUEST_RATE, when=_fits),
        Metric.of(CAPACITY_REPLICAS_NEEDED, when=_fits),
        Metric.of(CAPACITY_GPUS_NEEDED, when=_fits),
    ),
    caption=lambda v: _slo(v) + _peak(v) if _fits(v) else None,
)

RUN = Metrics(
    (
        Metric(
            "Served req/s",
            "serving.request_throughput",
            show=_rate_bare,
            better="higher",
            when=_fits,  # the label states the unit; a pinned baseline's delta leaves it out
        ),
        Metric(
            "Goodput req/s",
            "serving.goodput",
            show=_rate_bare,
            better="higher",
            when=_fits,
            help="Requests per second that met both objectives.",
        ),
        Metric(
            "p99 ITL",
            "serving.p99_itl_ms",
            show=_or_dash(ms_latency),
            unit="ms",
            when=_fits,
            help="99th percentile gap between two tokens of one request.",
        ),
        Metric(
            "Peak output tok/s",
            "serving.max_output_tokens_per_s",
            show=lambda x: f"{x:,.0f}",
            better=None,
            when=_fits,
            help="The most output tokens streamed in one second of the run, as vLLM's "
            'benchmark prints its "Peak output token throughput": the burst the API server '
            "streams while the batch is largest, one replica.",
        ),
        Metric(
            "Mean batch",
            "serving.mean_batch",
            show=lambda x: f"{x:,.1f}",
            better=None,
            when=_fits,
            help="Sequences per engine step, averaged over the steps.",
        ),
        Metric(
            "Peak KV cache",
            "serving.peak_kv_cache_usage",
            show=lambda x: f"{x:.0%}",
            better=None,
            unit="fraction",
            when=_fits,
            help="The largest share of the replica's KV cache the run held at once; near 100 % "
            "new requests wait and the newest are preempted. " + GLOSSARY["KV cache"],
        ),
        Metric(
            "Preemptions",
            "serving.preemptions",
            show=_count,
            when=_fits,
            help="Running requests evicted when the KV cache ran out, then recomputed; with "
            "prefix caching on, a recompute skips the blocks still cached (vLLM keeps a "
            "preempted request's blocks until they are evicted, SGLang its prompt's).",
        ),
    ),
)


def _prefix_on(v: View) -> bool:
    return _fits(v) and v.s.prefix_caching_on and v.s.shared_prefix_tokens >= 16


def _prefix_caption(v: View) -> str | None:
    if not _prefix_on(v):
        return None
    f = v.f["serving"]
    total = f.get("total_input_tokens") or 0
    saved = f.get("prefix_cached_tokens") or 0
    return (
        f"{v.s.shared_prefix_tokens:,} shared prompt tokens in {v.s.prefix_groups:,} "
        f"group(s): {saved:,} of {total:,} prompt tokens ({saved / max(total, 1):.0%}) were "
        "read from the cache instead of prefilled; the shared blocks count once in the KV cache."
    )


PREFIX = Metrics(
    (
        Metric(
            "Prefix cache hit rate",
            "serving.prefix_cache_hit_rate",
            show=lambda x: f"{x:.0%}",
            better="higher",
            unit="fraction",
            when=_prefix_on,
            help="Prompt tokens found in the cache over those looked up when a request was "
            "admitted (vLLM's 'Prefix cache hit rate').",
        ),
        Metric(
            "Prefill tokens saved",
            "serving.prefix_cached_tokens",
            show=_count,
            better="higher",
            when=_prefix_on,
            help="Prompt tokens whose KV came from the cache: their prefill was skipped.",
        ),
    ),
    caption=_prefix_caption,
)


def _empty(title: str):
    return figure([], base_layout(title))


def _load(v: View):
    if not _fits(v):
        return _empty("Latency against the request rate: the scenario cannot serve")
    return serving_charts.load_figure(v.r["sweep"], v.f["capacity"], v.f["capacity"]["slo"])


def _runs() -> list[dict]:
    from model.serving import benchmark_points

    return benchmark_points(measure_data.datasets())


def _measured_runs(fig, v: View):
    return serving_charts.with_runs(fig, _runs()) if _fits(v) else fig


def _measured_note(v: View) -> str | None:
    runs = _runs()
    if not runs or not _fits(v):
        return None
    return (
        f"Diamonds: {len(runs)} figures of the serving benchmarks uploaded on the Measurements "
        "page, at their offered rate (or, for a run at inf or at a fixed concurrency, at the "
        "rate it served); the curves are this scenario's."
    )


def _pareto_runs(v: View) -> list[dict]:
    from model.serving import benchmark_pareto_points

    return benchmark_pareto_points(measure_data.datasets(), v.s.replica_gpus)


def _measured_pareto(fig, v: View):
    if not _fits(v) or not pareto_points(v):
        return fig
    return serving_charts.with_pareto_runs(fig, _pareto_runs(v))


def _timeline(v: View):
    if not _fits(v):
        return _empty("One run: the scenario cannot serve")
    return serving_charts.timeline_figure(v.r["timeline"], v.f["serving"]["max_num_seqs"])


PARETO_SHOW = "w_pareto_show"  #: the page's TP × dtype filter (session only)


def pareto_group(p: dict) -> str:
    """A Pareto point's group, as the filter and the legend name it: ``TP 4 · fp8``, or for a
    disaggregated point ``P/D, decode TP 4 · fp8``."""
    if p.get("disaggregated"):
        return f"P/D, decode TP {p['decode_gpus']} · {p['weights_dtype']}"
    return f"{p.get('layout') or 'TP ' + str(p['gpus'])} · {p['weights_dtype']}"


def pareto_groups(points: list[dict]) -> list[str]:
    """The groups of the Pareto sweep (:func:`pareto_group`): one engine's by GPUs, the
    data-parallel layouts after, the disaggregated last."""
    order = {}
    for p in points:
        kind = 2 if p.get("disaggregated") else 1 if p.get("data_parallel", 1) > 1 else 0
        size = p["decode_gpus"] if p.get("disaggregated") else p["gpus"]
        order[pareto_group(p)] = (kind, size, p["weights_dtype"])
    return sorted(order, key=order.get)


def pareto_config(p: dict) -> str:
    """A point's configuration in words (the notes and the chart's reading)."""
    if p.get("disaggregated"):
        return (
            f"disaggregated: decode TP {p['decode_gpus']} with "
            f"{p['prefill_gpus_per_decode_instance']:.2g} prefill GPUs, {p['weights_dtype']}, "
            f"max_num_seqs {p['max_num_seqs']}"
        )
    layout = p.get("layout") or f"TP {p['gpus']}"
    return f"{layout}, {p['weights_dtype']}, max_num_seqs {p['max_num_seqs']}"


def _shown_points(v: View) -> list[dict]:
    """The sweep's points the page's filter keeps (every point outside a page run)."""
    points = pareto_points(v)
    if streamlit_internals.run_context() is None:  # a report or a bare call: no filter
        return points
    import streamlit as st

    keep = st.session_state.get(PARETO_SHOW)
    if not keep:
        return points
    return [p for p in points if pareto_group(p) in keep]


def _pareto(v: View):
    if not _fits(v):
        return _empty("Pareto front: the scenario does not fit")
    why = _view("pareto", v).get("reason")
    if why:
        return _empty(f"Pareto front: {plotly_text(why)}")
    if not pareto_points(v):
        return _empty("Pareto front: no configuration fits")
    s = v.s
    return serving_charts.pareto_figure(
        _shown_points(v),
        {
            "gpus": s.gpus,
            "weights_dtype": s.weights_dtype,
            "max_num_seqs": s.max_num_seqs,
            "disaggregated": s.disaggregated,
            "decode_gpus": s.decode_gpus or s.gpus,
            "layout": serving.layout_name(s.gpus, s.data_parallel, s.expert_parallel),
            "gpus_total": s.replica_gpus,
        },
        1000.0 / float(s.tpot_slo_ms),
    )


def _pareto_note(v: View) -> str | None:
    if not _fits(v) or not pareto_points(v):
        return None
    target = 1000.0 / float(v.s.tpot_slo_ms)
    best = serving.pareto_best(_shown_points(v), target)
    read = (
        f"At the TPOT SLO's {target:.3g} tok/s per user the most a GPU serves is "
        f"{best['tokens_per_s_per_gpu']:,.0f} tok/s ({pareto_config(best)})."
        if best is not None
        else f"No configuration shown reaches the TPOT SLO's {target:.3g} tok/s per user."
    )
    return (
        read + " Tokens per second per GPU are the same for one replica or several: replicas "
        "multiply the GPUs and the throughput alike, so the front does not move with the "
        "traffic; the Latency against load tab says how many replicas a rate needs. "
        "Disaggregated points (P/D) are a decode instance at that concurrency with the prefill "
        "GPUs its request rate needs at a prefill instance's saturation throughput, in the "
        "scenario's dtype (prefill GPUs per decode instance matched in rate, a fraction "
        "included)." + _pareto_runs_note(v)
    )


def _pareto_runs_note(v: View) -> str:
    runs = _pareto_runs(v)
    if not runs:
        return ""
    return (
        f" Diamonds: {len(runs)} serving runs uploaded on the Measurements page (a vllm bench "
        "sweep's, or any serve results), placed as vLLM's plot_pareto places them: output "
        "tok/s over the run's concurrency, and over its TP × PP × DP (the scenario's GPUs "
        "where the run states none)."
    )


def _spec_shown(v: View):
    """The scenario the tab shows: its own method, or, with ``speculative=none``, a preview of
    the model's own MTP module where it has one, else EAGLE-3, at the method's defaults."""
    s = v.s
    if s.speculative != "none":
        return s
    preview = "mtp" if s.model.mtp_params_b else "eagle3"
    return s.model_copy(update={"speculative": preview})


_SPEC_CURVES: OrderedDict[str, tuple] = OrderedDict()


def _spec_curve(v: View) -> tuple:
    """``(scenario shown, its speed-up curve to twice the largest batch)``, computed once per
    scenario for the tab's chart and its note (the last 16 kept)."""
    s = _spec_shown(v)
    key = s.raw.model_dump_json()
    if key not in _SPEC_CURVES:
        _SPEC_CURVES[key] = (s, spec_gain.speedup_curve(s, reach=2.0, points=80))
        while len(_SPEC_CURVES) > 16:
            _SPEC_CURVES.popitem(last=False)
    return _SPEC_CURVES[key]


def _speculative(v: View):
    s, sw = _spec_curve(v)
    return serving_charts.speculative_figure(
        sw,
        s.speculative + (" (preview)" if v.s.speculative == "none" else ""),
        sw["max_batch"],
        int(s.batch),
    )


def _speculative_note(v: View) -> str | None:
    s, sw = _spec_curve(v)
    k, alpha = speculative.k_of(s), speculative.alpha_of(s)
    tau = speculative.tokens_per_step(s)
    mp = speculative.methods()[s.speculative]
    at = sw["speedup_at_batch"]
    cross = sw["crossover_batch"]
    where = (
        f"It stops paying above a batch of {cross:,.0f} sequences, which a steady run reaches "
        f"at about {sw['crossover_request_rate']:.3g} req/s (Little's law: batch × the "
        "time each request spends, prefill and decode, at that batch)."
        if cross is not None
        else "It pays at every batch on the chart."
    )
    given = (
        "set"
        if s.spec_acceptance is not None
        else "from the acceptance length set"
        if s.spec_acceptance_length is not None
        else "the method’s published default"
    )
    preview = (
        f"Speculative decoding is off: a preview of {mp.name} at its defaults (set it under "
        "'Speculative decoding' above to serve with it). "
        if v.s.speculative == "none"
        else ""
    )
    return (
        f"{preview}{mp.name}: k = {k} draft tokens per step, acceptance α = {alpha:.2f} "
        f"({given}): each step emits (1 − α^(k+1)) / (1 − α) = {tau:.2f} tokens per sequence. "
        f"At the scenario's batch of {s.batch:,} it decodes {at:.2f}× the tokens per second of "
        f"no speculation. {where} The verify step reads the weights once for k + 1 tokens per "
        "sequence, so the gain is near τ while the step is memory-bound and shrinks as it "
        "turns compute-bound; the drafter's weights and KV come out of the cache."
    )


#: what the page says while a view is computed, by view (model.serving.VIEWS)
_VIEW_SPINNERS = {
    "disagg": "Sizing the prefill and decode pools (their capacity searches, and the "
    "aggregated one) in a worker process…",
    "pareto": "Sweeping tensor parallelism, weight dtypes and max_num_seqs for the Pareto front "
    "(36 runs or more) in a worker process…",
}


def _view(kind: str, v: View) -> dict:
    """A view computed apart from the lens, only when something shows it (a worker computes
    it; cached there): ``disagg``, the Disaggregation view; ``pareto``, the Pareto front."""
    if streamlit_internals.run_context() is None:  # a bare call (tests, a script, the report)
        return serving.VIEWS[kind](v.s)
    if serving_worker.view_cached(kind, v.s) is None:
        import streamlit as st

        with st.spinner(_VIEW_SPINNERS[kind], show_time=True):
            return serving_worker.view(kind, v.s)
    return serving_worker.view(kind, v.s)


def pareto_points(v: View) -> list[dict]:
    """The Pareto front's points for the view's scenario ([] when it cannot be computed)."""
    return _view("pareto", v).get("points") or []


def _disagg(v: View):
    if not _fits(v):
        return _empty("Disaggregation: the scenario does not fit")
    view = _view("disagg", v)
    if view.get("reason"):
        return _empty(f"Disaggregation: {plotly_text(view['reason'])}")
    rate = None if v.s.request_rate == "inf" else float(v.s.request_rate)
    return serving_charts.disagg_figure(view, rate)


def _disagg_note(v: View) -> str | None:
    if not _fits(v):
        return None
    view = _view("disagg", v)
    if view.get("reason"):
        return f"Disaggregation cannot be sized here: {md_escape(view['reason'])}."
    s, pc, best, split = v.s, view["pools"], view["best_split"], view["as_set"]
    preview = (
        "Disaggregation is off: a preview of 1P1D on "
        f"{s.gpus} GPUs per instance (set it under 'Prefill/decode disaggregation' above to "
        "serve with it). "
        if view["preview"]
        else ""
    )
    pools = (
        f"Within the SLO one prefill instance ({pc['prefill_gpus']} GPUs) takes "
        f"{pc['prefill_rate_per_instance']:.3g} req/s and one decode instance "
        f"({pc['decode_gpus']} GPUs) {pc['decode_rate_per_instance']:.3g} req/s; "
    )
    best_text = (
        f"the best split is {best['prefill_instances']}P{best['decode_instances']}D "
        f"({best['gpus']} GPUs, {best['max_request_rate']:.3g} req/s, "
        f"{best['request_rate_per_gpu']:.3g} req/s per GPU), against "
        f"{view['aggregated_rate_per_replica'] / view['aggregated_gpus_per_replica']:.3g} req/s "
        f"per GPU aggregated ({view['aggregated_rate_per_replica']:.3g} req/s on "
        f"{view['aggregated_gpus_per_replica']} GPUs). "
        if best
        else "a pool meets the SLO at no rate, so no split does. "
    )
    as_set = (
        f"The {split['prefill_instances']}P{split['decode_instances']}D "
        f"{'preview' if view['preview'] else 'as set'} holds "
        f"{view['as_set_rate_per_replica']:.3g} req/s on {view['as_set_gpus_per_replica']} GPUs "
        f"(simulated as a whole). "
    )
    at = view.get("at_rate")
    at_text = (
        f"At {at['request_rate']:g} req/s: {at['aggregated_gpus']:.0f} GPUs aggregated, "
        f"{at['as_set_gpus']:.0f} as {split['prefill_instances']}P{split['decode_instances']}D "
        f"replicas, {at['pools_gpus']:.0f} with the pools scaled apart. "
        if at and at["aggregated_gpus"] == at["aggregated_gpus"]
        else ""
    )
    move = (
        f"A prompt's KV moves at {view['kv_transfer_gb_s']:,.0f} GB/s "
        f"({pc['mean_transfer_ms']:.2f} ms for the mean prompt). "
    )
    run = ""
    f = v.f["serving"]
    if s.disaggregated and f.get("mean_kv_transfer_ms") is not None:
        run = (
            f"In this run a mean TTFT of {f['mean_ttft_ms']:.0f} ms is "
            f"{f['mean_prefill_instance_ms']:.0f} ms on the prefill instance (front end, queue, "
            f"prefill), {f['mean_kv_transfer_ms']:.2f} ms of transfer and "
            f"{f['mean_decode_instance_first_ms']:.0f} ms on the decode instance (its front "
            "end, admission and first step). "
        )
    return (
        preview + pools + best_text + as_set + at_text + move + run + "A decode instance "
        "runs no prefill chunks, so its TPOT has no prefill interference; TTFT pays the "
        "transfer and a second front end."
    )


_LAYOUT_CURVES: OrderedDict[str, list] = OrderedDict()


def _parallel_curves(v: View) -> list[dict]:
    """:func:`model.layouts.curves` of the scenario, computed once per scenario for the view's
    chart and its note (the last 16 kept)."""
    key = v.s.raw.model_dump_json()
    if key not in _LAYOUT_CURVES:
        _LAYOUT_CURVES[key] = layouts.curves(v.s)
        while len(_LAYOUT_CURVES) > 16:
            _LAYOUT_CURVES.popitem(last=False)
    return _LAYOUT_CURVES[key]


def _parallel(v: View):
    return serving_charts.parallel_figure(_parallel_curves(v))


def _parallel_note(v: View) -> str | None:
    s = v.s
    curves = [c for c in _parallel_curves(v) if c["fits"]]
    if not curves:
        return "No layout of these GPUs holds the model."
    tops = ", ".join(
        f"{c['layout']}: {float(c['tokens_per_s'][-1]):,.0f} tok/s at its most "
        f"{c['max_sequences']:,} sequences ({float(c['tpot_ms'][-1]):.0f} ms per token)"
        for c in curves
    )
    moe = bool(s.model.experts)
    why = (
        "Data-parallel ranks each read the attention and shared weights and only their own "
        "sequences' KV (an MLA latent is not split by tensor parallelism, so TP copies it to "
        "every GPU); their MoE layers carry every rank's tokens over the experts spread on all "
        "GPUs and exchange them each layer. So DP with EP holds more sequences and wins at "
        "large batches; TP wins at small ones, where the replicated weights and the exchange "
        "cost more than they save."
        if moe
        else "A dense model's data-parallel ranks are replicas behind one server: each reads "
        "all the weights, so TP over the same GPUs is faster per sequence and DP holds more "
        "sequences only where TP's KV cache is the limit."
    )
    return (
        f"The replica's {curves[0]['gpus']} GPUs laid out as {len(curves)} layouts, decode "
        f"only (the step physics of the other lenses; the Serving run and the Pareto front "
        f"simulate them): {tops}. {why} The step model's exchange is vLLM's default "
        "all-gather and reduce-scatter; it does not model DeepEP's kernels, the dual-batch "
        "overlap or expert load imbalance (docs/parallelism.md)."
    )


def _sweep_table(v: View) -> pd.DataFrame:
    return pd.DataFrame(v.r["sweep"]) if _fits(v) else pd.DataFrame()


def _pareto_table(v: View) -> pd.DataFrame:
    if not _fits(v):
        return pd.DataFrame()
    rows = []
    for p in sorted(pareto_points(v), key=lambda p: -p["tokens_per_s_per_gpu"]):
        if p.get("disaggregated"):
            # the nearest whole split: a decode instance and the prefill instances its
            # rate needs, rounded up
            variant = v.s.raw.with_dtype(
                p["weights_dtype"],
                disaggregated=True,
                decode_gpus=p["decode_gpus"],
                decode_instances=1,
                prefill_instances=max(
                    1, math.ceil(p["prefill_gpus_per_decode_instance"] / p["prefill_gpus"] - 1e-9)
                ),
                max_num_seqs=p["max_num_seqs"],
            )
        else:
            variant = v.s.raw.with_dtype(
                p["weights_dtype"],
                gpus=p.get("tp", p["gpus"]),
                data_parallel=p.get("data_parallel", 1),
                expert_parallel=p.get("expert_parallel", False),
                max_num_seqs=p["max_num_seqs"],
                disaggregated=False,
            )
        rows.append(
            {
                "front": "◆" if p["front"] else "",
                "layout": "P/D" if p.get("disaggregated") else p.get("layout", "TP"),
                "gpus": round(p["gpus"], 2),
                "weights_dtype": p["weights_dtype"],
                "max_num_seqs": p["max_num_seqs"],
                "tokens_per_s_per_gpu": round(p["tokens_per_s_per_gpu"], 1),
                "tokens_per_s_per_user": round(p["tokens_per_s_per_user"], 2),
                "mean_ttft_ms": None if p["mean_ttft_ms"] is None else round(p["mean_ttft_ms"], 1),
                "link": codecs.to_url(variant, PAGE.url("")),
            }
        )
    return pd.DataFrame(rows)


def _saturated(v: View) -> str | None:
    if not _fits(v) or not v.f["serving"]["saturated"]:
        return None
    f = v.f["serving"]
    return (
        f"Saturated: requests arrive faster than one replica completes them (it served "
        f"{f['request_throughput']:.3g} req/s). The queue grows for as long as the run lasts, "
        f"so TTFT and end-to-end percentiles here depend on the run's {v.s.num_requests:,} "
        "requests, not on the server alone; lower the rate or add replicas."
    )


def _near_capacity(v: View) -> str | None:
    """The scenario's rate within 10 % of the largest one replica holds within the SLO: a
    small change of traffic or of the engine tips it over (issue 40, item 3)."""
    if not _fits(v) or v.s.request_rate == "inf":
        return None
    best = v.f["capacity"].get("max_request_rate") or 0.0
    rate = float(v.s.request_rate)
    if best <= 0 or not 0.9 * best <= rate <= best:
        return None
    return (
        f"Near capacity: {rate:g} req/s is {rate / best:.0%} of the {best:.3g} req/s one "
        "replica holds within the SLO. Ten percent more traffic, or a slightly slower engine, "
        "misses the SLO; plan for headroom or another replica."
    )


#: vLLM's ``vllm bench serve`` result block order: each metric's mean, median, p90 and p99
_PERCENTILES = (("ttft", "TTFT"), ("tpot", "TPOT"), ("itl", "ITL"), ("e2el", "E2EL"))


def _percentile_table(v: View) -> pd.DataFrame:
    if not _fits(v):
        return pd.DataFrame()
    f = v.f["serving"]
    return pd.DataFrame(
        [
            {
                "metric": label,
                **{q: f.get(f"{q}_{key}_ms") for q in ("mean", "median", "p90", "p99")},
            }
            for key, label in _PERCENTILES
        ]
    )


def _does_not_fit(v: View) -> str | None:
    if _fits(v):
        return None
    # the reason names the model, whose name a link may set: text, not markdown
    if v.r.get("refused"):  # the shared server's budget, not the scenario's physics
        return f"Not run here: {md_escape(v.r['reason'])}."
    return f"The scenario cannot serve: {md_escape(v.r['reason'])}."


def _compute(s, trace=None) -> dict:
    hit = serving_worker.cached(s)
    if hit is not None:
        return hit
    import streamlit as st

    with st.spinner(serving_worker.describe(s), show_time=True):
        return serving_worker.compute(s)


def _figures(r: dict) -> dict:
    return r["figures"] if r.get("fits") else {"serving": {}, "capacity": {}}


PAGE = Page(
    key="serving",
    file="pages/2_Serving.py",
    label="Serving",
    icon=":material/traffic:",
    emoji="🚦",
    tabs=(
        "Latency against load",
        "One run",
        "Pareto front",
        "Speculative decoding",
        "Disaggregation",
        "Parallelism",
        "Downloads",
    ),
    tab_key="t_serving",
    batch=False,
)


SERVING = Lens(
    page=PAGE,
    order=5,
    title="Serving",
    slug="serving",
    compute=_compute,
    figures=_figures,
    metrics={"headline": HEADLINE, "run": RUN, "prefix": PREFIX},
    charts=(
        Chart("load", _load, page_baseline=False, measured=_measured_runs, note=_measured_note),
        Chart("timeline", _timeline, page_baseline=False),
        Chart("pareto", _pareto, page_baseline=False, measured=_measured_pareto),
        Chart("speculative", _speculative, page_baseline=False),
        Chart("disaggregation", _disagg, report=False, page_baseline=False),
        Chart("parallelism", _parallel, page_baseline=False),
    ),
    tables=(
        Table(
            "sweep",
            _sweep_table,
            columns={
                "request_rate": Column("offered [req/s]", "%.3g"),
                "request_throughput": Column("served [req/s]", "%.3g"),
                "output_throughput": Column("output tok/s", "%.0f"),
                "mean_ttft_ms": Column("mean TTFT [ms]", "%.1f"),
                "median_ttft_ms": Column("p50 TTFT [ms]", "%.1f"),
                "p90_ttft_ms": Column("p90 TTFT [ms]", "%.1f"),
                "p99_ttft_ms": Column("p99 TTFT [ms]", "%.1f"),
                "mean_tpot_ms": Column("mean TPOT [ms]", "%.2f"),
                "median_tpot_ms": Column("p50 TPOT [ms]", "%.2f"),
                "p90_tpot_ms": Column("p90 TPOT [ms]", "%.2f"),
                "p99_tpot_ms": Column("p99 TPOT [ms]", "%.2f"),
                "p99_itl_ms": Column("p99 ITL [ms]", "%.2f"),
                "mean_e2el_ms": Column("mean E2EL [ms]", "%.0f"),
                "slo_met_share": Column("met SLO", "%.3f"),
                "goodput": Column("goodput [req/s]", "%.3g"),
                "mean_batch": Column("mean batch", "%.1f"),
                "saturated": Column("saturated", "%.0f"),
            },
            download="Rate sweep",
            report="Latency and throughput against the request rate",
        ),
        Table(
            "percentiles",
            _percentile_table,
            columns={
                "metric": Column("this run [ms]"),
                "mean": Column("mean", "%.2f"),
                "median": Column("p50", "%.2f"),
                "p90": Column("p90", "%.2f"),
                "p99": Column("p99", "%.2f"),
            },
            report="Latency percentiles of this run",
            download="Latency percentiles",
        ),
        Table(
            "pareto",
            _pareto_table,
            columns={
                "link": Column("link", link=True),
                "tokens_per_s_per_gpu": Column("tok/s per GPU", "%.1f"),
                "tokens_per_s_per_user": Column("tok/s per user", "%.2f"),
                "mean_ttft_ms": Column("mean TTFT [ms]", "%.1f"),
            },
            download="Pareto",
        ),
    ),
    breakdown=("serving", "capacity"),
    downloads=("sweep", "percentiles", "pareto"),
    rows=(
        SERVING_P99_TTFT_MS.row("Serving"),
        SERVING_P99_TPOT_MS.row("Serving"),
        SERVING_OUTPUT_THROUGHPUT.row("Serving"),
        CAPACITY_MAX_REQUEST_RATE.row("Serving"),
        CAPACITY_REPLICAS_NEEDED.row("Serving"),
        CAPACITY_GPUS_NEEDED.row("Serving"),
    ),
    texts={
        "saturated": _saturated,
        "near_capacity": _near_capacity,
        "does_not_fit": _does_not_fit,
        "pareto_note": _pareto_note,
        "speculative_note": _speculative_note,
        "disagg_note": _disagg_note,
        "parallel_note": _parallel_note,
    },
)
