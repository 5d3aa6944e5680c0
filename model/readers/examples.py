"""Example measurement data sets (``presets/examples.yaml``): published measurements, each with
its source and the scenario it ran, so the Measurements page is useful before a user has data."""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

from model.datafiles import PRESETS_DIR, load_file
from model.readers.importers import import_file
from model.readers.measurements import Dataset


class Example(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]{0,63}$")
    title: str = Field(min_length=1, max_length=200)
    file: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,100}$")
    what: str = Field(min_length=1, max_length=300)
    source: str = Field(pattern=r"^https://\S+$")
    scenario: dict[str, str | int | float | bool] = Field(default_factory=dict)


@lru_cache(maxsize=1)
def examples() -> dict[str, Example]:
    """Every example data set by id (validated)."""
    data = load_file(PRESETS_DIR / "examples.yaml")
    return {e.id: e for e in (Example.model_validate(x) for x in data.get("examples", []))}


def load_example(example_id: str) -> Dataset:
    """The example's data set, read by the same importer as an upload."""
    ex = examples()[example_id]
    return import_file(ex.file, (PRESETS_DIR / "examples" / ex.file).read_bytes())
