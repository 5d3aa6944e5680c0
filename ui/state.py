"""The scenario lives in the URL: every page reads it from the query string (or, after moving
between pages, from the session), and every widget change writes it back.

Pages call :func:`page_scenario` first; nothing a page needs lives only in ``app.py`` (SPEC 2:
a deep-linked page runs without ``app.py``).

Widgets show the scenario through :func:`sync_widget` and write it back from their
``on_change`` callbacks. One case needs more: after a server restart the browser reconnects to
a new, empty session and does not rerun; its first interaction arrives with the values of all
its widgets, the changed one among them, but Streamlit cannot fire ``on_change`` (the new
session has never seen the widgets, so it has nothing to compare with). On that first run
:func:`sync_widget` leaves the browser's values in place, and :func:`adopt_browser_values`
(called after the widgets) runs the callback of each widget whose value differs from the
scenario, exactly as Streamlit would have, then reruns.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import streamlit as st

from model import codecs
from model.errors import ScenarioError
from model.overrides import bounds, resolve
from model.scenario import Scenario
from ui import streamlit_internals

SESSION_PARAMS = "_whatif_params"
# This run's widget keys whose values the browser sent into a new session (a reconnect), and
# the scenario's values for those widgets, to compare with once the widgets are drawn.
BROWSER_KEYS = "_whatif_browser_keys"
WATCHED = "_whatif_watched"
BASELINE = "_whatif_baseline"
BASELINE_NOTICE = "_whatif_baseline_notice"
PAGE = "_whatif_page"  #: the page this run draws (a key of ``ui.lenses.PAGE_OF``)
TAB = "_whatif_tab"  #: (page, label) of the open tab the link carries
TAB_DEFAULT = "_whatif_tab_default"  #: (page, label) of the tab the page opened on
TRACE_LINK = "_whatif_trace_link"  #: the store id of the request trace the link replays


#: The link a widget callback wrote, held until :func:`flush_url` sends it (issue 22). A
#: link write is a message to the browser, which updates its address bar and re-renders the
#: whole page before it reads the next message; a callback's write went out before the run's
#: headline figures and cost the headline one such re-render (benchmarks/NOTES-speed.md,
#: "The link after the headline"). The run reads the held link as the URL.
URL_PENDING = "_whatif_url_pending"


def _in_callback() -> bool:
    """Whether this code runs in a widget callback, before the script body (Streamlit runs
    the callbacks first). Outside a script run (a unit test), False."""
    return not streamlit_internals.run_flag("has_script_started", True)


def _history_navigation() -> bool:
    """Whether this run follows the browser's back or forward button (its URL is the link)."""
    return streamlit_internals.run_flag("is_history_navigation", False)


def _send_link(pairs: list[tuple[str, str]]) -> None:
    """Make ``pairs`` the browser's address: held until :func:`flush_url` when a widget
    callback writes them (after the headline), sent at once from the page body."""
    if _in_callback():
        st.session_state[URL_PENDING] = pairs
    else:
        st.session_state.pop(URL_PENDING, None)
        st.query_params.from_dict(_as_dict(pairs))


def flush_url() -> None:
    """Send the link a widget callback wrote (:data:`URL_PENDING`) to the browser; the
    sidebar calls it once the headline figures have left."""
    pending = st.session_state.pop(URL_PENDING, None)
    if pending is not None:
        st.query_params.from_dict(_as_dict(pending))


def _query_pairs() -> list[tuple[str, str]]:
    pending = st.session_state.get(URL_PENDING)
    if pending is not None:  # the link as the browser will have it (grouped by key, as below)
        return [
            (k, x)
            for k, v in _as_dict(pending).items()
            for x in (v if isinstance(v, list) else [v])
        ]
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
        _send_link(pairs)
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


def load_scenario(page: str | None = None) -> tuple[Scenario, list[ScenarioError]]:
    """Resolve the URL leniently: bad keys are reported and dropped, the rest is kept.

    The link's other keys are kept beside the scenario: a pinned baseline (``base.*``, resolved
    here; an invalid one is dropped with a notice, :func:`baseline_notice`), the ids of
    shared data sets (``data``, :func:`data_ids`) and ``page``'s open tab (``tab``,
    :func:`open_tab`: kept while the session stays on the page it was opened on)."""
    new_session = SESSION_PARAMS not in st.session_state
    if _history_navigation():  # the address the browser went back to wins over a held link
        st.session_state.pop(URL_PENDING, None)
    st.session_state[BROWSER_KEYS] = (
        streamlit_internals.browser_widget_keys() if new_session else frozenset()
    )
    st.session_state[WATCHED] = {}
    from_browser = bool(_query_pairs())
    pairs = current_params()
    last_page = st.session_state.get(PAGE)
    st.session_state[PAGE] = page
    st.session_state[TRACE_LINK] = codecs.link_trace(pairs)
    tab = codecs.link_tab(pairs)
    arriving = new_session or last_page != page
    if arriving:
        # a link names the tab to open; moving to another page in the session opens its first
        held = (page, tab) if tab is not None and (from_browser or new_session) else None
        st.session_state[TAB] = st.session_state[TAB_DEFAULT] = held
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
    own, base_pairs, data, compared_ = codecs.split_link(pairs)
    scenario, more = resolve(own, strict=False)
    baseline, notice = _resolve_baseline(base_pairs)
    # built (and so resolved) here, once, like the scenario: the lenses compute with it
    st.session_state[BASELINE] = baseline
    st.session_state[BASELINE_NOTICE] = notice
    # the baseline as its own canonical keys (its engine named with its version, as the
    # scenario's is), or none
    base_pairs = [] if baseline is None else codecs.to_params(baseline)
    st.session_state[SESSION_PARAMS] = codecs.to_params(scenario) + _extra_pairs(
        base_pairs, data, compared_[: codecs.MAX_COMPARE]
    )
    # the pages compute and show the engine's values; links and YAML keep them 'auto'
    return scenario, errors + more


def _resolve_baseline(pairs: list[tuple[str, str]]) -> tuple[Scenario | None, str | None]:
    """The baseline of the link's ``base.*`` pairs, all or nothing: a baseline with one bad key
    is not the one its author pinned, so it is dropped and the notice says why."""
    if not pairs:
        return None, None
    scenario, errors = resolve(pairs, strict=False)
    if errors:
        first = errors[0]
        key = f"{codecs.BASE_PREFIX}{first.key}" if first.key else "the baseline"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return None, f"{key}: {first.message}{more}"
    return scenario, None


def _extra_pairs(
    base: list[tuple[str, str]], data: list[str], more: list[str] = ()
) -> list[tuple[str, str]]:
    out = [(codecs.BASE_PREFIX + k, v) for k, v in base]
    if data:
        out.append((codecs.DATA_KEY, ",".join(data)))
    out += [(codecs.COMPARE_KEY, q) for q in more]
    return out + _view_pairs()


def _view_pairs() -> list[tuple[str, str]]:
    """The pairs the session holds beside the link's keys: the replayed trace and the open tab
    (each written last, once)."""
    held = ((codecs.TRACE_KEY, trace_link()), (codecs.TAB_KEY, open_tab()))
    return [(k, v) for k, v in held if v is not None]


def trace_link() -> str | None:
    """The store id of the request trace the link replays, or None."""
    return st.session_state.get(TRACE_LINK)


def set_trace_link(trace_id: str | None) -> None:
    """Make the link replay the stored trace ``trace_id`` (None: no trace)."""
    st.session_state[TRACE_LINK] = trace_id
    _write(current_params())


def open_tab(arrival: bool = False) -> str | None:
    """The label of the tab the link opens on this page, or None (the first tab); with
    ``arrival``, the tab the page opened on (what :func:`ui.views.lazy_tabs` opens first; fixed
    while the session stays on the page)."""
    held = st.session_state.get(TAB_DEFAULT if arrival else TAB)
    if held is None or held[0] != st.session_state.get(PAGE):
        return None
    return held[1]


def forget_tab() -> None:
    """The link's tab is not one of this page's: open the first and drop it from the link."""
    st.session_state[TAB] = st.session_state[TAB_DEFAULT] = None
    _write(current_params())


def set_open_tab(label: str | None, first: bool = False) -> None:
    """The page's open tab changed to ``label``: the link carries it (none for the first tab,
    ``first``, so a link to the first tab stays as short as before)."""
    st.session_state[TAB] = None if first or label is None else (st.session_state.get(PAGE), label)
    _write(current_params())


def _session_extras() -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """The baseline's pairs, the data set ids and the Compare page's further scenarios this
    session's link carries."""
    _, base, data, more = codecs.split_link(st.session_state.get(SESSION_PARAMS) or [])
    return base, data, more


def _write(params: list[tuple[str, str]]) -> None:
    params = [(k, v) for k, v in params if k not in (codecs.TAB_KEY, codecs.TRACE_KEY)]
    params += _view_pairs()
    st.session_state[SESSION_PARAMS] = params
    _send_link(params)


def write_scenario(scenario: Scenario) -> None:
    """Put ``scenario`` into the URL and the session (called from widget callbacks); the
    link's baseline and data sets stay."""
    _write(codecs.to_params(scenario) + _extra_pairs(*_session_extras()))


def apply_change(pairs: list[tuple[str, str]], drop_prefixes: tuple[str, ...] = ()) -> None:
    """Apply key=value changes on top of the current scenario and write it back.

    A change that fails validation is kept out and reported on the next run.
    """
    own, *_ = codecs.split_link(current_params())
    base = [
        (k, v) for k, v in own if not any(k == p or k.startswith(p + ".") for p in drop_prefixes)
    ]
    scenario, errors = resolve(base + pairs, strict=False)
    write_scenario(scenario)
    if errors:
        st.session_state["_whatif_widget_errors"] = [str(e) for e in errors]


def baseline() -> Scenario | None:
    """This run's pinned baseline (effective values, like the scenario), or None."""
    return st.session_state.get(BASELINE)


def baseline_notice() -> str | None:
    """Why the link's baseline was dropped on this run (its first bad key), or None."""
    return st.session_state.get(BASELINE_NOTICE)


def pin_baseline(s: Scenario) -> None:
    """Pin ``s`` as the baseline: every page compares with it, and the link carries it."""
    own, _, data, more = codecs.split_link(current_params())
    resolved, _ = resolve(own, strict=False)
    _write(codecs.to_params(resolved) + _extra_pairs(codecs.to_params(s), data, more))


def swap_baseline(s: Scenario) -> None:
    """The baseline becomes the scenario and ``s`` the baseline (a what-if read both ways)."""
    b = st.session_state.get(BASELINE)
    if b is None:
        return
    _, _, data, more = codecs.split_link(current_params())
    _write(codecs.to_params(b) + _extra_pairs(codecs.to_params(s), data, more))


def clear_baseline() -> None:
    own, _, data, more = codecs.split_link(current_params())
    resolved, _ = resolve(own, strict=False)
    _write(codecs.to_params(resolved) + _extra_pairs([], data, more))


def data_ids() -> list[str]:
    """The ids of the shared data sets the link carries (``data=<id>,…``), unvalidated."""
    return _session_extras()[1]


def set_data_ids(ids: list[str]) -> None:
    """Make the link carry exactly ``ids`` (in order, duplicates dropped); the scenario and
    the baseline stay."""
    own, base, _, more = codecs.split_link(current_params())
    _write(own + _extra_pairs(base, list(dict.fromkeys(ids)), more))


def compared() -> list[str]:
    """The Compare page's further scenarios (link query strings, unvalidated)."""
    return _session_extras()[2]


def set_compared(queries: list[str]) -> None:
    """Make the link carry exactly these further scenarios for the Compare page."""
    own, base, data, _ = codecs.split_link(current_params())
    _write(own + _extra_pairs(base, data, queries[: codecs.MAX_COMPARE]))


def link_extras() -> list[tuple[str, str]]:
    """The pairs a share link carries after the scenario's: the baseline and the data sets."""
    return _extra_pairs(*_session_extras())


def page_url(page: str) -> str:
    """The address of the page ``page`` (a key of :data:`ui.lenses.PAGE_OF`) as the browser
    sees the app: its declaration says its URL path."""
    from ui.lenses import PAGE_OF  # the declarations import the views, which import this

    return PAGE_OF[page].url(base_url())


def share_link(s: Scenario, page: str) -> str:
    """The share link of ``s`` on ``page`` with this session's baseline and data sets."""
    return codecs.to_url(s, page_url(page), extra=link_extras())


def on_field(field: str) -> None:
    """A widget's ``on_change`` for the scenario key ``field`` (widget key ``w_<field>``): its
    value joins the link, written as the link writes values."""
    value = st.session_state[f"w_{field}"]
    apply_change([(field, codecs._text(value))])  # noqa: SLF001 - the URL's one text form


def field_widget(widget, label: str, field: str, shown: Any, /, **kwargs):
    """``widget`` (``st.number_input``, a column's ``selectbox``…) bound to the scenario key
    ``field``: it shows ``shown`` (:func:`sync_widget` on ``w_<field>``) and its changes join
    the link (:func:`on_field`); ``kwargs`` go to the widget (``value=None`` included).

    A number input's or a slider's bounds are the key's ``Field``'s
    (:func:`model.overrides.bounds`), never restated here (issue 41): a bound the Field
    excludes (``> 0``) is left to the validation, which names the key and what it accepts."""
    if getattr(widget, "__name__", "") in ("number_input", "slider"):
        if "min_value" in kwargs or "max_value" in kwargs:
            raise TypeError(f"{field}: a widget takes its bounds from the key's Field")
        lo, hi, _ = bounds(field)
        kwargs.update(min_value=lo, max_value=hi)
    return widget(
        label, key=sync_widget(f"w_{field}", shown), on_change=on_field, args=(field,), **kwargs
    )


def sync_widget(key: str, value: Any) -> str:
    """Make the widget ``key`` show the scenario's ``value`` (call before creating it).

    On a reconnected session's first run the browser's value is kept instead and compared
    with ``value`` by :func:`adopt_browser_values`. Returns ``key``.
    """
    if key in st.session_state.get(BROWSER_KEYS, ()):
        st.session_state[WATCHED][key] = value
    elif key not in st.session_state or _differs(st.session_state[key], value):
        # set only a value that changed: a widget whose value is set from code is re-sent to
        # the browser marked "set", and the browser re-renders it; twenty unchanged widgets
        # re-rendered on every change cost more than the page's charts (NOTES-speed.md)
        st.session_state[key] = value
    return key


def _differs(shown: Any, value: Any) -> bool:
    return type(shown) is not type(value) or shown != value


def watch_widget(key: str, value: Any = None) -> str:
    """For a widget whose value cannot be set (a file uploader, a button): on a reconnected
    session's first run, a browser value other than ``value`` is a change. Returns ``key``."""
    if key in st.session_state.get(BROWSER_KEYS, ()):
        st.session_state[WATCHED][key] = value
    return key


def adopt_browser_values() -> None:
    """Call after a group of widgets. On a reconnected session's first run, run the
    ``on_change`` callback of each widget drawn so far whose browser value differs from the
    scenario (the user's first change after the reconnect), then rerun with the new scenario.
    Does nothing on any other run."""
    watched = st.session_state.get(WATCHED)
    if not watched:
        return
    drawn = [key for key in watched if _widget_drawn(key)]
    changed = [key for key in drawn if st.session_state[key] != watched[key]]
    for key in drawn:
        del watched[key]
    for key in changed:
        _run_on_change(key)
    if changed:
        st.rerun()


# Streamlit has no public API for what follows: the widget values a browser sent into a new
# session, and a widget's callback (ui.streamlit_internals). If these internals change, both
# come back empty and widgets behave as before (the scenario wins).


def _widget_drawn(key: str) -> bool:
    return streamlit_internals.widget_metadata(key) is not None and key in st.session_state


def _run_on_change(key: str) -> None:
    """Run the widget's own ``on_change`` (or ``on_click``) with its args, as Streamlit does."""
    meta = streamlit_internals.widget_metadata(key)
    if meta is not None and meta.callback is not None:
        meta.callback(*(meta.callback_args or ()), **(meta.callback_kwargs or {}))


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


def session_cached(slot: str, key, compute):
    """``compute()``, kept in the session under ``slot`` for the next run while ``key`` is the
    same (one entry per slot: a page's heavy result survives tab switches and expanders, and is
    recomputed when the scenario or its data change)."""
    cached = st.session_state.get(slot)
    if cached is not None and cached[0] == key:
        return cached[1]
    value = compute()
    st.session_state[slot] = (key, value)
    return value
