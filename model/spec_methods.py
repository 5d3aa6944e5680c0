"""The speculative-decoding methods' published defaults (``presets/speculative.yaml``), read and
validated: a leaf the scenario's checks and :mod:`model.speculative` both read (issue 42)."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from model.datafiles import PRESETS_DIR, load_file

#: the values of the scenario's ``speculative`` key
Method = Literal["none", "ngram", "eagle", "eagle3", "mtp", "draft"]
MAX_K = 16  #: the most tokens a step may draft (``num_speculative_tokens``)
Source = Annotated[str, Field(min_length=1, max_length=1200)]


class MethodPreset(BaseModel):
    """One speculative method's published defaults (``presets/speculative.yaml``)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    name: str = Field(min_length=1, max_length=80)
    #: ``none``: the proposer runs on the host (n-gram); ``layer``: one decoder layer on the
    #: target's hidden states (EAGLE, EAGLE-3, MTP); ``model``: a smaller model of the family
    drafter: Literal["none", "layer", "model"]
    num_speculative_tokens: int = Field(ge=1, le=MAX_K)
    acceptance: float = Field(ge=0, lt=1, description="per-token acceptance rate α")
    #: the drafter's output head: the target's vocabulary, or a reduced draft vocabulary
    draft_vocab: int | None = Field(None, ge=1, le=10_000_000)
    #: EAGLE-3 fuses three of the target's hidden states (low, middle, high) into one: an FC
    #: of 3 × hidden → hidden before the draft layer
    fuse_hidden_states: int = Field(1, ge=1, le=8)
    #: drafter weights are kept in BF16 whatever the target's dtype (published heads are BF16)
    drafter_dtype: Literal["target", "bf16"] = "target"
    host_us_per_seq: float = Field(
        0.0, ge=0, le=10000, description="proposer host work per sequence per step [µs]"
    )
    #: the engine's work a speculative step adds beyond the forwards: the verify's metadata,
    #: rejection sampling and bookkeeping (per step), and each draft step's own preparation
    #: (per draft step) [µs]
    verify_us: float = Field(0.0, ge=0, le=100000)
    draft_step_us: float = Field(0.0, ge=0, le=100000)
    sources: dict[str, Source]


@lru_cache(maxsize=1)
def methods() -> dict[str, MethodPreset]:
    """The shipped methods by id (``presets/speculative.yaml``)."""
    raw = load_file(PRESETS_DIR / "speculative.yaml") or {}
    return {k: MethodPreset.model_validate(v) for k, v in raw.items()}
