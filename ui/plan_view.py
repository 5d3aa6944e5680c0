"""The Plan page's pieces (issue 43, section 1): the rate and the prices it plans for, the runs
handed to the worker pool (one job per hardware preset, :func:`model.plan.plan_job`), the
table filled as the jobs come back, and the chart across hardware."""

from __future__ import annotations

import math
import threading
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from model import plan
from model.errors import ScenarioError
from model.presets import hardware_presets
from model.scenario import Scenario
from ui import serving_worker, state
from ui.text import md_escape

PEAK_KEY = "w_plan_peak"
PRICES_KEY = "w_plan_prices"


def rate_choice(s: Scenario) -> bool:
    """Whether the plan serves the traffic profile's busiest hour (else the request rate)."""
    rate = "all at once" if s.request_rate == "inf" else f"{float(s.request_rate):g} req/s"
    from model.serving import peak_hour_rate

    peak = peak_hour_rate(s)  # shown as it is; a rate too small to plan is said below
    choice = st.radio(
        "Plan for",
        [f"the request rate ({rate})", f"the busiest hour of '{s.traffic}' ({peak:.3g} req/s)"],
        key=PEAK_KEY,
        horizontal=True,
        help="The request rate is the Serving page's; the traffic profile and its scale are "
        "the Scale to zero page's.",
    )
    return choice is not None and choice.startswith("the busiest")


def price_editor(s: Scenario) -> tuple[dict[str, float], list[str]]:
    """Each preset's price per GPU-hour (the presets' figures, editable here; not in the
    link): the overrides, and one message per refused entry."""
    base = plan.prices(None, s)
    presets = hardware_presets()
    frame = pd.DataFrame(
        {
            "hardware": list(base),
            "GPU": [presets[k].name for k in base],
            "USD per GPU-hour": [base[k] for k in base],
        }
    )
    with st.expander("Prices per GPU-hour (the presets' figures; edit them here)"):
        edited = st.data_editor(
            frame,
            key=PRICES_KEY,
            hide_index=True,
            disabled=["hardware", "GPU"],
            width="stretch",
            column_config={
                "USD per GPU-hour": st.column_config.NumberColumn(format="%.2f", step=0.01)
            },
        )
        st.caption(
            "Indicative on-demand prices with their sources in presets/hardware.yaml; your "
            "edits stay in this browser session (the share link carries the scenario's own "
            "gpu_hour_usd only)."
        )
    overrides, errors = {}, []
    for hw, usd in zip(edited["hardware"], edited["USD per GPU-hour"], strict=True):
        value = float("nan") if usd is None else float(usd)
        if not (math.isfinite(value) and 0 < value <= 1000):
            errors.append(
                f"the price of {hw} ({usd!r}) is not accepted: a number above 0 and at most "
                "1000 USD per GPU-hour; the preset's is used"
            )
        elif value != base[hw]:
            overrides[hw] = value
    return overrides, errors


def jobs(s: Scenario, peak: bool, overrides: dict[str, float]) -> tuple[float, list[tuple]]:
    """The plan's rate and its jobs, one per hardware preset (plain values: a scheduler could
    take them as they are)."""
    rate = plan.target_rate(s, peak)
    return rate, plan.jobs(s, rate, plan.prices(overrides, s), link_to=state.page_url("serving"))


def run(todo: list[tuple], on_row) -> list[dict]:
    """Every job's row, cached ones at once and the rest from the worker pool, two at a time
    (the pool's light lane), ``on_row(rows, running)`` after each. When the session moves on
    (a widget changed), no further job starts and the page goes to its next run."""
    rows: dict[tuple, dict] = {}
    for job in todo:
        hit = serving_worker.plan_cached(job)
        if hit is not None:
            rows[job] = hit
    left = [j for j in todo if j not in rows]
    on_row(list(rows.values()), [j[1] for j in left])
    if not left:
        return list(rows.values())
    session = serving_worker.session_key()
    stop = threading.Event()

    def one(job: tuple) -> dict | None:
        return None if stop.is_set() else serving_worker.plan_row(job, session)

    pool = ThreadPoolExecutor(max_workers=serving_worker.MAX_WORKERS)
    try:
        futures = {pool.submit(one, j): j for j in left}
        pending = set(futures)
        while pending:
            done, pending = wait(
                pending, timeout=serving_worker.POLL_S, return_when=FIRST_COMPLETED
            )
            for f in done:
                row = f.result()
                if row is not None:
                    rows[futures[f]] = row
            if done:
                on_row(list(rows.values()), [futures[f][1] for f in pending])
            if pending and serving_worker.session_moved_on():
                stop.set()
                serving_worker._leave_for_the_next_run()  # noqa: SLF001 - raises the rerun
    finally:
        stop.set()  # jobs not yet started are skipped; running ones finish into the cache
        pool.shutdown(wait=False, cancel_futures=True)
    return list(rows.values())


def short_name(name: str) -> str:
    """A GPU's name without its vendor and memory (``AMD Instinct MI300X 192 GB`` → MI300X)."""
    import re

    out = re.sub(r"^(NVIDIA GeForce |NVIDIA |AMD Instinct |AMD )", "", name)
    out = re.sub(r"\s+\d+\s*GB\b.*$", "", out)
    return out.strip() or name


def short_names(names: list[str]) -> list[str]:
    """:func:`short_name` of each, the full name where two would read the same (A100 SXM4 40
    and 80 GB)."""
    short = [short_name(n) for n in names]
    return [n if short.count(x) > 1 else x for n, x in zip(names, short, strict=True)]


def _gpus(n: int) -> str:
    return f"{n:,} GPU" + ("" if n == 1 else "s")


def table(out: dict) -> None:
    """The plans, cheapest first, each with its link to the Serving page."""
    if not out["plans"]:
        return
    names = short_names([p["hardware_name"] for p in out["plans"]])
    frame = pd.DataFrame(
        [
            {
                "GPU": name,
                "layout": p["layout"],
                "levers": p.get("levers") or "–",
                "weights": p["weights_dtype"],
                "max seqs": p["max_num_seqs"],
                "replicas": p["replicas"],
                "GPUs": p["gpus_total"],
                "USD/hour": p["usd_per_hour"],
                "USD per M output tokens": p["usd_per_million_output_tokens"],
                "output tok/s per GPU": p["output_tokens_per_s_per_gpu"],
                "req/s per replica": p["max_request_rate_per_replica"],
                "open": p["link"],
            }
            for name, p in zip(names, out["plans"], strict=True)
        ]
    )
    st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        height=36 * (len(frame) + 1) + 4,
        column_config={
            "GPU": st.column_config.TextColumn(width="medium"),
            "layout": st.column_config.TextColumn(width="small"),
            "levers": st.column_config.TextColumn(
                width="small",
                help="Speculative decoding and prefill/decode disaggregation where the plan "
                "uses them (each tried on and off against the scenario's own setting)",
            ),
            "USD/hour": st.column_config.NumberColumn(format="%.2f"),
            "USD per M output tokens": st.column_config.NumberColumn(format="%.3f"),
            "output tok/s per GPU": st.column_config.NumberColumn(format="%.1f"),
            "req/s per replica": st.column_config.NumberColumn(format="%.3g"),
            "open": st.column_config.LinkColumn(
                display_text="on Serving",
                help="Opens this configuration on the Serving page: its capacity, the "
                "replicas the rate needs, the commands that run it",
            ),
        },
    )


def unfit(out: dict) -> None:
    if not out["unfit"]:
        return
    st.markdown("**No plan on these GPUs, and why**")
    rows = []
    for u in out["unfit"]:
        close = u.get("closest") or {}
        near = (
            f"closest: {close['layout']} {close['weights_dtype']}, one request "
            f"alone TTFT {close['ttft_ms']:.0f} ms, TPOT {close['tpot_ms']:.1f} ms"
            if close
            else ""
        )
        rows.append(
            {"GPU": u.get("hardware_name", u["hardware"]), "why": u["reason"], "closest": near}
        )
    st.table(pd.DataFrame(rows), hide_index=True)


def chart(out: dict):
    """USD per hour of each preset's cheapest plan (bars), its GPUs in the hover."""
    plans = out["plans"]
    fig = go.Figure(
        go.Bar(
            x=short_names([p["hardware_name"] for p in plans]),
            y=[p["usd_per_hour"] for p in plans],
            customdata=[
                [p["gpus_total"], p["layout"], p["weights_dtype"], p["replicas"]] for p in plans
            ],
            hovertemplate="%{x}<br>%{y:.2f} USD/hour<br>%{customdata[0]} GPU(s): "
            "%{customdata[3]} replica(s) of %{customdata[1]}, %{customdata[2]}"
            "<extra></extra>",
            text=[_gpus(p["gpus_total"]) for p in plans],
            textposition="outside",
        )
    )
    fig.update_layout(
        title="The cheapest configuration on each GPU that holds the SLO at the rate",
        yaxis_title="USD per hour",
        xaxis_title=None,
        height=420,
        margin={"t": 60, "b": 10},
    )
    return fig


def problem(exc: ScenarioError) -> None:
    st.warning(f"Nothing to plan: {md_escape(exc.key)}: {md_escape(exc.message)}")
