"""The Scale to zero lens, declared once (SPEC 4.4): a day of traffic, warm replicas against
scale to zero, pre-warm and sleep mode."""

from __future__ import annotations

import pandas as pd

from model import serving
from model.cold_start import optimised_changes
from model.compare import Row
from model.economics import STRATEGIES, STRATEGY_NAMES, economics_lens
from model.ranges import is_point
from ui import economics_charts, economics_view, serving_worker
from ui.lens import Chart, Column, Lens, Page, Table, View
from ui.lenses.common import STRATEGY, economics_figures


def strategy_table(fig: dict) -> pd.DataFrame:
    """Every strategy's day (the page's table, its download and the report's)."""
    rows = []
    for k in STRATEGIES:
        f = fig[k]
        rows.append(
            {
                # the two deciding columns first: they stay in view at any width
                "strategy": STRATEGY_NAMES[k] + (" ◀" if k == fig["recommended"] else ""),
                "total USD/day": round(f["total_usd_per_day"], 2),
                "SLA misses/day": round(f["sla_misses_per_day"], 2),
                "GPU USD/day": round(f["cost_usd_per_day"], 2),
                "GPU-hours/day": round(f["gpu_hours_per_day"], 2),
                "cold starts/day": round(f["cold_starts_per_day"], 2),
                "delayed/day": round(f["delayed_requests_per_day"], 2),
                "p99 wait [s]": round(f["p99_wait_s"], 2),
                "worst wait [s]": round(f["worst_wait_s"], 2),
            }
        )
    return pd.DataFrame(rows)


def _eco(v: View) -> dict:
    return v.r["figures"]


def _service(v: View) -> str:
    svc = v.r["service"]
    lo, hi = _eco(v)["cold_start_range_s"]
    spread = f" (published spread {lo:,.0f}–{hi:,.0f} s)" if not is_point((lo, hi)) else ""
    return (
        f"Cold start {svc.cold_s:,.1f} s{spread} and optimised {svc.cold_optimised_s:,.1f} s "
        f"(Cold start lens); wake from sleep level {svc.sleep_level}: {svc.wake_s:,.2f} s; "
        + _capacity_text(svc, v.s)
    )


def _cold_range(v: View) -> str | None:
    """Whether the decision flips inside the cold start's range (issue 20)."""
    eco = _eco(v)
    lo, hi = eco["cold_start_range_s"]
    be = eco["break_even_cold_start_s"]
    if is_point((lo, hi)) or be is None or be <= 0:
        return None
    if eco["decision_flips_in_cold_range"]:
        return (
            f"**The decision flips inside the cold start's range.** Scaling to zero beats "
            f"keeping warm below a {be:,.0f} s cold start, and real servers of this scenario "
            f"start in {lo:,.0f}–{hi:,.0f} s (the spread of published measurements, Cold start "
            "lens): measure this start-up (Measurements page) before deciding."
        )
    side = "scaling to zero" if hi < be else "keeping warm"
    return (
        f"The decision holds across the cold start's range: the break-even is {be:,.0f} s "
        f"and real servers of this scenario start in {lo:,.0f}–{hi:,.0f} s, so {side} wins "
        "at either end (scale to zero against the warm floor)."
    )


def _capacity_text(svc, s) -> str:
    """Where a replica's capacity and a request's time come from (model.serving.replica)."""
    timing = (
        f"a request keeps it busy for TTFT {svc.ttft_s * 1000:,.0f} ms + output tokens × TPOT "
        f"{svc.tpot_s * 1000:,.1f} ms"
    )
    if svc.capacity_basis == "slo":
        return (
            f"one replica holds {svc.capacity_per_s:,.2f} requests/s within the SLO (Serving "
            f"lens: TTFT ≤ {s.ttft_slo_ms:g} ms and TPOT ≤ {s.tpot_slo_ms:g} ms for "
            f"{s.slo_attainment:.0%}); {timing} at light load."
        )
    if svc.capacity_basis == "saturation":
        return (
            f"even light load misses the Serving lens's SLO, so a replica is sized by what it "
            f"completes, {svc.capacity_per_s:,.2f} requests/s; {timing} at light load."
        )
    if svc.capacity_basis == "budget" and not serving.search_over_budget(s):
        return (
            "the capacity search could not finish within this shared server's time or memory "
            "for one page (the Serving page gives the whatif eval command that runs it), so "
            "one request's figures stand in: "
            f"{svc.capacity_per_s:,.2f} requests/s at batch {s.batch}; {timing}."
        )
    if svc.capacity_basis == "budget":
        return (
            f"sizing a replica would simulate about "
            f"{serving.predicted_steps(s, search_only=True):,.0f} engine steps "
            f"({serving.predicted_work(s, search_only=True):,.0f} steps' worth of work), more "
            f"than the {serving.SERVER_MAX_STEPS:,} steps or {serving.SERVER_MAX_WORK:,} this "
            "shared server runs for one "
            "page (the Serving page gives the whatif eval command that runs it), so one "
            "request's figures stand in: "
            f"{svc.capacity_per_s:,.2f} requests/s at batch {s.batch}; {timing}."
        )
    return (
        f"the scenario cannot serve, so one request's figures stand in: "
        f"{svc.capacity_per_s:,.2f} requests/s at batch {s.batch}; {timing}."
    )


def _usd(x: float) -> str:
    return f"${x:,.2f}" if x >= 0.01 else f"${x:.2g}"


def _penalty(v: View) -> str:
    """Where the recommendation turns with the SLA penalty (its default is illustrative)."""
    eco, s = _eco(v), v.s
    best = STRATEGY_NAMES[eco["recommended"]]
    lo, hi = eco["penalty_flip_down_usd"], eco["penalty_flip_up_usd"]
    span = f"from {_usd(lo)}" if lo is not None else "from $0"
    span += f" to {_usd(hi)} per missed SLA" if hi is not None else " per missed SLA upwards"
    text = f"The recommendation ({best}) holds for a penalty {span}"
    if hi is not None:
        text += f"; above {_usd(hi)} {STRATEGY_NAMES[eco['penalty_flip_up_to']]} wins"
    if lo is not None:
        text += f"; below {_usd(lo)} {STRATEGY_NAMES[eco['penalty_flip_down_to']]} does"
    return (
        text + f". This scenario's {_usd(s.sla_penalty_usd)} per miss is an assumption, not a "
        "measured figure: set what a late request costs you under Penalty per miss."
    )


def _optimised(v: View) -> str:
    changes = optimised_changes(v.s)
    if not changes:
        return "The optimised start is this scenario's own: it has every optimisation already."
    return (
        "Scale to zero with the optimised start assumes what this scenario does not have: "
        + ", ".join(changes)
        + " (the Cold start lens's optimised column)."
    )


def _break_even(v: View):
    svc = v.r["service"]
    return economics_charts.break_even_figure(
        v.r["break_even"],
        svc.cold_s,
        svc.cold_optimised_s,
        _eco(v)["break_even_cold_start_s"] or None,
        _eco(v)["cold_start_range_s"],
    )


PAGE = Page(
    key="scale_to_zero",
    file="pages/5_Scale_to_zero.py",
    label="Scale to zero",
    icon=":material/bedtime:",
    emoji="💤",
    tabs=(
        "Strategies",
        "Idle timeout",
        "The day",
        "Break-even",
        "Downloads",
    ),
    tab_key="t_economics",
    batch=False,
)


SCALE_TO_ZERO = Lens(
    page=PAGE,
    order=4,
    title="Scale to zero",
    slug="scale-to-zero",
    compute=lambda s, trace=None: economics_lens(s, trace, serving_worker.search(s)),
    page_compute=lambda s, baseline: economics_view.lens(s, baseline=baseline),
    figures=lambda r: economics_figures(r["figures"]),
    metrics={"headline": STRATEGY},
    charts=(
        Chart("strategies", lambda v: economics_charts.strategies_figure(_eco(v))),
        Chart(
            "idle-timeout",
            lambda v: economics_charts.timeout_figure(
                v.r["timeout_sweep"], _eco(v)["warm"]["total_usd_per_day"], v.s.idle_timeout_s
            ),
        ),
        Chart("the-day", lambda v: economics_charts.timeline_figure(v.r["timeline"]), report="day"),
        Chart("break-even", _break_even),
    ),
    tables=(
        Table(
            "strategies",
            lambda v: strategy_table(_eco(v)),
            columns={"strategy": Column("strategy", width="medium")},
            report="Strategies",
            download="Strategies",
        ),
    ),
    downloads=("strategies",),
    rows=(
        Row("Scale to zero", "Recommended strategy", "economics.recommended", better=None),
        Row("Scale to zero", "Cost per day (recommended)", "economics.best_total_usd_per_day", "$"),
        Row("Scale to zero", "Cold starts per day", "economics.best_cold_starts_per_day", ""),
    ),
    texts={
        "service": _service,
        "cold-range": _cold_range,
        "penalty": _penalty,
        "optimised": _optimised,
        "rule": "The rule of thumb: keep warm when the idle GPU cost in the "
        "troughs is lower than the cost of missing the SLA at every start-up; scale to zero "
        "when troughs are long and the optimised cold start fits the tolerance.",
    },
)
