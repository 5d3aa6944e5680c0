"""Kernel launches, CUDA graph modes and capture buckets (SPEC 4.2).

Vectorised over the batch: padding and eager fallback are per element.
"""

from __future__ import annotations

import numpy as np


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
