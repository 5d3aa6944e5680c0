"""Compare: up to four scenarios side by side (this one, the pinned baseline and up to two
more), every lens's headline figures as columns, each figure's change against the first."""

import streamlit as st

from model.compare import MAX_SCENARIOS
from ui import compare_view, lens_view
from ui.lenses import compare
from ui.lenses.compare_page import PAGE
from ui.page import draw_sidebar, page_scenario
from ui.scenario_caption import scenario_caption

lens_view.page_config(PAGE)
s = page_scenario(PAGE.key, defer=True)
st.title("Compare scenarios")
scenario_caption(s)
st.markdown(
    f"Up to {MAX_SCENARIOS} scenarios side by side: the baseline pinned in the sidebar, this "
    "one, and up to two more added below. Each figure's change is against the first column; "
    "changed figures are highlighted (▲ rise, ▼ fall; blue where it is better, orange where it "
    "is worse)."
)
columns = compare_view.columns(s)
draw_sidebar()
rows = compare(columns.scenarios)
compare_view.headers(columns)
compare_view.table(rows, columns)
compare_view.add_controls(s, columns)
