"""Reading aiconfigurator's measured kernel tables (PyPI ``aiconfigurator-core``; a source of
facts, not a dependency) for the fits in this folder (``fit_mla``, ``fit_moe``):

    pip download --no-deps -d /tmp/aic aiconfigurator-core
    python -m tools.fit_mla /tmp/aic/aiconfigurator_core-*.whl
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator

import pandas as pd

DATA = "aiconfigurator_core/systems/data/"
BW = {"h200": 4.8e12, "h100": 3.35e12}  # datasheet HBM bandwidth [B/s] (presets/hardware.yaml)


def tables(wheel: str, paths: dict) -> Iterator[tuple[tuple[str, str], pd.DataFrame]]:
    """Each ``(engine, gpu) -> path`` of ``paths`` (under the wheel's data folder) as a frame."""
    with zipfile.ZipFile(wheel) as z:
        for key, path in paths.items():
            yield key, pd.read_parquet(io.BytesIO(z.read(DATA + path)))
