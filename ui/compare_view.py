"""The Compare page's parts: which scenarios are compared, their headers, the table of figures
with the changes highlighted, and the controls that add and remove columns."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pandas as pd
import streamlit as st

from model import codecs
from model.compare import MAX_SCENARIOS
from model.errors import ScenarioError
from model.overrides import resolve
from model.presets import scenario_names
from model.scenario import Scenario
from ui import compare, state
from ui.text import key_name, md_escape, scenario_label

#: the highlight of a changed figure: blue for better, orange for worse, grey when neither
#: (Okabe-Ito's blue and orange, told apart by colour-blind readers; ▲/▼ is the second cue)
BETTER = "background-color: rgba(0, 114, 178, 0.22)"
WORSE = "background-color: rgba(230, 159, 0, 0.30)"
NEUTRAL = "background-color: rgba(128, 128, 128, 0.18)"


@dataclass
class Columns:
    scenarios: list[Scenario] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    #: for each further scenario (after this one and the baseline): its index in ``compared()``
    removable: dict[int, int] = field(default_factory=dict)


def parse_compared(text: str) -> Scenario:
    """A further scenario from a share link or its query string (strict: the first bad key
    raises :class:`ScenarioError` naming it)."""
    text = text.strip()
    if len(text) > 4 * codecs.MAX_QUERY_CHARS:
        raise ScenarioError("link", f"{len(text):,} characters; a share link is shorter")
    if "://" in text:
        parts = urlsplit(text)
        text = parts.query
    own, *_ = codecs.split_link(codecs.parse_query(text))
    scenario, _ = resolve(own, strict=True)
    return scenario


def columns(s: Scenario) -> Columns:
    """This scenario, the pinned baseline and the link's further scenarios (``vs``); a further
    scenario that does not parse is left out with a warning naming it."""
    b = state.baseline()
    if b is None:
        out = Columns([s], ["This scenario"])
    else:  # the baseline first: every change reads from it, as the other pages' deltas do
        out = Columns([b, s], ["Baseline", "This scenario"])
    for i, query in enumerate(state.compared()):
        if len(out.scenarios) >= MAX_SCENARIOS:
            st.warning(f"At most {MAX_SCENARIOS} scenarios are compared; the rest are left out.")
            break
        try:
            extra = parse_compared(query)
        except ScenarioError as err:
            st.warning(
                f"Compared scenario {i + 1} in the link was left out: {md_escape(err)}. "
                "Remove it below, or add it again."
            )
            continue
        out.removable[len(out.scenarios)] = i
        out.scenarios.append(extra)
        out.names.append(f"Scenario {len(out.scenarios)}")
    return out


def headers(cols: Columns) -> None:
    """One caption per column: its name, its one-line description, and the keys in which it
    differs from the first."""
    grid = st.columns(len(cols.scenarios))
    first = cols.scenarios[0]
    for i, (col, sc, name) in enumerate(zip(grid, cols.scenarios, cols.names, strict=True)):
        col.markdown(f"**{i + 1} · {name}**")
        col.caption(md_escape(scenario_label(sc)))
        if i:
            keys = compare.changed_keys(sc, first)
            col.caption(
                "Differs in: " + ", ".join(dict.fromkeys(md_escape(key_name(k)) for k in keys))
                if keys
                else "Same settings."
            )


def _cell(value, change, unit: str, digits: int) -> str:
    if value is None:
        return "–"
    if isinstance(value, str):
        return value.replace("_", " ")
    if isinstance(value, float):
        text = f"{value:,.0f}" if abs(value) >= 10**digits else f"{value:.{digits}g}"
    else:
        text = f"{value:,}"
    text = f"{unit}{text}" if unit == "$" else f"{text} {unit}".rstrip()
    if change:
        arrow = "▲" if change > 0 else "▼"
        pct = f"{change:+.0%}" if abs(change) >= 0.01 else f"{change:+.1%}"
        text += f"  {arrow} {pct.replace('%', ' %')}"
    return text


def frame(rows: list[dict], names: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The table as text (one column per scenario) and, beside it, each cell's highlight."""
    heads = [f"{i + 1} · {n}" for i, n in enumerate(names)]
    text, style = [], []
    for row in rows:
        cells = [
            _cell(v, c, row["unit"], row["digits"])
            for v, c in zip(row["values"], row["changes"], strict=True)
        ]
        marks = [""]
        first = row["values"][0]
        for v, c in zip(row["values"][1:], row["changes"][1:], strict=True):
            if c is None and v == first:
                marks.append("")
            elif c is None or c == 0 or row["better"] is None:
                marks.append(NEUTRAL if (c or v != first) else "")
            else:
                good = (c < 0) == (row["better"] == "lower")
                marks.append(BETTER if good else WORSE)
        text.append([row["section"], row["label"], *cells])
        style.append(["", "", *marks])
    cols = ["Lens", "Figure", *heads]
    return pd.DataFrame(text, columns=cols), pd.DataFrame(style, columns=cols)


def table(rows: list[dict], cols: Columns) -> None:
    text, style = frame(rows, cols.names)
    only_changed = st.toggle(
        "Only the figures that differ",
        key="w_compare_changed",
        disabled=len(cols.scenarios) < 2,
        help="Hide the rows where every scenario has the same value.",
    )
    if only_changed:
        keep = [r["differs"] for r in rows]
        text, style = text[keep], style[keep]
    styled = text.style.apply(lambda _: style.loc[text.index].to_numpy(), axis=None)
    st.dataframe(
        styled, hide_index=True, width="stretch", height=35 * (len(text) + 1) + 3
    )  # rows are 35 px: no empty last row
    numbers = pd.DataFrame(
        [
            {
                "lens": r["section"],
                "figure": r["label"],
                "unit": r["unit"],
                **{
                    f"{i + 1} {n}": v
                    for i, (n, v) in enumerate(zip(cols.names, r["values"], strict=True))
                },
            }
            for r in rows
        ]
    )
    from ui import export

    ctx = export.context()  # this run's: the scenario, the Compare page and its share link
    st.download_button(
        "The comparison (CSV)",
        lambda: export.csv_text(numbers, ctx.comment),
        file_name=ctx.file("comparison", "csv", page="compare"),
        mime="text/csv",
        on_click="ignore",
    )
    if len(cols.scenarios) < 2:
        st.info(
            "Only this scenario so far: pin it as the baseline in the sidebar and change "
            "something, or add a scenario below."
        )


def _add(s: Scenario, source: str) -> None:
    """Add the further scenario typed or picked in the controls (a callback)."""
    if source == "preset":
        name = st.session_state.get("w_compare_preset")
        query = codecs.to_query(resolve([("scenario", name)])[0]) if name else ""
    else:
        query = (st.session_state.get("w_compare_link") or "").strip()
        try:
            query = codecs.to_query(parse_compared(query))
        except ScenarioError as err:
            st.session_state["_whatif_compare_error"] = str(err)
            return
        st.session_state["w_compare_link"] = ""
    if query:
        state.set_compared([*state.compared(), query])


def add_controls(s: Scenario, cols: Columns) -> None:
    """Add a named scenario or a pasted share link as a further column; remove one."""
    error = st.session_state.pop("_whatif_compare_error", None)
    room = MAX_SCENARIOS - len(cols.scenarios)
    free = codecs.MAX_COMPARE - len(state.compared())
    st.subheader("Add a scenario")
    if room <= 0 or free <= 0:
        st.caption(f"{MAX_SCENARIOS} scenarios at most: remove one to add another.")
    else:
        a, b = st.columns(2)
        a.selectbox(
            "A named scenario",
            scenario_names(),
            key="w_compare_preset",
            help="One of the app's named scenarios, as its preset defines it.",
        )
        a.button("Add this scenario", on_click=_add, args=(s, "preset"))
        b.text_input(
            "Or paste a share link",
            key="w_compare_link",
            max_chars=4 * codecs.MAX_QUERY_CHARS,
            placeholder="http://…/Roofline?scenario=…",
            help="Any page's share link: its scenario becomes a column.",
        )
        b.button("Add the linked scenario", on_click=_add, args=(s, "link"))
        if error:
            b.error(f"That link was not added: {md_escape(error)}")
    if cols.removable:
        st.caption("Remove a column:")
        row = st.container(horizontal=True)
        for pos, index in cols.removable.items():
            row.button(
                f"Remove {pos + 1} · {cols.names[pos]}",
                key=f"w_compare_remove_{index}",
                on_click=_remove,
                args=(index,),
            )


def _remove(index: int) -> None:
    queries = state.compared()
    state.set_compared([q for i, q in enumerate(queries) if i != index])
