"""The Cold start lens, declared once (SPEC 4.3): the five line items of an inference server's
start-up, the loaders and storage tiers, and what sleep mode and a warm replica turn it into."""

from __future__ import annotations

import pandas as pd

from model.cold_start import cold_start_lens, columns_rows
from model.presets import cold_start_presets
from model.ranges import is_point
from ui import cold_charts, measure_data
from ui.lens import Chart, Column, Figure, Lens, Metric, Metrics, Page, Table, View
from ui.lenses.common import seconds
from ui.measure_charts import measured_waterfall
from ui.text import md_escape, release_product


def _cs(v: View) -> dict:
    return v.f["cold_start"]


def _optimised_alone(v: View) -> dict:
    """Without a baseline: how much the optimised start saves on this one (said so, so it
    does not read as a baseline's delta)."""
    opt, cs = v.f["cold_start_optimised"], _cs(v)
    saves = opt["total_s"] < cs["total_s"]
    return {
        "delta": f"{opt['total_s'] - cs['total_s']:.1f} s vs this start" if saves else None,
        "delta_color": "inverse",
    }


COLD_START_TOTAL_S = Figure(
    "cold_start.total_s",
    "Time to ready",
    show=seconds,
    unit="s",
    help=lambda v: "Items 1–5 in series. " + _range_help("total_s")(v),
)


COLD_START_FLOOR_S = Figure(
    "cold_start.floor_s",
    "Floor (items 1–3)",
    show=seconds,
    unit="s",
    help="Process init + CUDA context + allocator: what no loader crosses. Below it only "
    "sleep mode or a warm replica help.",
)


COLD_START_OPTIMISED_TOTAL_S = Figure(
    "cold_start_optimised.total_s",
    "Optimised",
    name="Optimised time to ready",
    show=seconds,
    unit="s",
    help="Overlapping loader, warm compile cache, bounded capture, lean environment.",
)


TOTALS = Metrics(
    (
        Metric.of(COLD_START_TOTAL_S),
        Metric.of(COLD_START_FLOOR_S),
        Metric.of(COLD_START_OPTIMISED_TOTAL_S, alone=_optimised_alone),
        Metric(
            lambda v: f"Wake from sleep level {v.s.sleep_level}",
            "cold_start.wake_s",
            show=lambda x: f"{x:.2f} s",
            unit="s",
            help=lambda v: f"{_cs(v)['wake_speedup']:.0f}× faster than the full cold start.",
            when=lambda v: bool(v.s.sleep_level),
        ),
        Metric(
            "Sleep level 1 wake",
            "cold_start.wake_level1_s",
            show=lambda x: f"{x:.2f} s",
            unit="s",
            help=lambda v: (
                "If the server slept instead of stopping (Sleep level 1): the weights "
                f"come back from host RAM, {_cs(v)['wake_level1_speedup']:.0f}× faster."
            ),
            when=lambda v: not v.s.sleep_level,
        ),
    )
)


def _sub(v: View) -> dict:
    return _cs(v)["sublines"]


def span_text(lo_hi, digits: str = ".1f") -> str:
    """``a–b`` of a range, or the point when it is one."""
    lo, hi = lo_hi
    return f"{lo:{digits}}" if is_point(lo_hi) else f"{lo:{digits}}–{hi:{digits}}"


#: where on the page each narrowing control sits (ranges_narrowed_by's ``control``)
CONTROL_AT = {
    "engine": "*{product} release* (among the controls at the top)",
    "stream_gb_s": "*One stream [GB/s]* under *Item seconds, bandwidth and compile timings*, "
    "or *Storage tier* = page cache when the checkpoint is already cached",
    "compile_s": "*Cold compile [s]* under *Item seconds, bandwidth and compile timings*",
}
RANGE_NAMES = {
    "capture_s": "graph capture",
    "compile_s": "cold torch.compile",
    "weights_s": "item 4 (weights)",
    "memory_profiling_s": "memory profiling",
    "kv_cache_init_s": "KV-cache set-up",
    "warmup_s": "warm-up",
    "kernel_jit_s": "kernel JIT",
}


def _control_at(control: str, v: View) -> str:
    """Where the control that narrows a range sits, named as this engine names it."""
    where = CONTROL_AT.get(control, "*" + control + "*")
    return where.replace("{product}", release_product(v.s.engine_id))


def _ranges_text(v: View) -> str:
    """The ranges beside the points, what each would narrow with, and where its control is."""
    cs = _cs(v)
    named = cs["ranges_narrowed_by"]
    if not named:
        return "**Every start-up figure here is a point**: " + (
            "ideal physics states the source posts' reading, no spread."
            if v.s.engine_id == "ideal"
            else "the scenario states its own capture, compile and read rate, or they are "
            "ones whose real spread is narrow (a cached compile, a page-cache read)."
        )
    lines = [
        f"**Where the world is wide.** Time to ready **{span_text(cs['total_s_range'])} s** "
        f"around {cs['total_s']:.1f} s: the same start-up item varies many times over between "
        "real servers, so the ranged items carry the spread of published measurements for "
        f"this engine release (each holds about three in four of them), and the total is "
        "their sum. What would narrow each:"
    ]
    steps = [
        k
        for k in ("memory_profiling_s", "kv_cache_init_s", "warmup_s", "kernel_jit_s")
        if k in named
    ]
    for key, how in named.items():
        if key in steps:
            continue
        lines.append(
            f"- {RANGE_NAMES[key]} {span_text(cs[f'{key}_range'])} s (point "
            f"{cs[key]:.1f} s): {how['fact']} → "
            f"{_control_at(how['control'], v)}"
        )
    if steps:
        lines.append(
            "- the engine's own start-up steps, "
            + ", ".join(f"{RANGE_NAMES[k]} {span_text(cs[f'{k}_range'])} s" for k in steps)
            + ": the host CPU and the engine release → "
            + _control_at("engine", v)
        )
    return "\n".join(lines)


def _range_help(key: str):
    """A metric's help line: its range and the fact that would narrow it."""

    def build(v: View) -> str:
        cs = _cs(v)
        lo, hi = cs[f"{key}_range"]
        if is_point((lo, hi)):
            return "A point: its real spread is narrow, or the scenario states it."
        return (
            f"Range {lo:.1f}–{hi:.1f} s: the spread of published measurements (see below the "
            "items)."
        )

    return build


def _weights_help(v: View) -> str:
    cs = _cs(v)
    return (
        "Read the checkpoint, then the host-to-device (H2D) copy to each GPU: "
        f"read {cs['weights_read_s']:.2f} s at {cs['read_gb_s']:.3g} GB/s "
        f"({cs['concurrency']} streams), "
        + (f"host pass {cs['weights_host_s']:.2f} s, " if cs["weights_host_s"] else "")
        + f"H2D {cs['weights_h2d_s']:.2f} s per GPU at {cs['h2d_gb_s']:g} GB/s, "
        + ("overlapped" if cs["overlap"] else "in series")
    )


def _graphs_help(v: View) -> str:
    cs, sub = _cs(v), _sub(v)
    return (
        f"torch.compile {cs['compile_s']:,.1f} s ({'cached' if v.s.compile_cache else 'cold'}) "
        f"+ capture {cs['capture_s']:,.1f} s ({cs['graphs_captured']} graphs) + warm-up "
        f"{sub['graphs_jit_s']['warmup_s']:g} s + kernel JIT {sub['graphs_jit_s']['kernel_jit_s']:g} s"
    )


SUBLINE_NAMES = {
    "p2p_check_s": "the P2P check",
    "memory_profiling_s": "memory profiling",
    "kv_cache_init_s": "KV-cache set-up",
    "warmup_s": "warm-up",
    "kernel_jit_s": "kernel JIT",
}
ITEM_OF = {"cuda_context_s": 2, "allocator_s": 3, "graphs_jit_s": 5}


def _items_caption(v: View) -> str:
    cs = _cs(v)
    extras = [
        (name, item, value)
        for item, lines in _sub(v).items()
        for name, value in lines.items()
        if value and name not in ("compile_s", "capture_s")
    ]
    if extras:
        head = (
            "Beside the five cold-start items, this engine's start-up runs "
            + ", ".join(
                f"{SUBLINE_NAMES[name]} {value:g} s (in item {ITEM_OF[item]})"
                for name, item, value in extras
            )
            + ". "
        )
    else:
        head = "No start-up steps beside the five cold-start items (ideal physics). "
    ranks = (
        f", each of the {cs['read_ranks']} ranks reading its own shard."
        if cs["read_ranks"] > 1
        else "."
    )
    return head + f"Item 4 assumes {md_escape(cs['read_assumes'])}" + ranks


COLD_START_WEIGHTS_S = Figure(
    "cold_start.weights_s",
    "4 Weights → HBM",
    name="Weights to HBM",
    show=seconds,
    unit="s",
    help=lambda v: _weights_help(v) + ". " + _range_help("weights_s")(v),
)


COLD_START_GRAPHS_JIT_S = Figure(
    "cold_start.graphs_jit_s",
    "5 Graphs + JIT",
    name="Graphs and compile",
    show=seconds,
    unit="s",
    help=lambda v: _graphs_help(v) + ". " + _range_help("graphs_jit_s")(v),
)


ITEMS = Metrics(
    (
        Metric("1 Process init", "cold_start.process_init_s", show=seconds, unit="s"),
        Metric(
            "2 CUDA context",
            "cold_start.cuda_context_s",
            show=seconds,
            unit="s",
            help=lambda v: (
                f"context {v.s.cuda_context_s:g} s + P2P check "
                f"{_sub(v)['cuda_context_s']['p2p_check_s']:g} s"
            ),
        ),
        Metric(
            "3 Allocator",
            "cold_start.allocator_s",
            show=seconds,
            unit="s",
            help=lambda v: (
                f"allocator {v.s.allocator_s:g} s + memory profiling "
                f"{_sub(v)['allocator_s']['memory_profiling_s']:g} s + KV-cache set-up "
                f"{_sub(v)['allocator_s']['kv_cache_init_s']:g} s. " + _range_help("allocator_s")(v)
            ),
        ),
        Metric.of(COLD_START_WEIGHTS_S),
        Metric.of(COLD_START_GRAPHS_JIT_S),
    ),
    caption=_items_caption,
)


def _fp8_trap(v: View) -> str:
    """The FP8 trap, with this scenario's own figures on one side."""
    dt = v.r["dtypes"]
    wide, narrow = dt["figures"][dt["wide"]], dt["figures"][dt["narrow"]]
    other = dt["wide"] if dt["this"] == dt["narrow"] else dt["narrow"]
    cut = narrow["weights_s"] / wide["weights_s"]
    halves = abs(cut - 0.5) < 0.005
    pair = " → ".join(
        d.upper() + (" (this scenario)" if d == dt["this"] else "")
        for d in (dt["wide"], dt["narrow"])
    )
    return (
        f"**{dt['narrow'].upper()} {'halves item 4' if halves else f'cuts item 4 to {cut:.0%}'} "
        f"but not item 5.** {pair}: weights {wide['weights_gb']:,.1f} GB → "
        f"{narrow['weights_gb']:,.1f} GB, item 4 {wide['weights_s']:,.1f} s → "
        f"{narrow['weights_s']:,.1f} s, item 5 stays {narrow['graphs_jit_s']:,.1f} s, so the "
        f"time to ready goes {wide['total_s']:,.1f} s → {narrow['total_s']:,.1f} s, "
        f"{1 - narrow['total_s'] / wide['total_s']:.0%} less{', not half' if halves else ''}."
        + (
            f" This scenario's size is fixed by Weights size (sidebar); the {other.upper()} side "
            "is params × bytes."
            if v.r["memory"]["weights_gb_set"]
            else ""
        )
    )


def _timeline_note(v: View) -> str:
    cs = _cs(v)
    return (
        f"Read {cs['weights_gb']:.1f} GB once for all GPUs at {cs['read_gb_s']:.3g} GB/s = "
        f"{cs['weights_read_s']:.2f} s; "
        + (
            f"{v.s.loader} then makes an extra pass through host memory: "
            f"{cs['weights_host_s']:.2f} s; "
            if cs["weights_host_s"]
            else ""
        )
        + f"each GPU copies its {cs['weights_per_gpu_gb']:.1f} GB at {cs['h2d_gb_s']:g} GB/s = "
        f"{cs['weights_h2d_s']:.2f} s, in parallel. In series {cs['weights_series_s']:.2f} s, "
        f"overlapped {cs['weights_overlapped_s']:.2f} s; item 4 is the "
        f"{'overlapped' if cs['overlap'] else 'series'} one, {cs['weights_s']:.2f} s."
    )


def _sleep_text(v: View) -> str:
    cs = _cs(v)
    return (
        "**Sleep mode** keeps the process, the CUDA context, the allocator and the captured "
        "graphs alive; only the weights leave the GPU. Level 1 parks them in host RAM and copies "
        f"them back ({cs['wake_level1_s']:.2f} s, {cs['wake_level1_speedup']:.0f}× faster than "
        f"this cold start); level 2 discards them and reloads from storage "
        f"({cs['wake_level2_s']:,.1f} s, {cs['wake_level2_speedup']:.1f}×). vLLM measured 18–200× "
        "for level 1 and 23–45× for level 2 on its own set-ups (vLLM blog, Sleep Mode): the ratio "
        "here is lower when item 4 is slow. **A warm replica** is already serving: zero, at the "
        "price of the idle GPU (Scale to zero lens)."
    )


def _waterfall_measured(fig, v: View):
    return measured_waterfall(fig, measure_data.measured_items(), _cs(v))


def _waterfall_note(v: View) -> str | None:
    if not measure_data.measured_items():
        return None
    return (
        "Grey: the items measured on the Measurements page's uploads (an item not measured "
        "shows the model's value, marked)."
    )


def _tiers(v: View):
    cs = _cs(v)
    return cold_charts.tier_figure(
        v.r["tiers"], v.r["concurrency"], v.s.storage, cs["concurrency"], cs["weights_s"]
    )


def _tier_rows(v: View) -> pd.DataFrame:
    return pd.concat(
        [
            pd.DataFrame(
                {
                    "storage": tier_id,
                    "concurrency": v.r["concurrency"],
                    "read_s": t["read_s"],
                    "weights_s": t["weights_s"],
                }
            )
            for tier_id, t in v.r["tiers"].items()
        ]
    )


def _loaders(v: View) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "loader": lo.id,
                "name": lo.name,
                "read and H2D": "overlapped" if lo.overlap else "in series",
                "default streams": lo.default_concurrency,
                "notes": lo.notes,
            }
            for lo in cold_start_presets().loaders.values()
        ]
    )


def _storage(v: View) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "storage": tier.id,
                "name": tier.name,
                "aggregate [GB/s]": tier.aggregate_gb_s,
                "one stream [GB/s]": tier.per_stream_gb_s,
                "source (aggregate)": tier.sources["aggregate_gb_s"],
                "source (stream)": tier.sources["per_stream_gb_s"],
            }
            for tier in cold_start_presets().storage.values()
        ]
    )


def _item(label: str) -> Column:
    return Column(label, "%.1f")


def _figures(r: dict) -> dict:
    return {
        "cold_start": r["figures"],
        "cold_start_optimised": r["columns"]["optimised"],
        "memory": r["memory"],
    }


PAGE = Page(
    key="cold_start",
    file="pages/4_Cold_start.py",
    label="Cold start",
    icon=":material/ac_unit:",
    emoji="🧊",
    tabs=(
        "Five items, optimised",
        "Columns and savings",
        "Item 4: storage to HBM",
        "Sleep and warm replica",
        "Capture sizes",
        "Breakdown and downloads",
    ),
    tab_key="t_cold",
    batch=False,
)


COLD_START = Lens(
    page=PAGE,
    order=3,
    title="Cold start",
    slug="cold-start",
    compute=lambda s, trace=None: cold_start_lens(s),
    figures=_figures,
    metrics={"totals": TOTALS, "items": ITEMS},
    charts=(
        Chart(
            "waterfall",
            lambda v: cold_charts.waterfall_figure(_cs(v), v.f["cold_start_optimised"]),
            measured=_waterfall_measured,
            note=_waterfall_note,
        ),
        Chart(
            "four-columns",
            lambda v: cold_charts.columns_figure(v.r["columns"]),
            report="columns",
        ),
        Chart(
            "weights-timeline",
            lambda v: cold_charts.weights_timeline_figure(
                v.r["timeline"], _cs(v)["overlap"], _cs(v)["weights_s_range"]
            ),
            page_baseline=False,
            note=_timeline_note,
        ),
        Chart("storage-tiers", _tiers, report="tiers"),
        Chart("sleep-and-warm", lambda v: cold_charts.wake_figure(_cs(v)), report="wake"),
    ),
    tables=(
        Table(
            "columns",
            lambda v: pd.DataFrame(columns_rows(v.r["columns"])),
            columns={
                "process_init_s": _item("1 [s]"),
                "cuda_context_s": _item("2 [s]"),
                "allocator_s": _item("3 [s]"),
                "weights_s": _item("4 [s]"),
                "graphs_jit_s": _item("5 [s]"),
                "total_s": _item("total [s]"),
            },
            report="The four columns, item by item [s]",
            download="Columns",
        ),
        Table(
            "savings",
            lambda v: pd.DataFrame(v.r["savings"]),
            columns={
                "item": Column("item"),
                "total_s": _item("time to ready [s]"),
                "saves_s": _item("saves [s]"),
            },
            report="Each optimisation alone",
        ),
        Table("tiers", _tier_rows, download="Tiers"),
        Table("loaders", _loaders, static=True),
        Table("storage", _storage, static=True),
    ),
    breakdown=("cold_start",),
    downloads=("columns", "tiers"),
    rows=(
        COLD_START_TOTAL_S.row("Cold start"),
        COLD_START_WEIGHTS_S.row("Cold start"),
        COLD_START_GRAPHS_JIT_S.row("Cold start"),
        COLD_START_OPTIMISED_TOTAL_S.row("Cold start"),
    ),
    texts={
        "ranges": _ranges_text,
        "fp8-trap": _fp8_trap,
        "sleep": _sleep_text,
        "warm-cache": lambda v: (
            "The page-cache tier is the warm-cache trap: the 'blazingly fast "
            "second load' reads from host RAM. In production pods are born cold, on nodes where the "
            "files are not cached; measure item 4 from the real tier."
            if _cs(v)["warm_cache_trap"]
            else None
        ),
        "pickle": lambda v: (
            "pickle / torch.load executes arbitrary code on load (the "
            "`__reduce__` protocol): every checkpoint download is a remote-code-execution vector. It "
            "also makes an extra pass through host memory "
            f"({_cs(v)['weights_host_s']:,.1f} s here). Use safetensors."
            if v.s.loader == "pickle"
            else None
        ),
        "mmap": lambda v: (
            "safetensors mmaps the file: if the start-up does not force the read, "
            "item 4 looks short and the first token pays the page faults."
            if v.s.loader == "safetensors"
            else None
        ),
        "eager": lambda v: (
            "Eager (enforce-eager): no torch.compile and no capture, so item 5 is "
            "zero, and every decode step pays the launch tax (see the Launch overhead lens)."
            if v.s.cuda_graphs == "none"
            else None
        ),
    },
)
