"""The ``sharegpt`` length shape in presets/lengths.yaml: ShareGPT's first turns as
``vllm bench serve --dataset-name sharegpt`` samples them.

Source: microsoft/sarathi-serve, branch ``niyama_asplos2026`` (commit 72339db5),
``data/processed_traces/sharegpt_8k_filtered_stats_llama2_tokenizer.csv`` (Llama-2 tokenizer,
one row per turn: ``num_prefill_tokens, num_decode_tokens, num_total_tokens, pd_ratio``). A
conversation's turns follow each other, each prefill holding the one before's total; a row whose
prefill is below the previous row's total starts a conversation, and its prefill and decode are
the first user message and the first reply, which is what vLLM's sampler takes
(``conversations[0]`` and ``[1]``). vLLM's filter then keeps prompt and output ≥ 4, prompt ≤
1024 and prompt + output ≤ 2048 (``vllm/benchmarks/dataset_utils.py``, ``is_valid_sequence``).

    git show niyama_asplos2026:data/processed_traces/sharegpt_8k_filtered_stats_llama2_tokenizer.csv > sg.csv
    python -m tools.sharegpt_lengths sg.csv
"""

from __future__ import annotations

import sys

import numpy as np

PERCENTILES = [0, 1, 2, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 98, 99, 99.9, 100]


def first_turns(path: str) -> tuple[np.ndarray, np.ndarray]:
    a = np.loadtxt(path, delimiter=",", skiprows=1)
    prefill, decode, total = a[:, 0], a[:, 1], a[:, 2]
    first = np.r_[True, prefill[1:] < total[:-1]]
    p, d = prefill[first], decode[first]
    keep = (p >= 4) & (d >= 4) & (p <= 1024) & (p + d <= 2048)
    print(f"{len(prefill)} turns, {first.sum()} conversations, {keep.sum()} kept by vLLM's filter")
    return p[keep], d[keep]


def main(path: str) -> None:
    p, d = first_turns(path)
    print("percentiles:", PERCENTILES)
    print("prompt_tokens:", [int(round(v)) for v in np.percentile(p, PERCENTILES)])
    print("output_tokens:", [int(round(v)) for v in np.percentile(d, PERCENTILES)])
    print(f"means {p.mean():.1f} / {d.mean():.1f}; correlation {np.corrcoef(p, d)[0, 1]:.2f}")


if __name__ == "__main__":
    main(sys.argv[1])
