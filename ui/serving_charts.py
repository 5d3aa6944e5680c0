"""Charts of the Serving lens (SPEC 4.6): latency and throughput against the request rate
(the benchmark-report curve, with the SLO, the capacity and the knee marked), one run's
timeline (batch, queue, KV-cache use) and the Pareto front of tok/s per GPU against tok/s per
user. Plain functions from :func:`model.serving.serving_lens`'s result to figures."""

from __future__ import annotations

import numpy as np

from model import serving
from ui.chart_common import (
    BLUE,
    GREEN,
    ORANGE,
    VERMILLION,
    add_marks,
    as_list,
    base_layout,
    figure,
    right_axis,
)


def _finite(a) -> list:
    return [None if v is None or v != v else float(v) for v in np.asarray(a, dtype=float)]


def load_figure(sweep: dict, cap: dict, slo: dict):
    """p50/p99 TTFT and TPOT (left, log) and request throughput (right) against the offered
    request rate; the SLOs as horizontal lines; the capacity within the SLO and the knee as
    vertical marks."""
    x = as_list(sweep["request_rate"])
    data = []
    for key, name, colour, symbol in (
        ("median_ttft_ms", "TTFT p50", BLUE, "circle"),
        ("p99_ttft_ms", "TTFT p99", BLUE, "circle-open"),
        ("median_tpot_ms", "TPOT p50", ORANGE, "square"),
        ("p99_tpot_ms", "TPOT p99", ORANGE, "square-open"),
    ):
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "x": x,
                "y": _finite(sweep[key]),
                "name": f"{name} [ms]",
                "line": {"color": colour, "width": 2},
                "marker": {"symbol": symbol, "size": 8, "line": {"width": 2, "color": colour}},
            }
        )
    data.append(
        {
            "type": "scatter",
            "mode": "lines+markers",
            "x": x,
            "y": _finite(sweep["request_throughput"]),
            "name": "served [req/s] (right)",
            "yaxis": "y2",
            "line": {"color": GREEN, "width": 2},
            "marker": {"symbol": "triangle-up", "size": 8},
        }
    )
    for value, name in ((slo["ttft_slo_ms"], "TTFT SLO"), (slo["tpot_slo_ms"], "TPOT SLO")):
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "x": [x[0], x[-1]],
                "y": [value, value],
                "name": f"{name} {value:g} ms",
                "line": {"color": VERMILLION, "width": 1, "dash": "dot"},
            }
        )
    layout = base_layout(
        "Latency and throughput against the request rate (one replica)",
        legend_rows=3,
        xaxis={"title": {"text": "offered request rate [req/s]"}, "rangemode": "tozero"},
        yaxis={"title": {"text": "latency [ms]"}, "type": "log"},
        yaxis2=right_axis("served request rate [req/s]"),
    )
    marks = []
    if cap.get("max_request_rate"):
        r = cap["max_request_rate"]
        marks.append((r, f"within SLO: {r:.3g} req/s", {"color": VERMILLION, "width": 1.5}))
    if cap.get("knee_request_rate"):
        r = cap["knee_request_rate"]
        marks.append((r, f"knee: {r:.3g} req/s", {"color": "#777777", "width": 1.5}))
    return figure(data, add_marks(layout, marks, span=(x[0], x[-1])) if marks else layout)


def timeline_figure(tl: dict, max_num_seqs: int):
    """One run: running sequences and queued requests (left) and KV-cache use (right) over
    time."""
    t = as_list(tl["t_s"])
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "x": t,
            "y": as_list(tl["batch"]),
            "name": "sequences in the step",
            "line": {"color": BLUE, "width": 1.5},
        },
        {
            "type": "scatter",
            "mode": "lines",
            "x": t,
            "y": as_list(tl["queue"]),
            "name": "queued (arrived, not started)",
            "line": {"color": ORANGE, "width": 1.5, "dash": "dot"},
        },
        {
            "type": "scatter",
            "mode": "lines",
            "x": t,
            "y": as_list(np.asarray(tl["kv_cache_usage"]) * 100),
            "name": "KV cache in use [%] (right)",
            "yaxis": "y2",
            "line": {"color": GREEN, "width": 1.5},
        },
    ]
    layout = base_layout(
        f"One run: batch, queue and KV cache over time (max_num_seqs {max_num_seqs:,})",
        legend_rows=2,
        xaxis={"title": {"text": "time since the first request [s]"}},
        yaxis={"title": {"text": "requests"}, "rangemode": "tozero"},
        yaxis2={**right_axis("KV cache in use [%]"), "range": [0, 100]},
    )
    return figure(data, layout)


def pareto_figure(points: list[dict], current: dict, target_per_user: float | None = None):
    """Output tok/s per GPU against tok/s per user: a line per TP × weights dtype across
    ``max_num_seqs`` (labelled), the front dashed, the scenario's own configuration ringed,
    and, at ``target_per_user`` (1000 / the TPOT SLO), the best configuration read off
    (issue 40, item 5). A log x axis with a label at every decade."""
    symbols = {"bf16": "circle", "fp8": "square", "int4": "diamond", "fp4": "triangle-up"}
    colours = {1: BLUE, 2: ORANGE, 4: GREEN, 8: VERMILLION}
    dashes = {"bf16": "solid", "fp8": "dot", "int4": "dashdot", "fp4": "longdash"}
    data = []
    front = sorted((p for p in points if p["front"]), key=lambda p: p["tokens_per_s_per_user"])
    if front:
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "x": [p["tokens_per_s_per_user"] for p in front],
                "y": [p["tokens_per_s_per_gpu"] for p in front],
                "name": "Pareto front",
                "line": {"color": "#777777", "width": 4, "dash": "solid"},
                "opacity": 0.35,
            }
        )
    for split in (False, True):
        one = [p for p in points if bool(p.get("disaggregated")) == split]

        def layout(p: dict) -> str:
            return p.get("layout") or f"TP {p['gpus']}"

        groups = sorted({(p["decode_gpus"], "") if split else (p["gpus"], layout(p)) for p in one})
        for tp, lay in groups:
            for dtype in sorted({p["weights_dtype"] for p in one}):
                pts = [
                    p
                    for p in one
                    if (p["decode_gpus"] == tp if split else (p["gpus"], layout(p)) == (tp, lay))
                    and p["weights_dtype"] == dtype
                ]
                if not pts:
                    continue
                pts.sort(key=lambda p: p["tokens_per_s_per_user"])
                ep = "· EP" in lay
                name = f"P/D, decode TP {tp} · {dtype}" if split else f"{lay} · {dtype}"
                data.append(
                    {
                        "type": "scatter",
                        "mode": "lines+markers+text",
                        "x": [p["tokens_per_s_per_user"] for p in pts],
                        "y": [p["tokens_per_s_per_gpu"] for p in pts],
                        "text": [str(p["max_num_seqs"]) for p in pts],
                        "textposition": "top center",
                        "textfont": {"size": 10},
                        "name": name,
                        "line": {
                            "color": colours.get(tp),
                            "width": 3 if ep else 1.5,
                            "dash": "dash" if split else dashes.get(dtype),
                        },
                        "marker": {
                            "symbol": "x"
                            if split
                            else symbols.get(dtype, "circle") + ("-open" if ep else ""),
                            "size": 10 if split else 9,
                            "color": colours.get(tp),
                        },
                        "hovertemplate": "%{meta} · max_num_seqs %{text}<br>"
                        "%{x:.1f} tok/s per user, %{y:.0f} tok/s per GPU<extra></extra>",
                        "meta": name,
                    }
                )

    def is_mine(p: dict) -> bool:
        if bool(p.get("disaggregated")) != bool(current.get("disaggregated")):
            return False
        if p.get("disaggregated"):
            same = p["decode_gpus"] == current["decode_gpus"]
        else:
            same = p["gpus"] == current.get("gpus_total", current["gpus"]) and (
                p.get("layout") or f"TP {p['gpus']}"
            ) == current.get("layout", p.get("layout") or f"TP {p['gpus']}")
        return (
            same
            and p["weights_dtype"] == current["weights_dtype"]
            and p["max_num_seqs"] == current["max_num_seqs"]
        )

    mine = [p for p in points if is_mine(p)]
    if mine:
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "x": [mine[0]["tokens_per_s_per_user"]],
                "y": [mine[0]["tokens_per_s_per_gpu"]],
                "name": "this scenario's configuration",
                "marker": {
                    "symbol": "circle-open",
                    "size": 22,
                    "color": "#777777",
                    "line": {"width": 2},
                },
            }
        )
    best = serving.pareto_best(points, target_per_user) if target_per_user else None
    if best is not None:
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "x": [best["tokens_per_s_per_user"]],
                "y": [best["tokens_per_s_per_gpu"]],
                "name": f"best at ≥ {target_per_user:.3g} tok/s per user (the TPOT SLO)",
                "marker": {
                    "symbol": "star",
                    "size": 17,
                    "color": "#222222",
                    "line": {"color": "#ffffff", "width": 1},
                },
            }
        )
    xs = [p["tokens_per_s_per_user"] for p in points if p["tokens_per_s_per_user"] > 0]
    lo = np.floor(np.log10(min(xs))) if xs else 0.0
    hi = np.ceil(np.log10(max(xs + ([target_per_user] if target_per_user else [])))) if xs else 3.0
    layout = base_layout(
        "Throughput per GPU against speed per user (a line per layout × dtype, labels: max_num_seqs)",
        legend_rows=3,
        xaxis={
            "title": {"text": "tok/s per user (1000 / mean TPOT)"},
            "type": "log",
            "dtick": 1,  # a label at every decade: 1, 10, 100
            "range": [float(lo) - 0.05, float(max(hi, lo + 1)) + 0.05],
        },
        yaxis={"title": {"text": "output tok/s per GPU"}, "rangemode": "tozero"},
    )
    if target_per_user:
        line = {"color": "#777777", "width": 1.5, "dash": "dot"}
        where = (
            f"P/D decode TP {best['decode_gpus']}"
            if best is not None and best.get("disaggregated")
            else best.get("layout") or f"TP {best['gpus']}"
            if best is not None
            else ""
        )
        read = (
            f": best {best['tokens_per_s_per_gpu']:,.0f} tok/s per GPU at {where} · "
            f"{best['weights_dtype']} · max_num_seqs {best['max_num_seqs']}"
            if best is not None
            else ": no configuration is that fast"
        )
        text = f"TPOT SLO, {target_per_user:.3g} tok/s per user{read}"
        add_marks(layout, [(target_per_user, text, line)], log=True)
    return figure(data, layout)


_RUN_STYLE = {
    "median_ttft_ms": (BLUE, "diamond"),
    "p99_ttft_ms": (BLUE, "diamond-open"),
    "median_tpot_ms": (ORANGE, "diamond"),
    "p99_tpot_ms": (ORANGE, "diamond-open"),
}


def with_runs(fig, runs: list[dict]):
    """``fig`` (:func:`load_figure`) with measured benchmark figures as diamonds, coloured as
    the curve of the same figure, one legend entry per figure kind."""
    if not runs:
        return fig
    spec = fig.spec
    data = list(spec["data"])
    for key, (colour, symbol) in _RUN_STYLE.items():
        pts = [r for r in runs if r["figure"] == key]
        if not pts:
            continue
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "x": [p["request_rate"] for p in pts],
                "y": [p["value"] for p in pts],
                "text": [p["label"] for p in pts],
                "hovertemplate": "%{text}: %{y:.4g} ms<extra></extra>",
                "name": f"measured {key.split('_')[0].replace('median', 'p50')} "
                f"{key.split('_')[1].upper()}",
                "marker": {
                    "symbol": symbol,
                    "size": 12,
                    "color": colour,
                    "line": {"width": 2, "color": VERMILLION},
                },
            }
        )
    layout = {**spec["layout"], "xaxis": dict(spec["layout"].get("xaxis", {}))}
    rng = layout["xaxis"].get("range")
    top = max(r["request_rate"] for r in runs)
    if rng and top > rng[1]:  # the marks fixed the axis to the sweep: widen it to the runs
        layout["xaxis"]["range"] = [rng[0], top * 1.05]
    return figure(data, layout)


def with_pareto_runs(fig, runs: list[dict]):
    """``fig`` (:func:`pareto_figure`) with measured serving runs as diamonds
    (:func:`model.serving.benchmark_pareto_points`)."""
    if not runs:
        return fig
    spec = fig.spec
    data = [
        *spec["data"],
        {
            "type": "scatter",
            "mode": "markers",
            "x": [r["tokens_per_s_per_user"] for r in runs],
            "y": [r["tokens_per_s_per_gpu"] for r in runs],
            "text": [r["label"] for r in runs],
            "hovertemplate": "%{text}<br>%{x:.1f} tok/s per user, %{y:.0f} tok/s per GPU"
            "<extra></extra>",
            "name": "measured (uploaded runs)",
            "marker": {
                "symbol": "diamond",
                "size": 12,
                "color": "rgba(0,0,0,0)",
                "line": {"width": 2, "color": VERMILLION},
            },
        },
    ]
    return figure(data, spec["layout"])


def speculative_figure(sw: dict, method: str, max_batch: int | None, batch: int):
    """Speculative decoding against none over the batch (issue 42): output tok/s of both
    (left, log) and their ratio (right), the crossover batch above which speculation stops
    paying marked, and the scenario's batch and the largest that fits."""
    x = as_list(sw["batch"])
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "x": x,
            "y": _finite(sw["plain_tokens_per_s"]),
            "name": "output tok/s, no speculation",
            "line": {"color": "#777777", "width": 2, "dash": "dot"},
        },
        {
            "type": "scatter",
            "mode": "lines",
            "x": x,
            "y": _finite(sw["tokens_per_s"]),
            "name": f"output tok/s, {method}",
            "line": {"color": BLUE, "width": 2},
        },
        {
            "type": "scatter",
            "mode": "lines",
            "x": x,
            "y": _finite(sw["speedup"]),
            "name": "speed-up (right)",
            "yaxis": "y2",
            "line": {"color": ORANGE, "width": 2.5},
        },
        {
            "type": "scatter",
            "mode": "lines",
            "x": [x[0], x[-1]],
            "y": [1.0, 1.0],
            "name": "speed-up 1× (right)",
            "yaxis": "y2",
            "line": {"color": VERMILLION, "width": 1, "dash": "dot"},
        },
    ]
    top = max(float(np.nanmax(np.asarray(sw["speedup"], dtype=float))), 1.0)
    layout = base_layout(
        "Speculative decoding against none: decode throughput over the batch",
        legend_rows=2,
        xaxis={"title": {"text": "sequences in the decode step (batch)"}, "type": "log"},
        yaxis={"title": {"text": "output tok/s (one replica)"}, "type": "log"},
        yaxis2={**right_axis("speed-up [×]"), "range": [0, top * 1.1]},
    )
    marks = [
        (
            sw["crossover_batch"],
            f"stops paying: batch {sw['crossover_batch']:.0f}"
            if sw["crossover_batch"] is not None
            else "",
            {"color": VERMILLION, "width": 1.5},
        ),
        (
            float(batch),
            f"scenario's batch {batch:,}",
            {"color": GREEN, "width": 1.5, "dash": "dash"},
        ),
        (
            float(max_batch) if max_batch else None,
            f"largest batch that fits: {max_batch:,}" if max_batch else "",
            {"color": "#777777", "width": 1.5, "dash": "dash"},
        ),
    ]
    return figure(data, add_marks(layout, marks, log=True, span=(x[0], x[-1])))


def disagg_figure(view: dict, rate: float | None):
    """GPUs against the request rate within the SLO (issue 42 §2, AIConfigurator's headline
    comparison): replicas of one engine (aggregated), replicas of the xPyD as set (or the 1P1D
    preview), and the prefill and decode pools scaled apart; the scenario's rate marked."""
    c = view["curve"]
    x = as_list(c["request_rate"])
    split = view["as_set"]
    name = (
        f"{split['prefill_instances']}P{split['decode_instances']}D replicas "
        f"({view['as_set_gpus_per_replica']} GPUs each)" + (", preview" if view["preview"] else "")
    )
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "x": x,
            "y": _finite(c["aggregated_gpus"]),
            "name": f"aggregated replicas ({view['aggregated_gpus_per_replica']} GPUs each)",
            "line": {"color": "#777777", "width": 2, "shape": "hv"},
        },
        {
            "type": "scatter",
            "mode": "lines",
            "x": x,
            "y": _finite(c["as_set_gpus"]),
            "name": name,
            "line": {"color": BLUE, "width": 2, "shape": "hv"},
        },
        {
            "type": "scatter",
            "mode": "lines",
            "x": x,
            "y": _finite(c["pools_gpus"]),
            "name": "prefill and decode pools scaled apart",
            "line": {"color": ORANGE, "width": 2, "dash": "dot", "shape": "hv"},
        },
    ]
    layout = base_layout(
        "GPUs a request rate needs within the SLO: aggregated against disaggregated",
        legend_rows=2,
        xaxis={"title": {"text": "request rate [req/s]"}, "rangemode": "tozero"},
        yaxis={"title": {"text": "GPUs"}, "rangemode": "tozero"},
    )
    marks = [
        (
            rate,
            f"scenario's rate {rate:.3g} req/s" if rate is not None else "",
            {"color": GREEN, "width": 1.5, "dash": "dash"},
        )
    ]
    return figure(data, add_marks(layout, marks, span=(0.0, x[-1])))


def parallel_figure(curves: list[dict]):
    """Replica output tok/s against the sequences in flight (all ranks) for each layout of
    the replica's GPUs (issue 42 §3, :func:`model.layouts.curves`): tensor parallel, with
    expert parallelism, data-parallel ranks; each line ends at the most its KV cache holds."""
    colours = [BLUE, ORANGE, GREEN, VERMILLION, "#777777"]
    data = []
    for i, c in enumerate(x for x in curves if x["fits"]):
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "x": as_list(c["sequences"]),
                "y": _finite(c["tokens_per_s"]),
                "name": f"{c['layout']} ({c['gpus']} GPUs)",
                "line": {"color": colours[i % len(colours)], "width": 2},
                "hovertemplate": "%{x:,} sequences: %{y:,.0f} tok/s<extra>%{fullData.name}</extra>",
            }
        )
    layout = base_layout(
        "Decode throughput of the replica's GPUs by layout, against the sequences in flight",
        legend_rows=2,
        xaxis={"title": {"text": "sequences in flight (all ranks)"}, "type": "log"},
        yaxis={"title": {"text": "output tok/s (one replica)"}, "rangemode": "tozero"},
    )
    return figure(data, layout)
