"""Every use of Streamlit's internals, in one place (issue 41, item 6): Streamlit has no public
API for what follows, and each function degrades to the behaviour without it where the
internals are not as expected. Checked against the Streamlit pinned in ``pyproject.toml``
(1.67); a new Streamlit is checked by ``tests/test_streamlit_internals.py``,
``tests/test_headline_hold.py`` and the browser suite before the pin moves.

- :func:`run_context`, :func:`run_flag`, :func:`session_id`: the calling script run's context;
- :func:`session_moved_on`: whether that run was asked to stop or rerun, or its tab closed
  (:mod:`ui.serving_worker` cancels a job nobody waits for);
- :func:`browser_widget_keys`, :func:`widget_metadata`: the widget values a browser sent into
  a new session, and a widget's callback (:mod:`ui.state`'s reconnect);
- :func:`hold`: the headline pause without the wait (below);
- :func:`runner_internals`: the script runner's classes the speed measures (``benchmarks/``)
  time and patch.

**The headline pause without the wait** (issue 22).

After a page's headline figures, the browser needs a short quiet spell to paint them before the
rest of the page's deltas arrive (:data:`ui.page.HEADLINE_PAUSE_S`, measured in
benchmarks/NOTES-speed.md, "Headline first"). The script thread used to *sleep* through it and
only then build the rest of the page, so every run took the pause plus its own work.

:func:`hold` keeps the quiet spell but lets the script go on meanwhile: the messages the run
sends during the pause are held, in order, and leave together when it ends, so a run takes
about the longer of the two instead of their sum, and the rest of the page arrives sooner.

* At the deadline a timer thread sends what is held, even while the script waits on something
  that sends nothing (a worker process, a file).
* A run that ends before the deadline waits for it (sleeping: the interpreter is free) and sends
  what is held before Streamlit's "run finished", which removes every element the run did not
  send, so nothing is ever sent after it.
* A held message is still a point where a rerun or stop request is acted on, as a sent one is;
  what is held when such a run ends still leaves, as it would have without the hold.

Streamlit has no public hook for this: it wraps the run context's ``_enqueue`` (where every
message of the run passes) and the script runner's ``_on_script_finished``. Where either is not
there (another Streamlit, no run context), :func:`hold` sleeps as before.
"""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

_ACTIVE = "_whatif_hold"


class _Hold:
    """One run's held messages, from the headline to the deadline."""

    def __init__(self, ctx, runner, send, seconds: float) -> None:
        self.ctx, self.runner, self.send = ctx, runner, send
        # every st.* call stays a point where a rerun or stop request is acted on
        self.check = getattr(runner, "_maybe_handle_execution_control_request", lambda: None)
        self.deadline = time.monotonic() + seconds
        self.lock = threading.Lock()
        self.held: list = []
        self.released = False
        self.timer = threading.Timer(seconds, self.release)
        self.timer.daemon = True

    def enqueue(self, msg) -> None:
        with self.lock:
            if not self.released:
                self.held.append(msg)
                msg = None
        if msg is not None:
            self.send(msg)  # released meanwhile: straight through, after everything held
        else:
            self.check()

    def release(self) -> None:
        """Send what is held, in order (once: from the timer, or from the run's end)."""
        with self.lock:
            if self.released:
                return
            try:
                while self.held:
                    self.send(self.held.pop(0))
            finally:
                self.released = True
                if self.ctx._enqueue == self.enqueue:
                    self.ctx._enqueue = self.send
                if getattr(self.runner, _ACTIVE, None) is self:
                    setattr(self.runner, _ACTIVE, None)  # nothing left for the run's end

    def finish(self) -> None:
        """At the end of the run, before Streamlit says it finished: wait out the deadline,
        then send what is held."""
        left = self.deadline - time.monotonic()
        if left > 0:
            time.sleep(left)  # releases the interpreter: other sessions' runs go on meanwhile
        self.timer.cancel()
        self.release()


def _wrap_finish(runner) -> None:
    if "_on_script_finished" in vars(runner):  # this runner's is wrapped already
        return
    original = runner._on_script_finished

    def on_script_finished(*args, **kwargs):
        active = getattr(runner, _ACTIVE, None)
        if active is not None:
            setattr(runner, _ACTIVE, None)
            active.finish()
        return original(*args, **kwargs)

    runner._on_script_finished = on_script_finished


def hold(seconds: float) -> bool:
    """Hold this run's messages for ``seconds`` while the script goes on; sleep instead where
    Streamlit's internals are not as expected. Returns whether the messages are held."""
    try:
        ctx = run_context()
        send = getattr(ctx, "_enqueue", None)
        runner = getattr(send, "__self__", None)
        usable = (
            ctx is not None
            and callable(send)
            and callable(getattr(runner, "_on_script_finished", None))
            and getattr(runner, _ACTIVE, None) is None
        )
    except Exception:  # noqa: BLE001 - no run context to hold in: sleep
        usable = False
    if not usable:
        time.sleep(seconds)  # releases the interpreter: other sessions' runs go on meanwhile
        return False
    active = _Hold(ctx, runner, send, seconds)
    _wrap_finish(runner)
    setattr(runner, _ACTIVE, active)
    ctx._enqueue = active.enqueue
    active.timer.start()
    return True


def run_context():
    """The calling Streamlit script run's context, or None outside one (a report, a test)."""
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        return get_script_run_ctx(suppress_warning=True)
    except Exception:  # noqa: BLE001 - no Streamlit here
        return None


def run_flag(name: str, outside: bool) -> bool:
    """The current script run's flag ``name`` (an attribute of its run context), or
    ``outside`` with no run (a unit test) or where Streamlit no longer has it."""
    ctx = run_context()
    return outside if ctx is None else bool(getattr(ctx, name, outside))


def session_id() -> str | None:
    """The calling run's session id, or None outside a run."""
    ctx = run_context()
    sid = getattr(ctx, "session_id", None) if ctx is not None else None
    return str(sid) if sid else None


def session_moved_on() -> bool:
    """Whether the calling script run has been asked to stop or rerun (its user changed
    something), or its session is no longer connected (the tab was closed); False wherever
    that cannot be read (a bare call, another Streamlit)."""
    try:
        from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType

        ctx = run_context()
        if ctx is None:
            return False
        state = getattr(getattr(ctx, "script_requests", None), "_state", None)
        if state is not None and state != ScriptRequestType.CONTINUE:
            return True
        from streamlit.runtime import Runtime

        if Runtime.exists() and ctx.session_id:
            return not Runtime.instance().is_active_session(ctx.session_id)
        return False
    except Exception:  # noqa: BLE001 - no way to tell: wait for the result
        return False


def _inner_state() -> Any:
    try:
        from streamlit.runtime.state.session_state_proxy import get_session_state

        inner = get_session_state()._state  # noqa: SLF001 - the one way to reach it
    except Exception:  # noqa: BLE001 - a missing internal must not break the page
        return None
    needed = ("get_widget_states", "get_widget_id_from_key", "get_widget_metadata")
    return inner if all(hasattr(inner, name) for name in needed) else None


def browser_widget_keys() -> frozenset[str]:
    """Keys of the widgets whose values came with this run from the browser (empty where the
    internals are not there). Meaningful on a session's first run, before any widget exists,
    when every widget state is the browser's."""
    inner = _inner_state()
    if inner is None:
        return frozenset()
    try:
        from streamlit.runtime.state.common import user_key_from_element_id

        states = inner.get_widget_states()
        return frozenset(k for w in states if (k := user_key_from_element_id(w.id)) is not None)
    except Exception:  # noqa: BLE001
        return frozenset()


def widget_metadata(key: str) -> Any:
    """The metadata (callback and its arguments) of the widget ``key``, or None."""
    inner = _inner_state()
    widget_id = None if inner is None else inner.get_widget_id_from_key(key)
    return None if widget_id is None else inner.get_widget_metadata(widget_id)


def runner_internals() -> SimpleNamespace:
    """Streamlit's script-runner internals the speed measures time and patch
    (``benchmarks/page_speed.py``, ``profile_page.py``, ``serve_timed.py``): the
    ``script_runner`` module and its ``ScriptRunner``, ``ScriptCache``, ``SessionState`` and
    the AppTest modules, ``cli_main`` (``streamlit run``'s entry point) and the
    ``MediaFileManager`` whose deferred downloads the golden set records (``tools/golden.py``)."""
    import streamlit.testing.v1.app_test as app_test
    import streamlit.testing.v1.local_script_runner as local_script_runner
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.runtime.scriptrunner import script_runner
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.runtime.state.session_state import SessionState
    from streamlit.web.cli import main as cli_main

    return SimpleNamespace(
        MediaFileManager=MediaFileManager,
        cli_main=cli_main,
        script_runner=script_runner,
        ScriptRunner=script_runner.ScriptRunner,
        ScriptCache=ScriptCache,
        SessionState=SessionState,
        app_test=app_test,
        local_script_runner=local_script_runner,
    )
