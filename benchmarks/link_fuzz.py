"""Hostile share links against the pages that simulate (issue 40, R1's fuzz: 8 of 5,989 fuzzed
links never finished within 120 s).

Each link sets one to four public scenario keys to values a fuzzer would try (zero, one,
negatives, huge and tiny numbers, NaN, infinity, text, 5,000 digits), on the Serving, Scale to
zero, Compare (with a ``vs=`` column of another such link) or Home page, and is run as a fresh
AppTest session, as a browser's first visit runs it. Reported: how many finished, the slowest,
any page that raised, and any run past the hang guard. A run that the budget refuses is quick
by design; one that is accepted is bounded by the budget's 6,000,000 steps' worth of work.

    .venv/bin/python -m benchmarks.link_fuzz [--links 200] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
import urllib.parse

from streamlit.testing.v1 import AppTest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = {
    "Serving": "pages/2_Serving.py",
    "Scale_to_zero": "pages/5_Scale_to_zero.py",
    "Compare": "pages/7_Compare.py",
    "Home": "app.py",
}
#: the keys that size a simulation, and some that do not
KEYS = (
    "max_num_batched_tokens", "num_requests", "output_tokens", "prompt_tokens", "request_rate",
    "max_concurrency", "max_num_seqs", "burstiness", "shared_prefix_tokens", "prefix_groups",
    "range_ratio", "gpus", "batch", "context_tokens", "ttft_slo_ms", "tpot_slo_ms",
    "slo_attainment", "rate_scale", "idle_timeout_s", "seed", "lengths", "model", "hardware",
    "weights_dtype", "kv_dtype", "engine", "api_server_count", "speculative",
    "num_speculative_tokens", "spec_acceptance", "spec_acceptance_length", "draft_model",
    "disaggregated", "prefill_gpus", "prefill_instances", "decode_gpus", "decode_instances",
    "kv_transfer_gb_s", "data_parallel", "expert_parallel",
)  # fmt: skip
VALUES = (
    "0", "1", "-1", "2", "16", "65537", "1000000", "1e9", "1e-9", "nan", "inf", "-inf", "abc",
    "", "9" * 5000, "0.5", "4096", "100000", "3", "auto", "random", "sharegpt", "fp4", "int4",
    "ngram", "eagle3", "mtp", "draft", "0.999", "llama-3.2-1b", "deepseek-r1", "true", "false",
    "64",
)  # fmt: skip


def link(rng: random.Random) -> list[tuple[str, str]]:
    return [(rng.choice(KEYS), rng.choice(VALUES)) for _ in range(rng.randint(1, 4))]


def run_one(page: str, pairs: list[tuple[str, str]], vs: list[tuple[str, str]] | None) -> float:
    at = AppTest.from_file(os.path.join(ROOT, PAGES[page]), default_timeout=120)
    for k, v in pairs:
        at.query_params[k] = v
    if vs is not None:
        at.query_params["vs"] = urllib.parse.urlencode(vs)
    t = time.perf_counter()
    at.run()
    took = time.perf_counter() - t
    if at.exception:
        raise RuntimeError("; ".join(e.value for e in at.exception)[:300])
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--links", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    times, raised, slow = [], [], []
    for _ in range(args.links):
        page = rng.choice(list(PAGES))
        pairs = link(rng)
        vs = link(rng) if page == "Compare" else None
        try:
            took = run_one(page, pairs, vs)
        except Exception as exc:  # noqa: BLE001 - reported
            raised.append((page, pairs, vs, str(exc)))
            continue
        times.append(took)
        slow.append((took, page, pairs, vs))
    slow.sort(key=lambda x: -x[0])
    print(f"{len(times)} of {args.links} links finished; {len(raised)} raised")
    if times:
        print(f"median {statistics.median(times):.2f} s, worst {max(times):.2f} s")
    for took, page, pairs, vs in slow[:5]:
        print(f"  {took:6.2f} s  /{page}?{urllib.parse.urlencode(pairs)[:120]}"
              + (f" vs={urllib.parse.urlencode(vs)[:60]}" if vs else ""))  # fmt: skip
    for page, pairs, _vs, why in raised[:10]:
        print(f"  raised: /{page}?{urllib.parse.urlencode(pairs)[:100]}: {why}")


if __name__ == "__main__":
    main()
