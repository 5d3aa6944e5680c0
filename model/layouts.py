"""The layouts of a replica's GPUs (issue 42 §3): tensor parallel over all of them, with expert
parallelism for the MoE layers, or data-parallel ranks; their names and their decode throughput
against the sequences in flight, what the Serving page's Parallelism view and the Pareto front
compare."""

from __future__ import annotations

import numpy as np

from model import decode, memory
from model.scenario import Scenario


def layout_name(tp: int, dp: int, ep: bool) -> str:
    """ "TP 8", "DP 8 · EP", "TP 2 × DP 4 · EP": a layout as the pages name it."""
    parts = ([f"TP {tp}"] if tp > 1 or dp == 1 else []) + ([f"DP {dp}"] if dp > 1 else [])
    return " × ".join(parts) + (" · EP" if ep else "")


def variants(s: Scenario) -> list[tuple[str, Scenario]]:
    """The layouts of the replica's GPUs to compare, named: tensor parallel over all of them,
    the same with expert parallelism and data-parallel ranks of one GPU with it (a mixture of
    experts with at least as many experts as GPUs), data-parallel ranks alone (a dense model),
    and the scenario's own layout; a layout the keys refuse is left out."""
    g = s.replica_gpus if not s.disaggregated else s.gpus
    moe = bool(s.model.experts)
    base = s.raw.model_copy(update={"disaggregated": False})
    want = [(g, 1, False)]
    if moe and g <= s.model.experts:
        want += [(g, 1, True), (1, g, True)]
    elif g > 1:
        want.append((1, g, False))
    own = (s.gpus, s.data_parallel, s.expert_parallel)
    if not s.disaggregated and own not in want:
        want.append(own)
    out = []
    for tp, dp, ep in want:
        try:
            v = base.model_copy(update={"gpus": tp, "data_parallel": dp, "expert_parallel": ep})
        except ValueError:
            continue
        out.append((layout_name(tp, dp, ep), v))
    return out


def curves(s: Scenario, points: int = 60) -> list[dict]:
    """Each layout's (:func:`variants`) replica output tok/s and time per token against the
    sequences in flight over all ranks, from one rank's sequences to the most its KV cache
    holds, at the scenario's context: :func:`model.decode.sweep` per rank (its tok/s are all
    ranks'), :func:`model.memory.memory_figures` per rank. ``fits`` False where the weights do
    not fit the layout's GPUs."""
    out = []
    for name, v in variants(s):
        mem = memory.memory_figures(v)
        if not mem["weights_fit"]:
            out.append({"layout": name, "fits": False})
            continue
        d = v.data_parallel
        top = max(int(mem["max_batch"]), 1) * d
        total = np.unique(np.rint(np.geomspace(d, max(top, d), points)).astype(int))
        sw = decode.sweep(v, np.maximum(total // d, 1))
        out.append(
            {
                "layout": name,
                "fits": True,
                "gpus": v.replica_gpus,
                "sequences": total,
                "tokens_per_s": sw["tokens_per_s"],
                "tpot_ms": sw["t_token_s"] * 1e3,
                "max_sequences": top,
            }
        )
    return out
