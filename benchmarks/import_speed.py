"""How long the importers take on a 5 MB file (SPEC: under 1 s on an ordinary machine): our
CSV reader on 140 000 rows (it reads the first MAX_ROWS), and the dispatcher on the same text.

    .venv/bin/python benchmarks/import_speed.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.readers.csv_import import read_csv  # noqa: E402
from model.readers.importers import import_text  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    rows = [
        f"{b % 512 + 1},{20 + b % 997 / 100:.2f},full_and_piecewise,{b % 8192}"
        for b in range(140_000)
    ]
    text = "batch,step_ms,cuda_graphs,context_tokens\n" + "\n".join(rows) + "\n"
    for name, fn in (("read_csv", read_csv), ("import_text", import_text)):
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            fn(text, "big.csv")
            times.append(time.perf_counter() - t)
        print(
            f"{name:12s} {len(text) / 1e6:.1f} MB: median {statistics.median(times):.3f} s, "
            f"max {max(times):.3f} s over {args.runs} runs"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
