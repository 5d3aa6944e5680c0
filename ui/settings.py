"""The server's numeric settings from the environment (``WHATIF_*``): one reader for all of
them, so a value that is not a number in its range falls back to the default (with a line in
the server log) instead of stopping the server at import."""

from __future__ import annotations

import logging
import math
import os

log = logging.getLogger(__name__)


def env_number(name: str, default: float, lo: float, hi: float) -> float:
    """``name`` from the environment as a number in [``lo``, ``hi``]; ``default`` when it is
    unset or empty, and (logged) when it is not a finite number in that range."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (lo <= value <= hi):  # NaN fails too
        log.warning("%s=%r is not a number from %g to %g: %g is used", name, text, lo, hi, default)
        return default
    return value
