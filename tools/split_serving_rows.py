"""Append transcribed serving rows to tests/data/published_serving.csv with their split.

Run once per batch, after the rows are transcribed and before any model figure is computed
for them (the DEVELOPERS' fidelity rule): runs are grouped by (engine, GPU, model), ordered
within a group by the SHA-256 of their run id, and alternate ``fit`` / ``held_out`` from a
start drawn by the group's own hash, so half of every group is held out and nobody chose which.

``python -m tools.split_serving_rows INCOMING.csv [...]`` prints what it would append;
``--write`` appends. Rows of an engine without a profile here (TensorRT-LLM) are dropped, and
so is a run whose values repeat a run already in the table or the batch (one page read twice).
"""

from __future__ import annotations

import csv
import hashlib
import sys
from collections import defaultdict
from pathlib import Path

TABLE = Path(__file__).resolve().parents[1] / "tests" / "data" / "published_serving.csv"
ENGINES = ("vllm", "sglang")
EXTRA = ("engine", "dataset", "range_ratio", "endpoint", "split")


def _h(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def run_id(row: dict) -> str:
    return row["notes"].split(";")[0].split()[0].removeprefix("run=")


def plan(paths: list[str]) -> tuple[list[str], list[dict]]:
    with TABLE.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        header = list(reader.fieldnames or [])
        old = list(reader)
    for col in EXTRA:
        if col not in header:
            header.append(col)
    seen = {(r["metric"], r["value"], r["model"], r["gpu"]) for r in old}
    known_runs = {run_id(r) for r in old}
    runs: dict[str, list[dict]] = defaultdict(list)
    for p in paths:
        with open(p, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                if row["engine"].strip().lower() not in ENGINES:
                    continue
                runs[run_id(row)].append(row)
    kept: dict[str, list[dict]] = {}
    for rid, rows in runs.items():
        keys = {(r["metric"], r["value"], r["model"], r["gpu"]) for r in rows}
        if rid in known_runs or keys & seen:
            continue  # the same run twice (two helpers read one page)
        seen |= keys
        kept[rid] = rows
    groups: dict[tuple, list[str]] = defaultdict(list)
    for rid, rows in kept.items():
        r = rows[0]
        groups[(r["engine"].lower(), r["gpu"], r["model"])].append(rid)
    split: dict[str, str] = {}
    for key, ids in groups.items():
        ids.sort(key=_h)
        start = int(_h("|".join(key)), 16) % 2
        for k, rid in enumerate(ids):
            split[rid] = "held_out" if (k + start) % 2 else "fit"
    next_id = max(int(r["id"]) for r in old) + 1
    out = []
    for rid, rows in kept.items():
        for r in rows:
            row = {c: r.get(c, "") for c in header}
            row["id"] = str(next_id)
            row["engine"] = r["engine"].lower()
            row["split"] = split[rid]
            next_id += 1
            out.append(row)
    return header, out


def main(argv: list[str]) -> int:
    paths = [a for a in argv if not a.startswith("--")]
    header, rows = plan(paths)
    splits = defaultdict(set)
    for r in rows:
        splits[r["split"]].add(run_id(r))
    print(f"{len(rows)} rows, runs: " + ", ".join(f"{k} {len(v)}" for k, v in splits.items()))
    if "--write" in argv:
        with TABLE.open(newline="", encoding="utf-8") as f:
            old = list(csv.DictReader(f))
        with TABLE.open("w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=header, lineterminator="\n")
            w.writeheader()
            for r in old:
                w.writerow({c: r.get(c, "") for c in header})
            for r in rows:
                w.writerow(r)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
