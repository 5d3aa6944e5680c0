"""Where the preset YAML lives, and reading one preset file.

The YAML sits in ``presets/`` at the repository root, which the package ships as
``model.preset_data`` (see ``pyproject.toml``): a wheel installs it at ``model/preset_data``, an
editable install or a checkout reads ``presets/`` in place. ``WHATIF_PRESETS`` points elsewhere
(tests use it). Nothing here imports the scenario, so both the scenario and the preset modules
can build on it without an import circle.
"""

from __future__ import annotations

import os
from pathlib import Path

from model import safeyaml

_HERE = Path(__file__).resolve().parent


def _presets_dir() -> Path:
    override = os.environ.get("WHATIF_PRESETS")
    if override:
        return Path(override)
    for candidate in (_HERE / "preset_data", _HERE.parent / "presets"):
        if (candidate / "hardware.yaml").is_file():
            return candidate
    return _HERE.parent / "presets"  # reported by the first read that fails


PRESETS_DIR = _presets_dir()


def load_file(path: Path) -> dict:
    """One preset YAML file as a mapping (read with :func:`model.safeyaml.load_mapping`)."""
    return safeyaml.load_mapping(path.read_text(encoding="utf-8"), str(path.name))
