"""Mooncake-format request traces: JSON Lines with prefix block ids (issue 39, item 3: "a
trace whose format carries prefix ids replays them").

One object per line, as Mooncake (FAST '25, ``kvcache-ai/Mooncake`` ``FAST25-release/traces``)
published its Kimi traces and as NVIDIA AIPerf's and Dynamo's trace replay read them::

    {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, …]}

``timestamp``: arrival in milliseconds since the first request (requests may share one);
``input_length`` and ``output_length``: tokens; ``hash_ids``: one id per block of
:data:`HASH_BLOCK_TOKENS` prompt tokens, each standing for the block *and everything before
it*, so two requests whose lists start with the same ids share that prefix. ``hash_ids`` is
optional (a trace without it replays arrivals and lengths only).

The prefix the simulator reuses (:func:`model.serving.prefix_plan`) is one shared prefix per
group: requests are grouped by their first block id, and a request's shareable prefix is the
longest run of leading block ids it has in common with another request of its group (the
longest common prefix with its neighbours in sorted order). A conversation whose later turns
extend earlier ones therefore hits the part its group shares, not each turn's own longer
history: a lower bound on the hits of a radix tree (SGLang) or vLLM's per-block hash chain.

Bad input: the whole file is refused (:class:`ScenarioError`) when no line is a usable
request; single lines are refused (counted, listed by line, the rest kept) when they are not a
JSON object, lack ``timestamp`` or ``input_length``, carry a value that is not a finite number
≥ 0 (a token count or block id that is not a whole number), or a ``hash_ids`` that is not a
list of whole numbers. Numbers are read with Python's ``json`` (no NaN or Infinity: refused).
"""

from __future__ import annotations

import json
import math

import numpy as np

from model.errors import ScenarioError
from model.readers.measurements import MAX_PROBLEMS, Problem

#: prompt tokens per ``hash_ids`` entry (Mooncake's traces, AIPerf's and Dynamo's default)
HASH_BLOCK_TOKENS = 512
MAX_HASH_IDS = 100_000  #: block ids of one request (51 M tokens); more is refused
MAX_TOKENS = 10_000_000


def looks_like_mooncake(data: bytes) -> bool:
    """Whether ``data`` starts like a JSON Lines trace (a ``{`` first, after a BOM and blanks)."""
    head = data[:4096].lstrip(b"\xef\xbb\xbf").lstrip()
    return head.startswith(b"{")


def _whole(value, what: str, hi: float) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{what} is not a number")
    if not math.isfinite(value) or value < 0 or value != int(value) or value > hi:
        raise ValueError(f"{what} must be a whole number from 0 to {hi:,.0f}; got {value!r}")
    return int(value)


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number")


def parse(name: str, text: str, max_rows: int):
    """The rows of a Mooncake JSON Lines trace: (arrival_s, input_tokens, output_tokens,
    prefix_group, prefix_tokens, rows_refused, problems, notices, blank lines), arrivals not yet
    sorted."""
    times, inputs, outputs, hashes = [], [], [], []
    problems: list[Problem] = []
    refused = blank = 0
    more = False
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            blank += 1
            continue
        if len(times) >= max_rows:
            more = True
            break
        try:
            row = json.loads(line, parse_constant=_refuse_constant)
            if not isinstance(row, dict):
                raise ValueError("not a JSON object")
            if "timestamp" not in row or "input_length" not in row:
                raise ValueError("needs timestamp (ms) and input_length")
            t = row["timestamp"]
            if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
                raise ValueError("timestamp is not a finite number")
            if t < 0 or t > 1e12:
                raise ValueError(f"timestamp must be from 0 to 1e12 ms; got {t!r}")
            n_in = _whole(row["input_length"], "input_length", MAX_TOKENS)
            n_out = _whole(row.get("output_length", 1), "output_length", MAX_TOKENS)
            ids = row.get("hash_ids", [])
            if not isinstance(ids, list) or len(ids) > MAX_HASH_IDS:
                raise ValueError(f"hash_ids must be a list of at most {MAX_HASH_IDS:,} ids")
            ids = tuple(_whole(h, "a hash id", 2**63 - 1) for h in ids)
        except (ValueError, RecursionError) as exc:  # json's errors are ValueErrors too
            refused += 1
            if len(problems) < MAX_PROBLEMS:
                problems.append(Problem(f"line {lineno}", str(exc)[:200]))
            continue
        times.append(float(t) / 1000.0)
        inputs.append(n_in)
        outputs.append(n_out)
        hashes.append(ids)
    if not times:
        why = problems[0] if problems else "no request lines"
        raise ScenarioError(
            name,
            f"no line of this JSON Lines trace is a usable request ({why}); each line is "
            '{"timestamp": ms, "input_length": tokens, "output_length": tokens, '
            '"hash_ids": [block ids]} (the Mooncake trace format)',
        )
    notices = []
    if more:
        notices.append(f"only the first {max_rows:,} requests were read")
    group, shared = shared_prefixes(hashes)
    tokens = np.minimum(shared * HASH_BLOCK_TOKENS, np.asarray(inputs, dtype=np.int64))
    if any(hashes):
        share = float(np.mean(tokens > 0))
        notices.append(
            f"prefix block ids (hash_ids, {HASH_BLOCK_TOKENS} tokens each): {share:.0%} of the "
            "requests share a prefix with another request; the replay reuses them where the "
            "engine caches prefixes"
        )
    return (
        np.asarray(times, dtype=np.float64),
        np.asarray(inputs, dtype=np.int64),
        np.asarray(outputs, dtype=np.int64),
        group,
        tokens.astype(np.int64),
        refused,
        problems,
        notices,
        blank,
    )


def shared_prefixes(hashes: list[tuple[int, ...]]) -> tuple[np.ndarray, np.ndarray]:
    """Per request: its group (its first block id's rank, -1 without ids) and how many of its
    leading block ids another request of the trace also starts with (the longest common prefix
    with its neighbours once the lists are sorted)."""
    n = len(hashes)
    group = np.full(n, -1, dtype=np.int64)
    shared = np.zeros(n, dtype=np.int64)
    firsts = {h[0] for h in hashes if h}
    rank = {f: i for i, f in enumerate(sorted(firsts))}
    order = sorted((i for i in range(n) if hashes[i]), key=lambda i: hashes[i])
    for i in order:
        group[i] = rank[hashes[i][0]]
    for a, b in zip(order, order[1:], strict=False):
        ha, hb = hashes[a], hashes[b]
        k, m = 0, min(len(ha), len(hb))
        while k < m and ha[k] == hb[k]:
            k += 1
        shared[a] = max(shared[a], k)
        shared[b] = max(shared[b], k)
    return group, shared
