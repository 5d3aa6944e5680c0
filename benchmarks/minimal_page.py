"""The reference: a minimal Streamlit page that does what a lens does, once.

One widget (a sidebar "Batch" number input, keyed like the app's), one metric computed from it,
one Plotly chart whose data changes with it. ``page_speed.py`` reruns it through AppTest and
``browser_speed.py`` serves it with ``streamlit run`` beside the app, the same way.
"""

import plotly.graph_objects as go
import streamlit as st

batch = st.sidebar.number_input("Batch", min_value=1, max_value=65536, step=1, key="w_batch")
st.metric("Aggregate tok/s", f"{1000 * batch / (8.0 + 0.01 * batch):,.1f}")
st.plotly_chart(go.Figure(go.Scatter(x=[1, 2, 3], y=[batch, 4 * batch, 9 * batch])))
