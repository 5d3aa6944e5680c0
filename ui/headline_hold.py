"""The headline pause without the wait (issue 22).

After a page's headline figures, the browser needs a short quiet spell to paint them before the
rest of the page's deltas arrive (:data:`ui.sidebar.HEADLINE_PAUSE_S`, measured in
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
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx(suppress_warning=True)
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
