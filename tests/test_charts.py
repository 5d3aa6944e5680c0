"""Every chart builder's spec is a valid Plotly figure, and what Streamlit is handed
(``SpecFigure.to_dict``, numeric arrays packed as typed arrays) carries the same numbers."""

from __future__ import annotations

import base64
import json

import numpy as np
import plotly.io as pio
import pytest

from model.overrides import resolve
from ui.chart_common import SpecFigure, validated

from .test_escaping import every_figure


def _unpack(value):
    if isinstance(value, dict) and set(value) == {"dtype", "bdata"}:
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    return value


@pytest.mark.parametrize("name", ["default", "seed-3b-4090", "seed-70b-fp8-cold-start"])
def test_every_builder_spec_validates_and_ships_the_same_numbers(name):
    s, _ = resolve([("scenario", name), ("loader", "pickle")])
    for fig in every_figure(s):
        assert isinstance(fig, SpecFigure)
        checked = validated(fig)  # raises on any property Plotly does not know
        shipped = json.loads(pio.to_json(fig.to_dict(), validate=False))
        assert len(shipped["data"]) == len(checked.data)
        for sent, trace in zip(shipped["data"], checked.data, strict=True):
            for key in ("x", "y"):
                mine = trace[key]
                if mine is None or (len(mine) and isinstance(mine[0], str)):
                    continue
                got = _unpack(sent[key])
                np.testing.assert_allclose(
                    np.asarray(got, dtype=float), np.asarray(mine, dtype=float), equal_nan=True
                )
