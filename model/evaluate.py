"""Compose the core: one scenario in, the figures of every lens out (SPEC 3 and 4).

``sweep`` evaluates a batch array in one vectorised call; ``evaluate`` returns the JSON
sections of ``whatif eval --json`` for the scenario's own batch.
"""

from __future__ import annotations

import numpy as np

from model import launch, memory, roofline
from model.cold_start import cold_start, optimised
from model.memory import memory_figures  # noqa: F401 - part of this module's API
from model.scenario import CUDA_GRAPHS_MODES, Scenario
from model.units import BYTES_PER_PARAM, GB, GIB, MS, TERA, US, compute_dtype

ACTIVATION_BYTES = 2.0  # bf16 activations on the tensor-parallel all-reduce


def sweep(s: Scenario, batch) -> dict[str, np.ndarray]:
    """Decode-step figures for every batch in ``batch`` (one vectorised call).

    Returns arrays keyed with their unit: ``t_memory_s``, ``t_compute_s``, ``t_comm_s``,
    ``t_gpu_s``, ``t_launch_s``, ``t_host_s``, ``t_step_s``, ``tokens_per_s``, ``flops``,
    ``bytes_per_gpu``, ``arithmetic_intensity``, ``attained_flops``, ``padded_batch``,
    ``launches``, ``bound``.
    """
    hw, m = s.hardware, s.model
    b = np.asarray(batch, dtype=float)
    bpp = s.bytes_per_param
    cdtype = compute_dtype(s.weights_dtype, hw.peak_tflops)
    peak = hw.peak_tflops[cdtype] * TERA
    bw = hw.hbm_bandwidth_tb_s * 1e12

    graph = launch.in_graph(b, s.capture_sizes, s.cuda_graphs)
    padded = np.where(graph, launch.padded_batch(b, s.capture_sizes), b)

    params = roofline.params_read(
        b, m.params_b * 1e9, m.active * 1e9, m.experts, m.experts_per_token
    )
    w_bytes = roofline.weights_bytes(params, bpp)
    kv_tok = roofline.kv_bytes_per_token(
        m.layers, m.kv_heads, m.head_dim, BYTES_PER_PARAM[s.kv_dtype]
    )
    kv_bytes = b * s.context_tokens * kv_tok
    bytes_per_gpu = w_bytes / s.gpus + kv_bytes / memory.kv_shards(s.gpus, m.kv_heads)

    flops = roofline.step_flops(
        padded, m.active * 1e9, m.layers, m.heads, m.head_dim, s.context_tokens
    )
    flops_per_gpu = flops / s.gpus

    t_mem = roofline.memory_time(bytes_per_gpu, bw, s.bw_efficiency)
    t_cmp = roofline.compute_time(flops_per_gpu, peak, s.flops_efficiency)
    t_comm = roofline.allreduce_time(
        padded,
        m.hidden,
        m.layers,
        s.gpus,
        hw.interconnect_gb_s * GB,
        s.allreduce_latency_us * US,
        ACTIVATION_BYTES,
    )
    t_gpu = np.maximum(t_mem, t_cmp) + t_comm

    n_eager = launch.launches_eager(m.layers, s.kernels_per_layer, s.kernels)
    launches = launch.launches_per_step(b, n_eager, m.layers, s.cuda_graphs, s.capture_sizes)
    t_launch = launches * s.launch_us * US
    t_host = np.full_like(b, s.host_ms * MS)
    t_step = roofline.step_time(t_gpu, t_launch, t_host, s.launch_model)
    ai = roofline.arithmetic_intensity(flops_per_gpu, bytes_per_gpu)
    return {
        "batch": b,
        "padded_batch": padded,
        "launches": launches,
        "weights_read_bytes": w_bytes,
        "bytes_per_gpu": bytes_per_gpu,
        "flops": flops,
        "arithmetic_intensity": ai,
        "attained_flops": flops_per_gpu / t_gpu,
        "t_memory_s": t_mem,
        "t_compute_s": t_cmp,
        "t_comm_s": t_comm,
        "t_gpu_s": t_gpu,
        "t_launch_s": t_launch,
        "t_host_s": t_host,
        "t_step_s": t_step,
        "tokens_per_s": b / t_step,
        "bound": roofline.bound(t_mem, t_cmp, t_gpu, t_launch + t_host),
    }


def evaluate(s: Scenario) -> dict:
    """The figures of the scenario's own batch, in the sections of ``whatif eval --json``."""
    hw = s.hardware
    one = {k: v[0] for k, v in sweep(s, [s.batch]).items()}
    cdtype = compute_dtype(s.weights_dtype, hw.peak_tflops)
    peak = hw.peak_tflops[cdtype] * TERA
    bw = hw.hbm_bandwidth_tb_s * 1e12
    t_step = float(one["t_step_s"])
    return {
        "scenario": s.scenario,
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
            "padded_batch": int(one["padded_batch"]),
            "launches": int(one["launches"]),
            "t_memory_ms": float(one["t_memory_s"]) / MS,
            "t_compute_ms": float(one["t_compute_s"]) / MS,
            "t_comm_ms": float(one["t_comm_s"]) / MS,
            "t_gpu_ms": float(one["t_gpu_s"]) / MS,
            "t_launch_ms": float(one["t_launch_s"]) / MS,
            "t_host_ms": float(one["t_host_s"]) / MS,
            "t_step_ms": t_step / MS,
            "tokens_per_s": float(one["tokens_per_s"]),
            "tokens_per_s_per_seq": 1.0 / t_step,
            "bound": str(one["bound"]),
        },
        "launch": launch_figures(s),
        "memory": memory_figures(s),
        "cold_start": cold_start(s),
    }


def graph_mode(s: Scenario) -> str:
    """The graphs mode behind ``t_step_graph_ms``: the scenario's own, or vLLM's default
    (``full_and_piecewise``) when the scenario runs eager."""
    return s.cuda_graphs if s.cuda_graphs != "none" else "full_and_piecewise"


def _at(s: Scenario, batch: int, **update) -> dict:
    """One batch of ``sweep`` for a variant of ``s``, as floats (``bound`` as text)."""
    v = s.model_copy(update=update) if update else s
    return {k: (str(a[0]) if k == "bound" else float(a[0])) for k, a in sweep(v, [batch]).items()}


def launch_figures(s: Scenario) -> dict:
    """The ``launch`` section of ``whatif eval --json`` (SPEC 4.2).

    ``t_step_eager_ms`` runs the scenario with ``cuda_graphs=none``; ``t_step_graph_ms`` with
    the graphs mode named in ``graph_mode`` (the scenario's own, or ``full_and_piecewise``
    when the scenario is eager), padded to its bucket. ``padded_batch`` and ``padding_waste``
    describe that graph step; ``graphs_captured``, ``capture_s`` and ``graph_memory_gb`` what
    the scenario as configured pays at start-up (zero when eager).

    References
    ----------
    .. [1] Seed: *The chef who calls out every order* (800 launches, 4.0 ms, 250 tok/s).
    .. [2] Seed: CUDA graphs Q&A (N = 430, τ = 5 µs: 1.36× at 5.5 GiB, 1.14× at 14.2 GiB).
    """
    m = s.model
    tau = s.launch_us * US
    n = launch.launches_eager(m.layers, s.kernels_per_layer, s.kernels)
    mode = graph_mode(s)
    eager = _at(s, s.batch, cuda_graphs="none")
    graph = _at(s, s.batch, cuda_graphs=mode)
    own = graph if s.cuda_graphs == mode else eager
    t_launch_eager = float(launch.launch_time(n, tau))
    ceiling = float(launch.launch_ceiling(n, tau))
    graphs = launch.graphs_captured(s.cuda_graphs, s.capture_sizes)
    graph_bytes = float(launch.graph_memory(graphs, s.graph_mb_per_graph * 1e6))
    in_graph = bool(launch.in_graph(s.batch, s.capture_sizes, s.cuda_graphs))
    no_graphs = memory_figures(s.model_copy(update={"cuda_graphs": "none"}))
    return {
        "kernels": n,
        "launch_us": s.launch_us,
        "launch_model": s.launch_model,
        "graph_mode": mode,
        "t_launch_eager_ms": t_launch_eager / MS,
        "t_gpu_eager_ms": eager["t_gpu_s"] / MS,
        "t_step_eager_ms": eager["t_step_s"] / MS,
        "t_gpu_graph_ms": graph["t_gpu_s"] / MS,
        "launches_graph": int(graph["launches"]),
        "t_launch_graph_ms": graph["t_launch_s"] / MS,
        "t_step_graph_ms": graph["t_step_s"] / MS,
        "graph_speedup": eager["t_step_s"] / graph["t_step_s"],
        "launch_share_of_eager_step": t_launch_eager / eager["t_step_s"],
        "launch_tax_of_gpu_time": t_launch_eager / eager["t_gpu_s"],
        "launch_ceiling_tokens_per_s": ceiling,
        "launch_ceiling_aggregate_tokens_per_s": s.batch * ceiling,
        "padded_batch": int(graph["padded_batch"]),
        "padding_waste": float(launch.padding_waste(s.batch, graph["padded_batch"])),
        "eager_fallback": bool(s.batch > max(s.capture_sizes)),
        "in_graph": in_graph,
        "launches": int(own["launches"]),
        "t_step_ms": own["t_step_s"] / MS,
        "graphs_captured": graphs,
        "capture_sizes_count": len(s.capture_sizes),
        "largest_capture_size": max(s.capture_sizes),
        "capture_s": float(launch.capture_seconds(graphs, s.capture_s_per_graph)),
        "graph_memory_gb": graph_bytes / GB,
        "max_batch_without_graphs": no_graphs["max_batch"],
    }


def seed_table(s: Scenario) -> list[dict]:
    """The seed's four rows for this scenario: BF16 or INT4 × graphs off or on.

    Each row: ``configuration``, ``t_hbm_ms`` (GPU time), ``t_fixed_ms`` (launch + host),
    ``t_step_ms``, ``tokens_per_s``, ``speedup`` against the first row. The graphs-on rows use
    ``full_decode_only`` (one replay per step).

    References
    ----------
    .. [1] Seed: *The roofline flips*, table "Configuration (3B, 4090, batch 1)".
    """
    rows = []
    for dtype in ("bf16", "int4"):
        for graphs in ("none", "full_decode_only"):
            v = s.with_dtype(dtype, cuda_graphs=graphs)
            r = {k: float(a[0]) for k, a in sweep(v, [s.batch]).items() if k != "bound"}
            rows.append(
                {
                    "configuration": f"{dtype.upper()}, {'CUDA graphs' if graphs != 'none' else 'no graphs'}",
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
    figures = evaluate(s)
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
    figures = evaluate(s)
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
    timeline = {
        "eager": launch.step_timeline(
            lf["kernels"], tau, lf["t_gpu_eager_ms"] * MS, host, s.launch_model, TIMELINE_LIMIT
        ),
        "graph": launch.step_timeline(
            lf["launches_graph"],
            tau,
            lf["t_gpu_graph_ms"] * MS,
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
    from model.knobs import knobs  # knobs builds on this module's figures

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


def summary(s: Scenario) -> dict:
    """The landing page's one call: every section of :func:`evaluate`, plus the cold start of
    the scenario's optimised counterpart (``cold_start_optimised``)."""
    return {**evaluate(s), "cold_start_optimised": cold_start(optimised(s))}
