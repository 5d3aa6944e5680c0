"""Calibration: the scenario's efficiencies and overheads fitted to measurements (SPEC 4.5).

Measured points come from imported :class:`~model.readers.measurements.Dataset` s; the model value
of each point comes from the same core functions every lens uses (:func:`model.decode.sweep`,
:func:`model.request.request_figures`, :func:`model.cold_start.cold_start`), so a fitted key moves
every lens. The fitted values are ordinary scenario keys (a calibration is a set of overrides of the
engine profile's values, SPEC 4.0); evaluating the scenario with them applied reproduces the points
they were fitted to, within the residuals reported.

What each kind of data identifies
---------------------------------
- **Decode steps against batch** (our decode CSV; TPOT against concurrency from a request CSV
  or a serving benchmark): ``bw_efficiency`` and ``host_ms`` together, by weighted non-linear
  least squares on ``t = max(bytes / (eff·BW), t_compute) + t_comm + t_launch + host``. Bytes
  grow with batch (KV cache) and host work does not, so at least two batch sizes (or two
  context lengths) are needed to tell them apart; with one, only ``bw_efficiency`` is fitted,
  with ``host_ms`` held at the scenario's value, and ``host_ms`` is refused. Eager and graph
  rows at the same batch add ``launch_us`` (their difference is the launches graphs remove);
  points the model puts on the compute roof (large batches, short contexts) add
  ``flops_efficiency``.
- **Launch micro-benchmark** (``kernels, eager_ms, graph_ms``): ``launch_us`` = the slope of
  ``eager − graph`` against the kernel count (with an intercept, the graph replay's fixed cost,
  when two or more chain lengths are given; through the origin for one).
- **Batch latency** (``vllm bench latency`` with its batch size and lengths stated): joins the
  decode fit; its model is the batch's prompts prefilled together, then ``output_len`` decode
  steps at that batch (:func:`model.request.request_figures`).
- **TTFT at concurrency 1**: ``prefill_efficiency``, and ``frontend_ms`` (the engine's
  per-request front-end time, the intercept) where two or more prompt lengths are measured
  (with the decode fit's ``host_ms``). TTFT at
  higher concurrency includes queueing behind other prompts, which the model's light-load TTFT
  does not; those points are shown, not fitted.
- **A vLLM start-up log**: ``compile_s`` (or ``compile_cached_s`` when the log loaded a warm
  compile cache), ``capture_s_per_graph`` (capture seconds over the graphs captured) and the
  storage read rate (``storage_gb_s`` and ``stream_gb_s``: the bytes every rank read over the
  seconds it read them, less its host→device copy).
- **Cold-start line items** (``item, seconds``): ``process_init_s``, ``cuda_context_s``,
  ``allocator_s`` (less the engine's sub-lines of items 2 and 3), the read rate from item 4 and
  ``compile_s`` from item 5 (less the modelled capture, warm-up and JIT).
- **Capture kit**: ``bw_efficiency`` from the matrix-vector sweep (only when no decode steps
  were measured: a real engine's decode reaches less than a bare GEMV), ``hardware.h2d_gb_s``
  from pinned host-to-device copies.

Least squares is numpy's (``numpy.linalg.lstsq`` inside a damped Gauss-Newton loop): every
problem here is small (a few parameters, at most thousands of points) and linear in the inverse
efficiency once the bound of each point is fixed, so scipy would add a dependency for nothing.
Residuals are relative (a 10 % miss on a 10 ms step weighs what it does on a 100 ms one); the
uncertainty is one standard error from the covariance ``s² (JᵀJ)⁻¹``; a parameter is refused
when the data do not determine it (the Jacobian is singular: two parameters move the points
the same way) or determine it so weakly that its standard error exceeds its value.

References
----------
.. [1] SPEC 4.5, "fit the efficiencies and overheads … with numpy least squares".
.. [2] Björck, *Numerical Methods for Least Squares Problems* (1996), §9.2 (Gauss-Newton) and
   §1.1.5 (covariance of the estimate).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from model import cold_start as cold
from model import decode, engines, launch
from model.errors import ScenarioError
from model.readers.measurements import COLD_ITEMS, Dataset
from model.readers.setup import setup_mismatch
from model.request import batch_e2e_s, request_figures
from model.scenario import CALIBRATED_KEYS, MAX_BATCH, Scenario
from model.units import GB, MS

GIB = 2**30
#: the keys a calibration may write (also what the ``calibrated`` scenario key may list)
CALIBRATABLE = CALIBRATED_KEYS
UNITS = {
    "bw_efficiency": "",
    "flops_efficiency": "",
    "prefill_efficiency": "",
    "host_ms": "ms",
    "launch_us": "µs",
    "compile_s": "s",
    "compile_cached_s": "s",
    "capture_s_per_graph": "s",
    "storage_gb_s": "GB/s",
    "stream_gb_s": "GB/s",
    "process_init_s": "s",
    "cuda_context_s": "s",
    "allocator_s": "s",
    "hardware.h2d_gb_s": "GB/s",
    "frontend_ms": "ms",
}
MAX_REL_UNCERTAINTY = 1.0  #: refuse a parameter whose standard error exceeds its value …
#: … or, for a value near zero (no host work, say), exceeds what matters at all
ABS_UNCERTAINTY_FLOOR = {"host_ms": 0.05, "launch_us": 0.1, "bw_efficiency": 0.01}


@dataclass
class Point:
    """One measured figure and what the model needs to compute it."""

    dataset: str  # file name
    quantity: str  # step_ms, ttft_ms, launch_saving_ms, item1_s … item5_s, load_s, …
    x: float  # batch, concurrency, kernel count, item number
    measured: float
    label: str = ""
    cond: dict = field(default_factory=dict)
    fitted: bool = True  # False: shown, not used by any fit (with the reason in ``note``)
    note: str = ""


QUANTITY_UNITS = {
    "step_ms": "ms",
    "tpot_ms": "ms",
    "ttft_ms": "ms",
    "launch_saving_ms": "ms",
    "item1_s": "s",
    "item2_s": "s",
    "item3_s": "s",
    "item4_s": "s",
    "item5_s": "s",
    "compile_s": "s",
    "capture_s": "s",
    "read_gb_s": "GB/s",
    "load_s": "s",
    "e2e_s": "s",
    "hbm_gb_s": "GB/s",
    "h2d_gb_s": "GB/s",
}


# ----------------------------------------------------------------------------- points


def _num(v) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


#: the scenario's bounds on the prompt a measured point is placed at (model.scenario): a
#: prefill is worked out chunk by chunk, so a TTFT or batch latency whose prompt is outside them
#: is not placed (a crafted file's prompt of 10^12 tokens is refused, not computed). Decode
#: points cost the same at any batch or context and keep the fit's own handling.
PROMPT_LIMITS = {
    "prompt_tokens": ("prompt length", 1, 10_000_000),
    "output_tokens": ("output length", 1, 10_000_000),
}


def _out_of_range(p: Point) -> str | None:
    """Why ``p``'s prompt is outside what a scenario accepts, or None."""
    if p.quantity not in ("ttft_ms", "e2e_s"):
        return None
    for key, (what, low, top) in PROMPT_LIMITS.items():
        v = p.cond.get(key)
        if isinstance(v, int | float) and not low <= v <= top:
            shown = f"{v:,}" if abs(v) < 1e15 else f"{v:.3g}"
            return f"its {what} {shown} is outside what a scenario accepts ({low} to {top:,})"
    if p.quantity == "e2e_s" and not 1 <= p.cond.get("batch", 1) <= MAX_BATCH:
        return f"its batch is outside what a scenario accepts (1 to {MAX_BATCH:,})"
    return None


def points_of(ds: Dataset) -> tuple[list[Point], list[str]]:
    """The measured points a data set holds, and notes on what it holds that no fit uses."""
    pts, notes = _points_of(ds)
    kept = []
    for p in pts:
        why = _out_of_range(p)
        if why:
            notes.append(f"{p.dataset}: {p.label}: {why}: not placed")
        else:
            kept.append(p)
    return kept, notes


def _points_of(ds: Dataset) -> tuple[list[Point], list[str]]:
    """:func:`points_of` before its conditions are checked against the scenario's bounds."""
    pts: list[Point] = []
    notes: list[str] = []
    name = ds.name
    if ds.kind == "decode":
        for r in ds.rows:
            b, t = _num(r.get("batch")), _num(r.get("step_ms"))
            if b is None or t is None:
                continue
            g = r.get("cuda_graphs")
            mode = "eager" if g == "none" else ("graphs" if g else "")
            cond = {"batch": int(b), "cuda_graphs": g}
            if _num(r.get("context_tokens")) is not None:
                cond["context_tokens"] = int(r["context_tokens"])
            label = f"batch {int(b)}" + (f" ({mode})" if mode else "")
            pts.append(Point(name, "step_ms", b, t, label, cond))
    elif ds.kind in ("request", "serving"):
        rows = ds.rows if ds.rows else [dict(ds.conditions) | dict(ds.figures)]
        for r in rows:
            rc = {**ds.conditions, **r}
            c = _num(rc.get("concurrency", rc.get("max_concurrency")))
            p = _num(rc.get("prompt_tokens", rc.get("mean_input_tokens")))
            o = _num(rc.get("output_tokens", rc.get("mean_output_tokens")))
            tpot = _num(rc.get("tpot_ms", rc.get("mean_tpot_ms")))
            itl = tpot is None and _num(rc.get("mean_itl_ms")) is not None
            if itl:  # GenAI-Perf has no TPOT; its mean inter-token latency is the decode step
                tpot = _num(rc.get("mean_itl_ms"))
            ttft = _num(rc.get("ttft_ms", rc.get("mean_ttft_ms")))
            if c is None:
                if tpot is not None or ttft is not None:
                    notes.append(
                        f"{name}: the run's concurrency is not stated (no max_concurrency): its "
                        "TTFT and TPOT cannot be placed against a batch, so they are not fitted"
                    )
                continue
            c = int(round(c))
            cond = {"batch": c}
            if p is not None:
                cond["prompt_tokens"] = int(round(p))
            if p is not None and o is not None:
                cond["context_tokens"] = int(round(p + o / 2))
            if tpot is not None:
                what = "ITL" if itl else "TPOT"
                pts.append(Point(name, "tpot_ms", c, tpot, f"{what} at concurrency {c}", cond))
            if ttft is not None:
                ok = c == 1 and p is not None
                why = (
                    ""
                    if ok
                    else (
                        "the prompt length is not stated"
                        if p is None
                        else f"TTFT at concurrency {c} includes queueing behind other prompts; "
                        "the model's TTFT is at light load (fitted at concurrency 1 only)"
                    )
                )
                pts.append(
                    Point(name, "ttft_ms", c, ttft, f"TTFT at concurrency {c}", cond, ok, why)
                )
    elif ds.kind == "launch":
        for r in ds.rows:
            k, e, g = _num(r.get("kernels")), _num(r.get("eager_ms")), _num(r.get("graph_ms"))
            if k is None or e is None or g is None:
                continue
            pts.append(
                Point(name, "launch_saving_ms", k, e - g, f"{int(k)} kernels: eager − graph")
            )
    elif ds.kind == "cold_start":
        for key, v in ds.figures.items():
            if key.startswith("item") and key.endswith("_s") and key[4:-2].isdigit():
                n = int(key[4:-2])
                if 1 <= n <= 5 and _num(v) is not None:
                    label = f"item {n}: {COLD_ITEMS[str(n)].replace('_', ' ')}"
                    pts.append(Point(name, key, n, float(v), label, {}))
    elif ds.kind == "startup_log":
        pts.extend(_log_points(ds))
    elif ds.kind == "startup_bench":
        # vllm bench startup: torch.compile with an empty cache (cold) and a warm one; the
        # total times LLM() in a fresh process (weights, profiling, compile, capture), which
        # no modelled figure covers alone: shown as read
        for phase, cached in (("cold", False), ("warm", True)):
            comp = _num(ds.figures.get(f"{phase}_compile_s"))
            if comp is not None and comp > 0:
                label = "torch.compile (warm cache)" if cached else "torch.compile (cold)"
                pts.append(Point(name, "compile_s", 5, comp, label, {"cached": cached}))
        notes.append(
            f"{name}: vllm bench startup times the whole LLM() start-up in a fresh process "
            "(its cold and warm totals are shown as read); its torch.compile times are "
            "compared with item 5's compile part"
        )
    elif ds.kind == "bandwidth":
        for r in ds.rows:
            gbs = _num(r.get("gb_s"))
            if gbs is None and _num(r.get("bytes")) and _num(r.get("ms")):
                gbs = r["bytes"] / (r["ms"] * 1e-3) / 1e9
            if gbs is not None:
                b = _num(r.get("batch")) or 1.0
                pts.append(Point(name, "hbm_gb_s", b, gbs, f"GEMV batch {int(b)}"))
    elif ds.kind == "h2d":
        for r in ds.rows:
            gbs = _num(r.get("gb_s"))
            if gbs is None and _num(r.get("bytes")) and _num(r.get("ms")):
                gbs = r["bytes"] / (r["ms"] * 1e-3) / 1e9
            mode = str(r.get("mode", "pinned"))
            if gbs is not None:
                ok = mode == "pinned"
                why = "" if ok else "pageable copies are shown; the model's h2d_gb_s is pinned"
                pts.append(Point(name, "h2d_gb_s", 0, gbs, f"H2D {mode}", {}, ok, why))
    elif ds.kind == "latency":
        rows = [r for r in ds.rows if r.get("bench", "latency") == "latency"] or [
            {**ds.conditions, **ds.figures}
        ]
        for i, r in enumerate(rows):
            b, p, o = (_num(r.get(k)) for k in ("batch_size", "input_len", "output_len"))
            y = _num(r.get("avg_latency_s"))
            if y is None:
                continue
            if None in (b, p, o):
                notes.append(
                    f"{name}: latency run {i + 1} does not state its batch size, input and "
                    "output lengths (--batch-size, --input-len, --output-len): not placed"
                )
                continue
            b, p, o = int(b), int(p), int(o)
            cond = {
                "batch": b,
                "prompt_tokens": p,
                "output_tokens": o,
                "context_tokens": p + o // 2,
            }
            label = f"latency: batch {b}, {p} in / {o} out"
            pts.append(Point(name, "e2e_s", b, y, label, cond))
    else:
        notes.append(
            f"{name}: a {ds.format} run is shown as read; no fit uses it (its figures are "
            "aggregates of a run whose batch the model cannot place)"
        )
    return pts, notes


def _log_points(ds: Dataset) -> list[Point]:
    f, name, out = ds.figures, ds.name, []
    ranks = int(ds.extra.get("ranks") or ds.conditions.get("gpus") or 1)
    gib = _num(f.get("model_loading_gib"))
    secs = _num(f.get("loading_weights_s")) or _num(f.get("model_loading_s"))
    if _num(f.get("stream_gib_s")) is not None:  # Run:ai streamer states its own rate
        out.append(
            Point(name, "read_gb_s", 4, f["stream_gib_s"] * GIB / GB, "read rate (streamer)")
        )
    elif gib and secs:
        out.append(
            Point(
                name,
                "load_s",
                4,
                secs,
                f"weights load ({ranks} rank{'s' * (ranks > 1)} × {gib:.2f} GiB)",
                {"bytes_per_rank": gib * GIB, "seconds": secs, "ranks": ranks},
            )
        )
    # the log parser's item-5 compile part (model.readers.vllm_log decides which lines make it: the
    # printed total, Dynamo + Inductor or cache load, the 2026 "compilation:" time); a data set
    # built without the parser's items falls back to the printed total
    items = ds.extra.get("items") or {}
    comp = _num(items.get("item5_compile_s"))
    if comp is None:
        comp = _num(f.get("torch_compile_total_s"))
    if comp is not None:
        cached = bool(f.get("compile_cache_hit")) or _num(f.get("compile_cache_load_s")) is not None
        label = "torch.compile (warm cache)" if cached else "torch.compile (cold)"
        out.append(Point(name, "compile_s", 5, comp, label, {"cached": cached}))
    cap = _num(f.get("graph_capture_s"))
    if cap is not None:
        graphs = _num(f.get("graphs_captured"))
        cond = {"graphs": int(graphs)} if graphs else {}
        out.append(Point(name, "capture_s", 5, cap, "CUDA graph capture", cond))
    return out


# ----------------------------------------------------------------------------- the model


def _variant(s: Scenario, update: dict) -> Scenario:
    """``s`` with ``update`` applied (a variant, resolved like any scenario). Dotted hardware
    keys included."""
    hw = {k.split(".", 1)[1]: v for k, v in update.items() if k.startswith("hardware.")}
    plain = {k: v for k, v in update.items() if not k.startswith("hardware.")}
    if hw:
        plain["hardware"] = s.hardware.model_copy(update=hw)
    return s.model_copy(update=plain) if plain else s


def model_values(s: Scenario, pts: list[Point]) -> np.ndarray:
    """The model's value of every point for scenario ``s`` (NaN where it has none)."""
    out = np.full(len(pts), np.nan)
    decode_groups: dict[tuple, list[int]] = {}
    cs = None
    for i, p in enumerate(pts):
        q = p.quantity
        if q in ("step_ms", "tpot_ms"):
            key = (p.cond.get("context_tokens"), p.cond.get("cuda_graphs"))
            decode_groups.setdefault(key, []).append(i)
        elif q == "ttft_ms":
            prompt = p.cond.get("prompt_tokens", s.prompt_tokens)
            v = s if prompt == s.prompt_tokens else s.model_copy(update={"prompt_tokens": prompt})
            out[i] = request_figures(v)["ttft_ms"]
        elif q == "e2e_s":  # a batch of prompts prefilled together, then decoded together
            c = p.cond
            v = s.model_copy(
                update={
                    "batch": c["batch"],
                    "prompt_tokens": c["prompt_tokens"],
                    "output_tokens": c["output_tokens"],
                    "context_tokens": c["context_tokens"],
                }
            )
            out[i] = batch_e2e_s(v, c["batch"])
        elif q == "launch_saving_ms":
            out[i] = p.x * s.launch_us / 1000.0
        elif q.startswith("item") or q in ("compile_s", "capture_s", "read_gb_s", "load_s"):
            cs = cs or cold.cold_start(s)
            out[i] = _cold_value(s, cs, p)
        elif q == "hbm_gb_s":
            out[i] = s.hardware.hbm_bandwidth_tb_s * 1000 * s.bw_efficiency
        elif q == "h2d_gb_s":
            out[i] = s.hardware.h2d_gb_s
    for (ctx, graphs), idx in decode_groups.items():
        update = {}
        if ctx is not None:
            update["context_tokens"] = ctx
        if graphs is not None:
            update["cuda_graphs"] = graphs
        v = s.model_copy(update=update) if update else s
        batches = np.array([pts[i].x for i in idx])
        out[idx] = decode.sweep(v, batches)["t_step_s"] / MS
    return out


def _cold_value(s: Scenario, cs: dict, p: Point) -> float:
    q = p.quantity
    items = {
        "item1_s": cs["process_init_s"],
        "item2_s": cs["cuda_context_s"],
        "item3_s": cs["allocator_s"],
        "item4_s": cs["weights_s"],
        "item5_s": cs["graphs_jit_s"],
    }
    if q in items:
        return float(items[q])
    if q == "compile_s":
        return float(s.compile_cached_s if p.cond.get("cached") else s.compile_s)
    if q == "capture_s":
        graphs = p.cond.get("graphs") or cs["graphs_captured"]
        return float(launch.capture_seconds(graphs, s.capture_s_per_graph))
    if q == "read_gb_s":
        return _read_rate_gb_s(s, p.cond.get("ranks", 1))
    if q == "load_s":  # the log's own bytes, read by its ranks, then copied to each GPU
        ranks, per_rank = p.cond["ranks"], p.cond["bytes_per_rank"]
        t_read = ranks * per_rank / (_read_rate_gb_s(s, ranks) * GB)
        t_h2d = per_rank / (s.hardware.h2d_gb_s * GB)
        overlap = cold._effective(s)["loader"].overlap
        return max(t_read, t_h2d) if overlap else t_read + t_h2d
    return math.nan


def _read_rate_gb_s(s: Scenario, ranks: int) -> float:
    """The modelled storage read rate when ``ranks`` processes read at once [GB/s]."""
    e = cold._effective(s)
    streams = e["concurrency"] * (ranks if s.engine_figures.weights_parallel_ranks else 1)
    return float(cold.read_bandwidth(e["aggregate"], e["per_stream"], streams)) / GB


# ----------------------------------------------------------------------------- fitting


@dataclass
class ParamFit:
    key: str
    value: float
    uncertainty: float | None
    points: int
    data: str  # which points: "decode steps", "start-up log", …
    files: list[str]
    r2: float | None = None
    note: str = ""
    before: float | None = None

    def _shown_se(self) -> float:
        """The standard error as reported: 0 where it is an exact fit's rounding noise."""
        return 0.0 if _se_noise(self.value, self.uncertainty) else self.uncertainty

    def to_json(self) -> dict:
        return {
            "value": _round(self.value),
            "uncertainty": None if self.uncertainty is None else _round(self._shown_se()),
            "unit": UNITS.get(self.key, ""),
            "points": self.points,
            "data": self.data,
            "files": self.files,
            "r2": None if self.r2 is None else round(self.r2, 4),
            "before": None if self.before is None else _round(self.before),
            "note": self.note,
        }


def _se_noise(value: float, se: float) -> bool:
    """Whether a standard error is floating-point noise of an exact fit (below 10⁻⁹ of the
    value), which is reported as 0 rather than as 2e-15."""
    return abs(se) <= 1e-9 * abs(value)


def _round(v: float) -> float:
    """Four significant digits (what a measurement supports), as a plain float."""
    if v == 0 or not math.isfinite(v):
        return float(v)
    return float(f"{v:.4g}")


def _mean_fit(key, values, data, pts, note, before, center=np.mean) -> ParamFit:
    """A parameter read off directly: the mean (or median) of its measurements, with the
    standard error of the mean when there are repeats."""
    v = np.asarray(values, float)
    sd = float(np.std(v, ddof=1)) / math.sqrt(len(v)) if len(v) > 1 else None
    files = sorted({p.dataset for p in pts})
    return ParamFit(key, float(center(v)), sd, len(v), data, files, None, note, float(before))


def r_squared(measured: np.ndarray, modelled: np.ndarray) -> float | None:
    """1 − SS_res / SS_tot over the points (None for fewer than two distinct measurements)."""
    y = np.asarray(measured, float)
    if len(y) < 2 or np.ptp(y) == 0:
        return None
    ss_tot = float(((y - y.mean()) ** 2).sum())
    return 1.0 - float(((y - np.asarray(modelled, float)) ** 2).sum()) / ss_tot


@dataclass
class _Param:
    key: str
    start: float
    lo: float
    hi: float
    inverse: bool = False  # fitted as 1/value (efficiencies: the time is linear in 1/eff)

    def to_theta(self, v: float) -> float:
        return 1.0 / v if self.inverse else v

    def from_theta(self, t: float) -> float:
        return 1.0 / t if self.inverse else t

    def bounds(self) -> tuple[float, float]:
        if self.inverse:
            return 1.0 / self.hi, 1.0 / self.lo
        return self.lo, self.hi


def gauss_newton(predict, params: list[_Param], y: np.ndarray, iters: int = 40):
    """Minimise Σ((predict(values) − y) / y)² over ``params`` within their bounds.

    Returns (values, jacobian of the relative residuals in θ at the solution, residuals, θ).
    """
    theta = np.array([p.to_theta(p.start) for p in params], float)
    lo = np.array([p.bounds()[0] for p in params])
    hi = np.array([p.bounds()[1] for p in params])
    theta = np.clip(theta, lo, hi)

    def values(th):
        return {p.key: p.from_theta(t) for p, t in zip(params, th, strict=True)}

    def resid(th):
        return (predict(values(th)) - y) / y

    def jac(th):
        r0 = resid(th)
        cols = []
        for j in range(len(th)):
            h = max(abs(th[j]) * 1e-4, 1e-9)
            t2 = th.copy()
            t2[j] = th[j] + h if th[j] + h <= hi[j] else th[j] - h
            cols.append((resid(t2) - r0) / (t2[j] - th[j]))
        return np.column_stack(cols), r0

    for _ in range(iters):
        J, r = jac(theta)
        free = np.ones(len(theta), bool)
        step = np.zeros(len(theta))
        for _ in range(len(theta)):  # a parameter held at a bound it pushes against is fixed
            step[:] = 0.0
            step[free], *_ = np.linalg.lstsq(J[:, free], -r, rcond=None)
            out = free & (((theta <= lo) & (step < 0)) | ((theta >= hi) & (step > 0)))
            if not out.any():
                break
            free &= ~out
        cost = float(r @ r)
        lam = 1.0
        while lam > 1e-4:
            cand = np.clip(theta + lam * step, lo, hi)
            rc = resid(cand)
            if float(rc @ rc) <= cost:
                break
            lam /= 2
        else:
            break
        moved = np.abs(cand - theta) <= 1e-10 + 1e-7 * np.abs(theta)
        theta = cand
        if moved.all():
            break
    J, r = jac(theta)
    return values(theta), J, r, theta


def _identify(J: np.ndarray, n_points: int, keys: list[str]) -> dict[str, str]:
    """Parameters the Jacobian cannot determine, with the reason (empty when all are)."""
    if n_points < len(keys):
        return {
            k: f"{n_points} point(s) cannot determine {len(keys)} parameters together" for k in keys
        }
    sv = np.linalg.svd(J / np.linalg.norm(J, axis=0), compute_uv=False)
    if len(keys) > 1 and sv[-1] < 1e-6 * sv[0]:
        return {k: "the points move with it exactly as with another parameter" for k in keys}
    return {}


def _uncertainties(J: np.ndarray, r: np.ndarray, theta: np.ndarray, params: list[_Param]):
    """One standard error per parameter (in its own units), or None without spare points."""
    n, p = J.shape
    if n <= p:
        return [None] * p
    s2 = float(r @ r) / (n - p)
    try:
        cov = s2 * np.linalg.inv(J.T @ J)
    except np.linalg.LinAlgError:
        return [math.inf] * p
    out = []
    for j, prm in enumerate(params):
        sd = math.sqrt(max(cov[j, j], 0.0))
        out.append(sd / theta[j] ** 2 if prm.inverse else sd)  # d(1/θ) = dθ / θ²
    return out


def _field_bounds(key: str) -> tuple[float, float]:
    if key.startswith("hardware."):
        return 0.001, 100000.0
    f = Scenario.model_fields[key]
    lo, hi = 0.0, math.inf
    for m in f.metadata:
        lo = getattr(m, "ge", None) if getattr(m, "ge", None) is not None else lo
        hi = getattr(m, "le", None) if getattr(m, "le", None) is not None else hi
    return float(lo), float(hi)


def _fit_group(s, pts, keys, data_label):
    """Gauss-Newton fit of ``keys`` to ``pts``; returns (fits, refused).

    A parameter the points do not move, determine too weakly, or push past 100 % of a peak is
    refused and held at the scenario's value, and the others are fitted again without it (so
    what is reported was fitted with what is applied). Parameters the points cannot tell apart
    (collinear, or fewer points than parameters) are all refused."""
    refused: dict[str, str] = {}
    keys = list(keys)
    while keys:
        try:
            with np.errstate(all="ignore"):
                fits, bad, fatal = _fit_once(s, pts, keys, data_label)
        except (np.linalg.LinAlgError, ArithmeticError, ValueError):
            # the points drive the model or the solver out of finite numbers: no fit, never
            # an internal error (the importers refuse absurd values; this is the last guard)
            why = "the points give no finite fit (values out of any physical range)"
            return {}, {**refused, **{k: why for k in keys}}
        if fatal:
            refused.update(fatal)
            return {}, refused
        if not bad:
            held = [k for k in refused if k not in fits]
            if held:
                note = "with " + ", ".join(f"{k} held at {getattr(s, k):.4g}" for k in held)
                for f in fits.values():
                    f.note = note + (f"; {f.note}" if f.note else "")
            return fits, refused
        refused.update(bad)
        keys = [k for k in keys if k not in bad]
    return {}, refused


def _fit_once(s, pts, keys, data_label):
    """One fit of ``keys``: (fits, refused one by one, refused all together)."""
    params = []
    for k in keys:
        lo, hi = _field_bounds(k)
        start = float(getattr(s, k))
        inverse = k.endswith("efficiency")
        if not inverse:
            lo = max(lo, 0.0)
            hi = min(hi, 1e4)
        params.append(_Param(k, max(start, lo + 1e-6) if inverse else start, lo, hi, inverse))
    y = np.array([p.measured for p in pts], float)

    def predict(values):
        return model_values(_variant(s, values), pts)

    values, J, r, theta = gauss_newton(predict, params, y)
    unmoved = {
        k: "the measured points do not depend on it in the model"
        for k, nrm in zip(keys, np.linalg.norm(J, axis=0), strict=True)
        if not nrm > 1e-12
    }
    if unmoved:
        return {}, unmoved, {}
    fatal = _identify(J, len(pts), keys)
    if fatal:
        return {}, {}, fatal
    unc = _uncertainties(J, r, theta, params)
    r2 = r_squared(y, predict(values))
    files = sorted({p.dataset for p in pts})
    fits, bad = {}, {}
    for prm, u in zip(params, unc, strict=True):
        v = float(values[prm.key])
        floor = ABS_UNCERTAINTY_FLOOR.get(prm.key, 0.0)
        if u is not None and (not math.isfinite(u) or u > max(MAX_REL_UNCERTAINTY * abs(v), floor)):
            bad[prm.key] = (
                f"the data determine it too weakly (±{u:.3g} on {v:.3g}); add points that "
                "move it, e.g. a wider range of batch sizes"
            )
            continue
        if prm.inverse and v >= prm.hi * 0.999:
            bad[prm.key] = (
                "the points are faster than the model allows even at 100 % of the datasheet "
                "peak: check that the scenario (model, GPUs, dtype, hardware) is what was measured"
            )
            continue
        note = (
            "at its lower bound (0): the points leave no room for it"
            if (not prm.inverse and v <= prm.lo + 1e-9)
            else ""
        )
        if u is None:  # issue 40, item 1: a value no second point checks is not offered
            bad[prm.key] = (
                f"{len(pts)} point(s) for {len(params)} parameter(s): a fit needs more points "
                "than parameters to say how well the data determine it (one point of another "
                "model or GPU would set it anywhere); add points, e.g. a second batch size, "
                "concurrency or prompt length"
            )
            continue
        fits[prm.key] = ParamFit(
            prm.key, v, u, len(pts), data_label, files, r2, note, float(getattr(s, prm.key))
        )
    return fits, bad, {}


def _compute_bound(s: Scenario, pts: list[Point]) -> int:
    """How many decode points the model puts on the compute roof (their step moves with
    ``flops_efficiency``)."""
    n = 0
    groups: dict[tuple, list[Point]] = {}
    for p in pts:
        if p.quantity in ("step_ms", "tpot_ms"):
            groups.setdefault((p.cond.get("context_tokens"), p.cond.get("cuda_graphs")), []).append(
                p
            )
    for (ctx, graphs), ps in groups.items():
        update = {
            k: v for k, v in (("context_tokens", ctx), ("cuda_graphs", graphs)) if v is not None
        }
        sw = decode.sweep(s.model_copy(update=update) if update else s, [p.x for p in ps])
        n += int(np.sum(sw["t_compute_s"] > sw["t_memory_s"]))
    return n


# ----------------------------------------------------------------------------- calibrate


@dataclass
class Calibration:
    """What :func:`calibrate` found (see :meth:`to_json` for the CLI's layout)."""

    fits: dict[str, ParamFit]
    refused: dict[str, str]
    points: list[Point]
    before: np.ndarray
    after: np.ndarray
    notes: list[str]
    data_sets: list[dict]
    engine: str | None = None  # the engine band a start-up log's release runs on

    @property
    def keys(self) -> dict[str, float]:
        return {k: _round(f.value) for k, f in self.fits.items()}

    def residual_rows(self) -> list[dict]:
        rows = []
        for p, b, a in zip(self.points, self.before, self.after, strict=True):
            rows.append(
                {
                    "file": p.dataset,
                    "point": p.label,
                    "quantity": p.quantity,
                    "unit": QUANTITY_UNITS.get(p.quantity, ""),
                    "x": p.x,
                    "measured": _round(p.measured),
                    "model_before": None if np.isnan(b) else _round(b),
                    "model_after": None if np.isnan(a) else _round(a),
                    "residual_before_pct": _pct(b, p.measured),
                    "residual_after_pct": _pct(a, p.measured),
                    "fitted": p.fitted,
                    "note": p.note,
                }
            )
        return rows

    def to_json(self) -> dict:
        return {
            "keys": self.keys,
            "engine": self.engine,
            "fit": {k: f.to_json() for k, f in self.fits.items()},
            "refused": self.refused,
            "data_sets": self.data_sets,
            "median_abs_error_pct": {
                "before": _median_abs(self.before, self.points),
                "after": _median_abs(self.after, self.points),
            },
            "residuals": self.residual_rows(),
            "notes": self.notes,
        }


def _pct(model: float, measured: float) -> float | None:
    if np.isnan(model) or measured == 0:
        return None
    return round(100.0 * (model - measured) / measured, 2)


def _median_abs(model: np.ndarray, pts: list[Point]) -> float | None:
    errs = [
        abs(_pct(m, p.measured))
        for m, p in zip(model, pts, strict=True)
        if _pct(m, p.measured) is not None
    ]
    return round(float(np.median(errs)), 2) if errs else None


def calibrate(s: Scenario, datasets: list[Dataset]) -> Calibration:
    """Fit the scenario to ``datasets`` (see the module docstring for what each identifies)."""
    pts: list[Point] = []
    notes: list[str] = []
    for ds in datasets:
        p, n = points_of(ds)
        pts += p
        notes += n
    if not pts:
        served = [ds.name for ds in datasets if ds.kind == "serving"]
        where = (
            f"; the serving benchmarks ({', '.join(served)}) are drawn over the Serving page's "
            "latency-against-rate chart at their offered rates instead, where a load's queue "
            "is modelled"
            if served
            else ""
        )
        raise ScenarioError(
            "measurements",
            "none of the files holds a point the fit can use (accepted: decode steps, request "
            "latency at a stated concurrency, launch micro-benchmarks, cold-start items, vLLM "
            "start-up logs, capture-kit CSVs)" + where + "".join(f"; {n}" for n in notes),
        )
    before = model_values(s, pts)
    fits: dict[str, ParamFit] = {}
    refused: dict[str, str] = {}
    # a start-up log names its vLLM release: its numbers (capture per graph differs 3-5x
    # between V1 0.8-0.10 and 0.11+) are that release's band of the profile (issue 20)
    engine = _log_engine(s, datasets)
    if engine:
        notes.append(
            f"the start-up log states vLLM {engine[1]}: compared against the engine profile "
            f"{engine[0]} (the numbers of that release); applying the fit sets it"
        )
    base = _variant(s, {"engine": engine[0]}) if engine else s
    cur = base

    def apply(new: dict[str, ParamFit]):
        nonlocal cur
        fits.update(new)
        cur = _variant(base, {k: f.value for k, f in fits.items()})

    # 1. decode steps: bandwidth and host work (and τ when eager and graph steps are both given)
    dec = [p for p in pts if p.quantity in ("step_ms", "tpot_ms", "e2e_s") and p.fitted]
    if dec:
        keys = ["bw_efficiency", "host_ms"]
        modes = {(p.cond.get("cuda_graphs") == "none") for p in dec if "cuda_graphs" in p.cond}
        if modes == {True, False}:
            keys.append("launch_us")
        if _compute_bound(cur, dec) >= 2:  # large batches on the compute roof: fit it too
            keys.append("flops_efficiency")
        names = {"step_ms": "decode steps", "tpot_ms": "TPOT", "e2e_s": "batch latency"}
        label = " + ".join(names[q] for q in names if any(p.quantity == q for p in dec))
        got, ref = _fit_group(cur, dec, keys, label)
        if "host_ms" in ref and "bw_efficiency" not in got:
            distinct = sorted({(p.x, p.cond.get("context_tokens", -1)) for p in dec})
            reason = (
                f"one batch size ({int(distinct[0][0])}) cannot separate bandwidth from host "
                "work: measure at least two batch sizes far apart (e.g. 1 and 64)"
                if len(distinct) == 1
                else ref["host_ms"]
            )
            got, ref2 = _fit_group(cur, dec, ["bw_efficiency"], label)
            if "bw_efficiency" in got:
                held = (
                    "with "
                    + ", ".join(
                        f"{k} held at {getattr(cur, k):.4g}" for k in keys if k != "bw_efficiency"
                    )
                    + " (the scenario's values)"
                )
                old = got["bw_efficiency"].note
                got["bw_efficiency"].note = held + (f"; {old}" if old else "")
            ref = {**ref2, **{k: reason for k in keys if k != "bw_efficiency"}}
        apply(got)
        refused.update({k: v for k, v in ref.items() if k not in fits})

    # 2. TTFT at concurrency 1: prefill efficiency
    ttft = [p for p in pts if p.quantity == "ttft_ms" and p.fitted]
    if ttft:
        # the prefill's efficiency (the slope over prompt length) and the engine's front-end
        # time (the intercept) together where the prompts differ; one length tells them apart
        # no better than their sum, so the efficiency alone is fitted then
        lengths = {p.cond.get("prompt_tokens") for p in ttft}
        keys = ["prefill_efficiency", "frontend_ms"] if len(lengths) > 1 else ["prefill_efficiency"]
        got, ref = _fit_group(cur, ttft, keys, "TTFT at concurrency 1")
        if "prefill_efficiency" in ref:
            why = ref["prefill_efficiency"]
            ref["prefill_efficiency"] = (
                "the modelled TTFT of these prompts does not depend on prefill FLOPS (memory- "
                "or overhead-bound): measure longer prompts"
                if "depend" in why
                else why
            )
        apply(got)
        refused.update(ref)

    # 3. launch micro-benchmark
    lau = [p for p in pts if p.quantity == "launch_saving_ms"]
    if lau and "launch_us" not in fits:
        got, ref = _fit_launch(lau, cur)
        apply(got)
        refused.update(ref)
    elif lau:
        notes.append(
            "launch_us comes from the eager and graph decode steps; the micro-benchmark's "
            "empty kernels measure the launch floor, shown for comparison"
        )

    # 4. start-up log and cold-start items
    got, ref = _fit_cold(cur, pts)
    apply(got)
    refused.update(ref)

    # 5. capture kit: GEMV bandwidth (when no decode steps) and host-to-device
    hbm = [p for p in pts if p.quantity == "hbm_gb_s" and p.x <= 64]
    if hbm and "bw_efficiency" not in fits and "bw_efficiency" not in refused:
        peak = cur.hardware.hbm_bandwidth_tb_s * 1000
        f = _mean_fit(
            "bw_efficiency",
            [min(p.measured / peak, 1.0) for p in hbm],
            "GEMV bandwidth sweep, batch ≤ 64 (median)",
            hbm,
            "a bare matrix-vector product: an upper bound for an engine's decode",
            cur.bw_efficiency,
            np.median,
        )
        apply({"bw_efficiency": f})
    h2d = [p for p in pts if p.quantity == "h2d_gb_s" and p.fitted]
    if h2d:
        f = _mean_fit(
            "hardware.h2d_gb_s",
            [p.measured for p in h2d],
            "pinned host-to-device copies (median)",
            h2d,
            "",
            cur.hardware.h2d_gb_s,
            np.median,
        )
        apply({"hardware.h2d_gb_s": f})

    after = model_values(cur, pts)
    data_sets = []
    for ds in datasets:
        idx = [i for i, p in enumerate(pts) if p.dataset == ds.name]
        y = np.array([pts[i].measured for i in idx])
        entry = {"file": ds.name, "format": ds.format, "kind": ds.kind, "points": len(idx)}
        if idx:
            entry["r2_before"] = _r2(y, before[idx])
            entry["r2_after"] = _r2(y, after[idx])
            entry["median_abs_error_pct_before"] = _median_abs(before[idx], [pts[i] for i in idx])
            entry["median_abs_error_pct_after"] = _median_abs(after[idx], [pts[i] for i in idx])
        why, keys = setup_mismatch(s, ds.conditions)
        if why:  # issue 40, item 1: a file of another model or GPU says so before any fit
            entry["mismatch"] = why
            entry["set_scenario"] = dict(keys)
        data_sets.append(entry)
    return Calibration(
        fits, refused, pts, before, after, notes, data_sets, engine[0] if engine else None
    )


def _log_engine(s: Scenario, datasets: list[Dataset]) -> tuple[str, str] | None:
    """The engine profile and band of the first start-up log that states its vLLM release, and
    that release, when the scenario runs a vLLM profile and the log's band is another one."""
    if s.engine_id not in ("vllm", "vllm-v0"):
        return None
    for ds in datasets:
        if ds.kind != "startup_log":
            continue
        release = ds.extra.get("version") or ds.conditions.get("vllm_version")
        kind = ds.conditions.get("engine")
        engine = engines.engine_for_log(release, kind)
        if engine:
            said = str(release) if release else f"{kind} (no release stated)"
            return (engine, said) if engine != s.engine else None
    return None


def _r2(y, m):
    ok = ~np.isnan(m)
    r = r_squared(y[ok], m[ok])
    return None if r is None else round(r, 4)


def _fit_launch(lau: list[Point], cur: Scenario):
    k = np.array([p.x for p in lau])
    d = np.array([p.measured for p in lau])
    files = sorted({p.dataset for p in lau})
    two = len(set(k.tolist())) >= 2
    X = np.column_stack([k, np.ones_like(k)]) if two else k[:, None]
    coef, *_ = np.linalg.lstsq(X, d, rcond=None)
    tau_us = float(coef[0]) * 1000.0
    n, p = X.shape
    unc = None
    if n > p:
        r = d - X @ coef
        cov = float(r @ r) / (n - p) * np.linalg.inv(X.T @ X)
        unc = math.sqrt(max(cov[0, 0], 0.0)) * 1000.0
    if tau_us <= 0:
        return {}, {
            "launch_us": "graph replays were not faster than eager launches in these rows; "
            "check that graph_ms is one replay of the same chain"
        }
    if unc is not None and unc > MAX_REL_UNCERTAINTY * tau_us:
        return {}, {"launch_us": f"too noisy (±{unc:.3g} µs on {tau_us:.3g} µs)"}
    note = (
        f"slope of eager − graph against kernels; intercept {coef[1] * 1000:.3g} µs"
        if two
        else "one chain length: (eager − graph) / kernels"
    )
    note += "; empty kernels measure the launch floor (real kernels with arguments cost more)"
    return {
        "launch_us": ParamFit(
            "launch_us",
            min(max(tau_us, 0.001), 1000.0),
            unc,
            len(lau),
            "launch micro-benchmark",
            files,
            _r2(d, X @ coef),
            note,
            cur.launch_us,
        )
    }, {}


def _fit_cold(cur: Scenario, pts: list[Point]):
    """Start-up figures: direct read-offs (no free parameter is shared between them)."""
    fits: dict[str, ParamFit] = {}
    refused: dict[str, str] = {}
    cs = cold.cold_start(cur)

    def direct(key, q, value_of, data, note=""):
        sel = [p for p in pts if p.quantity == q]
        if not sel:
            return
        vals = np.array([value_of(p) for p in sel])
        if (vals < 0).any():
            refused[key] = (
                f"the measured {q} is shorter than the engine's own sub-steps the model adds; "
                "the item cannot be split"
            )
            return
        lo, hi = _field_bounds(key)
        fits[key] = _mean_fit(key, np.clip(vals, lo, hi), data, sel, note, getattr(cur, key))

    sub = cs["sublines"]
    direct("process_init_s", "item1_s", lambda p: p.measured, "cold-start item 1")
    direct(
        "cuda_context_s",
        "item2_s",
        lambda p: p.measured - sum(sub["cuda_context_s"].values()),
        "cold-start item 2",
        "less the engine's P2P check" if sum(sub["cuda_context_s"].values()) else "",
    )
    direct(
        "allocator_s",
        "item3_s",
        lambda p: p.measured - sum(sub["allocator_s"].values()),
        "cold-start item 3",
        "less the engine's memory profiling and KV-cache set-up",
    )
    # item 5 of a cold-start CSV: compile is what is left after capture, warm-up and JIT
    rest5 = (
        sub["graphs_jit_s"]["capture_s"]
        + sub["graphs_jit_s"]["warmup_s"]
        + sub["graphs_jit_s"]["kernel_jit_s"]
    )
    key5 = "compile_cached_s" if cur.compile_cache else "compile_s"
    if cur.cuda_graphs != "none":
        direct(
            key5,
            "item5_s",
            lambda p: p.measured - rest5,
            "cold-start item 5",
            f"item 5 less the modelled capture, warm-up and JIT ({rest5:.3g} s), held",
        )
    # a log's torch.compile and capture lines
    comp = [p for p in pts if p.quantity == "compile_s"]
    cold_c = [p for p in comp if not p.cond.get("cached")]
    warm_c = [p for p in comp if p.cond.get("cached")]
    for key, sel in (("compile_s", cold_c), ("compile_cached_s", warm_c)):
        if sel:
            note = "the log loaded a warm compile cache" if key == "compile_cached_s" else ""
            fits[key] = _mean_fit(
                key,
                [p.measured for p in sel],
                "start-up log (torch.compile total)",
                sel,
                note,
                getattr(cur, key),
            )
    if "compile_cached_s" in fits:
        cold_v = fits["compile_s"].value if "compile_s" in fits else cur.compile_s
        if fits["compile_cached_s"].value > cold_v:
            refused["compile_cached_s"] = (
                f"the warm-cache compile measured ({fits['compile_cached_s'].value:.3g} s) is "
                f"longer than the scenario's cold compile ({cold_v:.3g} s); measure a cold start "
                "too (compile_s) so both are calibrated"
            )
            del fits["compile_cached_s"]
    caps = [p for p in pts if p.quantity == "capture_s"]
    if caps:
        per = []
        for p in caps:
            graphs = p.cond.get("graphs") or cs["graphs_captured"]
            if graphs:
                per.append(p.measured / graphs)
        if per:
            assumed = any(not p.cond.get("graphs") for p in caps)
            fits["capture_s_per_graph"] = ParamFit(
                "capture_s_per_graph",
                float(np.mean(per)),
                None if len(per) < 2 else float(np.std(per, ddof=1)) / math.sqrt(len(per)),
                len(per),
                "start-up log (graph capture)",
                sorted({p.dataset for p in caps}),
                None,
                (
                    f"the log does not say how many graphs it captured: the scenario's "
                    f"{cs['graphs_captured']} assumed"
                    if assumed
                    else "capture seconds over the graphs the log captured"
                )
                + "; old vLLM prints whole seconds",
                cur.capture_s_per_graph,
            )
        else:
            refused["capture_s_per_graph"] = "the scenario captures no graphs (eager)"
    # storage read rate: from a log's loading line, or from cold-start item 4
    reads = [p for p in pts if p.quantity in ("read_gb_s", "load_s")]
    e = cold._effective(cur)
    if reads:
        rates, per_stream = [], []
        for p in reads:
            if "bytes_per_rank" in p.cond:
                ranks = p.cond["ranks"]
                t_h2d = p.cond["bytes_per_rank"] / (cur.hardware.h2d_gb_s * GB)
                t_read = p.cond["seconds"] - (0.0 if e["loader"].overlap else t_h2d)
                if t_read <= 0:
                    continue
                rate = ranks * p.cond["bytes_per_rank"] / t_read / GB
            else:
                rate, ranks = p.measured, 1
            rates.append(rate)
            per_stream.append(rate / ranks / e["concurrency"])
        if rates:
            rate = float(np.mean(rates))
            files = sorted({p.dataset for p in reads})
            note = "bytes read over seconds reading (less the host→device copy)"
            if rate > 30:
                note += "; faster than any NVMe: the weights were probably in the page cache"
            fits["storage_gb_s"] = ParamFit(
                "storage_gb_s",
                rate,
                None,
                len(rates),
                "start-up log (weights)",
                files,
                None,
                note,
                e["aggregate"] / GB,
            )
            fits["stream_gb_s"] = ParamFit(
                "stream_gb_s",
                float(np.mean(per_stream)),
                None,
                len(rates),
                "start-up log (weights)",
                files,
                None,
                "one rank's rate over the loader's read streams",
                e["per_stream"] / GB,
            )
        else:
            refused["storage_gb_s"] = (
                "the weights loaded faster than the host→device copy alone allows; the read "
                "rate cannot be separated"
            )
    item4 = [p for p in pts if p.quantity == "item4_s"]
    if item4 and "storage_gb_s" not in fits:
        t = float(np.mean([p.measured for p in item4]))
        t_h2d, t_host = cold._copy_times(cur, e["loader"])
        t_read = t - t_host - (0.0 if e["loader"].overlap else t_h2d)
        ranks = cur.gpus if cur.engine_figures.weights_parallel_ranks else 1
        if t_read <= 0:
            refused["storage_gb_s"] = (
                f"item 4 ({t:.3g} s) is shorter than the modelled host→device copy "
                f"({t_h2d:.3g} s): the storage rate cannot be separated"
            )
        else:
            rate = cur.weights_bytes / t_read / GB
            files = sorted({p.dataset for p in item4})
            fits["storage_gb_s"] = ParamFit(
                "storage_gb_s",
                rate,
                None,
                len(item4),
                "cold-start item 4",
                files,
                None,
                "the scenario's weights over item 4 less the host→device copy",
                e["aggregate"] / GB,
            )
            fits["stream_gb_s"] = ParamFit(
                "stream_gb_s",
                rate / ranks / e["concurrency"],
                None,
                len(item4),
                "cold-start item 4",
                files,
                None,
                "the read rate over the read streams",
                e["per_stream"] / GB,
            )
    for k in list(fits):
        lo, hi = _field_bounds(k)
        if not lo <= fits[k].value <= hi:
            refused[k] = f"the fitted {fits[k].value:.4g} is outside the accepted {lo:g}–{hi:g}"
            del fits[k]
    return fits, refused


# ----------------------------------------------------------------------------- overlays


def fitted_scenario(s: Scenario, cal: Calibration) -> Scenario:
    """``s`` with the calibration's keys applied."""
    update = {k: f.value for k, f in cal.fits.items()}
    if cal.engine:
        update["engine"] = cal.engine
    return _variant(s, update) if update else s


def overlay_curves(s: Scenario, cal: Calibration) -> dict:
    """The model's curves behind the measured points, for the scenario as it is (``model``) and
    with the fit applied (``fitted``; absent when nothing was fitted).

    ``decode``: one curve per (context, graphs mode) of the measured steps, step time [ms] and
    tokens/s against batch; ``ttft``: TTFT [ms] against prompt tokens at the measured prompts'
    range; ``launch``: eager − graph [ms] against kernels. Each curve is one vectorised call
    (:func:`model.decode.sweep`), except TTFT, one :func:`request_figures` per grid point
    (at most 24).
    """
    variants = {"model": s}
    if cal.fits:
        variants["fitted"] = fitted_scenario(s, cal)
    out: dict = {"decode": [], "ttft": [], "launch": []}
    dec = [p for p in cal.points if p.quantity in ("step_ms", "tpot_ms")]
    groups = sorted(
        {(p.cond.get("context_tokens"), p.cond.get("cuda_graphs")) for p in dec},
        key=lambda g: (g[0] or 0, str(g[1])),
    )
    if dec:
        top = max(p.x for p in dec)
        grid = np.unique(np.round(np.geomspace(1, max(2.0, top * 1.5), 80)))
        for ctx, graphs in groups:
            update = {}
            if ctx is not None:
                update["context_tokens"] = ctx
            if graphs is not None:
                update["cuda_graphs"] = graphs
            for which, v in variants.items():
                vv = v.model_copy(update=update) if update else v
                sw = decode.sweep(vv, grid)
                out["decode"].append(
                    {
                        "which": which,
                        "group": (ctx, graphs),  # as the points name it (None: as configured)
                        "context_tokens": vv.context_tokens,
                        "cuda_graphs": vv.cuda_graphs,
                        "batch": grid,
                        "step_ms": sw["t_step_s"] / MS,
                        "tokens_per_s": sw["tokens_per_s"],
                    }
                )
    ttft = [p for p in cal.points if p.quantity == "ttft_ms" and "prompt_tokens" in p.cond]
    if ttft:
        prompts = [p.cond["prompt_tokens"] for p in ttft]
        grid = np.unique(np.round(np.geomspace(max(1, min(prompts) / 2), max(prompts) * 1.5, 24)))
        for which, v in variants.items():
            ys = [
                request_figures(v.model_copy(update={"prompt_tokens": int(g)}))["ttft_ms"]
                for g in grid
            ]
            out["ttft"].append({"which": which, "prompt_tokens": grid, "ttft_ms": np.array(ys)})
    lau = [p for p in cal.points if p.quantity == "launch_saving_ms"]
    if lau:
        grid = np.geomspace(max(1.0, min(p.x for p in lau) / 2), max(p.x for p in lau) * 2, 40)
        for which, v in variants.items():
            out["launch"].append(
                {"which": which, "kernels": grid, "saving_ms": grid * v.launch_us / 1000.0}
            )
    return out
