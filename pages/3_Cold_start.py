"""Cold start lens: the five line items of an inference server's start-up, the loaders and
storage tiers, and what sleep mode and a warm replica turn it into. (SPEC 4.3)"""

import pandas as pd
import streamlit as st

from model.cold_start import cold_start_lens, columns_rows
from model.presets import cold_start_presets
from ui import cold_charts, compare, measure_data
from ui.buckets import bucket_editor
from ui.chart_view import chart
from ui.cold_controls import cold_controls
from ui.formulas import cold_start_formulas
from ui.layout import (
    assumption_line,
    downloads,
    fit_warning,
    lazy_tabs,
    md_escape,
    scenario_caption,
    weights_size_notice,
)
from ui.layout import breakdown as breakdown_table
from ui.measure_charts import measured_waterfall
from ui.sidebar import draw_sidebar, page_scenario

st.set_page_config(page_title="Cold start · What-If Explorer", page_icon="🧊", layout="wide")
s = page_scenario("cold_start", defer=True)
lens = cold_start_lens(s)
b, blens = compare.baseline(), compare.lens(cold_start_lens)
d = compare.Deltas(lens["figures"], blens and blens["figures"])
d_opt = compare.Deltas(lens["columns"], blens and blens["columns"])
cs = lens["figures"]
opt = lens["columns"]["optimised"]
presets = cold_start_presets()
loader = presets.loaders[s.loader]

st.title("Cold start: five line items")
scenario_caption(
    s,
    f"{cs['weights_gb']:.1f} GB of weights",
    f"{md_escape(loader.name)} from {md_escape(presets.storage[s.storage].name)}",
    f"graphs: {s.cuda_graphs}",
)
cold_controls(s)
if not lens["memory"]["weights_fit"]:
    fit_warning(lens["memory"], s, "the start-up figures below")

c = st.columns(4)
c[0].metric(
    "Time to ready",
    f"{cs['total_s']:,.1f} s",
    help="Items 1–5 in series.",
    **d("total_s", "lower", "s"),
)
c[1].metric(
    "Floor (items 1–3)",
    f"{cs['floor_s']:,.1f} s",
    help="Process init + CUDA context + allocator: what no loader crosses. Below it only "
    "sleep mode or a warm replica help.",
    **d("floor_s", "lower", "s"),
)
c[2].metric(
    "Optimised",
    f"{opt['total_s']:,.1f} s",
    **(
        d_opt("optimised.total_s", "lower", "s")
        if d_opt
        else {
            "delta": f"{opt['total_s'] - cs['total_s']:.1f} s"
            if opt["total_s"] < cs["total_s"]
            else None,
            "delta_color": "inverse",
        }
    ),
    help="Overlapping loader, warm compile cache, bounded capture, lean environment.",
)
if s.sleep_level:
    c[3].metric(
        f"Wake from sleep level {s.sleep_level}",
        f"{cs['wake_s']:.2f} s",
        help=f"{cs['wake_speedup']:.0f}× faster than the full cold start.",
        **d("wake_s", "lower", "s"),
    )
else:
    c[3].metric(
        "Sleep level 1 wake",
        f"{cs['wake_level1_s']:.2f} s",
        help="If the server slept instead of stopping (Sleep level 1): the weights come back "
        f"from host RAM, {cs['wake_level1_speedup']:.0f}× faster.",
        **d("wake_level1_s", "lower", "s"),
    )
c = st.columns(5)
c[0].metric("1 Process init", f"{cs['process_init_s']:,.1f} s", **d("process_init_s", "lower", "s"))
sub = cs["sublines"]
c[1].metric(
    "2 CUDA context",
    f"{cs['cuda_context_s']:,.1f} s",
    help=f"context {s.cuda_context_s:g} s + P2P check {sub['cuda_context_s']['p2p_check_s']:g} s",
    **d("cuda_context_s", "lower", "s"),
)
c[2].metric(
    "3 Allocator",
    f"{cs['allocator_s']:,.1f} s",
    help=f"allocator {s.allocator_s:g} s + memory profiling "
    f"{sub['allocator_s']['memory_profiling_s']:g} s + KV-cache set-up "
    f"{sub['allocator_s']['kv_cache_init_s']:g} s",
    **d("allocator_s", "lower", "s"),
)
c[3].metric(
    "4 Weights → HBM",
    f"{cs['weights_s']:,.1f} s",
    help="Read the checkpoint, then the host-to-device (H2D) copy to each GPU: "
    f"read {cs['weights_read_s']:.2f} s at {cs['read_gb_s']:.3g} GB/s "
    f"({cs['concurrency']} streams), "
    + (f"host pass {cs['weights_host_s']:.2f} s, " if cs["weights_host_s"] else "")
    + f"H2D {cs['weights_h2d_s']:.2f} s per GPU at {cs['h2d_gb_s']:g} GB/s, "
    + ("overlapped" if cs["overlap"] else "in series"),
    **d("weights_s", "lower", "s"),
)
c[4].metric(
    "5 Graphs + JIT",
    f"{cs['graphs_jit_s']:,.1f} s",
    help=f"torch.compile {cs['compile_s']:,.1f} s ({'cached' if s.compile_cache else 'cold'}) "
    f"+ capture {cs['capture_s']:,.1f} s ({cs['graphs_captured']} graphs) + warm-up "
    f"{sub['graphs_jit_s']['warmup_s']:g} s + kernel JIT {sub['graphs_jit_s']['kernel_jit_s']:g} s",
    **d("graphs_jit_s", "lower", "s"),
)
SUBLINE_NAMES = {
    "p2p_check_s": "the P2P check",
    "memory_profiling_s": "memory profiling",
    "kv_cache_init_s": "KV-cache set-up",
    "warmup_s": "warm-up",
    "kernel_jit_s": "kernel JIT",
}
extras = [
    (name, item, value)
    for item, lines in sub.items()
    for name, value in lines.items()
    if value and name not in ("compile_s", "capture_s")
]
st.caption(
    (
        "Beside the cold-start runbook's five items, this engine's start-up runs "
        + ", ".join(
            f"{SUBLINE_NAMES[name]} {value:g} s (in item "
            f"{ {'cuda_context_s': 2, 'allocator_s': 3, 'graphs_jit_s': 5}[item] })"
            for name, item, value in extras
        )
        + ". "
        if extras
        else "No start-up steps beside the cold-start runbook's five items (ideal physics). "
    )
    + f"Item 4 assumes {md_escape(cs['read_assumes'])}"
    + (
        f", each of the {cs['read_ranks']} ranks reading its own shard."
        if cs["read_ranks"] > 1
        else "."
    )
)
assumption_line(s, focus="cold_start")
weights_size_notice(
    lens["memory"], s, "item 4, its read and copy times and the loading timeline use it"
)

# the seed's traps, where they apply
if cs["warm_cache_trap"]:
    st.warning(
        "The page-cache tier is the warm-cache trap: the 'blazingly fast second load' reads "
        "from host RAM. In production pods are born cold, on nodes where the files are not "
        "cached; measure item 4 from the real tier."
    )
if s.loader == "pickle":
    st.error(
        "pickle / torch.load executes arbitrary code on load (the `__reduce__` protocol): every "
        "checkpoint download is a remote-code-execution vector. It also makes an extra pass "
        f"through host memory ({cs['weights_host_s']:,.1f} s here). Use safetensors."
    )
if s.loader == "safetensors":
    st.caption(
        "safetensors mmaps the file: if the start-up does not force the read, item 4 looks "
        "short and the first token pays the page faults."
    )
if s.cuda_graphs == "none":
    st.info(
        "Eager (enforce-eager): no torch.compile and no capture, so item 5 is zero, and every "
        "decode step pays the launch tax (see the Launch overhead lens)."
    )
# the FP8 trap, with this scenario's own figures on one side
dt = lens["dtypes"]
wide, narrow = dt["figures"][dt["wide"]], dt["figures"][dt["narrow"]]
other = dt["wide"] if dt["this"] == dt["narrow"] else dt["narrow"]
cut = narrow["weights_s"] / wide["weights_s"]
halves = abs(cut - 0.5) < 0.005
pair = " → ".join(
    d.upper() + (" (this scenario)" if d == dt["this"] else "") for d in (dt["wide"], dt["narrow"])
)
st.info(
    f"**{dt['narrow'].upper()} {'halves item 4' if halves else f'cuts item 4 to {cut:.0%}'} "
    f"but not item 5.** {pair}: weights {wide['weights_gb']:,.1f} GB → "
    f"{narrow['weights_gb']:,.1f} GB, item 4 {wide['weights_s']:,.1f} s → "
    f"{narrow['weights_s']:,.1f} s, item 5 stays {narrow['graphs_jit_s']:,.1f} s, so the "
    f"time to ready goes {wide['total_s']:,.1f} s → {narrow['total_s']:,.1f} s, "
    f"{1 - narrow['total_s'] / wide['total_s']:.0%} less{', not half' if halves else ''}."
    + (
        f" This scenario's size is fixed by Weights size (sidebar); the {other.upper()} side "
        "is params × bytes."
        if lens["memory"]["weights_gb_set"]
        else ""
    )
)

cols = pd.DataFrame(columns_rows(lens["columns"]))
# Lazy tabs: only the open tab's charts and tables are built, sent and redrawn on a change
# (benchmarks/NOTES-speed.md, lever 06); the headline metrics above stay on every tab.
draw_sidebar()  # after the headline metrics: their deltas leave first
tabs = lazy_tabs(
    [
        "Five items and the optimised start",
        "Columns and savings (tables)",
        "Item 4: from storage to HBM",
        "Sleep mode and a warm replica",
        "Capture sizes and presets",
        "Breakdown and downloads",
    ],
    key="t_cold",
)
if tabs[0].open:
    with tabs[0]:
        left, right = st.columns(2)
        measured = measure_data.measured_items()
        chart(
            measured_waterfall(cold_charts.waterfall_figure(cs, opt), measured, cs),
            "waterfall",
            base=blens
            and cold_charts.waterfall_figure(blens["figures"], blens["columns"]["optimised"]),
            where=left,
        )
        if measured:
            left.caption(
                "Grey: the items measured on the Measurements page's uploads (an item not "
                "measured shows the model's value, marked)."
            )
        chart(
            cold_charts.columns_figure(lens["columns"]),
            "four-columns",
            base=blens and cold_charts.columns_figure(blens["columns"]),
            where=right,
        )
if tabs[1].open:
    with tabs[1]:
        st.markdown("**The four columns**, item by item")
        st.dataframe(
            cols.rename(
                columns={
                    "process_init_s": "1 [s]",
                    "cuda_context_s": "2 [s]",
                    "allocator_s": "3 [s]",
                    "weights_s": "4 [s]",
                    "graphs_jit_s": "5 [s]",
                    "total_s": "total [s]",
                }
            ),
            hide_index=True,
            width="stretch",
            column_config={
                k: st.column_config.NumberColumn(format="%.1f")
                for k in ("1 [s]", "2 [s]", "3 [s]", "4 [s]", "5 [s]", "total [s]")
            },
        )

        st.markdown("**Each optimisation alone** (what it saves from this scenario's start-up)")
        st.dataframe(
            pd.DataFrame(lens["savings"]).rename(
                columns={"item": "item", "total_s": "time to ready [s]", "saves_s": "saves [s]"}
            ),
            hide_index=True,
            width="stretch",
            column_config={
                "time to ready [s]": st.column_config.NumberColumn(format="%.1f"),
                "saves [s]": st.column_config.NumberColumn(format="%.1f"),
            },
        )
if tabs[2].open:
    with tabs[2]:
        left, right = st.columns(2)
        chart(
            cold_charts.weights_timeline_figure(lens["timeline"], cs["overlap"]),
            "weights-timeline",
            where=left,
        )
        left.caption(
            f"Read {cs['weights_gb']:.1f} GB once for all GPUs at {cs['read_gb_s']:.3g} GB/s = "
            f"{cs['weights_read_s']:.2f} s; "
            + (
                f"{s.loader} then makes an extra pass through host memory: {cs['weights_host_s']:.2f} s; "
                if cs["weights_host_s"]
                else ""
            )
            + f"each GPU copies its {cs['weights_per_gpu_gb']:.1f} GB at {cs['h2d_gb_s']:g} GB/s = "
            f"{cs['weights_h2d_s']:.2f} s, in parallel. In series {cs['weights_series_s']:.2f} s, "
            f"overlapped {cs['weights_overlapped_s']:.2f} s; item 4 is the "
            f"{'overlapped' if cs['overlap'] else 'series'} one, {cs['weights_s']:.2f} s."
        )
        chart(
            cold_charts.tier_figure(
                lens["tiers"], lens["concurrency"], s.storage, cs["concurrency"], cs["weights_s"]
            ),
            "storage-tiers",
            base=blens
            and cold_charts.tier_figure(
                blens["tiers"],
                blens["concurrency"],
                b.storage,
                blens["figures"]["concurrency"],
                blens["figures"]["weights_s"],
            ),
            where=right,
        )
if tabs[3].open:
    with tabs[3]:
        left, right = st.columns([3, 2])
        chart(
            cold_charts.wake_figure(cs),
            "sleep-and-warm",
            base=blens and cold_charts.wake_figure(blens["figures"]),
            where=left,
        )
        right.markdown(
            "**Sleep mode** keeps the process, the CUDA context, the allocator and the captured "
            "graphs alive; only the weights leave the GPU. Level 1 parks them in host RAM and copies "
            f"them back ({cs['wake_level1_s']:.2f} s, {cs['wake_level1_speedup']:.0f}× faster than "
            f"this cold start); level 2 discards them and reloads from storage "
            f"({cs['wake_level2_s']:,.1f} s, {cs['wake_level2_speedup']:.1f}×). vLLM measured 18–200× "
            "for level 1 and 23–45× for level 2 on its own set-ups (vLLM blog, Sleep Mode): the ratio "
            "here is lower when item 4 is slow. **A warm replica** is already serving: zero, at the "
            "price of the idle GPU (Scale to zero lens)."
        )
if tabs[4].open:
    with tabs[4]:
        st.markdown("**Capture sizes** (item 5: graphs captured × seconds per graph)")
        bucket_editor(s)
        st.markdown("**Loaders and storage tiers** (the presets, with their sources)")
        st.table(  # the notes read whole
            pd.DataFrame(
                [
                    {
                        "loader": lo.id,
                        "name": lo.name,
                        "read and H2D": "overlapped" if lo.overlap else "in series",
                        "default streams": lo.default_concurrency,
                        "notes": lo.notes,
                    }
                    for lo in presets.loaders.values()
                ]
            ),
            hide_index=True,
            width="stretch",
        )
        st.table(  # a table, not a grid: the sources are read whole, not cut at a cell
            pd.DataFrame(
                [
                    {
                        "storage": tier.id,
                        "name": tier.name,
                        "aggregate [GB/s]": tier.aggregate_gb_s,
                        "one stream [GB/s]": tier.per_stream_gb_s,
                        "source (aggregate)": tier.sources["aggregate_gb_s"],
                        "source (stream)": tier.sources["per_stream_gb_s"],
                    }
                    for tier in presets.storage.values()
                ]
            ),
            hide_index=True,
            width="stretch",
        )
if tabs[5].open:
    with tabs[5]:
        breakdown = breakdown_table({"cold_start": cs}, ("cold_start",))
        tiers = pd.concat(
            [
                pd.DataFrame(
                    {
                        "storage": tier_id,
                        "concurrency": lens["concurrency"],
                        "read_s": t["read_s"],
                        "weights_s": t["weights_s"],
                    }
                )
                for tier_id, t in lens["tiers"].items()
            ]
        )
        downloads(s, {"Figures": breakdown, "Columns": cols, "Tiers": tiers}, "cold-start")
cold_start_formulas()
