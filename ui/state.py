"""The scenario lives in the URL: every page reads it from the query string (or, after moving
between pages, from the session), and every widget change writes it back.

Pages call :func:`page_scenario` first; nothing a page needs lives only in ``app.py`` (SPEC 2:
a deep-linked page runs without ``app.py``).
"""

from __future__ import annotations

from urllib.parse import urlsplit

import streamlit as st

from model import codecs
from model.errors import ScenarioError
from model.overrides import resolve
from model.scenario import Scenario

SESSION_PARAMS = "_whatif_params"


def _query_pairs() -> list[tuple[str, str]]:
    pairs = []
    for key in st.query_params.keys():
        for value in st.query_params.get_all(key):
            pairs.append((key, value))
    return pairs


def current_params() -> list[tuple[str, str]]:
    """The scenario pairs of this run: the URL's, or the session's when the URL has none."""
    pairs = _query_pairs()
    if not pairs and st.session_state.get(SESSION_PARAMS):
        pairs = list(st.session_state[SESSION_PARAMS])
        st.query_params.from_dict(_as_dict(pairs))
    return pairs


def _as_dict(pairs: list[tuple[str, str]]) -> dict[str, str | list[str]]:
    out: dict[str, str | list[str]] = {}
    for key, value in pairs:
        if key in out:
            prev = out[key]
            out[key] = (prev if isinstance(prev, list) else [prev]) + [value]
        else:
            out[key] = value
    return out


def load_scenario() -> tuple[Scenario, list[ScenarioError]]:
    """Resolve the URL leniently: bad keys are reported and dropped, the rest is kept."""
    pairs = current_params()
    errors: list[ScenarioError] = []
    size = codecs.query_size(pairs)
    if size > codecs.MAX_QUERY_CHARS:
        errors.append(
            ScenarioError(
                "url",
                f"the link's query string is about {size} characters; at most "
                f"{codecs.MAX_QUERY_CHARS} are accepted, so it was ignored",
            )
        )
        pairs = []
    scenario, more = resolve(pairs, strict=False)
    st.session_state[SESSION_PARAMS] = codecs.to_params(scenario)
    return scenario, errors + more


def write_scenario(scenario: Scenario) -> None:
    """Put ``scenario`` into the URL and the session (called from widget callbacks)."""
    params = codecs.to_params(scenario)
    st.session_state[SESSION_PARAMS] = params
    st.query_params.from_dict(_as_dict(params))


def apply_change(pairs: list[tuple[str, str]], drop_prefixes: tuple[str, ...] = ()) -> None:
    """Apply key=value changes on top of the current scenario and write it back.

    A change that fails validation is kept out and reported on the next run.
    """
    base = [
        (k, v)
        for k, v in current_params()
        if not any(k == p or k.startswith(p + ".") for p in drop_prefixes)
    ]
    scenario, errors = resolve(base + pairs, strict=False)
    write_scenario(scenario)
    if errors:
        st.session_state["_whatif_widget_errors"] = [str(e) for e in errors]


def base_url() -> str:
    """The app's address as the browser sees it (for share links)."""
    try:
        url = st.context.url
    except Exception:  # noqa: BLE001 - AppTest has no browser URL
        url = None
    if url:
        parts = urlsplit(url)
        if parts.scheme and parts.netloc:
            return f"{parts.scheme}://{parts.netloc}"
    host = None
    try:
        host = st.context.headers.get("Host")
    except Exception:  # noqa: BLE001
        host = None
    return f"http://{host}" if host else codecs.DEFAULT_BASE_URL
