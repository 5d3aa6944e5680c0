"""Inference What-If Explorer: the calculation core.

Pure Python + numpy + pydantic + pyyaml. No streamlit, no plotly: every page, the CLI and the
tests call these modules. SI base units inside (bytes, seconds, FLOP, FLOP/s); the unit is in
the key name at the edges (``launch_us``, ``hbm_bandwidth_tb_s``).
"""

__all__ = ["__version__"]
__version__ = "0.1.0"
