"""Streamlit glue: scenario state bound to the URL, the shared sidebar, chart builders.

Importing this package has no side effect. The first page run of a server process
(:func:`refreeze_after_imports`, called first thing in every run) freezes what the process
holds so far (``gc.freeze``), numpy, pandas, Plotly and pyarrow imported first. Streamlit runs
``gc.collect(2)`` after every script run, holding the GIL while it walks every object in the
process (about 130 000 here: 45–140 ms of CPU a run), and the run's last messages wait for it.
The modules, Plotly's validators and pandas imported below never become garbage; frozen, the
collection walks only what the runs allocate (2–5 ms). Measured in benchmarks/NOTES-speed.md.

What a page imports on its first run (the model and ui modules, Streamlit's element modules,
plotly's narwhals, pydantic's schemas: ~80 000 objects once every page has run) would be walked
again by every later collection (30–60 ms a run). :func:`refreeze_after_imports`, called first
thing in every run, freezes again whenever the process has imported modules since the last
freeze: the previous run's ``gc.collect(2)`` has just taken its garbage, so what is frozen is
live. It happens a handful of times per process (each new import), never on a run that imported
nothing, so the permanent generation stays bounded; the one cost is that a reference cycle
alive at one of those moments and dropped later is freed by nothing but reference counting.
A worker process (:mod:`ui.serving_worker`) runs no page, so it never makes those imports: it
computes, draws nothing, and starts faster within its memory cap.
"""

import gc
import sys

_modules_at_freeze = -1  # no freeze yet in this process


def refreeze_after_imports() -> None:
    """Freeze again when modules were imported since the last freeze (see the module docstring);
    the first call imports what every page uses first, so that the freeze covers it."""
    global _modules_at_freeze
    if _modules_at_freeze < 0:
        import numpy  # noqa: F401 - imported before the freeze so that it covers them
        import pandas  # noqa: F401
        import plotly.graph_objects  # noqa: F401
        import pyarrow  # noqa: F401
    if len(sys.modules) != _modules_at_freeze:
        gc.freeze()
        _modules_at_freeze = len(sys.modules)
