"""What the chart builders of every lens share: the colours, the common layout, log-axis
vertical lines and array conversion.

Chart builders are plain functions from core results to ``plotly.graph_objects.Figure``, one
module per lens (:mod:`ui.roofline_charts`, :mod:`ui.launch_charts`, :mod:`ui.cold_charts`).
No streamlit here, so every chart can be built and checked in a plain test. Figures are built
as one dict and validated once (``go.Figure(dict)``): trace-by-trace ``add_*`` calls cost
tens of milliseconds per chart, which a page that reacts to every widget cannot afford. Builders
return a :class:`SpecFigure`, which hands that dict to Streamlit without a second pass. No
template is set: Streamlit's theme styles the charts, and a named Plotly template alone costs
~9 ms of validation per figure.
"""

from __future__ import annotations

import base64

import numpy as np
import plotly.graph_objects as go

from model.units import MS

COLORS = {
    "memory": "#4C78A8",
    "compute": "#F58518",
    "comm": "#B279A2",
    "launch": "#E45756",
    "host": "#9D755D",
    "tps": "#54A24B",
}


def base_layout(title: str, legend_rows: int = 2, **extra) -> dict:
    """The common layout: title, and a horizontal legend at the very bottom of the figure
    (in the container's coordinates) with room kept under the x-axis title, so the two never
    overlap; ``legend_rows`` is how many legend lines to make room for."""
    return {
        "title": {"text": title},
        "margin": {"l": 60, "r": 30, "t": 50, "b": 58 + 22 * legend_rows},
        "legend": {
            "orientation": "h",
            "yref": "container",
            "yanchor": "bottom",
            "y": 0.01,
            "xanchor": "left",
            "x": 0,
        },
        "height": 520,
        **extra,
    }


def log_vline(x: float, text: str, line: dict, yanchor: str = "top") -> tuple[dict, dict]:
    """A vertical line and its label on a log x axis. Plotly places shapes at the data value
    and annotations at its log10 (checked in Chromium)."""
    return vline(x, text, line, yanchor, log=True)


def vline(
    x: float, text: str, line: dict, yanchor: str = "top", log: bool = False, y: float | None = None
) -> tuple[dict, dict]:
    """A vertical line at ``x`` and its label, on a linear x axis or (``log``) a log one;
    ``y`` (paper, 0–1) places the label, by default at the top or the bottom (``yanchor``)."""
    lx = float(np.log10(x)) if log else float(x)
    shape = {
        "type": "line",
        "xref": "x",
        "yref": "paper",
        "x0": x,
        "x1": x,
        "y0": 0,
        "y1": 1,
        "line": line,
    }
    note = {
        "x": lx,
        "y": y if y is not None else (0.02 if yanchor == "bottom" else 0.98),
        "xref": "x",
        "yref": "paper",
        "text": text,
        "showarrow": False,
        "xanchor": "left",
        "yanchor": yanchor,
        "font": {"size": 11},
        "bgcolor": "rgba(255,255,255,0.7)",
    }
    return shape, note


def unfit_band(max_batch: int | None, top: float, lo: float = 1.0) -> tuple[list, list]:
    """A grey band over the batches that do not fit in memory (batch > ``max_batch``) on a
    log batch axis that ends at ``top``, with its label; nothing when every batch fits."""
    if max_batch is None or max_batch >= top:
        return [], []
    x0 = max(float(max_batch), lo)
    shape = {
        "type": "rect",
        "xref": "x",
        "yref": "paper",
        "x0": x0,
        "x1": float(top),
        "y0": 0,
        "y1": 1,
        "fillcolor": "rgba(128,128,128,0.18)",
        "line": {"width": 0},
        "layer": "below",
    }
    note = {
        "x": float(np.log10(x0 * float(top)) / 2),  # the band's middle on the log axis
        "y": 0.55,
        "xref": "x",
        "yref": "paper",
        "text": "does not fit in HBM"
        + (f"<br>(batch > {max_batch:,})" if max_batch else "<br>(not even the weights)"),
        "showarrow": False,
        "xanchor": "center",
        "font": {"size": 11, "color": "dimgrey"},
        "bgcolor": "rgba(255,255,255,0.75)",
    }
    return [shape], [note]


def as_list(a) -> list:
    return np.asarray(a, dtype=float).round(9).tolist()


def segments(starts, ends, unit: float = MS) -> np.ndarray:
    """x values of one line trace drawing [start, end] segments (in ``unit``, default ms), NaN
    between them (a float array with NaN gaps validates and serialises far faster than a list
    with None)."""
    out = np.full(3 * len(starts), np.nan)
    out[0::3] = np.asarray(starts) / unit
    out[1::3] = np.asarray(ends) / unit
    return out


_ARRAY_KEYS = {"x", "y", "z", "customdata"}


def _typed(value):
    """A numeric array as Plotly's typed array (``{"dtype": "f8", "bdata": base64}``, what
    plotly.py itself sends); short or non-numeric values stay as they are."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "fiu" or arr.ndim != 1 or arr.size < 8:
        return value.tolist() if isinstance(value, np.ndarray) else value
    arr = np.ascontiguousarray(arr, dtype="<f8")
    return {"dtype": "f8", "bdata": base64.b64encode(arr.tobytes()).decode("ascii")}


def _pack(trace: dict) -> dict:
    out = {}
    for key, value in trace.items():
        if isinstance(value, dict):
            out[key] = _pack(value)
        elif key in _ARRAY_KEYS and isinstance(value, (list, np.ndarray)):
            out[key] = _typed(value)
        elif isinstance(value, np.ndarray):
            out[key] = value.tolist()
        else:
            out[key] = value
    return out


class SpecFigure(go.Figure):
    """A figure handed to ``st.plotly_chart`` as its finished spec.

    ``st.plotly_chart(fig)`` calls ``fig.to_dict()`` (a deep copy and a walk of every trace),
    and ``go.Figure(spec)`` validates every property first: together 3–16 ms per chart, 121 ms
    for the 13 charts of the three lenses (benchmarks/NOTES-speed.md). This figure skips both:
    ``to_dict`` returns the spec with its numeric arrays packed as Plotly typed arrays. The
    plain dict stays in ``spec``; :func:`validated` (used by the tests, which check every
    builder's spec) turns it into an ordinary, validated ``go.Figure``.
    """

    def __init__(self, spec: dict):
        super().__init__(_validate=False)
        object.__setattr__(self, "spec", spec)

    def to_dict(self) -> dict:
        return {"data": [_pack(t) for t in self.spec["data"]], "layout": self.spec["layout"]}

    def to_plotly_json(self) -> dict:
        return self.to_dict()


def figure(data: list, layout: dict) -> SpecFigure:
    """Every chart builder's return: the traces and the layout as one spec."""
    return SpecFigure({"data": data, "layout": layout})


def validated(fig) -> go.Figure:
    """An ordinary ``go.Figure`` of a builder's result, every property checked by Plotly."""
    return go.Figure(fig.spec) if isinstance(fig, SpecFigure) else fig
