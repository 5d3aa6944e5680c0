"""A lens's figures as one table (the Breakdown) and its downloads: the scenario's YAML and
each table as CSV."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from model.scenario import Scenario
from ui import export


def breakdown(figures: dict, sections: tuple[str, ...], base: dict | None = None) -> pd.DataFrame:
    """Show the named sections of ``evaluate()``-style figures as one table (section, figure,
    value, and the pinned baseline's value beside it, from its figures ``base``); returns the
    wide frame for the CSV download: one row for the scenario and one for the baseline, one
    typed column per ``section.figure`` (:func:`ui.export.wide_figures`)."""
    st.subheader("Breakdown")
    if base is not None:
        base = {sec: base[sec] for sec in sections if sec in base}
    table = export.long_figures(figures, sections, base)
    key = "_".join(sections)
    # the grid scrolls on screen and prints only the rows in view: paper gets the full table
    with st.container(key=f"{export.SCREEN_ONLY}_{key}"):
        st.dataframe(table, hide_index=True, width="stretch", height=300)
    with st.container(key=f"{export.PRINT_ONLY}_{key}"):
        st.table(table, hide_index=True)
    ctx = export.context()
    rows = [("this scenario", ctx.label if ctx else "", figures)]
    if base is not None:
        rows.append(("baseline", (ctx and ctx.base_label) or "", base))
    return export.wide_figures(rows, sections)


def downloads(s: Scenario, tables: dict[str, pd.DataFrame], stem: str) -> None:
    """Download buttons: the scenario as YAML and each table as CSV.

    Each file is named ``<scenario>-<stem>-<table>`` (:mod:`ui.export`: the model, dtype,
    GPUs × hardware, batch and a hash of the share link), and carries the scenario's label and
    share link in a first comment line; the CSV numbers are rounded to 6 significant digits and
    integral columns written as integers. The files are made only when a button is clicked (a
    callable ``data``), so the page's run does not pay for YAML and CSV text nobody asked for.
    """
    ctx = export.context(s)
    cols = st.columns(1 + len(tables))
    cols[0].download_button(
        "Scenario (YAML)",
        lambda: export.yaml_text(s, ctx),
        file_name=ctx.file("scenario", "yaml", page=stem),
        mime="application/x-yaml",
        width="stretch",
        on_click="ignore",
    )
    for col, (name, frame) in zip(cols[1:], tables.items(), strict=True):
        col.download_button(
            f"{name} (CSV)",
            lambda frame=frame: _csv(frame, ctx.comment),
            file_name=ctx.file(name, "csv", page=stem),
            mime="text/csv",
            width="stretch",
            on_click="ignore",
        )


def _csv(frame: pd.DataFrame, comment: str | None = None) -> str:
    """The table as CSV (:func:`ui.export.csv_text`): a ``# comment`` first line, numbers
    clean, integers as integers."""
    return export.csv_text(frame, comment)
