"""The seed's ten knobs against launch overhead, each tied to the scenario (SPEC 4.2).

Each row says what the knob attacks and costs (the seed's summary table), whether it applies
to this scenario (True, False, or None where the explorer does not model it), and the
scenario's own figure behind that verdict, computed by the core.

References
----------
.. [1] Seed: *The chef who calls out every order*, "The 10 knobs worth touching" and its
   summary table.
"""

from __future__ import annotations

from model.decode import at_batch, launch_figures
from model.memory import memory_figures
from model.scenario import MAX_BATCH, Scenario
from model.units import MS

#: (knob, what it attacks, risk / cost): the seed's summary table, word for word.
SEED_TABLE = (
    ("nsys / dmon", "knowing whether it is launch-bound", "none; do it first"),
    (
        "remove --enforce-eager",
        "graphs disabled",
        "it was for debugging; reactivate if a bug returns",
    ),
    (
        "capture buckets",
        "expensive padding / slow capture",
        "requires measuring the real distribution",
    ),
    ("graph mode", "memory and capture", "less coverage on mixed steps"),
    ("torch.compile", "unfused kernels", "startup time"),
    ("batch size", "occupancy + memory", "HBM for KV cache"),
    ("streams", "broken overlap", "do not touch if not understood"),
    ("persistence + clocks", "jitter / P-states", "electrical consumption"),
    ("fused kernels", "number of launches", "kernel compatibility"),
    ("capture vs cold start", "slower startup", "less throughput if trimmed"),
)

FUSION_SHARE = 0.3  # the what-if of knobs 5 and 9: 30 % fewer kernels


def _ms(seconds: float) -> str:
    return f"{seconds / MS:.3g} ms"


def _moves(before_s: float, after_s: float) -> str:
    """ "go from 8.36 ms to 5.1 ms", or "stay at 8.36 ms" where the two read the same: a
    sentence never says a figure changes to itself."""
    a, b = _ms(before_s), _ms(after_s)
    return f"stay at {a}" if a == b else f"go from {a} to {b}"


def knobs(s: Scenario, lf: dict | None = None) -> list[dict]:
    """The ten knobs for scenario ``s``: ``number``, ``knob``, ``attacks``, ``cost``,
    ``applies`` (bool, or None where not modelled) and ``here`` (the scenario's figure)."""
    lf = lf or launch_figures(s)
    own = at_batch(s, s.batch)
    eager_share = lf["launch_share_of_eager_step"]
    rows: list[tuple[bool | None, str]] = []

    # 1 measure
    rows.append(
        (
            True,
            f"Modelled: launches are {eager_share:.0%} of the eager step "
            f"({lf['t_launch_eager_ms']:.3g} of {lf['t_step_eager_ms']:.3g} ms); this step is "
            f"{own['bound']}-bound. Check the gaps in nsys before trusting either.",
        )
    )
    # 2 enforce-eager
    if s.cuda_graphs == "none":
        rows.append(
            (
                True,
                f"This scenario runs eager: with {lf['graph_mode']} graphs the step would "
                f"{_moves(lf['t_step_eager_ms'] * MS, lf['t_step_graph_ms'] * MS)} "
                f"({lf['graph_speedup']:.2f}×).",
            )
        )
    elif lf["eager_fallback"]:
        rows.append(
            (
                True,
                f"Graphs are on, but batch {s.batch} is above the largest captured size "
                f"({lf['largest_capture_size']}), so this step runs eager anyway.",
            )
        )
    else:
        rows.append((False, f"Graphs are on ({s.cuda_graphs}); the step replays them."))
    # 3 buckets
    waste = lf["padding_waste"]
    many = lf["capture_sizes_count"] > 16
    rows.append(
        (
            bool(waste > 0 or lf["eager_fallback"] or many),
            f"Batch {s.batch} pads to {lf['padded_batch']} ({waste:.0%} of the compute is "
            f"padding); {lf['capture_sizes_count']} sizes captured, largest "
            f"{lf['largest_capture_size']}."
            + (
                " Sizes the workload never sees still cost capture and HBM (knob 10)."
                if many
                else ""
            ),
        )
    )
    # 4 mode
    if s.cuda_graphs == "full_and_piecewise":
        alt = launch_figures(s.model_copy(update={"cuda_graphs": "full_decode_only"}))
        rows.append(
            (
                True,
                f"A pure decode pod could use full_decode_only: {alt['graphs_captured']} graphs "
                f"instead of {lf['graphs_captured']}, {alt['capture_s']:.3g} s of capture instead "
                f"of {lf['capture_s']:.3g} s, the same decode step.",
            )
        )
    elif s.cuda_graphs == "piecewise":
        alt = at_batch(s, s.batch, cuda_graphs="full_decode_only")
        rows.append(
            (
                True,
                f"Piecewise still launches {int(own['launches'])} pieces per step; with a full "
                f"decode graph the step would {_moves(own['t_step_s'], alt['t_step_s'])}.",
            )
        )
    elif s.cuda_graphs == "none":
        rows.append((False, "Eager: no graph mode to choose until knob 2 is turned."))
    else:
        rows.append(
            (
                False,
                "full_decode_only: one replay per decode step and the smaller capture; mixed "
                "prefill + decode steps run eager.",
            )
        )
    # 5 torch.compile and 9 fused kernels: fewer kernels, the same what-if
    fewer = max(int(round(lf["kernels"] * (1 - FUSION_SHARE))), 1)
    fused = launch_figures(s.model_copy(update={"kernels": fewer}))
    launch_bound_now = own["launches"] > 1
    saving = (lf["t_step_eager_ms"] - fused["t_step_eager_ms"]) * MS
    rows.append(
        (
            launch_bound_now,
            f"Fusing {FUSION_SHARE:.0%} of the {lf['kernels']} kernels ({fewer} left) saves "
            f"{_ms(saving)} per eager step"
            + ("" if launch_bound_now else "; with a full graph the launches are already one")
            + ". Its cost is compile time at start-up (Cold start lens).",
        )
    )
    # 6 batch
    mem = memory_figures(s)
    top = min(mem["max_batch"], MAX_BATCH)
    ctx = f"{s.context_tokens:,} context tokens" if s.context_tokens else "1 token per sequence"
    if top > s.batch:
        best = at_batch(s, top)
        rows.append(
            (
                s.batch < top / 2,
                f"Batch {s.batch} of the {mem['max_batch']:,} that fit at {ctx}: "
                f"{own['tokens_per_s']:,.0f} → {best['tokens_per_s']:,.0f} tok/s at batch "
                f"{top:,}.",
            )
        )
    else:
        rows.append((False, f"Batch {s.batch} already fills the KV cache ({top:,} fit)."))
    # 7 streams
    other = "pipelined" if s.launch_model == "additive" else "additive"
    alt = at_batch(s, s.batch, launch_model=other)
    rows.append(
        (
            None,
            f"The two launch models bracket it: {s.launch_model} "
            f"{_ms(own['t_step_s'])}, {other} {_ms(alt['t_step_s'])}.",
        )
    )
    # 8 persistence and clocks
    slow = at_batch(s, s.batch, launch_us=min(s.launch_us * 2, 1000.0))
    calm = slow["t_step_s"] < own["t_step_s"] * 1.01
    rows.append(
        (
            None,
            f"τ = {s.launch_us:g} µs assumes a resident driver and steady clocks. "
            f"If jitter doubled τ the step would {_moves(own['t_step_s'], slow['t_step_s'])}"
            + (" (graphs make it almost insensitive to τ)." if calm else "."),
        )
    )
    # 9 fused kernels (same arithmetic as 5, from the kernel side)
    per_layer = s.model.layers * s.launch_us * 1e-3
    rows.append(
        (
            launch_bound_now,
            f"Each kernel fewer per layer removes {s.model.layers} launches, {per_layer:.3g} ms "
            "per eager step (FlashAttention, fused FP8 GEMMs).",
        )
    )
    # 10 capture vs cold start
    if lf["graphs_captured"] == 0:
        g = launch_figures(s.model_copy(update={"cuda_graphs": lf["graph_mode"]}))
        rows.append(
            (
                False,
                f"Eager: no capture at start-up. {lf['graph_mode']} would add {g['capture_s']:.3g} s "
                f"({g['graphs_captured']} graphs) and {g['graph_memory_gb']:.2f} GB per GPU.",
            )
        )
    else:
        rows.append(
            (
                True,
                f"Capture adds {lf['capture_s']:.3g} s to every cold start "
                f"({lf['graphs_captured']} graphs × {s.capture_s_per_graph:g} s) and keeps "
                f"{lf['graph_memory_gb']:.2f} GB per GPU (max batch {mem['max_batch']:,} "
                f"instead of {lf['max_batch_without_graphs']:,}).",
            )
        )
    return [
        {
            "number": i + 1,
            "knob": knob,
            "attacks": attacks,
            "cost": cost,
            "applies": applies,
            "here": here,
        }
        for i, ((knob, attacks, cost), (applies, here)) in enumerate(
            zip(SEED_TABLE, rows, strict=True)
        )
    ]
