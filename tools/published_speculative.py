"""Published speculative-decoding speed-ups (tests/data/published_speculative.csv) through the
core (issue 42, section 1).

Each row's facts (model, GPU and count, dtype, engine profile, method, k, batch, context) are
set; a row that states its measured mean acceptance length sets α from it (as a user who
measured it would: ``spec_acceptance_length``), the others keep the
method's published default. The predicted speed-up is the decode throughput with the method
over the same scenario with ``speculative=none`` at the row's batch.

Rows marked ``in_sample`` are those the methods' ``verify_us`` and ``draft_step_us`` were
fitted on (``python -m tools.published_speculative --fit``); ``held_out`` rows were used by
nothing. ``--write`` rewrites the table in ``docs/speculative.md``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from model import decode
from model.overrides import resolve
from tools.published_pairs import error_stats, pct, read_rows, write_between

TABLE = Path(__file__).parent.parent / "tests" / "data" / "published_speculative.csv"
PAGE = Path(__file__).parent.parent / "docs" / "speculative.md"
BEGIN, END = "<!-- published-speculative: begin -->", "<!-- published-speculative: end -->"


def rows() -> list[dict]:
    return read_rows(TABLE)


def scenario_of(row: dict, method: str | None = None):
    """The row's scenario, with its method (or ``method``: ``none`` for the plain run)."""
    k = int(row["k"])
    pairs = [
        ("model", row["model"]),
        ("hardware", row["gpu"]),
        ("gpus", row["gpus"]),
        ("weights_dtype", row["weights_dtype"]),
        ("engine", row["engine"]),
        ("batch", row["batch"]),
        ("context_tokens", row["context_tokens"]),
        ("speculative", method or row["method"]),
    ]
    if (method or row["method"]) != "none":
        pairs.append(("num_speculative_tokens", str(k)))
        if row["acceptance_length"]:
            tau = min(float(row["acceptance_length"]), k + 1 - 1e-6)
            pairs.append(("spec_acceptance_length", f"{tau:g}"))
    return resolve(pairs, strict=True)[0]


def predict(row: dict) -> float:
    """The modelled speed-up of the row: tok/s with its method over tok/s without."""
    b = [int(row["batch"])]
    spec = decode.sweep(scenario_of(row), b)["tokens_per_s"][0]
    plain = decode.sweep(scenario_of(row, "none"), b)["tokens_per_s"][0]
    return float(spec / plain)


def compare() -> list[dict]:
    out = []
    for row in rows():
        got = predict(row)
        want = float(row["value"])
        out.append(
            {
                "id": row["id"],
                "split": row["split"],
                "method": row["method"],
                "batch": int(row["batch"]),
                "measured": want,
                "predicted": got,
                "error": abs(got - want) / want,
                "row": row,
            }
        )
    return out


def summary(records: list[dict]) -> dict:
    return {
        split: error_stats([r for r in records if r["split"] == split])
        for split in ("in_sample", "held_out")
    }


def page_table(records: list[dict]) -> str:
    summ = summary(records)
    lines = [
        "| rows | n | median \\|error\\| | worst |",
        "|---|---|---|---|",
    ]
    for split, name in (("in_sample", "in-sample (fitted on)"), ("held_out", "held out")):
        s = summ[split]
        lines.append(f"| {name} | {s['n']} | {pct(s['median'])} | {pct(s['worst'])} |")
    lines += [
        "",
        "| id | split | model | GPUs | method | k | batch | measured AL | measured | modelled "
        "| error | source |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(records, key=lambda r: (r["split"] != "held_out", -r["error"])):
        w = r["row"]
        lines.append(
            f"| {w['id']} | {r['split'].replace('_', ' ')} | {w['model']} | {w['gpus']}× "
            f"{w['gpu']} | {w['method']} | {w['k']} | {w['batch']} | "
            f"{w['acceptance_length'] or 'default'} | {r['measured']:.2f}× | "
            f"{r['predicted']:.2f}× | {pct(r['error'])} | {w['source']} |"
        )
    return "\n".join(lines)


def write() -> dict:
    records = compare()
    write_between(PAGE, BEGIN, END, page_table(records))
    return summary(records)


def fit(grid_verify=range(0, 2001, 50), grid_draft=range(0, 1501, 50)) -> tuple[int, int]:
    """The (verify_us, draft_step_us) pair, shared by the methods whose proposer is a model
    forward, that minimises the median |error| of the in-sample rows (a grid search)."""
    from model.speculative import methods

    fitted = [r for r in rows() if r["split"] == "in_sample"]
    best = None
    presets = methods()
    saved = {k: (v.verify_us, v.draft_step_us) for k, v in presets.items()}
    try:
        for v in grid_verify:
            for d in grid_draft:
                for p in presets.values():
                    object.__setattr__(p, "verify_us", float(v))
                    object.__setattr__(p, "draft_step_us", float(d) if p.drafter != "none" else 0.0)
                errs = [abs(predict(r) - float(r["value"])) / float(r["value"]) for r in fitted]
                score = (float(np.median(errs)), float(np.mean(errs)))
                if best is None or score < best[0]:
                    best = (score, v, d)
    finally:
        for k, (v, d) in saved.items():
            object.__setattr__(presets[k], "verify_us", v)
            object.__setattr__(presets[k], "draft_step_us", d)
    print(
        f"median {best[0][0]:.4f} mean {best[0][1]:.4f} at verify_us={best[1]} draft_step_us={best[2]}"
    )
    return best[1], best[2]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite the table in docs/speculative.md")
    ap.add_argument("--fit", action="store_true", help="grid-search verify_us and draft_step_us")
    a = ap.parse_args(argv)
    if a.fit:
        fit()
        return
    records = compare()
    for r in records:
        print(
            f"{r['id']:5} {r['split']:9} {r['method']:6} b={r['batch']:<4} "
            f"measured {r['measured']:.3f} model {r['predicted']:.3f} err {100 * r['error']:.1f} %"
        )
    print(summary(records))
    if a.write:
        write()


if __name__ == "__main__":
    main()
