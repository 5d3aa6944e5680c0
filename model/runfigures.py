"""A serving run's figures and timeline (SPEC 4.6), as ``vllm bench serve`` reports them
(``benchmarks/serve.py``): TTFT from the moment the client sends a request, TPOT = (e2el − ttft)
/ (output tokens − 1) per request, ITL every gap between a request's successive tokens,
percentiles by linear interpolation (``numpy.percentile``); from the expanded per-step arrays, or
from the run's compact step log (:mod:`model.steplog`) for a long run.

References
----------
.. [1] vLLM ``benchmarks/serve.py`` / ``vllm bench serve``: the metric definitions above.
"""

from __future__ import annotations

import numpy as np

from model import steplog
from model.scenario import Scenario
from model.units import MS

METRICS = ("ttft", "tpot", "itl", "e2el")


def _streamed(sim: dict) -> bool:
    """Whether :func:`figures` summarises the run from its step runs (a long run whose runs
    allow it) rather than from the expanded per-step arrays."""
    log = sim.get("steps")
    return (
        log is not None
        and log.steps > steplog.EXPAND_STEPS
        and log.streamable
        and "step_s" not in sim
    )


# ------------------------------------------------------------------------------- the figures


def _weighted_percentiles(values: np.ndarray, weights: np.ndarray, qs) -> np.ndarray:
    """Percentiles of ``values`` each counted ``weights`` times (numpy's linear method on the
    expanded sample, without expanding it)."""
    keep = weights > 0
    v, w = values[keep], weights[keep].astype(float)
    if not len(v):
        return np.full(len(qs), np.nan)
    order = np.argsort(v, kind="stable")
    v, w = v[order], w[order]
    total = w.sum()
    # position of sample k (0-based) in the expanded sample: [start, start + w − 1]
    start = np.concatenate([[0.0], np.cumsum(w)[:-1]])
    out = []
    for q in qs:
        pos = q / 100.0 * (total - 1)
        lo = int(np.searchsorted(start, np.floor(pos), side="right")) - 1
        hi = int(np.searchsorted(start, np.ceil(pos), side="right")) - 1
        frac = pos - np.floor(pos)
        out.append(v[lo] + (v[hi] - v[lo]) * frac)
    return np.array(out)


def _stats(values: np.ndarray, weights: np.ndarray | None = None) -> tuple:
    """Mean, median, p90 and p99 of the finite ``values`` (each counted ``weights`` times),
    or four Nones when there are none."""
    if weights is None:
        v = values[np.isfinite(values)]
        if not len(v):
            return (None,) * 4
        return (float(v.mean()), *map(float, np.percentile(v, (50, 90, 99))))
    if weights.sum() <= 0:
        return (None,) * 4
    mean = float((values * weights).sum() / weights.sum())
    return (mean, *map(float, _weighted_percentiles(values, weights, (50, 90, 99))))


def slo_figures(ttft_ms, tpot_ms, d: int, duration: float, s: Scenario) -> dict:
    """``goodput`` and ``slo_met_share`` of a run from its requests' TTFT and TPOT [ms] (a
    one-token output's TPOT −inf: it meets any TPOT SLO), its data-parallel ranks ``d`` and its
    duration [s], against the SLOs of ``s``: what the sweep recomputes after a change of SLO
    without simulating again.

    References
    ----------
    .. [1] vLLM ``benchmarks/serve.py``, ``calculate_metrics``: goodput = requests that meet
       every SLO / duration.
    """
    good = (ttft_ms <= s.ttft_slo_ms) & (tpot_ms <= s.tpot_slo_ms)
    return {
        "goodput": d * float(good.sum()) / duration,
        "slo_met_share": float(good.mean()) if len(good) else 0.0,
    }


def _request_times(sim: dict) -> tuple:
    """Per request: TTFT, E2E latency and TPOT [ms] (NaN for a one-token output), whether it
    has more than one output token, and the run's duration [s] from the first send to the
    last token (vLLM's ``calculate_metrics``)."""
    send, first, fin = sim["send_s"], sim["first_token_s"], sim["finish_s"]
    out_tok = sim["output_tokens"]
    ttft = (first - send) / MS
    e2el = (fin - send) / MS
    multi = out_tok > 1
    tpot = np.where(multi, (e2el - ttft) / np.maximum(out_tok - 1, 1), np.nan)
    t0 = float(np.nanmin(send)) if len(send) else 0.0
    duration = float(np.nanmax(fin)) - t0 if len(fin) else 0.0
    return ttft, e2el, tpot, multi, max(duration, 1e-12)


def slo_check(sim: dict, s: Scenario) -> dict:
    """What the capacity search reads of a run, as :func:`figures` gives it: the request
    throughput, the mean TTFT and TPOT (a replica's light-load latency, :func:`model.serving.
    replica`), ``goodput``, ``slo_met_share`` and ``saturated``, without the ITL, batch and
    KV statistics :func:`figures` draws from every engine step (most of a light run's cost:
    issue 39's speed budget)."""
    ttft, _, tpot, multi, duration = _request_times(sim)
    d = s.data_parallel
    out = {
        "request_throughput": d * len(ttft) / duration,
        "mean_ttft_ms": _stats(ttft)[0],
        "mean_tpot_ms": _stats(tpot)[0],
        "saturated": bool(saturated(sim)),
    }
    out.update(slo_figures(ttft, np.where(multi, np.nan_to_num(tpot), -np.inf), d, duration, s))
    return out


def figures(sim: dict, s: Scenario, slo_inputs: list | None = None) -> dict:
    """The ``serving`` section: vLLM's result names and definitions (SPEC 4.6).

    ``duration`` runs from the first send to the last token; ``mean_batch`` is the mean of the
    sequences per engine step; ``saturated``: arrivals outran the server (an open-loop run whose
    queue at the last arrival holds more than 5 % of the requests and at least 10, or whose
    rate is ``inf``), so its percentiles grow with the run's length. ``slo_inputs``, a list,
    gets what :func:`slo_figures` reads appended (the requests' TTFT and TPOT, ``d``, the
    duration).

    References
    ----------
    .. [1] vLLM ``benchmarks/serve.py``, ``calculate_metrics``: TPOT per request
       (latency − ttft) / (output − 1) for output > 1; ITL every gap; goodput = requests that
       meet every SLO / duration.
    """
    send, first = sim["send_s"], sim["first_token_s"]
    out_tok, in_tok = sim["output_tokens"], sim["prompt_tokens"]
    ttft, e2el, tpot, multi, duration = _request_times(sim)
    n = len(send)
    extra = sim["itl_extra_s"] / MS
    stalled = sim.get("itl_stall_s")
    streamed = _streamed(sim)
    if streamed:  # a long run: from its step runs, never expanded (issue 40, R2)
        log = sim["steps"]
        extra_v, extra_w = extra, np.ones(len(extra))
        if stalled is not None and len(stalled):
            extra_v = np.concatenate([extra_v, stalled / MS])
            extra_w = np.concatenate([extra_w, sim["itl_stall_tokens"].astype(float)])
        itl_mean = log.itl_mean(extra_v, extra_w, 1.0 / MS)
        itl_stats = (
            (None,) * 4
            if itl_mean is None
            else (
                itl_mean,
                *map(float, log.itl_percentiles((50, 90, 99), extra_v, extra_w, 1.0 / MS)),
            )  # fmt: skip
        )
    else:
        itl_w = sim["step_itl_tokens"]
        itl_v = sim["step_s"] / MS
        if len(extra):
            itl_v = np.concatenate([itl_v, extra])
            itl_w = np.concatenate([itl_w, np.ones(len(extra), dtype=np.int64)])
        if stalled is not None and len(stalled):
            itl_v = np.concatenate([itl_v, stalled / MS])
            itl_w = np.concatenate([itl_w, sim["itl_stall_tokens"]])
        itl_stats = _stats(itl_v, itl_w)
    # one data-parallel rank was simulated (rank_share): the replica serves d times its rate
    d = s.data_parallel
    out: dict = {
        "completed": int(n) * d,
        "duration": duration,
        "total_input_tokens": int(in_tok.sum()) * d,
        "total_output_tokens": int(out_tok.sum()) * d,
        "request_throughput": d * n / duration,
        "output_throughput": d * float(out_tok.sum()) / duration,
        "total_token_throughput": d * float(out_tok.sum() + in_tok.sum()) / duration,
    }
    for name, values in (("ttft", ttft), ("tpot", tpot), ("itl", None), ("e2el", e2el)):
        stats = itl_stats if values is None else _stats(values)  # vLLM's order
        for k, value in zip(("mean", "median", "p90", "p99"), stats, strict=True):
            out[f"{k}_{name}_ms"] = value
    tpot_slo = np.where(multi, np.nan_to_num(tpot), -np.inf)
    out.update(slo_figures(ttft, tpot_slo, d, duration, s))
    if slo_inputs is not None:
        slo_inputs.append((ttft, tpot_slo, d, duration))
    cap = max(sim["kv_blocks"], 1)
    if streamed:
        out["mean_batch"], out["max_batch"] = log.batch_stats()
        out["peak_kv_cache_usage"] = float(log.peak_blocks()) / cap
    else:
        batch = sim["step_batch"]
        out["mean_batch"] = float(batch.mean()) if len(batch) else 0.0
        out["max_batch"] = int(batch.max()) if len(batch) else 0
        out["peak_kv_cache_usage"] = (
            float(sim["step_kv_blocks"].max()) / cap if len(sim["step_kv_blocks"]) else 0.0
        )
    out["max_output_tokens_per_s"] = d * _peak_tokens_per_s(sim, streamed)
    out["preemptions"] = int(sim["preempted"].sum())
    queried = int(sim.get("prefix_cache_queried_tokens", 0))
    hit = int(sim.get("prefix_cache_hit_tokens", 0))
    # vLLM's "Prefix cache hit rate": hit tokens over the prompt tokens looked up at admission
    out["prefix_cache_hit_rate"] = hit / queried if queried else 0.0
    out["prefix_cached_tokens"] = hit
    out["saturated"] = bool(saturated(sim))
    out["max_num_seqs"] = int(sim["max_num_seqs"])
    out["kv_cache_blocks"] = int(sim["kv_blocks"])
    dis = sim.get("disagg")
    if dis is not None:  # a disaggregated run (model.disagg): where its TTFT goes
        pre = (dis["prefill_done_s"] - send) / MS
        move = (dis["kv_ready_s"] - dis["prefill_done_s"]) / MS
        dec = (first - dis["kv_ready_s"]) / MS
        out["mean_prefill_instance_ms"] = float(np.nanmean(pre)) if n else None
        out["mean_kv_transfer_ms"] = float(np.nanmean(move)) if n else None
        out["mean_decode_instance_first_ms"] = float(np.nanmean(dec)) if n else None
        out["closed_loop_rounds"] = int(dis["rounds"])
    return out


def _peak_tokens_per_s(sim: dict, streamed: bool) -> float:
    """The most tokens streamed in one second of the run: ``vllm bench serve``'s "Peak output
    token throughput", its token arrivals (each request's first token and every later one)
    counted in one-second buckets from the first send. One rank's (the caller scales it).

    References
    ----------
    .. [1] vLLM ``vllm/benchmarks/serve.py``, ``calculate_metrics`` (0.10.2 and later):
       ``max_output_tokens_per_s``, each output's token times (its TTFT, then its ITLs) binned
       by ``int(token_time − min_start_time)``.
    """
    send = sim["send_s"]
    if not len(send):
        return 0.0
    origin = float(np.min(send))
    first = np.asarray(sim["first_token_s"], dtype=float)
    first = first[np.isfinite(first)]
    if streamed:
        by_step = sim["steps"].tokens_by_second(origin)
    else:
        ends = np.asarray(sim["step_end_s"], dtype=float)
        k = np.floor(ends - origin)
        ok = k >= 0
        by_step = np.bincount(
            k[ok].astype(np.int64), weights=np.asarray(sim["step_itl_tokens"], float)[ok]
        )
    kf = np.floor(first - origin)
    by_first = np.bincount(kf[kf >= 0].astype(np.int64))
    total = np.zeros(max(len(by_step), len(by_first), 1))
    total[: len(by_step)] += by_step
    total[: len(by_first)] += by_first
    return float(total.max())


def saturated(sim: dict) -> bool:
    """Arrivals outran the server: an open-loop run whose queue (arrived, not yet scheduled)
    at the last arrival holds more than 5 % of the requests and at least 10."""
    if "saturated" in sim:  # a disaggregated run: any of its engines (model.disagg)
        return bool(sim["saturated"])
    if not sim["open_loop"]:
        return False
    entry = sim["entry_s"]
    n = len(entry)
    if n < 2:
        return False
    last = float(np.nanmax(entry))
    if last == float(np.nanmin(entry)):  # all at once (rate inf): did any request wait?
        return bool(np.nanmax(sim["first_token_s"]) > _first_step_end(sim))
    # scheduled by the last arrival ≈ first token by then, or admitted: count first tokens
    started = int(np.sum(sim["first_token_s"] <= last))
    queue = n - started
    return queue > max(10, 0.05 * n)


def _first_step_end(sim: dict) -> float:
    """End of the first engine step that ran no prefill chunk: from then on a request still
    waiting was queued behind others, not merely chunked."""
    if _streamed(sim):
        return sim["steps"].first_alone_end()
    end, itl, batch = sim["step_end_s"], sim["step_itl_tokens"], sim["step_batch"]
    alone = np.nonzero(batch == itl)[0]
    return float(end[alone[0]]) if len(alone) else float("inf")


def timeline(sim: dict, points: int = 1500) -> dict:
    """Batch size, queue length and KV-cache use over one run, thinned to ``points`` steps
    (a disaggregated run: its first decode instance's)."""
    if sim.get("timeline_of") is not None:
        sim = sim["timeline_of"]
    streamed = _streamed(sim)
    steps = sim["steps"].steps if streamed else len(sim["step_end_s"])
    if not steps:
        return {k: np.zeros(0) for k in ("t_s", "batch", "queue", "kv_cache_usage")}
    idx = np.unique(np.linspace(0, steps - 1, min(points, steps)).astype(int))
    if streamed:  # the sampled steps straight from the runs
        got = sim["steps"].sample(idx)
        t, batch, blocks = got["end"], got["batch"], got["blocks"]
    else:
        t = sim["step_end_s"][idx]
        batch, blocks = sim["step_batch"][idx], sim["step_kv_blocks"][idx]
    entered = np.sort(sim["entry_s"])
    started = np.sort(sim["first_token_s"][np.isfinite(sim["first_token_s"])])
    queue = np.searchsorted(entered, t, side="right") - np.searchsorted(started, t, side="right")
    return {
        "t_s": t,
        "batch": batch,
        "queue": np.maximum(queue, 0),
        "kv_cache_usage": blocks / max(sim["kv_blocks"], 1),
    }
