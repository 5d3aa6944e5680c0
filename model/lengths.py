"""Prompt and output lengths of a serving run (SPEC 4.6, ``lengths``).

``fixed``: every request has the scenario's ``prompt_tokens`` and ``output_tokens``.
``random``: ``vllm bench serve``'s random dataset, each length drawn uniformly from
[L × (1 − range_ratio), L × (1 + range_ratio)] around them. Otherwise a distribution from
``presets/lengths.yaml``: percentiles of a real trace's prompt and output tokens, drawn
independently by inverse-CDF linear interpolation with the run's seed.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from model.datafiles import PRESETS_DIR, load_file

Tokens = Annotated[int, Field(ge=1, le=10_000_000)]


class LengthSet(BaseModel):
    """One distribution: percentiles and the prompt and output tokens at each."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    name: str = Field(min_length=1, max_length=200)
    percentiles: list[Annotated[float, Field(ge=0, le=100)]] = Field(min_length=2)
    prompt_tokens: list[Tokens]
    output_tokens: list[Tokens]
    mean_prompt_tokens: float = Field(ge=1)
    mean_output_tokens: float = Field(ge=1)
    correlation: float = Field(ge=-1, le=1)
    #: ``absolute``: the table's tokens are drawn as they are; ``means``: the table is a shape,
    #: rescaled so its means are the scenario's ``prompt_tokens`` and ``output_tokens``
    scale: Literal["absolute", "means"] = "absolute"
    source: str = Field(min_length=1, max_length=1000)

    @model_validator(mode="after")
    def _shape(self) -> LengthSet:
        n = len(self.percentiles)
        if len(self.prompt_tokens) != n or len(self.output_tokens) != n:
            raise ValueError("percentiles, prompt_tokens and output_tokens must have one length")
        if self.percentiles[0] != 0 or self.percentiles[-1] != 100:
            raise ValueError("percentiles must run from 0 to 100")
        for seq in (self.percentiles, self.prompt_tokens, self.output_tokens):
            if any(b < a for a, b in zip(seq, seq[1:], strict=False)):
                raise ValueError("percentiles and tokens must not decrease")
        return self


@lru_cache(maxsize=1)
def length_sets() -> dict[str, LengthSet]:
    """The shipped distributions by id (``presets/lengths.yaml``)."""
    raw = load_file(PRESETS_DIR / "lengths.yaml") or {}
    return {k: LengthSet.model_validate(v) for k, v in raw.items()}


def draw(s, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Prompt and output tokens of ``n`` requests for the scenario ``s`` [tokens].

    A drawn request longer than the model's context keeps its output and shortens its prompt
    (vLLM would refuse it; the benchmark's random dataset caps it the same way).
    """
    if s.lengths == "fixed":
        return np.full(n, s.prompt_tokens, dtype=np.int64), np.full(
            n, s.output_tokens, dtype=np.int64
        )
    rng = np.random.default_rng([s.seed, 1])
    if s.lengths == "random":
        prompt = uniform_lengths(rng, s.prompt_tokens, s.range_ratio, n)
        output = uniform_lengths(rng, s.output_tokens, s.range_ratio, n)
    else:
        d = length_sets()[s.lengths]
        q = np.asarray(d.percentiles) / 100.0
        prompt = np.interp(rng.random(n), q, d.prompt_tokens)
        output = np.interp(rng.random(n), q, d.output_tokens)
        if d.scale == "means":
            prompt = prompt * (s.prompt_tokens / d.mean_prompt_tokens)
            output = output * (s.output_tokens / d.mean_output_tokens)
    prompt, output = np.maximum(np.rint(prompt), 1), np.maximum(np.rint(output), 1)
    limit = s.model.max_context_tokens
    if limit:
        output = np.minimum(output, max(limit - 1, 1))
        prompt = np.clip(prompt, 1, np.maximum(limit - output, 1))
    return prompt.astype(np.int64), output.astype(np.int64)


def uniform_lengths(rng: np.random.Generator, length: int, ratio: float, n: int) -> np.ndarray:
    """``n`` lengths drawn uniformly from the integers [⌊L(1 − r)⌋, ⌈L(1 + r)⌉], at least 1
    [tokens]: ``vllm bench serve --dataset-name random --random-range-ratio r``.

    References
    ----------
    .. [1] vLLM ``vllm/benchmarks/datasets.py``, ``RandomDataset.sample`` (0.10 and later):
       ``low = floor(L * (1 - range_ratio))``, ``high = ceil(L * (1 + range_ratio))``,
       ``rng.integers(low, high + 1)``, range_ratio in [0, 1). Releases up to 0.8 drew from
       [L × r, L] instead (``benchmark_serving.py``'s ``sample_random_requests``, default r = 1:
       fixed), which ``lengths=fixed`` or a matching ``range_ratio`` stands for.
    """
    low = max(math.floor(length * (1 - ratio)), 1)
    high = max(math.ceil(length * (1 + ratio)), low)
    return rng.integers(low, high + 1, size=n).astype(float)
