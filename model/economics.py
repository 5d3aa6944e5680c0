"""Scale to zero: a day of traffic against warm replicas, scale to zero, pre-warm and sleep mode
(SPEC 4.4).

The seed's decision rule made computable: keep warm when the idle GPU cost in the troughs is
lower than the cost of missing the SLA at every start-up; scale to zero when troughs are long and
the (optimised) cold start fits the tolerance. Nothing here is a second copy of another lens:

- the cold start ``C`` is :func:`model.cold_start.cold_start`'s ``total_s`` for the scenario
  (its optimised column for ``scale_to_zero_optimised``), the wake time of sleep mode is its
  ``wake_level1_s`` / ``wake_level2_s``;
- a request keeps its replica busy for its TTFT plus output tokens × TPOT at light load, and
  the capacity of one replica is the largest rate it holds within the SLO, both from the
  Serving lens (:func:`model.serving.replica`: ``capacity.max_request_rate``); the replicas
  the peak hour needs are ``ceil(peak rate / capacity)``. A scenario that cannot serve falls
  back to one request's figures (:func:`model.request.request_figures`).

Two methods, one answer:

- **Analytic** (traffic profiles: a rate per hour of day, Poisson within the hour). For rate
  λ and idle timeout T, with cold start C, per unit of time: cold starts = λ·e^(−λT); fraction of
  time up = (1 − e^(−λT)) + λ·e^(−λT)·C (capped at 1); delayed requests ≈ λ·e^(−λT)·(1 + λC):
  the request that finds the replica down waits C, those arriving during the start wait what is
  left of it. This first-order model ignores service time (a replica is idle as soon as a request
  has arrived) and any queueing for capacity; it is exact for λ·(service time) ≪ 1.
- **Replay** (uploaded traces): every request in order, vectorised with numpy. The idle timer
  starts when the last request in flight finishes (a running maximum of end times); a gap over T
  stops the replica; the next request starts it and waits C, as does every request arriving
  while it starts; a start shifts the requests it delays, which can only close later gaps, so
  the replay iterates to the fixed point (two or three passes). One million requests replay in
  well under 2 s (``benchmarks/economics_replay.py``).

Replicas beyond the first are what the hour's traffic needs above one replica's capacity; every
strategy pays them alike (an autoscaler adds them warm; their own start-ups are not modelled).

References
----------
.. [1] Seed: *Speeding up model cold start*, "Scale to zero or keep warm?".
.. [2] SPEC 4.4 (the formulas above, the strategies, the keys and the JSON layout).
.. [3] Kleinrock, *Queueing Systems* vol. 1 (1975), §2.4: for Poisson arrivals the gap before
   the next request exceeds T with probability e^(−λT).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from model.cold_start import cold_start, optimised
from model.scenario import Scenario, parse_hour_ranges

DAY_S = 86400.0
HOUR_S = 3600.0
STRATEGIES = ("warm", "scale_to_zero", "scale_to_zero_optimised", "prewarm", "sleep")
STRATEGY_NAMES = {
    "warm": "warm floor",
    "scale_to_zero": "scale to zero",
    "scale_to_zero_optimised": "scale to zero, optimised start",
    "prewarm": "scheduled pre-warm",
    "sleep": "sleep mode",
}
MAX_BREAK_EVEN_S = 3600.0


# ----------------------------------------------------------------------------- the scenario


@dataclass(frozen=True)
class Service:
    """What the core says about one replica of the scenario."""

    cold_s: float  # this scenario's cold start [s]
    cold_optimised_s: float  # the Cold start lens's optimised column [s]
    wake_s: float  # sleep mode's wake [s] (the scenario's level, or level 1)
    sleep_level: int
    capacity_per_s: float  # requests one replica serves per second
    ttft_s: float
    tpot_s: float
    gpus: int
    price_per_gpu_hour: float
    capacity_basis: str = "slo"  # slo | saturation | request | budget (model.serving.replica)
    cold_range_s: tuple[float, float] | None = None  # the published spread (SPEC 4.3) [s]


def service_of(s: Scenario, search: dict | str | None = None) -> Service:
    """The cold starts, wake time, capacity and request timing of one replica (other lenses);
    ``search``: the capacity search when the caller has it (:func:`model.serving.replica`)."""
    from model.serving import replica, request_stand_in  # only where a replica is sized

    cs = cold_start(s)
    best = cold_start(optimised(s))
    level = s.sleep_level or 1
    rep = replica(s, search)
    if rep is None:  # the scenario cannot serve: one request's figures, as the page says
        rep = request_stand_in(s, "request")
    return Service(
        cold_s=float(cs["total_s"]),
        cold_optimised_s=float(best["total_s"]),
        wake_s=float(cs[f"wake_level{level}_s"]),
        sleep_level=level,
        capacity_per_s=float(rep["capacity_per_s"]),
        ttft_s=rep["ttft_s"],
        tpot_s=rep["tpot_s"],
        gpus=s.replica_gpus,
        price_per_gpu_hour=float(s.price_per_gpu_hour_usd),
        capacity_basis=rep["basis"],
        cold_range_s=tuple(float(x) for x in cs["total_s_range"]),
    )


def service_times(svc: Service, s: Scenario, input_tokens=None, output_tokens=None) -> np.ndarray:
    """Seconds each request keeps its replica busy: prefill (TTFT, scaled by the request's
    prompt against the scenario's) plus output tokens × TPOT [s]."""
    if input_tokens is None and output_tokens is None:
        return np.array(svc.ttft_s + s.output_tokens * svc.tpot_s)
    n_in = np.asarray(input_tokens if input_tokens is not None else s.prompt_tokens, float)
    n_out = np.asarray(output_tokens if output_tokens is not None else s.output_tokens, float)
    return svc.ttft_s * n_in / s.prompt_tokens + n_out * svc.tpot_s


def hours_mask(text: str) -> np.ndarray:
    """24 booleans: the hours of the day inside ``prewarm_hours``."""
    mask = np.zeros(24, bool)
    for start, end in parse_hour_ranges(text):
        if start < end:
            mask[start:end] = True
        else:  # across midnight
            mask[start:] = True
            mask[:end] = True
    return mask


# ----------------------------------------------------------------------------- analytic


def poisson_hour(lam, T, C):
    """Per second, for Poisson arrivals at ``lam`` [1/s], idle timeout ``T`` [s] and cold start
    ``C`` [s]: cold starts, fraction of time up, delayed requests (SPEC 4.4; arrays broadcast)."""
    lam = np.asarray(lam, float)
    miss = lam * np.exp(-lam * T)  # cold starts per second
    up = np.minimum(1.0, (1.0 - np.exp(-lam * T)) + miss * C)
    delayed = miss * (1.0 + lam * C)
    return miss, up, delayed


def _wait_tail(lam, T, C, w, extra=0.0):
    """Requests per second that wait longer than ``w`` [s] (the one that finds the replica down
    waits C; those arriving during the start wait what is left: C − their arrival offset)."""
    lam = np.asarray(lam, float)
    miss = lam * np.exp(-lam * T) + np.asarray(extra, float)
    return np.where(w < C, miss * (1.0 + lam * np.maximum(C - w, 0.0)), 0.0)


def _p99_wait(lam_h, T, C, extra, day) -> np.ndarray:
    """The 99th percentile of the wait over a day's requests [s] (0 when under 1 % wait), at
    each of n sweep points: ``lam_h`` (·, 24) are the hourly rates whose requests may wait (a
    warm hour's are 0), ``T`` and ``C`` (·,) the idle timeouts and cold starts, ``extra``
    (·, 24) the hour boundaries' extra starts per second (each with one row, or one per
    point), ``day`` (24,) the whole day's rates, every request counted in the percentile."""
    total = float(np.sum(day)) * HOUR_S
    # the waits tried, 0 … C in 199 steps (n, 200): np.linspace(0, C, 200) per point, written
    # out so that a sweep's rows are the scalar call's to the last bit (linspace over an array
    # that holds a 0 takes another rounding path)
    grid = np.arange(200.0)[None, :] * (C / 199.0)[:, None]
    grid[:, -1] = C
    tail = (
        _wait_tail(lam_h[:, None, :], T[:, None, None], C[:, None, None], grid[:, :, None],
                   extra[:, None, :]).sum(axis=2)
        * HOUR_S
    )  # fmt: skip
    above = tail > 0.01 * total
    p99 = np.where(above, grid, -np.inf).max(axis=1)
    return np.where(above.any(axis=1) & (total > 0) & (C > 0), p99, 0.0)


def _strategy_analytic(lam_h, extra_h, svc, s, C, T, warm_mask, asleep_billed) -> dict:
    """One strategy over 24 hourly rates: replicas beyond the first (``extra_h``) always up;
    in ``warm_mask`` hours the first is up too, elsewhere it follows the Poisson model.

    ``C`` and ``T`` may be arrays of sweep points (n,): every figure is then an array (n,) and
    there is no timeline; the formulas are the same (one call, not a loop over the points)."""
    sweep = np.ndim(C) > 0 or np.ndim(T) > 0
    Cv = np.atleast_1d(np.asarray(C, float))[:, None]  # (n or 1, 1)
    Tv = np.atleast_1d(np.asarray(T, float))[:, None]
    lam = np.asarray(lam_h, float)[None, :]  # (1, 24)
    miss, up, delayed = poisson_hour(lam, Tv, Cv)
    # the hour boundary: the stationary model has the replica down with probability e^(−λT);
    # after a quieter hour it is down more often (e^(−λ_prev·T)), and the first request of the
    # hour pays the difference as extra starts (the 8 o'clock start after a quiet night)
    lam_prev = np.roll(lam, 1, axis=1)
    down_prev = np.where(np.roll(warm_mask, 1), 0.0, np.exp(-lam_prev * Tv))
    first = 1.0 - np.exp(-lam * HOUR_S)  # the hour has a request at all
    extra = np.maximum(down_prev - np.exp(-lam * Tv), 0.0) * first / HOUR_S  # per second
    miss = miss + extra
    delayed = delayed + extra * (1.0 + lam * Cv)
    up = np.minimum(1.0, up + extra * Cv)
    miss = np.where(warm_mask, 0.0, miss)
    delayed = np.where(warm_mask, 0.0, delayed)
    up = np.where(warm_mask, 1.0, up)
    down = 1.0 - up
    # every (·, 24) array has one row, or one per sweep point: they broadcast
    replica_hours = np.sum(up + extra_h, axis=1) + asleep_billed * np.sum(down, axis=1)
    cold = np.sum(miss, axis=1) * HOUR_S
    lam_cold = np.where(warm_mask, 0.0, lam)
    extra = np.where(warm_mask, 0.0, extra)
    misses = np.where(
        Cv[:, 0] > s.sla_s,
        np.sum(_wait_tail(lam_cold, Tv, Cv, s.sla_s, extra), axis=1) * HOUR_S,
        0.0,
    )
    p99 = _p99_wait(lam_cold, Tv[:, 0], Cv[:, 0], extra, day=lam_h)
    worst = np.where(cold > 0, Cv[:, 0], 0.0)
    if sweep:
        return _figures(svc, s, replica_hours, cold, np.sum(delayed, axis=1) * HOUR_S, p99,
                        worst, misses)  # fmt: skip
    return _figures(
        svc,
        s,
        float(replica_hours[0]),
        float(cold[0]),
        float(np.sum(delayed, axis=1)[0]) * HOUR_S,
        float(p99[0]),  # over the whole day's requests
        float(worst[0]),
        float(misses[0]),
        timeline={
            "up": up[0],
            "down": down[0],
            "extra": extra_h,
            "cold_starts": miss[0] * HOUR_S,
            "delayed": delayed[0] * HOUR_S,
        },
    )


def _figures(svc, s, replica_hours, cold, delayed, p99, worst, misses, timeline=None) -> dict:
    gpu_hours = replica_hours * svc.gpus
    cost = gpu_hours * svc.price_per_gpu_hour
    out = {
        "gpu_hours_per_day": gpu_hours,
        "cost_usd_per_day": cost,
        "cold_starts_per_day": cold,
        "delayed_requests_per_day": delayed,
        "p99_wait_s": p99,
        "worst_wait_s": worst,
        "sla_misses_per_day": misses,
        "total_usd_per_day": cost + misses * s.sla_penalty_usd,
    }
    if timeline is not None:
        out["_timeline"] = timeline
    return out


def analytic(s: Scenario, svc: Service | None = None, C: float | None = None) -> dict:
    """Every strategy for the scenario's traffic profile (Poisson per hour of day)."""
    svc = svc or service_of(s)
    return _strategies(s, svc, profile_rates(s), C)


def profile_rates(s: Scenario) -> np.ndarray:
    """The scenario's traffic profile as 24 hourly arrival rates [1/s], scaled."""
    from model.traffic import hourly_rate_per_s, traffic_profiles  # presets, read on use

    return hourly_rate_per_s(traffic_profiles()[s.traffic], s.rate_scale)


def _need(lam_h, svc) -> np.ndarray:
    """Replicas each hour needs for its rate (at least one while there is traffic)."""
    return np.where(lam_h > 0, np.ceil(lam_h / max(svc.capacity_per_s, 1e-12)), 0.0)


def _strategies(s, svc, lam_h, C=None, only: str | None = None, T=None) -> dict:
    """Every strategy (or ``only`` one) over 24 hourly rates; ``C`` replaces the scenario's cold
    start in the strategies that pay it and ``T`` its idle timeout: a sweep point, or an array
    of them (every figure is then an array, one call for the whole sweep)."""
    need = _need(lam_h, svc)
    extra = np.maximum(need - 1.0, 0.0)
    T = s.idle_timeout_s if T is None else T
    floor = s.warm_replicas or int(max(need.max(), 1))
    none = np.zeros(24, bool)
    mask = hours_mask(s.prewarm_hours)
    C = svc.cold_s if C is None else C

    def prewarm():
        out = _strategy_analytic(lam_h, extra, svc, s, C, T, mask, 0.0)
        # the pre-warm start itself: one start per window, before it opens (nobody waits)
        windows = int(np.sum(mask & ~np.roll(mask, 1))) if not mask.all() else 0
        hours = windows * C / HOUR_S * svc.gpus
        out["cold_starts_per_day"] += windows
        out["gpu_hours_per_day"] += hours
        out["cost_usd_per_day"] += hours * svc.price_per_gpu_hour
        out["total_usd_per_day"] += hours * svc.price_per_gpu_hour
        return out

    runs = {
        "warm": lambda: _strategy_analytic(
            lam_h, np.maximum(need, floor) - 1.0, svc, s, C, T, np.ones(24, bool), 0.0
        ),
        "scale_to_zero": lambda: _strategy_analytic(lam_h, extra, svc, s, C, T, none, 0.0),
        "scale_to_zero_optimised": lambda: _strategy_analytic(
            lam_h, extra, svc, s, svc.cold_optimised_s, T, none, 0.0
        ),
        "prewarm": prewarm,
        "sleep": lambda: _strategy_analytic(
            lam_h, extra, svc, s, svc.wake_s, T, none, 1.0 - s.shared_while_asleep
        ),
    }
    return {k: run() for k, run in runs.items() if only is None or k == only}


# ----------------------------------------------------------------------------- replay


def replay(
    arrival_s, service_s, T: float, C: float, horizon_s: float, up_at_start: bool = False
) -> dict:
    """One replica that stops after ``T`` idle seconds and takes ``C`` to start, over arrivals
    (sorted) [s]: each request's wait, the starts, and the time up (vectorised; see the module
    docstring). With ``up_at_start`` the replica is up (idle) at time 0, as in traffic that
    went on before the trace began; otherwise it is down and the first request starts it."""
    a = np.asarray(arrival_s, float)
    S = np.broadcast_to(np.asarray(service_s, float), a.shape)
    n = len(a)
    if n == 0:
        return {"wait_s": a, "cold": np.zeros(0, bool), "up_s": 0.0, "sessions": (a, a)}
    ready = a.copy()
    for _ in range(20):
        end = ready + S
        last_end = np.maximum.accumulate(end)
        cold = np.empty(n, bool)
        cold[0] = (not up_at_start) or a[0] > T
        cold[1:] = (a[1:] - last_end[:-1]) > T
        if not cold.any():
            new_ready = a
        else:
            sid = np.maximum(np.cumsum(cold) - 1, 0)
            ready_k = a[cold] + C
            new_ready = np.maximum(a, ready_k[sid]) if cold.any() else a
            if not cold[0]:  # requests before the first start: served warm
                first = np.argmax(cold)
                new_ready[:first] = a[:first]
        if np.array_equal(new_ready, ready):
            break
        ready = new_ready
    end = ready + S
    last_end = np.maximum.accumulate(end)
    # sessions: from a start to T after the session's last end (clipped at the next start and
    # at the horizon)
    starts_idx = np.flatnonzero(cold)
    if not cold[0]:
        starts_idx = np.concatenate([[0], starts_idx])
        begin = np.concatenate([[0.0], a[starts_idx[1:]]])
    else:
        begin = a[starts_idx]
    last_idx = np.concatenate([starts_idx[1:] - 1, [n - 1]])
    stop = last_end[last_idx] + T
    nxt = np.concatenate([begin[1:], [max(horizon_s, float(stop[-1]))]])
    stop = np.minimum(np.minimum(stop, nxt), max(horizon_s, float(a[-1])))
    if up_at_start and cold[0]:  # up at 0, idle until T, stopped before the first request
        begin = np.concatenate([[0.0], begin])
        stop = np.concatenate([[min(T, float(a[0]))], stop])
    up = float(np.sum(np.maximum(stop - begin, 0.0)))
    return {"wait_s": ready - a, "cold": cold, "up_s": up, "sessions": (begin, stop)}


def _replay_strategy(
    a, S, s, svc, C, T, horizon, extra_replica_s, mask=None, asleep_billed=0.0, offset_s=0.0
):
    """A strategy replayed over a trace, per day."""
    real = np.ones(len(a), bool)
    arr, ser = a, S
    if mask is not None and mask.any():  # pre-warm: a synthetic request holds each window
        w_begin, w_len = _windows_on(horizon, mask, offset_s)
        arr = np.concatenate([a, w_begin - C])
        ser = np.concatenate([np.broadcast_to(S, a.shape), w_len + C])
        real = np.concatenate([real, np.zeros(len(w_begin), bool)])
        order = np.argsort(arr, kind="stable")
        arr, ser, real = arr[order], ser[order], real[order]
        shift = max(0.0, -float(arr[0]))
        arr = arr + shift
        horizon = horizon + shift
    # the trace is a window into traffic that went on before it: the replica is up at its start
    r = replay(arr, ser, T, C, horizon, up_at_start=True)
    wait = r["wait_s"][real]
    per_day = DAY_S / horizon
    up = r["up_s"]
    down = max(horizon - up, 0.0)
    replica_hours = (up + extra_replica_s + asleep_billed * down) / HOUR_S * per_day
    cold = float(np.sum(r["cold"])) * per_day
    delayed = float(np.sum(wait > 1e-9)) * per_day
    misses = float(np.sum(wait > s.sla_s + 1e-9)) * per_day
    p99 = float(np.percentile(wait, 99)) if len(wait) else 0.0
    worst = float(wait.max()) if len(wait) else 0.0
    out = _figures(svc, s, replica_hours, cold, delayed, p99, worst, misses)
    out["_replay"] = r
    return out


def _windows_on(horizon: float, mask: np.ndarray, offset_s: float = 0.0):
    """Begin times and lengths of the pre-warm hours over ``horizon`` seconds of a trace that
    starts ``offset_s`` seconds after midnight (times from the trace's start)."""
    begins, lens = [], []
    for day in range(int(math.ceil((horizon + offset_s) / DAY_S)) + 1):
        h = 0
        while h < 24:
            if mask[h]:
                e = h
                while e < 24 and mask[e]:
                    e += 1
                b0 = day * DAY_S + h * HOUR_S - offset_s
                b1 = b0 + (e - h) * HOUR_S
                if b1 > 0 and b0 < horizon:
                    begins.append(max(b0, 0.0))
                    lens.append(b1 - max(b0, 0.0))
                h = e
            else:
                h += 1
    return np.array(begins, float), np.array(lens, float)


MIN_HORIZON_S = 60.0  #: a trace shorter than a minute is counted as a minute (per-day figures)


def _horizon(a: np.ndarray) -> float:
    """The span a trace's figures are counted over [s]: first to last arrival (the arrivals
    start at 0), at least a minute. Per-day figures are counts × 86 400 / this."""
    return max(float(a[-1]) if len(a) else 0.0, MIN_HORIZON_S)


def _offset_of(trace) -> float:
    """Seconds after midnight at which the trace starts (0 when it states no clock time)."""
    start = getattr(trace, "start", None)
    if not start:
        return 0.0
    try:
        from datetime import datetime

        t = datetime.fromisoformat(str(start))
    except ValueError:
        return 0.0
    return t.hour * HOUR_S + t.minute * 60 + t.second + t.microsecond / 1e6


def replay_strategies(
    s: Scenario, trace, svc: Service | None = None, only: str | None = None, C: float | None = None
) -> dict:
    """Every strategy (or ``only`` one) replayed over an uploaded trace (its time axis ÷
    ``rate_scale``); ``C`` replaces the scenario's cold start (a sweep point)."""
    svc = svc or service_of(s)
    a = np.asarray(trace.arrival_s, float) / s.rate_scale
    S = service_times(svc, s, trace.input_tokens, trace.output_tokens)
    horizon = _horizon(a)
    # replicas beyond the first, per hour of the trace: what its traffic needs
    hours = int(math.ceil(horizon / HOUR_S))
    counts = np.bincount((a // HOUR_S).astype(int), minlength=hours)[:hours]
    need = _need(counts / HOUR_S, svc)
    bin_s = np.minimum(HOUR_S, horizon - np.arange(hours) * HOUR_S)  # the last hour may be short
    extra_s = float(np.sum(np.maximum(need - 1.0, 0.0) * bin_s))
    T = s.idle_timeout_s
    floor = s.warm_replicas or int(max(need.max(), 1))
    warm_s = float(np.sum(np.maximum(need, floor) * bin_s))
    per_day = DAY_S / horizon
    warm = _figures(svc, s, warm_s / HOUR_S * per_day, 0.0, 0.0, 0.0, 0.0, 0.0)
    mask = hours_mask(s.prewarm_hours)
    cold = svc.cold_s if C is None else C
    runs = {
        "warm": lambda: warm,
        "scale_to_zero": lambda: _replay_strategy(a, S, s, svc, cold, T, horizon, extra_s),
        "scale_to_zero_optimised": lambda: _replay_strategy(
            a, S, s, svc, svc.cold_optimised_s, T, horizon, extra_s
        ),
        "prewarm": lambda: _replay_strategy(
            a, S, s, svc, cold, T, horizon, extra_s, mask, 0.0, _offset_of(trace)
        ),
        "sleep": lambda: _replay_strategy(
            a, S, s, svc, svc.wake_s, T, horizon, extra_s, None, 1.0 - s.shared_while_asleep
        ),
    }
    return {k: run() for k, run in runs.items() if only is None or k == only}


# ----------------------------------------------------------------------------- the section


def _public(fig: dict) -> dict:
    return {k: float(v) for k, v in fig.items() if not k.startswith("_")}


def economics(s: Scenario, trace=None, search: dict | str | None = None) -> dict:
    """The ``economics`` section of ``whatif eval --json`` (SPEC 4.4); ``search`` as
    :func:`model.serving.replica`'s."""
    svc = service_of(s, search)
    strategies = replay_strategies(s, trace, svc) if trace is not None else analytic(s, svc)
    out = {k: _public(v) for k, v in strategies.items()}
    # to the cent; on a tie the simpler strategy (earlier in STRATEGIES) wins
    best = min(
        STRATEGIES, key=lambda k: (round(out[k]["total_usd_per_day"], 2), STRATEGIES.index(k))
    )
    out["recommended"] = best
    out["cold_start_s"] = svc.cold_s
    out["cold_start_optimised_s"] = svc.cold_optimised_s
    out["wake_s"] = svc.wake_s
    out["replica_capacity_requests_per_s"] = svc.capacity_per_s
    out["replica_capacity_basis"] = svc.capacity_basis
    if trace is not None:
        a = np.asarray(trace.arrival_s, float) / s.rate_scale
        horizon = _horizon(a)
        out["requests_per_day"] = len(a) * DAY_S / horizon
        out["trace"] = {
            "requests": int(len(a)),
            "span_s": float(a[-1]) if len(a) else 0.0,
            "rows_refused": int(trace.rows_refused),
        }
    else:
        out["requests_per_day"] = float(np.sum(profile_rates(s))) * HOUR_S
    out["break_even_cold_start_s"] = break_even(s, svc, trace, out["warm"]["total_usd_per_day"])
    out.update(cold_range_verdict(svc, out["break_even_cold_start_s"]))
    out.update(penalty_flips(out, best, s.sla_penalty_usd))
    return out


def cold_range_verdict(svc: Service, break_even_s: float | None) -> dict:
    """Whether scaling to zero against keeping warm flips inside the cold start's range (SPEC
    4.3: the same start-up varies many times over between real servers). Below the
    break-even cold start scaling to zero is the cheaper of the two; a break-even inside
    ``[low, high]`` means the range holds both answers, so the start-up is worth measuring
    before the decision is taken."""
    lo, hi = svc.cold_range_s or (svc.cold_s, svc.cold_s)
    inside = break_even_s is not None and break_even_s > 0 and lo <= break_even_s <= hi
    return {
        "cold_start_range_s": [lo, hi],
        "decision_flips_in_cold_range": bool(inside),
    }


def penalty_flips(strategies: dict, best: str, penalty: float) -> dict:
    """The SLA penalties [USD per miss] at which the recommendation changes: each strategy's
    day costs ``GPU cost + misses × penalty``, a line in the penalty, so the recommended one
    stays the cheapest between two crossings. ``penalty_flip_up_usd``: the smallest penalty
    above ``penalty`` where a strategy with fewer misses (``penalty_flip_up_to``) becomes
    cheaper (None: none ever does); ``penalty_flip_down_usd``: the largest below it, ≥ 0, where
    one with more misses does (``…_down_to``). The default penalty is illustrative, so the page
    says where the answer turns (issue 21: $0.05 decided it)."""
    cost, miss = (
        {k: strategies[k][f] for k in STRATEGIES}
        for f in ("cost_usd_per_day", "sla_misses_per_day")
    )
    up = down = None
    for k in STRATEGIES:
        dm = miss[best] - miss[k]
        if k == best or abs(dm) < 1e-12:
            continue
        p = (cost[k] - cost[best]) / dm  # where the two lines cross
        if dm > 0 and p > penalty and (up is None or p < up[0]):
            up = (p, k)
        if dm < 0 and 0 <= p < penalty and (down is None or p > down[0]):
            down = (p, k)
    return {
        "penalty_flip_up_usd": up and float(up[0]),
        "penalty_flip_up_to": up and up[1],
        "penalty_flip_down_usd": down and float(down[0]),
        "penalty_flip_down_to": down and down[1],
    }


def break_even(s: Scenario, svc: Service, trace, warm_total: float) -> float | None:
    """The cold start [s] at which scaling to zero costs what the warm floor does: below it,
    scale to zero is cheaper. 0 when it never pays; None when it pays even at an hour."""

    def total(C: float) -> float:
        if trace is None:
            rates = profile_rates(s)
            return _strategies(s, svc, rates, C, only="scale_to_zero")["scale_to_zero"][
                "total_usd_per_day"
            ]
        return replay_strategies(s, trace, svc, only="scale_to_zero", C=C)["scale_to_zero"][
            "total_usd_per_day"
        ]

    if total(0.0) >= warm_total:
        return 0.0
    if total(MAX_BREAK_EVEN_S) < warm_total:
        return None
    lo, hi = 0.0, MAX_BREAK_EVEN_S
    for _ in range(30):
        mid = (lo + hi) / 2
        if total(mid) < warm_total:
            lo = mid
        else:
            hi = mid
        if hi - lo < 0.05:
            break
    return round((lo + hi) / 2, 1)


# ----------------------------------------------------------------------------- the page


TIMEOUT_GRID_S = np.array([30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400], float)


def _sweep(s, svc, trace, strategy: str, T=None, C=None) -> dict:
    """One strategy's figures over an array of idle timeouts ``T`` or of cold starts ``C``: one
    vectorised call for the traffic profile, a replay per point for a trace."""
    if trace is None:
        return _strategies(s, svc, profile_rates(s), C, only=strategy, T=T)[strategy]
    points = [(float(t), None) for t in T] if T is not None else [(None, float(c)) for c in C]
    each = [
        replay_strategies(
            s if t is None else s.model_copy(update={"idle_timeout_s": t}),
            trace,
            svc,
            only=strategy,
            C=c,
        )[strategy]
        for t, c in points
    ]
    return {f: [e[f] for e in each] for f in ("total_usd_per_day", "sla_misses_per_day")}


def _coverage(begin, stop, edges) -> np.ndarray:
    """Seconds of the intervals [begin, stop) inside each bin of ``edges``."""
    lo = np.maximum(begin[:, None], edges[None, :-1])
    hi = np.minimum(stop[:, None], edges[None, 1:])
    return np.maximum(hi - lo, 0.0).sum(axis=0) if len(begin) else np.zeros(len(edges) - 1)


def economics_lens(s: Scenario, trace=None, search: dict | str | None = None) -> dict:
    """Everything the Scale to zero page shows: the ``economics`` section, the day's timeline
    of the recommended strategy, total cost and SLA misses against the idle timeout, and the
    break-even curve (scale-to-zero cost against the cold start). ``search`` as
    :func:`model.serving.replica`'s."""
    svc = service_of(s, search)
    figures = economics(s, trace, search)
    best = figures["recommended"]
    shown = best if best != "warm" else "scale_to_zero"
    # the day's timeline for the strategy shown (analytic: per hour; replay: 96 bins)
    if trace is None:
        lam_h = profile_rates(s)
        fig = _strategies(s, svc, lam_h, only=shown)[shown]["_timeline"]
        edges = np.arange(25, dtype=float) * HOUR_S
        timeline = {
            "t_s": edges[:-1],
            "bin_s": HOUR_S,
            "requests": lam_h * HOUR_S,
            "up": fig["up"] + fig["extra"],
            "starting": np.minimum(
                fig["cold_starts"] * (svc.cold_s if shown != "sleep" else svc.wake_s) / HOUR_S, 1.0
            ),
            "asleep" if shown == "sleep" else "down": fig["down"],
            "delayed": fig["delayed"],
        }
    else:
        a = np.asarray(trace.arrival_s, float) / s.rate_scale
        horizon = _horizon(a)
        rs = replay_strategies(s, trace, svc, only=shown)[shown]["_replay"]
        edges = np.linspace(0.0, horizon, 97)
        begin, stop = rs["sessions"]
        C = {"sleep": svc.wake_s, "scale_to_zero_optimised": svc.cold_optimised_s}.get(
            shown, svc.cold_s
        )
        bin_s = edges[1] - edges[0]
        up = _coverage(begin, stop, edges) / bin_s
        starting = _coverage(begin, np.minimum(begin + C, stop), edges) / bin_s
        counts = np.histogram(a, edges)[0].astype(float)
        delayed = np.histogram(a[rs["wait_s"][: len(a)] > 1e-9], edges)[0].astype(float)
        timeline = {
            "t_s": edges[:-1],
            "bin_s": bin_s,
            "requests": counts,
            "up": up,
            "starting": starting,
            "asleep" if shown == "sleep" else "down": np.maximum(1.0 - up, 0.0),
            "delayed": delayed,
        }
    timeline["strategy"] = shown
    # cost and SLA misses against the idle timeout
    sweep = {"idle_timeout_s": TIMEOUT_GRID_S}
    for k in ("scale_to_zero", "scale_to_zero_optimised", "sleep"):
        figs = _sweep(s, svc, trace, k, T=TIMEOUT_GRID_S)
        sweep[k] = {
            f: np.asarray(figs[f], float) for f in ("total_usd_per_day", "sla_misses_per_day")
        }
    # break-even: scale-to-zero cost against the cold start
    top = max(2.0 * svc.cold_s, 120.0, (figures["break_even_cold_start_s"] or 0) * 1.5)
    grid = np.linspace(0.0, top, 31)
    curve = np.asarray(_sweep(s, svc, trace, "scale_to_zero", C=grid)["total_usd_per_day"], float)
    return {
        "figures": figures,
        "service": svc,
        "timeline": timeline,
        "timeout_sweep": sweep,
        "break_even": {
            "cold_start_s": grid,
            "scale_to_zero_usd_per_day": curve,
            "warm_usd_per_day": figures["warm"]["total_usd_per_day"],
        },
    }
