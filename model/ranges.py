"""Ranges where the world is wide (SPEC 4.3): the start-up figures real servers spread over.

Capture seconds, graph memory, a cold torch.compile, a cold weight read and the engine's
start-up sub-lines vary between real servers far more than any default absorbs (published
capture times 0.01–0.68 s per graph, cold reads 0.3–35 GB/s per rank). Each carries a range
beside its point: the point times the engine profile's low and high factors (``ranges`` in
``presets/engines.yaml``, each sourced from the spread of published measurements for that engine
release, ``presets/engines-EVIDENCE.md``). A range of a sum is the sum of the ranges.

A figure the scenario states itself (a measured capture time, compile time, read rate) is a
point: the spread was the world's, and the scenario has measured its own corner of it. So is a
figure whose real spread is narrow (a cached compile, a page-cache read, a sleep wake).
Each ranged figure names the one fact that would narrow it and the scenario key that sets it.
"""

from __future__ import annotations

from model.scenario import Scenario

#: figure → (the fact that narrows it, the scenario key that sets it on the page)
NARROWED_BY = {
    "capture_s": (
        "the engine release (capture per graph: vLLM V0 0.2-0.4 ~0.16 s, V0 0.6-0.10 and V1 "
        "0.8-0.10 ~0.4 s, V1 0.11+ 0.03-0.3 s by depth) or one measured capture",
        "engine",
    ),
    "graph_memory": ("the engine release and the largest capture size", "capture_sizes"),
    "compile_s": (
        "the host CPU: time one cold torch.compile on it and enter it",
        "compile_s",
    ),
    "weights_read": (
        "the storage's measured read rate per stream (and whether the checkpoint is already "
        "in the host page cache)",
        "stream_gb_s",
    ),
    "memory_profiling_s": ("the host CPU and the engine release", "engine"),
    "kv_cache_init_s": ("the host CPU and the engine release", "engine"),
    "warmup_s": ("the host CPU and the engine release", "engine"),
    "kernel_jit_s": ("whether the JIT caches (FlashInfer, DeepGEMM) are warm", "engine"),
}


def factors(s: Scenario, key: str) -> tuple[float, float]:
    """The low and high factors on the point of ``key`` for this scenario's engine, or (1, 1)
    where the profile states none (the ideal physics) [ratio]."""
    lo, hi = s.engine_figures.ranges.get(key, (1.0, 1.0))
    return float(lo), float(hi)


def span(point: float, lo_hi: tuple[float, float]) -> list[float]:
    """``[point × low, point × high]`` [the point's unit]."""
    return [point * lo_hi[0], point * lo_hi[1]]


def is_point(lo_hi) -> bool:
    """True when a range is a point (low and high agree to rounding)."""
    lo, hi = lo_hi
    return hi <= lo * (1 + 1e-9)


def capture_range(s: Scenario, capture_s: float) -> list[float]:
    """``capture_s_range``: a point when the scenario sets its seconds per graph [s]."""
    return span(capture_s, (1.0, 1.0) if s.raw.capture_s_per_graph else factors(s, "capture_s"))


def add(*ranges: list[float]) -> list[float]:
    """The range of a sum: the sum of the lows and the sum of the highs (SPEC 4.3)."""
    return [sum(r[0] for r in ranges), sum(r[1] for r in ranges)]


def cold_start_ranges(s: Scenario, cs: dict, read_s: tuple[float, float]) -> dict:
    """The ``*_range`` siblings of the ``cold_start`` section and what would narrow each.

    Parameters
    ----------
    s : Scenario
        The effective scenario.
    cs : dict
        The ``cold_start`` section's points (:func:`model.cold_start.cold_start`).
    read_s : (float, float)
        Item 4 at the low and high read rates (the caller recomputes the load with them). [s]

    References
    ----------
    .. [1] SPEC 4.3, "Ranges where the world is wide"; ``presets/engines-EVIDENCE.md``.
    """
    raw = s.raw
    one = (1.0, 1.0)
    sub = cs["sublines"]
    capture = capture_range(s, sub["graphs_jit_s"]["capture_s"])
    cold_compile = cs["compile_s"] > 0 and not s.compile_cache and raw.compile_s is None
    compile_r = span(
        sub["graphs_jit_s"]["compile_s"], factors(s, "compile_s") if cold_compile else one
    )
    warm = span(sub["graphs_jit_s"]["warmup_s"], factors(s, "warmup_s"))
    jit = span(sub["graphs_jit_s"]["kernel_jit_s"], factors(s, "kernel_jit_s"))
    prof = span(sub["allocator_s"]["memory_profiling_s"], factors(s, "memory_profiling_s"))
    kv = span(sub["allocator_s"]["kv_cache_init_s"], factors(s, "kv_cache_init_s"))
    allocator = add([s.allocator_s] * 2, prof, kv)
    item5 = add(compile_r, capture, warm, jit)
    weights = [min(read_s), max(read_s)]
    floor = add([s.process_init_s] * 2, [cs["cuda_context_s"]] * 2, allocator)
    total = add(floor, weights, item5)
    out = {
        "allocator_s_range": allocator,
        "memory_profiling_s_range": prof,
        "kv_cache_init_s_range": kv,
        "weights_s_range": weights,
        "graphs_jit_s_range": item5,
        "compile_s_range": compile_r,
        "capture_s_range": capture,
        "warmup_s_range": warm,
        "kernel_jit_s_range": jit,
        "total_s_range": total,
    }
    narrowed = {}
    for fig, key in (
        ("capture_s", "capture_s"),
        ("compile_s", "compile_s"),
        ("weights_s", "weights_read"),
        ("memory_profiling_s", "memory_profiling_s"),
        ("kv_cache_init_s", "kv_cache_init_s"),
        ("warmup_s", "warmup_s"),
        ("kernel_jit_s", "kernel_jit_s"),
    ):
        if not is_point(out[f"{fig}_range"]):
            fact, control = NARROWED_BY[key]
            narrowed[fig] = {"fact": fact, "control": control}
    out["ranges_narrowed_by"] = narrowed
    return out


def read_factors(s: Scenario, cs: dict) -> tuple[float, float]:
    """Low and high factors on the time of the cold read from storage, or (1, 1) where the
    read is a point: a page-cache read, or a rate the scenario states (``stream_gb_s``,
    ``storage_gb_s``) [ratio]."""
    raw = s.raw
    if cs["warm_cache_trap"] or raw.stream_gb_s or raw.storage_gb_s:
        return 1.0, 1.0
    return factors(s, "weights_read")


def graph_memory_range(s: Scenario, graph_memory_gb: float) -> list[float]:
    """``launch.graph_memory_gb_range``: a point when the scenario sets its MB per graph [GB]."""
    return span(
        graph_memory_gb, (1.0, 1.0) if s.raw.graph_mb_per_graph else factors(s, "graph_memory")
    )
