"""Compose the core: one scenario in, the figures of every lens out (SPEC 3 and 4).

``evaluate`` returns the JSON sections of ``whatif eval --json`` for the scenario's own batch;
the ``*_lens`` functions return everything one page shows. The decode sweep and the launch
section live in :mod:`model.decode`, which :mod:`model.knobs` reads too.
"""

from __future__ import annotations

import math

import numpy as np

from model import launch, roofline, speculative
from model.cold_start import cold_start, optimised
from model.decode import (  # noqa: F401 - sweep, graph_mode, launch_figures: this module's API
    ACTIVATION_BYTES,
    at_batch,
    graph_mode,
    launch_figures,
    peaks,
    sweep,
)
from model.economics import economics
from model.engines import ENGINE_KNOBS
from model.knobs import knobs
from model.memory import memory_figures  # noqa: F401 - part of this module's API
from model.request import request_figures
from model.scenario import CUDA_GRAPHS_MODES, Scenario
from model.spec_gain import crossover_figures
from model.units import GB, GIB, MS, TERA, US


def evaluate(
    s: Scenario,
    trace=None,
    economics_section: bool = True,
    serving_section: bool = False,
    search: dict | str | None = None,
) -> dict:
    """The figures of the scenario's own batch, in the sections of ``whatif eval --json``; the
    ``economics`` section replays ``trace`` (:class:`model.readers.traces.Trace`) when one is given,
    else the scenario's traffic profile. Lenses that do not show it leave it out
    (``economics_section=False``: ~10 ms of every run of those pages). ``search``: the
    replica's capacity search when the caller has it (:func:`model.serving.replica`)."""
    hw = s.hardware
    one = {k: v[0] for k, v in sweep(s, [s.batch]).items()}
    cdtype, peak, bw = peaks(s)
    t_step = float(one["t_step_s"])
    return {
        # the preset the scenario starts from (the defaults are the "default" preset)
        "scenario": s.scenario or "default",
        "engine": engine_section(s),
        "roofline": {
            "compute_dtype": cdtype,
            "peak_tflops": hw.peak_tflops[cdtype],
            "hbm_bandwidth_tb_s": hw.hbm_bandwidth_tb_s,
            "ridge_flop_per_byte": float(roofline.ridge_point(peak, bw)),
            "effective_ridge_flop_per_byte": float(
                roofline.ridge_point(peak * s.flops_efficiency, bw * s.bw_efficiency)
            ),
            "arithmetic_intensity": float(one["arithmetic_intensity"]),
            "attained_tflops": float(one["attained_flops"]) / TERA,
        },
        "decode": {
            "batch": s.batch,
            # the layout (issue 42 §3): a data-parallel rank's step, its batch per rank, the
            # tokens_per_s of all ranks; the replica's GPUs
            "data_parallel": s.data_parallel,
            "expert_parallel": s.expert_parallel,
            "replica_gpus": s.replica_gpus,
            "padded_batch": int(one["padded_batch"]),
            "launches": int(one["launches"]),
            "t_memory_ms": float(one["t_memory_s"]) / MS,
            "t_compute_ms": float(one["t_compute_s"]) / MS,
            "t_comm_ms": float(one["t_comm_s"]) / MS,
            "t_gpu_ms": float(one["t_gpu_s"]) / MS,
            "t_launch_ms": float(one["t_launch_s"]) / MS,
            "t_host_ms": float(one["t_host_s"]) / MS,
            # the part of t_host that is fixed GPU work per layer (MoE routing, MLA kernels,
            # GEMM floors beyond the H100's)
            "t_layer_fixed_ms": float(one["t_layer_fixed_s"]) / MS,
            "t_step_ms": t_step / MS,
            "tokens_per_s": float(one["tokens_per_s"]),
            "tokens_per_s_per_seq": float(one["accepted_tokens_per_step"]) / t_step,
            "bound": str(one["bound"]),
            # speculative decoding (model.speculative): the verify and the drafts in t_step,
            # the tokens a step emits per sequence (1 without), the time per output token
            "speculative": s.speculative,
            "num_speculative_tokens": speculative.k_of(s),
            "spec_acceptance": speculative.alpha_of(s),
            "accepted_tokens_per_step": float(one["accepted_tokens_per_step"]),
            "t_verify_ms": float(one["t_verify_s"]) / MS,
            "t_draft_ms": float(one["t_draft_s"]) / MS,
            "t_token_ms": float(one["t_token_s"]) / MS,
            # tok/s over speculative=none at this batch; the batch (and the request rate, by
            # Little's law) above which speculation stops paying (model.speculative)
            **crossover_figures(s),
        },
        "launch": launch_figures(s),
        "memory": memory_figures(s),
        "cold_start": cold_start(s),
        "request": request_figures(s),
        **({"economics": economics(s, trace, search)} if economics_section else {}),
        **(serving_sections(s, trace) if serving_section else {}),
    }


def serving_sections(s: Scenario, trace=None) -> dict:
    """The ``serving`` and ``capacity`` sections (SPEC 4.6), or, when the scenario cannot
    serve (its weights or one request do not fit), both as ``fits: false`` with the reason and
    no latency figures."""
    from model import serving  # the simulator: only when a serving figure is asked for

    try:
        return serving.sections(s, trace)
    except serving.DoesNotFit as exc:
        reason = {"fits": False, "reason": str(exc)}
        return {"serving": dict(reason), "capacity": dict(reason)}


def engine_section(s: Scenario) -> dict:
    """The engine profile in effect: its id, version and name, and every knob it can set with
    the value in effect and where it comes from (``engine`` or ``scenario``)."""
    profile = s.engine_profile
    auto = set(s.from_engine())
    knobs_in_effect = {}
    for key in ENGINE_KNOBS:
        value = getattr(s, key)
        knobs_in_effect[key] = ",".join(map(str, value)) if isinstance(value, list) else value
    return {
        "id": s.engine_id,
        "version": s.engine_version,
        "name": profile.name,
        "knobs": knobs_in_effect,
        "from_engine": sorted(auto),
        "set_by_scenario": sorted(set(ENGINE_KNOBS) - auto),
    }


#: Why a figure of ``evaluate`` may be null (JSON ``null``): the figure does not exist here.
NULL_REASONS = {
    "scenario": "no named base scenario: the built-in defaults",
    "cold_start.wake_s": "sleep_level is 0: the server does not sleep, so there is no wake",
    "cold_start.wake_speedup": "sleep_level is 0: no wake to compare with the cold start",
    "capacity.replicas_needed": "request_rate is inf, or one replica misses the SLO even at "
    "light load (max_request_rate is 0)",
    "capacity.gpus_needed": "request_rate is inf, or one replica misses the SLO even at light "
    "load (max_request_rate is 0)",
    "decode.spec_speedup": "speculative is none: nothing to compare with",
    "decode.spec_crossover_batch": "speculative is none, or speculation pays at every batch "
    "whose KV cache fits (no crossover)",
    "decode.spec_crossover_rate": "speculative is none, or speculation pays at every batch "
    "whose KV cache fits (no crossover)",
    "capacity.for_request_rate": "request_rate is inf: all requests at once",
    "capacity.knee_request_rate": "p99 TTFT stays within twice its light-load value over the "
    "whole sweep: no knee below 110 % of the saturation throughput",
    "economics.break_even_cold_start_s": "scaling to zero pays even with an hour-long cold "
    "start: there is no break-even within an hour",
}


def strict_figures(figures: dict) -> dict:
    """``figures`` made fit for strict JSON (RFC 8259 has no Infinity or NaN).

    Numpy scalars become Python numbers; a float that is not finite becomes ``None``. Every
    ``None`` is explained in a ``null_reasons`` section (dotted figure name → why), so a reader
    never has to guess whether a null means "zero", "unknown" or "not applicable". The scenario's
    bounds keep every figure finite (tests/test_bounds.py sweeps the corners); the replacement
    is the last line of defence, and says so.
    """
    reasons: dict[str, str] = {}

    def clean(value, path: str):
        if isinstance(value, dict):
            return {k: clean(v, f"{path}.{k}" if path else k) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(v, f"{path}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            reasons[path] = f"not a finite number for this scenario ({value!r})"
            return None
        if value is None:
            reasons[path] = NULL_REASONS.get(path, "not defined for this scenario")
        return value

    out = clean(figures, "")
    out["null_reasons"] = reasons
    return out


def seed_table(s: Scenario) -> list[dict]:
    """The seed's four rows for this scenario: BF16 or INT4 × graphs off or on, then, when the
    scenario's weights are in another dtype (FP8, say), its own two rows, so the table always
    has the scenario in it.

    Each row: ``configuration``, ``t_hbm_ms`` (GPU time), ``t_fixed_ms`` (launch + host),
    ``t_step_ms``, ``tokens_per_s``, ``speedup`` against the first row. The graphs-on rows use
    ``full_decode_only`` (one replay per step).

    References
    ----------
    .. [1] Seed: *The roofline flips*, table "Configuration (3B, 4090, batch 1)".
    """
    rows = []
    seed = ("bf16", "int4")
    dtypes = seed + (() if s.weights_dtype in seed else (s.weights_dtype,))
    for dtype in dtypes:
        own = "" if dtype in seed else " (scenario's dtype)"
        for graphs in ("none", "full_decode_only"):
            v = s.with_dtype(dtype, cuda_graphs=graphs)
            r = {k: float(a[0]) for k, a in sweep(v, [s.batch]).items() if k != "bound"}
            rows.append(
                {
                    "configuration": f"{dtype.upper()}{own}, "
                    f"{'CUDA graphs' if graphs != 'none' else 'no graphs'}",
                    "t_hbm_ms": r["t_gpu_s"] / MS,
                    "t_fixed_ms": (r["t_launch_s"] + r["t_host_s"]) / MS,
                    "t_step_ms": r["t_step_s"] / MS,
                    "tokens_per_s": r["tokens_per_s"],
                }
            )
    for row in rows:
        row["speedup"] = row["tokens_per_s"] / rows[0]["tokens_per_s"]
    return rows


def batch_grid(s: Scenario, top: int = 4096, points: int = 160) -> np.ndarray:
    """Batch sizes of a sweep: log-spaced from 1 to ``top`` (or the scenario's batch), plus the
    scenario's batch and the captured sizes, so padding steps show."""
    top = max(top, s.batch)
    grid = np.round(np.geomspace(1, top, points))
    sizes = np.asarray([c for c in s.capture_sizes if c <= top], dtype=float)
    return np.unique(np.concatenate([grid, sizes, [float(s.batch)]]))


def ridge_batch(sw: dict) -> float | None:
    """The first batch of a sweep whose roofline term is compute (None if none is)."""
    crossed = np.nonzero(sw["t_compute_s"] >= sw["t_memory_s"])[0]
    return float(sw["batch"][crossed[0]]) if crossed.size else None


def roofline_lens(s: Scenario) -> dict:
    """Everything the Roofline page shows, from one call: the figures, a batch sweep
    (1–4096, one vectorised call), the ridge batch, the seed's table and Amdahl's estimate."""
    figures = evaluate(s, economics_section=False)
    grid = batch_grid(s)
    sw = sweep(s, grid)
    table = seed_table(s)
    bf16 = table[0]
    # f is the share of the BF16 eager step spent reading the weights (what INT4 shrinks);
    # KV reads, compute, launches and host work are the part Amdahl leaves alone
    eager = s.with_dtype("bf16", cuda_graphs="none")
    one = sweep(eager, [s.batch])
    t_weights = (
        float(one["weights_read_bytes"][0])
        / s.gpus
        / (s.hardware.hbm_bandwidth_tb_s * 1e12 * s.bw_efficiency)
    )
    fraction = min(t_weights / float(one["t_step_s"][0]), 1.0)
    # the table's own INT4 speed-up of the weights: 4× from bytes per param, less when the
    # scenario's weights_gb pins one side (an AWQ checkpoint keeps 16-bit embeddings)
    speedup = eager.weights_bytes / s.with_dtype("int4").weights_bytes
    return {
        "figures": figures,
        "sweep": sw,
        "current_index": int(np.searchsorted(grid, s.batch)),
        "ridge_batch": ridge_batch(sw),
        "seed_table": table,
        "amdahl": {
            "fraction": fraction,
            "weights_speedup": speedup,
            "estimate": float(roofline.amdahl_speedup(fraction, speedup)),
            "table": table[2]["tokens_per_s"] / bf16["tokens_per_s"],
        },
    }


def mode_grid(s: Scenario, top: int = 4096) -> np.ndarray:
    """Batches for the per-mode sweep: every integer up to a little past the largest bucket
    (so each padding step shows), then log-spaced to ``top``, plus the scenario's batch."""
    dense_top = int(min(max(max(s.capture_sizes) * 1.25, 64), 1024))
    top = max(top, s.batch)
    grid = np.concatenate(
        [
            np.arange(1, dense_top + 1, dtype=float),
            np.round(np.geomspace(1, top, 120)),
            np.asarray([c for c in s.capture_sizes if c <= top], dtype=float),
            [float(s.batch)],
        ]
    )
    return np.unique(grid)


WEIGHTS_GIB_GRID = np.geomspace(0.25, 512, 200)
TIMELINE_LIMIT = 2000  # launches drawn one by one; the rest of a step shows as a band


def launch_lens(s: Scenario) -> dict:
    """Everything the Launch overhead page shows, from one call (SPEC 4.2).

    ``figures``: the JSON sections. ``modes``: one vectorised batch sweep per graphs mode.
    ``mode_table``: each mode at the scenario's batch with its start-up cost. ``timeline``:
    the eager and graph steps kernel by kernel. ``share``: eager vs graph across weight sizes
    at this N and τ (the Q&A's "quantised models benefit more"). ``dtypes``: the same at this
    model's sizes per dtype. ``buckets``: padding of every batch up to the largest bucket.
    ``knobs``: the seed's ten knobs tied to the scenario (:mod:`model.knobs`).
    """
    figures = evaluate(s, economics_section=False)
    lf = figures["launch"]
    tau = s.launch_us * US
    grid = mode_grid(s)
    at = int(np.searchsorted(grid, s.batch))
    modes, table = {}, []
    for mode in CUDA_GRAPHS_MODES:
        v = s.model_copy(update={"cuda_graphs": mode})
        sw = sweep(v, grid)
        modes[mode] = sw
        graphs = launch.graphs_captured(mode, s.capture_sizes)
        table.append(
            {
                "mode": mode,
                "launches": int(sw["launches"][at]),
                "padded_batch": int(sw["padded_batch"][at]),
                "t_step_ms": float(sw["t_step_s"][at]) / MS,
                "tokens_per_s": float(sw["tokens_per_s"][at]),
                "speedup_vs_eager": float(modes["none"]["t_step_s"][at] / sw["t_step_s"][at]),
                "graphs_captured": graphs,
                "capture_s": float(launch.capture_seconds(graphs, s.capture_s_per_graph)),
                "graph_memory_gb": float(launch.graph_memory(graphs, s.graph_mb_per_graph * 1e6))
                / GB,
                "max_batch": memory_figures(v)["max_batch"],
            }
        )

    host = s.host_ms * MS
    # the fixed work per layer (MoE routing, MLA's small kernels) runs on the GPU lane: the step
    # counts it beside the host work (decode.sweep), so the timeline ends where the step does
    fixed = figures["decode"]["t_layer_fixed_ms"] * MS
    timeline = {
        "eager": launch.step_timeline(
            lf["kernels"],
            tau,
            lf["t_gpu_eager_ms"] * MS + fixed,
            host,
            s.launch_model,
            TIMELINE_LIMIT,
        ),
        "graph": launch.step_timeline(
            lf["launches_graph"],
            tau,
            lf["t_gpu_graph_ms"] * MS + fixed,
            host,
            s.launch_model,
            TIMELINE_LIMIT,
        ),
    }

    # the Q&A's curve: weights-only GPU time per weight size, this N, τ, host and bandwidth
    weights_gib_now = figures["memory"]["weights_per_gpu_gb"] * GB / GIB
    gib = np.unique(np.concatenate([WEIGHTS_GIB_GRID, [5.5, 14.2, weights_gib_now]]))
    bw = s.hardware.hbm_bandwidth_tb_s * 1e12 * s.bw_efficiency
    share = launch.graph_gain(
        gib * GIB / bw, lf["kernels"], lf["launches_graph"], tau, host, s.launch_model
    )
    share["weights_gib"] = gib
    share["current_gib"] = weights_gib_now

    dtypes = []
    for dtype in dict.fromkeys(["bf16", "fp8", "int4", s.weights_dtype]):
        d = launch_figures(s.with_dtype(dtype))
        dtypes.append(
            {
                "weights_dtype": dtype + (" (this scenario)" if dtype == s.weights_dtype else ""),
                "t_gpu_ms": d["t_gpu_eager_ms"],
                "t_step_eager_ms": d["t_step_eager_ms"],
                "t_step_graph_ms": d["t_step_graph_ms"],
                "graph_speedup": d["graph_speedup"],
                "launch_tax_of_gpu_time": d["launch_tax_of_gpu_time"],
            }
        )

    return {
        "figures": figures,
        "knobs": knobs(s, lf),
        "grid": grid,
        "grid_waste": launch.padding_waste(grid, launch.padded_batch(grid, s.capture_sizes)),
        "current_index": at,
        "modes": modes,
        "mode_table": table,
        "timeline": timeline,
        "share": share,
        "dtypes": dtypes,
        "buckets": launch.bucket_waste(s.capture_sizes),
    }


def summary(s: Scenario, search: dict | str | None = None) -> dict:
    """The landing page's one call: every section of :func:`evaluate`, plus the cold start of
    the scenario's optimised counterpart (``cold_start_optimised``); ``search`` as
    :func:`evaluate`'s."""
    return {**evaluate(s, search=search), "cold_start_optimised": cold_start(optimised(s))}
