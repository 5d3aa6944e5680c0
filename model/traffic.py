"""Traffic profiles for the Scale-to-zero lens (SPEC 4.4, ``presets/traffic.yaml``).

A profile is a day of traffic as 24 hourly request rates (hour 0..23), with the mean prompt and
output tokens of a request, a one-line rationale and a source for every figure. The rates are
illustrative shapes for one team's deployment; a scenario's ``rate_scale`` multiplies them.
Nothing here imports the scenario.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Annotated

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from model.datafiles import PRESETS_DIR, load_file
from model.errors import ScenarioError
from model.units import MAX_RATE_SCALE

DEFAULT_TRAFFIC = "business-hours"
HOURS = 24
MAX_REQUESTS_PER_HOUR = 10_000_000.0  #: one profile hour (≈ 2,800 requests/s)

_STRICT = ConfigDict(extra="forbid", allow_inf_nan=False)
Source = Annotated[str, Field(min_length=1, max_length=600)]
Rate = Annotated[float, Field(ge=0, le=MAX_REQUESTS_PER_HOUR, allow_inf_nan=False)]
_SOURCED = ("requests_per_hour", "prompt_tokens", "output_tokens")


class TrafficProfile(BaseModel):
    """One day of traffic: requests per hour for hours 0..23 and mean tokens per request."""

    model_config = _STRICT
    id: str = ""
    name: Annotated[str, Field(min_length=1, max_length=120)]
    rationale: Annotated[str, Field(min_length=1, max_length=300)]
    requests_per_hour: list[Rate]
    prompt_tokens: float = Field(ge=1, le=10_000_000, description="mean per request")
    output_tokens: float = Field(ge=1, le=10_000_000, description="mean per request")
    sources: dict[str, Source]

    @field_validator("rationale")
    @classmethod
    def _one_line(cls, value: str) -> str:
        if "\n" in value.strip():
            raise ValueError("rationale must be one line")
        return value.strip()

    @field_validator("requests_per_hour", mode="before")
    @classmethod
    def _twenty_four(cls, value):
        if not isinstance(value, list | tuple):
            raise ValueError(f"must be a list of {HOURS} numbers, one per hour 0..23")
        if len(value) != HOURS:
            raise ValueError(f"needs exactly {HOURS} values, one per hour 0..23; got {len(value)}")
        return list(value)

    @model_validator(mode="after")
    def _sourced(self) -> TrafficProfile:
        missing = [k for k in _SOURCED if not self.sources.get(k)]
        if missing:
            raise ValueError(f"sources is missing {', '.join(missing)}")
        return self

    @property
    def requests_per_day(self) -> float:
        return float(sum(self.requests_per_hour))


def parse_profiles(raw: dict, what: str = "traffic.yaml") -> dict[str, TrafficProfile]:
    """Profiles from a mapping of id → fields; ``ValueError`` naming the file and the profile."""
    if not isinstance(raw, dict) or not raw:
        raise ValueError(f"{what}: must be a mapping of profile ids to profiles")
    out: dict[str, TrafficProfile] = {}
    for key, spec in raw.items():
        if not isinstance(spec, dict):
            raise ValueError(f"{what}: {key!r} must be a mapping")
        try:
            out[key] = TrafficProfile.model_validate({**spec, "id": key})
        except ValidationError as exc:
            details = "; ".join(
                f"{_where(e['loc'])}: {e['msg'].removeprefix('Value error, ')}"
                for e in exc.errors()
            )
            raise ValueError(f"{what}: profile {key!r} is invalid: {details}") from None
    return out


def _where(loc: tuple) -> str:
    """``('requests_per_hour', 23)`` → ``requests_per_hour[23] (hour 23)``."""
    text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    if len(loc) == 2 and loc[0] == "requests_per_hour" and isinstance(loc[1], int):
        text += f" (hour {loc[1]})"
    return text or "profile"


@lru_cache(maxsize=1)
def traffic_profiles() -> dict[str, TrafficProfile]:
    """Every traffic profile by id (``presets/traffic.yaml``), validated."""
    out = parse_profiles(load_file(PRESETS_DIR / "traffic.yaml"))
    if DEFAULT_TRAFFIC not in out:
        raise ValueError(f"traffic.yaml needs the profile {DEFAULT_TRAFFIC!r}")
    return out


def accepted_traffic() -> str:
    return ", ".join(traffic_profiles())


def traffic_profile(ident: str) -> TrafficProfile:
    """One profile by id; :class:`ScenarioError` (key ``traffic``) naming the accepted ids."""
    profiles = traffic_profiles()
    key = str(ident).strip().lower()
    if key not in profiles:
        raise ScenarioError(
            "traffic", f"unknown traffic profile {key[:40]!r}; accepted: {accepted_traffic()}"
        )
    return profiles[key]


def hourly_rate_per_s(profile: TrafficProfile | str, rate_scale: float = 1.0) -> np.ndarray:
    """The profile's arrival rate for hours 0..23 [requests/s], multiplied by ``rate_scale``."""
    if isinstance(profile, str):
        profile = traffic_profile(profile)
    try:
        scale = float(rate_scale)
    except (TypeError, ValueError):
        scale = math.nan
    if not math.isfinite(scale) or not 0 <= scale <= MAX_RATE_SCALE:
        raise ScenarioError(
            "rate_scale", f"must be a number from 0 to {MAX_RATE_SCALE:,.0f}; got {rate_scale!r}"
        )
    return np.asarray(profile.requests_per_hour, dtype=np.float64) * (scale / 3600.0)
