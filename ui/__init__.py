"""Streamlit glue: scenario state bound to the URL, the shared sidebar, chart builders."""
