"""A pinned baseline drawn in a chart: its traces dashed and labelled over the scenario's, or,
where an overlay would mislead (stacked or floating bars, heatmaps), its own chart beneath.

Pure functions over the chart builders' specs (:class:`ui.chart_common.SpecFigure`); no
streamlit here.
"""

from __future__ import annotations

import copy

from ui.chart_common import SpecFigure, figure

BASELINE_GROUP = "baseline"
BASELINE_LABEL = "baseline"


def can_overlay(fig: SpecFigure) -> bool:
    """Whether the baseline's traces can share the scenario's axes: lines and markers, and
    bars side by side; not stacked or floating bars (a second stack would read as more), nor
    heatmaps or pies."""
    layout = fig.spec["layout"]
    for trace in fig.spec["data"]:
        kind = trace.get("type", "scatter")
        if kind == "bar":
            if layout.get("barmode") in ("stack", "relative", "overlay") or "base" in trace:
                return False
        elif kind not in ("scatter", "scattergl"):
            return False
    return True


def _dashed(trace: dict, first: bool) -> dict:
    t = copy.deepcopy(trace)
    name = t.get("name") or ""
    t["name"] = f"{BASELINE_LABEL} · {name}" if name else BASELINE_LABEL
    t["legendgroup"] = BASELINE_GROUP
    t["showlegend"] = trace.get("showlegend", True) is not False
    if first:
        t["legendgrouptitle"] = {"text": "Baseline (dashed):"}
    t["opacity"] = 0.6
    kind = t.get("type", "scatter")
    if kind == "bar":
        marker = dict(t.get("marker") or {})
        marker["pattern"] = {"shape": "/", "solidity": 0.4}
        t["marker"] = marker
        t["offsetgroup"] = BASELINE_GROUP
    else:
        if t.get("fill") not in (None, "none"):
            t["fill"] = "none"  # the baseline's stacked or filled areas as dashed outlines
        if "stackgroup" in t:
            t["stackgroup"] = f"{BASELINE_GROUP}-{t['stackgroup']}"  # stacked among its own
        line = dict(t.get("line") or {})
        line["dash"] = "dash"
        line.setdefault("width", 1.5)
        t["line"] = line
        marker = dict(t.get("marker") or {})
        if "symbol" not in marker or marker["symbol"] in ("circle", 0):
            marker["symbol"] = "circle-open"
        t["marker"] = marker
    for key in ("text", "texttemplate"):
        t.pop(key, None)  # the scenario's direct labels only, never two of them
    if t.get("mode"):
        t["mode"] = "+".join(m for m in t["mode"].split("+") if m != "text") or "lines"
    return t


def overlay(fig: SpecFigure, base: SpecFigure) -> SpecFigure:
    """``fig`` with ``base``'s traces added after its own, dashed, faded and named
    "baseline · …" in their own legend group; the scenario's shapes and labels only."""
    extra = [_dashed(t, i == 0) for i, t in enumerate(base.spec["data"])]
    layout = copy.deepcopy(fig.spec["layout"])
    legend = dict(layout.get("legend") or {})
    legend["groupclick"] = "togglegroup"
    layout["legend"] = legend
    return figure(list(fig.spec["data"]) + extra, layout)


def titled_baseline(base: SpecFigure, height: int = 380) -> SpecFigure:
    """The baseline's own chart, its title marked "Baseline:", a little shorter than the
    scenario's (drawn beneath it)."""
    layout = copy.deepcopy(base.spec["layout"])
    title = layout.get("title") or {}
    text = title.get("text", "") if isinstance(title, dict) else str(title)
    layout["title"] = {**(title if isinstance(title, dict) else {}), "text": f"Baseline: {text}"}
    layout["height"] = min(int(layout.get("height", height)), height)
    return figure(copy.deepcopy(base.spec["data"]), layout)
