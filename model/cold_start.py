"""Cold start: the five line items of an inference server's start-up (SPEC 4.3).

1. process init, 2. CUDA context, 3. allocator (near-fixed: the floor), 4. weights from storage
to HBM (read, then or while copying host→device), 5. torch.compile + CUDA graph capture. Plus
sleep-mode wake times and the optimised counterpart of a scenario.

Functions take numbers or numpy arrays and return seconds; ``cold_start(s)`` composes them
for a scenario. Seed: *Speeding up model cold start: from minutes to seconds*.
"""

from __future__ import annotations

import numpy as np

from model import launch, ranges, speculative
from model.cold_start_presets import cold_start_presets
from model.memory import memory_figures
from model.scenario import Scenario
from model.units import BYTES_PER_PARAM, GB


def read_bandwidth(aggregate, per_stream, concurrency):
    """Read bandwidth from storage [B/s]: ``min(tier aggregate, per-stream × concurrency)``.

    Parameters
    ----------
    aggregate : numeric
        What the tier delivers to all streams together. [B/s]
    per_stream : numeric
        What one read stream delivers. [B/s]
    concurrency : numeric
        Read streams the loader opens. [count]

    References
    ----------
    .. [1] Seed: *Speeding up model cold start*, "Concurrency is the tuning parameter … One
       thread does not saturate a Gen5 NVMe"; SPEC 4.3.
    """
    return np.minimum(
        np.asarray(aggregate, float), np.asarray(per_stream, float) * np.asarray(concurrency)
    )


def transfer_time(nbytes, bandwidth):
    """``t = W / B`` [s]: the floor of moving ``nbytes`` at ``bandwidth`` [B/s].

    References
    ----------
    .. [1] Seed: *Speeding up model cold start*, "The maths of the weights: t = W/B"
       (70 GB / 14 GB/s = 5.0 s; 70 GB / 50 GB/s = 1.4 s).
    """
    return np.asarray(nbytes, float) / np.asarray(bandwidth, float)


def load_time(t_read, t_h2d, overlap, t_host=0.0):
    """Item 4 [s]: read and host→device copy in series (sum) or overlapped (max). Extra passes
    through host memory (pickle's intermediate buffer) sit on the reading side, between the
    read and the copy: in series they add; overlapped, the copy runs beside read + passes.

    Parameters
    ----------
    t_read : numeric
        Reading the weights from storage (shared by the GPUs). [s]
    t_h2d : numeric
        Copying one GPU's shard host→device (the GPUs copy in parallel). [s]
    overlap : bool
        True for loaders that copy while reading (Run:ai streamer, Tensorizer).
    t_host : numeric
        Extra host-memory passes (pickle; the presets' overlapping loaders make none). [s]

    References
    ----------
    .. [1] Seed: t_series = t_read + t_H2D; t_overlapped ≈ max(t_read, t_H2D). 70 GB from
       NVMe at 14 GB/s and PCIe at 50 GB/s: 6.4 s in series, 5.0 s overlapped.
    """
    reading = np.asarray(t_read, float) + np.asarray(t_host, float)
    t_h2d = np.asarray(t_h2d, float)
    return np.maximum(reading, t_h2d) if overlap else reading + t_h2d


def wake_time(level, t_h2d, weights_s, fixed_s=0.0):
    """Sleep-mode wake [s]: a fixed part (re-mapping memory, resetting the allocator's pools)
    plus, at level 1, the weights copied back from host RAM (the H2D copy) or, at level 2, the
    weights reloaded from storage (item 4). Items 1–3 and 5 are kept alive.

    References
    ----------
    .. [1] Seed: *Speeding up model cold start*, "Sleep mode: the shortcut that skips all five
       items" (vLLM blog, Sleep Mode: 18–200× faster at level 1, 23–45× at level 2).
    .. [2] vLLM blog, "Zero-Reload Model Switching with vLLM Sleep Mode" (2025-10-26): level-1
       wake 0.26 s for Qwen3-0.6B, 2.9 s for a 30B; ``wake_fixed_s`` in presets/engines.yaml.
    """
    part = {1: float(t_h2d), 2: float(weights_s)}.get(int(level))
    return None if part is None else part + float(fixed_s)


def _bandwidths(s: Scenario, tier) -> tuple[float, float]:
    """A tier's aggregate and per-stream read bandwidth [B/s]; the scenario's own tier carries
    its ``storage_gb_s`` / ``stream_gb_s`` overrides."""
    if tier.id != s.storage:
        return tier.aggregate_gb_s * GB, tier.per_stream_gb_s * GB
    return (s.storage_gb_s or tier.aggregate_gb_s) * GB, (
        s.stream_gb_s or tier.per_stream_gb_s
    ) * GB


def loaded_bytes(s: Scenario) -> float:
    """Bytes the weights load moves [B]: the model's, and a speculative drafter's (an EAGLE
    head, DeepSeek's MTP module, a draft model: :func:`model.speculative.drafter_weights_bytes`),
    which vLLM loads with the model."""
    return s.weights_bytes + speculative.drafter_weights_bytes(s)


def _copy_times(s: Scenario, loader) -> tuple[float, float]:
    """The parts of item 4 that do not depend on the storage [s]: one GPU's host→device copy
    (the GPUs copy in parallel) and the loader's extra passes through host memory (pickle)."""
    weights = loaded_bytes(s)
    t_h2d = float(transfer_time(weights / s.gpus, s.hardware.h2d_gb_s * GB))
    t_host = (
        float(loader.host_passes * transfer_time(weights, loader.host_copy_gb_s * GB))
        if loader.host_passes
        else 0.0
    )
    return t_h2d, t_host


def _effective(s: Scenario) -> dict:
    """The tier, loader and timings the scenario uses, after its overrides."""
    p = cold_start_presets()
    tier, loader = p.storage[s.storage], p.loaders[s.loader]
    cold = s.compile_s  # the effective scenario's: its own, or the engine's
    aggregate, per_stream = _bandwidths(s, tier)
    # vLLM's safetensors path reads through mmap: a cold read faults the pages in one process
    # at ~1.1 GB/s whatever the disk could give (engine profile; a measured rate overrides it)
    cap = s.engine_figures.safetensors_gb_s_per_process
    capped = (
        cap is not None
        and s.loader == "safetensors"
        and not tier.warm_cache_trap
        and not (tier.id == s.storage and s.stream_gb_s)
        and per_stream > cap * GB
    )
    if capped:
        per_stream = cap * GB
        host = s.engine_figures.safetensors_gb_s_per_host
        if host is not None:  # every rank's page faults on one host: ~3 GB/s together
            aggregate = min(aggregate, host * GB)
    return {
        "mmap_capped": capped,
        "tier": tier,
        "loader": loader,
        "aggregate": aggregate,
        "per_stream": per_stream,
        "concurrency": s.concurrency or loader.default_concurrency,
        "compile_s": cold,
        # auto: the engine's cached load, never more than this scenario's cold compile
        "compile_cached_s": min(s.compile_cached_s, cold),
    }


def cold_start(s: Scenario) -> dict:
    """The ``cold_start`` section of ``whatif eval --json`` (SPEC 4.3).

    Weights are the scenario's (``weights_gb`` or params × bytes per param); storage is read
    once for all GPUs, each GPU copies its shard in parallel. Item 5 is torch.compile (cold,
    or the cached load with ``compile_cache``) plus graphs × seconds per graph;
    ``cuda_graphs="none"`` is vLLM's enforce-eager, with neither, so item 5 is zero while
    every decode step pays the launch tax.

    References
    ----------
    .. [1] Seed: *Speeding up model cold start*, "The five line items", "Caching the
       torch.compile/Inductor compilation", "Bounding the CUDA graph capture".
    .. [2] SPEC 4.3: cold compile ~24 s vs ~5 s cached; ~0.3 s per graph.
    """
    e = _effective(s)
    loader = e["loader"]
    fig = s.engine_figures
    weights = loaded_bytes(s)
    per_gpu = weights / s.gpus
    # with tensor parallelism an engine may read each rank's shard in its own process, in
    # parallel (vLLM): the streams multiply, the tier's aggregate still caps them (SPEC 4.0)
    ranks = s.gpus if fig.weights_parallel_ranks else 1
    bw = float(read_bandwidth(e["aggregate"], e["per_stream"], e["concurrency"] * ranks))
    t_read = float(transfer_time(weights, bw))
    t_h2d, t_host = _copy_times(s, loader)
    series = float(load_time(t_read, t_h2d, False, t_host))
    weights_s = float(load_time(t_read, t_h2d, loader.overlap, t_host))
    graphs = launch.graphs_captured(s.cuda_graphs, s.capture_sizes)  # 0 when eager
    capture = float(launch.capture_seconds(graphs, s.capture_s_per_graph))
    compile_part = (
        0.0
        if s.cuda_graphs == "none"
        else (e["compile_cached_s"] if s.compile_cache else e["compile_s"])
    )
    tier = e["tier"]
    eager = s.cuda_graphs == "none"
    # an enforce-eager start skips the graph-size warm-up and the capture's memory profiling:
    # real V1 eager inits take about a second for all of it (engine profile)
    extra = fig.eager_startup if eager and fig.eager_startup is not None else fig.startup
    # what real logs show beside the seed's items, as sub-lines of the item they belong to
    sublines = {
        "cuda_context_s": {"p2p_check_s": extra.p2p_check_s if s.gpus > 1 else 0.0},
        "allocator_s": {
            "memory_profiling_s": extra.memory_profiling_s,
            "kv_cache_init_s": extra.kv_cache_init_s,
        },
        "graphs_jit_s": {
            "compile_s": compile_part,
            "capture_s": capture,
            "warmup_s": extra.warmup_s,
            "kernel_jit_s": extra.kernel_jit_s,
        },
    }
    item2 = s.cuda_context_s + sum(sublines["cuda_context_s"].values())
    item3 = s.allocator_s + sum(sublines["allocator_s"].values())
    item5 = compile_part + capture + extra.warmup_s + extra.kernel_jit_s
    floor = s.process_init_s + item2 + item3
    total = floor + weights_s + item5
    # level-1 wake copies the weights back at a share of the pinned H2D rate (vLLM's cumem
    # allocator copies tensor by tensor: ~12-13 GB/s on an A100 whose pinned rate is 25 GB/s)
    h2d_wake = t_h2d / (
        (fig.pageable_h2d_share if fig.wake_h2d == "pageable" else 1.0) * fig.wake_h2d_share
    )
    # a level-2 wake reloads the checkpoint the server read at start: on a host without memory
    # pressure it is still in the page cache (vLLM's blog: 2.58 s for Phi-3-vision's ~8.3 GB)
    reload_s = weights_s
    if fig.wake2_page_cache and not tier.warm_cache_trap:
        pc = cold_start_presets().storage["page_cache"]
        pc_bw = float(
            read_bandwidth(
                pc.aggregate_gb_s * GB, pc.per_stream_gb_s * GB, e["concurrency"] * ranks
            )
        )
        reload_s = float(
            load_time(float(transfer_time(weights, pc_bw)), t_h2d, loader.overlap, t_host)
        )
    wake1 = wake_time(1, h2d_wake, weights_s, fig.wake_fixed_s)
    fixed = {1: fig.wake_fixed_s, 2: fig.wake_fixed_s + fig.wake2_extra_s}
    wake2 = wake_time(2, h2d_wake, reload_s, fixed[2])
    wake = (
        wake_time(s.sleep_level, h2d_wake, reload_s, fixed[s.sleep_level])
        if s.sleep_level
        else None
    )
    out = {
        "process_init_s": s.process_init_s,
        "cuda_context_s": item2,
        "allocator_s": item3,
        "weights_s": weights_s,
        "graphs_jit_s": item5,
        "total_s": total,
        "floor_s": floor,
        "sublines": sublines,
        "eager": eager,
        "item5_note": (
            "enforce-eager: no torch.compile and no CUDA graph capture at start-up; every "
            "decode step pays the launch tax instead"
            if eager
            else ""
        ),
        "read_assumes": (
            "a warm host page cache (a second load on the same host)"
            if tier.warm_cache_trap
            else f"a cold read from {tier.name} (nothing in the host page cache)"
        ),
        "read_ranks": ranks,
        # the engine's per-process mmap rate bounds each read stream (cold safetensors)
        "read_mmap_capped": e["mmap_capped"],
        "weights_read_s": t_read,
        "weights_h2d_s": t_h2d,
        "weights_host_s": t_host,
        "weights_series_s": series,
        "weights_overlapped_s": float(load_time(t_read, t_h2d, True, t_host)),
        "weights_gb": weights / GB,
        "weights_per_gpu_gb": per_gpu / GB,
        "read_gb_s": bw / GB,
        "h2d_gb_s": s.hardware.h2d_gb_s,
        "concurrency": e["concurrency"],
        "loader": s.loader,
        "overlap": loader.overlap,
        "storage": s.storage,
        "warm_cache_trap": e["tier"].warm_cache_trap,
        "compile_s": compile_part,
        "capture_s": capture,
        "graphs_captured": graphs,
        "sleep_level": s.sleep_level,
        "wake_s": wake,
        "wake_speedup": total / wake if wake else None,
        "wake_level1_s": wake1,
        "wake_level2_s": wake2,
        "wake_level1_speedup": total / wake1 if wake1 else None,
        "wake_level2_speedup": total / wake2 if wake2 else None,
        "warm_replica_s": 0.0,
    }
    lo, hi = ranges.read_factors(s, out)
    read_s = tuple(float(load_time(t_read * f, t_h2d, loader.overlap, t_host)) for f in (lo, hi))
    out.update(ranges.cold_start_ranges(s, out, read_s))
    return out


OVERLAP_LOADERS = ("runai_streamer", "tensorizer")


def optimised(s: Scenario, weights: bool = True, item5: bool = True, lean: bool | None = None):
    """The seed's optimised counterpart of ``s`` (its table's right-hand column).

    ``weights``: a loader that overlaps read and copy (the Run:ai streamer at its default
    concurrency, unless the scenario already uses an overlapping loader). ``item5``: a warm
    torch.compile cache and the seed's bounded capture sizes (plus the bucket that covers the
    scenario's own batch, so its steps keep replaying a graph). ``lean`` (default: both
    others): a minimal environment, process init at most the seed's ~3 s. Items 2 and 3 stay.

    References
    ----------
    .. [1] Seed: *Speeding up model cold start*, "An example cold start, item by item" and
       "optimising only item 4 … ~73 s. Optimising only item 5 … ~49 s".
    """
    st = cold_start_presets().startup
    lean = (weights and item5) if lean is None else lean
    update: dict = {}
    if weights and s.loader not in OVERLAP_LOADERS:
        update["loader"] = "runai_streamer"
        default = cold_start_presets().loaders["runai_streamer"].default_concurrency
        if s.concurrency is not None and s.concurrency < default:
            update["concurrency"] = None
    if item5:
        update["compile_cache"] = True
        sizes = set(st.bounded_capture_sizes)
        if s.batch <= max(s.capture_sizes):
            sizes.add(int(launch.padded_batch(s.batch, s.capture_sizes)))
        bounded = sorted(sizes)
        if len(bounded) < len(s.capture_sizes):
            update["capture_sizes"] = bounded
    if lean:
        update["process_init_s"] = min(s.process_init_s, st.lean_process_init_s)
    return s.model_copy(update=update)


def optimised_changes(s: Scenario) -> list[str]:
    """What :func:`optimised` changes from ``s``, in plain words (the optimised start assumes
    them; a page says so rather than assume changes the scenario does not have)."""
    o = optimised(s)
    out = []
    if o.loader != s.loader:
        loader = cold_start_presets().loaders[o.loader]
        out.append(f"the {loader.name} loader ({loader.default_concurrency} streams)")
    if o.compile_cache and not s.compile_cache:
        out.append("a warm torch.compile cache")
    if len(o.capture_sizes) < len(s.capture_sizes):
        out.append(
            f"{len(o.capture_sizes)} CUDA-graph capture sizes instead of {len(s.capture_sizes)}"
        )
    if o.process_init_s < s.process_init_s:
        out.append(
            f"a lean environment (process init {o.process_init_s:g} s, not {s.process_init_s:g} s)"
        )
    return out


def weights_timeline(t_read, t_h2d, overlap, chunks=12, t_host=0.0):
    """The lanes of item 4, chunk by chunk [s]: the storage read, the loader's extra passes
    through host memory (pickle's; zero-length when there are none) and the host→device copy.

    In series each chunk is read, passed through host memory, then copied. Overlapped, the
    copy streams beside the reading side (read + passes): each drawn chunk stands for many
    small ones, so its copy runs while it is read and ends with it (or, when the copy is the
    slower side, the copies run back to back). Both end exactly where :func:`load_time` does:
    ``t_read + t_host + t_h2d`` in series, ``max(t_read + t_host, t_h2d)`` overlapped.

    References
    ----------
    .. [1] Seed: "while one thread copies a chunk to VRAM, another is already reading the next
       one from disk … the total time tends towards the maximum of the two".
    """
    r, p, h = t_read / chunks, t_host / chunks, t_h2d / chunks
    q = r + p  # the reading side of one chunk
    i = np.arange(chunks, dtype=float)
    if overlap:
        read_start = i * q
        h2d_start = np.maximum((i + 1) * q - h, i * h)
    else:
        read_start = i * (q + h)
        h2d_start = read_start + q
    return {
        "read_start": read_start,
        "read_end": read_start + r,
        "host_start": read_start + r,
        "host_end": read_start + q,
        "h2d_start": h2d_start,
        "h2d_end": h2d_start + h,
        "end": float(load_time(t_read, t_h2d, overlap, t_host)),
    }


ITEM_OF = {
    "overlapping loader (Run:ai streamer)": "4",
    "warm torch.compile cache": "5",
    "bounded capture sizes": "5",
    "lean environment": "1",
}


def one_at_a_time(s: Scenario) -> dict[str, Scenario]:
    """Each of the seed's optimisations applied alone to ``s`` (what each one saves)."""
    out = {}
    if s.loader not in OVERLAP_LOADERS:
        out["overlapping loader (Run:ai streamer)"] = optimised(s, weights=True, item5=False)
    out["warm torch.compile cache"] = s.model_copy(update={"compile_cache": True})
    bounded = optimised(s, weights=False, item5=True).capture_sizes
    out["bounded capture sizes"] = s.model_copy(update={"capture_sizes": bounded})
    out["lean environment"] = optimised(s, weights=False, item5=False, lean=True)
    return out


CONCURRENCY_GRID = np.arange(1, 65, dtype=float)


def tier_sweep(s: Scenario, concurrency=CONCURRENCY_GRID) -> dict[str, dict]:
    """Item 4 for every storage tier across read streams (one vectorised call per tier),
    with the scenario's loader, weights and GPUs (and, for its own tier, its bandwidth
    overrides). Returns ``{tier: {"name", "weights_s", "read_s"}}``.
    """
    p = cold_start_presets()
    loader = p.loaders[s.loader]
    t_h2d, t_host = _copy_times(s, loader)
    out = {}
    for tier_id, tier in p.storage.items():
        bw = read_bandwidth(*_bandwidths(s, tier), concurrency)
        t_read = transfer_time(loaded_bytes(s), bw)
        out[tier_id] = {
            "name": tier.name,
            "read_s": t_read,
            "weights_s": load_time(t_read, t_h2d, loader.overlap, t_host),
        }
    return out


#: the five line items and their total, in order: the columns' table (page, downloads, report)
ITEM_COLUMNS = (
    "process_init_s",
    "cuda_context_s",
    "allocator_s",
    "weights_s",
    "graphs_jit_s",
    "total_s",
)


def columns_rows(columns: dict) -> list[dict]:
    """The runbook's columns (``cold_start_lens(s)["columns"]``) as rows of a table: the
    column's name, then each item's seconds and the total."""
    return [{"column": name, **{k: col[k] for k in ITEM_COLUMNS}} for name, col in columns.items()]


def cold_start_lens(s: Scenario) -> dict:
    """Everything the Cold start page shows, from one call: the figures, the seed's four
    columns (this scenario, only weights optimised, only item 5 optimised, optimised), the
    weights timeline in series and overlapped (its lanes end at the formula's figures, so the
    loader's own pair ends at item 4), item 4 across tiers × concurrency, and the FP8 trap
    (item 4 halves, item 5 does not): ``dtypes`` holds this scenario's figures as shown and
    its variant in the other dtype of the BF16/FP8 pair (a 2-byte or wider scenario against
    FP8, a 1-byte or narrower one against BF16), with ``wide``, ``narrow`` and ``this``
    naming them."""
    figures = cold_start(s)
    variants = {
        "this scenario": s,
        "only weights optimised": optimised(s, weights=True, item5=False),
        "only item 5 optimised": optimised(s, weights=False, item5=True),
        "optimised": optimised(s),
    }
    columns = {name: cold_start(v) for name, v in variants.items()}
    total = figures["total_s"]
    savings = []
    for knob, v in one_at_a_time(s).items():
        after = cold_start(v)
        savings.append(
            {
                "optimisation": knob,
                "item": ITEM_OF[knob],
                "total_s": after["total_s"],
                "saves_s": total - after["total_s"],
            }
        )
    # streams 1–64, and the scenario's own count when it is beyond that
    grid = np.unique(np.concatenate([CONCURRENCY_GRID, [float(figures["concurrency"])]]))
    # the FP8 trap: this scenario as shown against its variant in the other dtype of the pair
    # (the variant drops a weights_gb override, which belongs to this scenario's checkpoint)
    wide = BYTES_PER_PARAM[s.weights_dtype] > BYTES_PER_PARAM["fp8"]
    other = "fp8" if wide else "bf16"
    dtypes = {
        "this": s.weights_dtype,
        "wide": s.weights_dtype if wide else other,
        "narrow": other if wide else s.weights_dtype,
        "figures": {s.weights_dtype: figures, other: cold_start(s.with_dtype(other))},
    }
    t_read, t_h2d, t_host = (
        figures["weights_read_s"],
        figures["weights_h2d_s"],
        figures["weights_host_s"],
    )
    return {
        "figures": figures,
        "memory": memory_figures(s),
        "variants": variants,
        "columns": columns,
        "savings": savings,
        "timeline": {
            "series": weights_timeline(t_read, t_h2d, overlap=False, t_host=t_host),
            "overlapped": weights_timeline(t_read, t_h2d, overlap=True, t_host=t_host),
        },
        "tiers": tier_sweep(s, grid),
        "concurrency": grid,
        "dtypes": dtypes,
    }
