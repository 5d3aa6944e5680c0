"""Text shared by pages and charts (no streamlit here): number formatting, and user text made
literal for Streamlit markdown and for Plotly."""

from __future__ import annotations

import html
import re

#: every ASCII punctuation character: CommonMark lets a backslash escape any of them
_MD_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")
#: where GFM would start an autolink: after ':' (https:, mailto:, and Streamlit's :icon: and
#: :color[…] directives), after '@' (e-mail addresses) and between 'www' and '.'
_MD_AUTOLINK = re.compile(r"(?<=[:@])|(?<=www)(?=\.)", re.IGNORECASE)
WORD_JOINER = "\u2060"  # invisible, and not a character any autolink or directive accepts
_LINE_BREAKS = re.compile(r"[\r\n\v\f\u2028\u2029]+")


def md_escape(text: object) -> str:
    """User text (a model or hardware name, an id, a source, an error quoting input) made
    literal for Streamlit markdown: ``st.markdown``, ``st.caption``, ``st.info`` and the other
    alerts, metric labels and every ``help=`` tooltip.

    Every ASCII punctuation character is backslash-escaped, so no emphasis, link, image, HTML,
    heading, list, table, LaTeX, colour or icon directive survives. Escapes alone do not stop
    GFM's autolinks (``https://…``, ``www.…``, ``a@b.c`` become links whatever the
    backslashes; checked in Chromium on Streamlit 1.67), so an invisible word joiner also goes
    after each ``:`` and ``@`` and between ``www`` and ``.``. Line breaks become spaces: the
    text stays on its line.
    """
    text = _LINE_BREAKS.sub(" ", str(text))
    text = _MD_AUTOLINK.sub(WORD_JOINER, text)
    return _MD_PUNCT.sub(r"\\\1", text)


def plotly_text(text: object) -> str:
    """Text from data (names, ids, labels) made literal for Plotly, which renders a subset of
    HTML (``<b>``, ``<i>``, ``<a href>``, ``<br>``, ``<span style>``) in titles, axis titles,
    tick labels, legend names, annotations, text and hover labels: ``&``, ``<`` and ``>``
    become entities (Plotly shows them as the characters), and ``%`` becomes ``&#37;`` so
    that ``%{x}`` in a hovertemplate stays text instead of a template field."""
    return html.escape(str(text), quote=False).replace("%", "&#37;")


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


def latency(seconds: float) -> str:
    """A latency with three significant digits, trailing zeros kept so figures side by side
    read alike: 13.0 ms, 23.5 ms, 1.60 ms, 3.34 s, 135 ms."""
    value, unit = (seconds * 1e3, "ms") if seconds < 0.9995 else (seconds, "s")
    if value >= 100:
        return f"{value:,.0f} {unit}"
    return f"{value:#.3g} {unit}"


def scenario_label(s) -> str:
    """A scenario in one line of plain text (user text inside: escape it for markdown or
    Plotly): "Llama 3.1 70B · FP8 · 4× H100 SXM · vLLM · batch 1"."""
    s = s.effective()
    return " · ".join(
        [
            s.model.name,
            s.weights_dtype.upper(),
            f"{s.gpus}× {s.hardware.name}",
            s.engine_profile.name,
            f"batch {s.batch:,}",
        ]
    )
