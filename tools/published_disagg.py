"""Published disaggregated and aggregated serving runs (tests/data/published_disagg.csv) through
the core (issue 42, section 2).

Each row is one figure of one side of a published pair: the same model, GPUs and load served
aggregated (``instances`` replicas of ``gpus`` GPUs sharing the rate) and disaggregated
(``prefill_instances`` × ``prefill_gpus`` and ``decode_instances`` × ``decode_gpus``). The
aggregated side runs one replica at rate / instances with num_requests / instances (its
throughput times the instances); the disaggregated side runs the replica as set. Lengths are
the stated ones (fixed: the sources do not state a spread); the KV transfer rate is the
model's auto rate. Two checks come out:

- **absolute**: each figure against the model's;
- **lever**: each pair's ratio (disaggregated ÷ aggregated) against the model's ratio, what
  disaggregation changes, whatever the model's absolute error on the engine.

No number in the model was chosen from these rows: every row is held out (the rows were
transcribed, in docs/research/issue-42-disagg-sources.md, before the model was run on them).
``--write`` rewrites the table in ``docs/disaggregation.md``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from model import serving
from model.overrides import resolve
from tools.published_pairs import error_stats, lever_ratios, pct, read_rows, write_between

TABLE = Path(__file__).parent.parent / "tests" / "data" / "published_disagg.csv"
PAGE = Path(__file__).parent.parent / "docs" / "disaggregation.md"
BEGIN, END = "<!-- published-disagg: begin -->", "<!-- published-disagg: end -->"


def rows() -> list[dict]:
    return read_rows(TABLE)


def scenario_of(row: dict):
    """The row's scenario: one aggregated replica at its share of the rate, or the xPyD."""
    instances = int(row["instances"] or 1)
    agg = row["side"] == "aggregated"
    rate = float(row["request_rate"]) / (instances if agg else 1)
    n = max(1, round(int(row["num_requests"]) / (instances if agg else 1)))
    pairs = [
        ("model", row["model"]),
        ("hardware", row["gpu"]),
        ("weights_dtype", row["weights_dtype"]),
        ("engine", row["engine"]),
        ("gpus", row["gpus"]),
        ("prompt_tokens", row["prompt_tokens"]),
        ("output_tokens", row["output_tokens"]),
        ("request_rate", f"{rate:g}"),
        ("num_requests", str(n)),
        ("burstiness", row["burstiness"]),
    ]
    if not agg:
        pairs += [
            ("disaggregated", "true"),
            ("prefill_gpus", row["prefill_gpus"]),
            ("prefill_instances", row["prefill_instances"]),
            ("decode_gpus", row["decode_gpus"]),
            ("decode_instances", row["decode_instances"]),
        ]
    return resolve(pairs, strict=True)[0]


_RUNS: dict[tuple, dict] = {}


def predict(row: dict) -> float:
    """The modelled figure of the row (a run per scenario, shared by its figures)."""
    s = scenario_of(row)
    key = tuple(sorted(s.raw.model_dump(mode="json", exclude={"hardware", "model"}).items()))
    key += (s.model.id, s.hardware.id)
    if key not in _RUNS:
        _RUNS[key] = serving.run(s)["figures"]
    value = float(_RUNS[key][row["metric"]])
    if row["metric"] == "output_throughput" and row["side"] == "aggregated":
        value *= int(row["instances"] or 1)
    return value


def compare() -> tuple[list[dict], list[dict]]:
    """(absolute records, lever records): each figure, and each pair's ratio per metric."""
    figures = []
    for row in rows():
        got, want = predict(row), float(row["value"])
        figures.append(
            {
                "id": row["id"],
                "pair": row["pair"],
                "side": row["side"],
                "metric": row["metric"],
                "measured": want,
                "predicted": got,
                "error": abs(got - want) / want,
                "row": row,
            }
        )
    levers = lever_ratios(figures, "aggregated")
    return figures, levers


def summary(figures: list[dict], levers: list[dict]) -> dict:
    return {
        "absolute": error_stats(figures),
        "aggregated": error_stats([r for r in figures if r["side"] == "aggregated"]),
        "disaggregated": error_stats([r for r in figures if r["side"] == "disaggregated"]),
        "lever": error_stats(levers),
        "lever_direction_right": sum(r["direction"] for r in levers),
    }


def _fig(x: float, metric: str) -> str:
    return f"{x:,.0f}" if metric == "output_throughput" or x >= 100 else f"{x:.3g}"


def page_table(figures: list[dict], levers: list[dict]) -> str:
    summ = summary(figures, levers)
    lines = [
        "| figures (all held out) | n | median \\|error\\| | worst |",
        "|---|---|---|---|",
    ]
    for key, name in (
        ("lever", "lever: disaggregated ÷ aggregated"),
        ("absolute", "absolute: every figure"),
        ("aggregated", "absolute: aggregated side"),
        ("disaggregated", "absolute: disaggregated side"),
    ):
        s = summ[key]
        lines.append(f"| {name} | {s['n']} | {pct(s['median'])} | {pct(s['worst'])} |")
    lines += [
        "",
        f"The model moves the figure the way the source measured in "
        f"{summ['lever_direction_right']} of {summ['lever']['n']} pairs.",
        "",
        "| pair | metric | measured ratio | modelled ratio | error | same direction |",
        "|---|---|---|---|---|---|",
    ]
    for r in sorted(levers, key=lambda r: (r["pair"], r["metric"])):
        lines.append(
            f"| {r['id']} | {r['metric']} | {r['measured']:.2f}× | {r['predicted']:.2f}× | "
            f"{pct(r['error'])} | {'yes' if r['direction'] else 'no'} |"
        )
    lines += [
        "",
        "| id | side | model | GPUs | metric | measured | modelled | error | source |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(figures, key=lambda r: r["id"]):
        w = r["row"]
        gpus = (
            f"{w['instances']}× {w['gpus']}× {w['gpu']}"
            if r["side"] == "aggregated"
            else f"{w['prefill_instances']}P×{w['prefill_gpus']} + "
            f"{w['decode_instances']}D×{w['decode_gpus']} {w['gpu']}"
        )
        lines.append(
            f"| {w['id']} | {r['side']} | {w['model']} | {gpus} | {r['metric']} | "
            f"{_fig(r['measured'], r['metric'])} | {_fig(r['predicted'], r['metric'])} | "
            f"{pct(r['error'])} | {w['source']} |"
        )
    return "\n".join(lines)


def write() -> dict:
    figures, levers = compare()
    write_between(PAGE, BEGIN, END, page_table(figures, levers))
    return summary(figures, levers)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite the table in the docs page")
    a = ap.parse_args(argv)
    figures, levers = compare()
    for r in figures:
        print(
            f"{r['id']:4} {r['pair']:3} {r['side']:13} {r['metric']:18} measured "
            f"{r['measured']:10.2f} model {r['predicted']:10.2f} err {100 * r['error']:6.1f} %"
        )
    for r in levers:
        print(
            f"{r['id']:8} {r['metric']:18} ratio measured {r['measured']:.2f} model "
            f"{r['predicted']:.2f} err {100 * r['error']:.1f} % direction {r['direction']}"
        )
    print(summary(figures, levers))
    if a.write:
        write()


if __name__ == "__main__":
    main()
