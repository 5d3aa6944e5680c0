"""Number formatting shared by pages and charts (no streamlit here)."""

from __future__ import annotations


def share(x: float) -> str:
    """A fraction as a percentage, or as a multiple once it passes 10× (1000 %)."""
    return f"{x:.0%}" if x < 10 else f"{x:,.0f}×"


def duration(seconds: float) -> str:
    """A time with a unit that keeps it readable: µs, ms or s."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:,.3g} s" if seconds < 1000 else f"{seconds:,.0f} s"
