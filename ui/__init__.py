"""Streamlit glue: scenario state bound to the URL, the shared sidebar, chart builders.

Importing this package freezes what the process holds so far (``gc.freeze``). Streamlit runs
``gc.collect(2)`` after every script run, holding the GIL while it walks every object in the
process (about 130 000 here: 45–140 ms of CPU a run), and the run's last messages wait for it.
The modules, Plotly's validators and pandas imported below never become garbage; frozen, the
collection walks only what the runs allocate (2–5 ms). Measured in benchmarks/NOTES-speed.md.
"""

import gc

import numpy  # noqa: F401 - imported before the freeze so that it covers them
import pandas  # noqa: F401
import plotly.graph_objects  # noqa: F401
import pyarrow  # noqa: F401

gc.freeze()
