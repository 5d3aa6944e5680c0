"""Published tensor-parallel against data- and expert-parallel serving runs
(tests/data/published_parallel.csv) through the core (issue 42, section 3).

Each row is one figure of one side of a published pair on the same GPUs and load: tensor
parallel (``tp``) against data-parallel ranks (``dp``, with ``expert_parallel`` as the row
says) or expert parallelism for the MoE layers alone (``ep``). The lever check is each pair's
ratio against the model's; the absolute check includes the engine's own error.

Rows marked ``seen`` were run before the profiles' ``api_servers_per_dp_rank`` was set (SGLang's
one front end for every rank, vLLM's one per rank; both sourced from the engines' code): they
informed that choice, so they are reported apart from the ``held_out`` rows, which chose
nothing. ``--write`` rewrites the table in ``docs/parallelism.md``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from model import serving
from model.overrides import resolve
from tools.published_pairs import error_stats, lever_ratios, pct, read_rows, write_between

TABLE = Path(__file__).parent.parent / "tests" / "data" / "published_parallel.csv"
PAGE = Path(__file__).parent.parent / "docs" / "parallelism.md"
BEGIN, END = "<!-- published-parallel: begin -->", "<!-- published-parallel: end -->"
SPLITS = ("held_out", "seen")


def rows() -> list[dict]:
    return read_rows(TABLE)


def scenario_of(row: dict):
    pairs = [
        ("model", row["model"]),
        ("hardware", row["gpu"]),
        ("weights_dtype", row["weights_dtype"]),
        ("engine", row["engine"]),
        ("gpus", row["gpus"]),
        ("data_parallel", row["data_parallel"]),
        ("expert_parallel", row["expert_parallel"]),
        ("lengths", row["lengths"]),
        ("prompt_tokens", row["prompt_tokens"]),
        ("output_tokens", row["output_tokens"]),
        ("request_rate", row["request_rate"]),
        ("num_requests", row["num_requests"]),
    ]
    return resolve(pairs, strict=True)[0]


_RUNS: dict[str, dict] = {}


def predict(row: dict) -> float:
    s = scenario_of(row)
    key = s.raw.model_dump_json()
    if key not in _RUNS:
        _RUNS[key] = serving.run(s)["figures"]
    return float(_RUNS[key][row["metric"]])


def compare() -> tuple[list[dict], list[dict]]:
    """(absolute records, lever records)."""
    figures = []
    for row in rows():
        got, want = predict(row), float(row["value"])
        figures.append(
            {
                "id": row["id"],
                "pair": row["pair"],
                "side": row["side"],
                "split": row["split"],
                "metric": row["metric"],
                "measured": want,
                "predicted": got,
                "error": abs(got - want) / want,
                "row": row,
            }
        )
    levers = lever_ratios(figures, "tp")
    return figures, levers


def summary(figures: list[dict], levers: list[dict]) -> dict:
    return {
        split: {
            "lever": error_stats([r for r in levers if r["split"] == split]),
            "absolute": error_stats([r for r in figures if r["split"] == split]),
        }
        for split in SPLITS
    }


def page_table(figures: list[dict], levers: list[dict]) -> str:
    summ = summary(figures, levers)
    lines = ["| figures | n | median \\|error\\| | worst |", "|---|---|---|---|"]
    for split, name in (("held_out", "held out"), ("seen", "seen (informed a choice)")):
        for kind in ("lever", "absolute"):
            s = summ[split][kind]
            label = f"{name}: {'lever, DP or EP ÷ TP' if kind == 'lever' else 'absolute'}"
            lines.append(f"| {label} | {s['n']} | {pct(s['median'])} | {pct(s['worst'])} |")
    lines += [
        "",
        "| pair | split | metric | measured ratio | modelled ratio | error |",
        "|---|---|---|---|---|---|",
    ]
    for r in sorted(levers, key=lambda r: (r["split"] != "held_out", r["id"])):
        lines.append(
            f"| {r['id']} | {r['split'].replace('_', ' ')} | {r['metric']} | "
            f"{r['measured']:.2f}× | {r['predicted']:.2f}× | {pct(r['error'])} |"
        )
    lines += [
        "",
        "| id | split | model | GPUs | layout | engine | metric | measured | modelled | error "
        "| source |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(figures, key=lambda r: r["id"]):
        w = r["row"]
        tp, dp = int(w["gpus"]), int(w["data_parallel"])
        layout = serving.layout_name(tp, dp, w["expert_parallel"] == "true")
        lines.append(
            f"| {w['id']} | {r['split'].replace('_', ' ')} | {w['model']} | {tp * dp}× {w['gpu']} "
            f"| {layout} | {w['engine']} | {r['metric']} | {r['measured']:,.1f} | "
            f"{r['predicted']:,.1f} | {pct(r['error'])} | {w['source']} |"
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
            f"{r['id']:4} {r['pair']:4} {r['side']:3} {r['split']:9} {r['metric']:18} measured "
            f"{r['measured']:9.1f} model {r['predicted']:9.1f} err {100 * r['error']:6.1f} %"
        )
    for r in levers:
        print(
            f"{r['id']:8} {r['split']:9} {r['metric']:18} ratio measured {r['measured']:.2f} "
            f"model {r['predicted']:.2f} err {100 * r['error']:.1f} %"
        )
    print(summary(figures, levers))
    if a.write:
        write()


if __name__ == "__main__":
    main()
