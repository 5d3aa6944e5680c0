"""The reference: a minimal Streamlit page holding one Plotly chart."""

import plotly.graph_objects as go
import streamlit as st

st.plotly_chart(go.Figure(go.Scatter(x=[1, 2, 3], y=[1, 4, 9])))
