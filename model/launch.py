"""Kernel launches, CUDA graph modes and capture buckets (SPEC 4.2).

Vectorised over the batch: padding and eager fallback are per element.
"""

from __future__ import annotations

import numpy as np

from model.roofline import step_time


def launches_eager(layers, kernels_per_layer, kernels=None):
    """Kernel launches of one eager decode step: N = ``kernels`` or layers × kernels per layer.

    References
    ----------
    .. [1] Seed: *The chef who calls out every order* (80 layers × 10 kernels = 800 launches).
    .. [2] Seed: CUDA graphs Q&A (N ≈ 430 for a ~28-layer model).
    """
    return int(kernels) if kernels else int(layers) * int(kernels_per_layer)


def padded_batch(batch, capture_sizes):
    """The captured bucket a batch is padded up to; the batch itself above the largest bucket.

    Parameters
    ----------
    batch : numeric
        Real sequences in the step. [count]
    capture_sizes : sequence of int
        Batch sizes captured as graphs, strictly increasing. [count]

    References
    ----------
    .. [1] Seed: CUDA graphs Q&A, "vLLM captures a graph per batch-size bucket and pads the
       running batch up to it".
    """
    b = np.asarray(batch, dtype=float)
    sizes = np.asarray(capture_sizes, dtype=float)
    idx = np.searchsorted(sizes, b, side="left")
    inside = idx < sizes.size
    bucket = sizes[np.minimum(idx, sizes.size - 1)]
    return np.where(inside, bucket, b)


def in_graph(batch, capture_sizes, cuda_graphs):
    """True where the step replays a graph (a graphs mode and a batch ≤ the largest bucket)."""
    b = np.asarray(batch, dtype=float)
    if cuda_graphs == "none":
        return np.zeros(b.shape, dtype=bool)
    return b <= max(capture_sizes)


def launches_per_step(batch, n_eager, layers, cuda_graphs, capture_sizes):
    """CPU launches of one decode step under a CUDA graphs mode.

    ``none`` (enforce-eager): N. ``full_decode_only`` and ``full_and_piecewise``: one graph
    replay. ``piecewise``: the graph breaks at attention, so each layer launches one graph piece
    and its attention eagerly, plus the last piece: 2 × layers + 1. A batch above the largest
    captured size runs eager (N).

    References
    ----------
    .. [1] Seed: CUDA graphs Q&A, T_graph ≈ T_compute + τ (one submit).
    .. [2] SPEC 4.2: piecewise graphs break at attention.
    """
    b = np.asarray(batch, dtype=float)
    graph = in_graph(b, capture_sizes, cuda_graphs)
    per_mode = {"none": n_eager, "piecewise": min(n_eager, 2 * layers + 1)}
    replay = per_mode.get(cuda_graphs, 1)
    return np.where(graph, replay, n_eager).astype(float)


def graphs_captured(cuda_graphs, capture_sizes):
    """Graphs captured at start-up: two per size for ``full_and_piecewise``, one otherwise.

    References
    ----------
    .. [1] SPEC 4.2 (vLLM ≈ 102 graphs at start-up with 51 sizes).
    """
    if cuda_graphs == "none":
        return 0
    return len(capture_sizes) * (2 if cuda_graphs == "full_and_piecewise" else 1)


def padding_waste(batch, padded):
    """Share of the step's compute spent on phantom sequences: ``(bucket − batch) / bucket``.

    Zero where the batch sits on a bucket or runs eager (no padding); always in [0, 1).

    Parameters
    ----------
    batch, padded : numeric
        Real sequences and the captured bucket they are padded to. [count]

    References
    ----------
    .. [1] Seed: *The chef who calls out every order*, "Padding a batch of 33 up to the bucket
       of 64 computes 31 phantom sequences" (31/64 ≈ 48 % waste).
    .. [2] SPEC 4.2: padding waste = (bucket − batch) / bucket of the compute.
    """
    b = np.asarray(batch, dtype=float)
    p = np.maximum(np.asarray(padded, dtype=float), b)
    return (p - b) / p


def launch_time(launches, tau):
    """CPU time spent launching [s]: ``launches × τ``.

    Parameters
    ----------
    launches : numeric
        Launches (or graph replays) per step. [count]
    tau : float
        CPU cost of one launch. [s]

    References
    ----------
    .. [1] Seed: *The chef who calls out every order*, 800 × 5 µs = 4.0 ms per token.
    """
    return np.asarray(launches, dtype=float) * tau


def launch_ceiling(launches, tau):
    """Steps per second if the GPU took no time at all: ``1 / (N × τ)`` [1/s].

    At one sequence this is the tokens/s ceiling (800 × 5 µs → 250 tok/s); a batch of B gets
    B times as many tokens per second from the same ceiling.

    References
    ----------
    .. [1] Seed: *The chef who calls out every order*, "If the GPU could compute
       instantaneously, the launch ceiling would be ~250 tok/s".
    """
    return 1.0 / launch_time(launches, tau)


def capture_seconds(graphs, seconds_per_graph):
    """Start-up seconds spent capturing graphs: ``graphs × seconds per graph`` [s].

    References
    ----------
    .. [1] SPEC 4.3: ≈ 0.3 s per captured graph, 51 sizes × 2 graphs ≈ 31 s.
    .. [2] vLLM start-up logs in the fixtures: "Capturing CUDA graph shapes: 35/35 [00:13]"
       (0.37 s/graph), "67/67 [00:14]" (0.21 s/graph); small models capture faster.
    """
    return np.asarray(graphs, dtype=float) * seconds_per_graph


def graph_memory(graphs, bytes_per_graph):
    """HBM the captured graphs keep per GPU [B]: ``graphs × bytes per graph``.

    References
    ----------
    .. [1] vLLM logs in the fixtures: "Graph capturing finished in 17 secs, took 0.48 GiB"
       (0.13–0.48 GiB per start-up); seed *The chef…*, "each graph retains its buffers".
    """
    return np.asarray(graphs, dtype=float) * bytes_per_graph


def step_timeline(launches, tau, t_gpu, t_host, launch_model="additive", limit=None):
    """The CPU and GPU lanes of one decode step, kernel by kernel [s].

    The step's GPU work ``t_gpu`` is split evenly over ``launches`` submissions (kernels when
    eager, graph pieces when piecewise, one replay when full). The CPU first does its host
    work, then launches.

    ``additive`` (the seeds' T_gpu + N·τ): each launch waits for the previous kernel, so the
    GPU sits idle for τ before every kernel. ``pipelined``: the CPU launches back to back and
    kernel i starts at max(its launch, kernel i − 1's end), so the GPU idles only where a kernel
    is shorter than τ (the seed's bubbles): kernel i starts at host + τ + i·max(τ, d).

    Parameters
    ----------
    launches : int
        Submissions in the step. [count]
    tau : float
        CPU cost of one launch. [s]
    t_gpu, t_host : float
        GPU work and host work of the step. [s]
    launch_model : str
        ``additive`` or ``pipelined``.
    limit : int, optional
        Return only the first ``limit`` launches (a step can have a million); ``end`` is
        still the whole step's.

    Returns
    -------
    dict with ``cpu_start``, ``cpu_end``, ``gpu_start``, ``gpu_end`` (arrays of length
    ``launches``) and ``end`` (the step's last instant). [s]

    References
    ----------
    .. [1] Seed: *The chef who calls out every order*, "the GPU finishes them before the CPU
       calls out the next one: bubbles appear".
    .. [2] Seed: CUDA graphs Q&A, T_eager ≈ T_compute + Nτ, T_graph ≈ T_compute + τ.
    """
    n = max(int(launches), 1)
    d = float(t_gpu) / n

    def lanes(i):
        if launch_model == "pipelined":
            cpu_start = t_host + i * tau
            gpu_start = t_host + tau + i * max(tau, d)
        else:
            cpu_start = t_host + i * (tau + d)
            gpu_start = cpu_start + tau
        return cpu_start, gpu_start

    last_cpu, last_gpu = lanes(float(n - 1))
    cpu_start, gpu_start = lanes(np.arange(min(n, limit or n), dtype=float))
    return {
        "launches": n,
        "cpu_start": cpu_start,
        "cpu_end": cpu_start + tau,
        "gpu_start": gpu_start,
        "gpu_end": gpu_start + d,
        "gpu_busy": float(t_gpu),
        "end": float(max(last_gpu + d, last_cpu + tau)),
    }


def graph_gain(t_gpu, n_eager, n_graph, tau, t_host, launch_model="additive"):
    """Eager against graph step for GPU times ``t_gpu`` (vectorised), the Q&A's model.

    Returns ``t_eager``, ``t_graph`` [s], ``speedup`` (eager / graph), ``tax`` (N·τ / T_gpu,
    the Q&A's "36 % of a 6 ms step") and ``share`` (N·τ / T_eager).

    Parameters
    ----------
    t_gpu : numeric
        GPU time of the step (the Q&A's T_compute). [s]
    n_eager, n_graph : int
        Launches eager and with graphs (1 for a full graph). [count]
    tau : float
        CPU cost of one launch. [s]
    t_host : float
        Host work graphs do not remove. [s]

    References
    ----------
    .. [1] Seed: CUDA graphs Q&A, ``step_ms``: T_eager = T_compute + Nτ, T_graph = T_compute + τ;
       "Quantized models benefit more. The launch tax Nτ is fixed, so shrinking compute makes
       it a bigger fraction".
    """
    t_gpu = np.asarray(t_gpu, dtype=float)
    t_launch = launch_time(n_eager, tau)
    t_eager = step_time(t_gpu, t_launch, t_host, launch_model)
    t_graph = step_time(t_gpu, launch_time(n_graph, tau), t_host, launch_model)
    return {
        "t_eager": t_eager,
        "t_graph": t_graph,
        "speedup": t_eager / t_graph,
        "tax": t_launch / t_gpu,
        "share": t_launch / t_eager,
    }


def bucket_waste(capture_sizes, top=None):
    """Padding of every real batch from 1 to ``top`` (default: the largest bucket).

    Returns arrays ``batch``, ``padded``, ``waste`` and the summary ``mean_waste`` (over batches
    1…top, each equally likely), ``worst_waste`` and ``worst_batch``, and ``mean_overhead``
    (mean padded / real − 1: extra compute of a graph step against eager).

    References
    ----------
    .. [1] Seed: *The chef who calls out every order*, Knob 3, "Buckets too far apart make
       padding expensive; too many of them make capture slow and eat HBM".
    """
    top = int(top or max(capture_sizes))
    b = np.arange(1, top + 1, dtype=float)
    padded = padded_batch(b, capture_sizes)
    waste = padding_waste(b, padded)
    worst = int(np.argmax(waste))
    return {
        "batch": b,
        "padded": padded,
        "waste": waste,
        "mean_waste": float(np.mean(waste)),
        "worst_waste": float(waste[worst]),
        "worst_batch": int(b[worst]),
        "mean_overhead": float(np.mean(padded / b - 1.0)),
    }
