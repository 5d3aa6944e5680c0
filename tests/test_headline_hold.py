"""The headline pause holds the rest of the page's messages while the script goes on
(ui.streamlit_internals.hold, issue 22): nothing leaves during the pause, everything leaves in order, and
before Streamlit says the run finished, however the run ends."""

import threading
import time
from pathlib import Path

import pytest
from streamlit.runtime.scriptrunner.script_runner import ScriptRunner
from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext
from streamlit.testing.v1 import AppTest

from tests.pages import open_page
from ui import streamlit_internals as headline_hold

ROOT = Path(__file__).resolve().parent.parent


def _label(msg) -> str:
    """A delta's element and its text, or the message's kind."""
    kind = msg.WhichOneof("type")
    if kind != "delta":
        return kind or "?"
    element = msg.delta.new_element
    which = element.WhichOneof("type")
    if which is None:
        return msg.delta.WhichOneof("type") or "?"
    inner = getattr(element, which)
    text = getattr(inner, "label", None) or getattr(inner, "body", None) or ""
    return f"{which}:{text}"


def record_timeline(monkeypatch) -> list:
    """(time, kind, what) for: each message the script makes (made), each message that leaves
    the run (sent), the hold's start (hold, its seconds) and what it returned (held: True when
    the messages are held, False when it slept), and the run's end (finished).

    ``headline_hold._test_left`` is an event set when the message "held" has left the run: a
    script can wait on it as it would on a worker or a file (something that sends nothing)."""
    events = []
    make, send, hold = (
        ScriptRunContext.enqueue,
        ScriptRunner._enqueue_forward_msg,
        headline_hold.hold,
    )
    left = threading.Event()

    def made(self, msg):
        events.append((time.monotonic(), "made", _label(msg)))
        return make(self, msg)

    def sent(self, msg):
        events.append((time.monotonic(), "sent", _label(msg)))
        out = send(self, msg)
        if _label(msg) == "markdown:held":
            left.set()
        return out

    def held(seconds):
        events.append((time.monotonic(), "hold", seconds))
        kept = hold(seconds)
        events.append((time.monotonic(), "held", kept))
        return kept

    from streamlit.testing.v1.local_script_runner import LocalScriptRunner

    finish = LocalScriptRunner._on_script_finished

    def finished(self, *args, **kwargs):
        events.append((time.monotonic(), "finished", None))
        return finish(self, *args, **kwargs)

    monkeypatch.setattr(ScriptRunContext, "enqueue", made)
    monkeypatch.setattr(ScriptRunner, "_enqueue_forward_msg", sent)
    monkeypatch.setattr(headline_hold, "hold", held)
    monkeypatch.setattr(LocalScriptRunner, "_on_script_finished", finished)
    monkeypatch.setattr(headline_hold, "_test_left", left, raising=False)
    return events


@pytest.fixture
def timeline(monkeypatch):
    """:func:`record_timeline` for one test."""
    return record_timeline(monkeypatch)


def _at(events, kind, label):
    return next(t for t, k, what in events if k == kind and what == label)


def _sent(events):
    return [what for _, k, what in events if k == "sent"]


def wait_after_the_headline():
    """A script that, after its headline, waits on something that sends nothing (a worker, a
    file): here, until the held message has left (``record_timeline``), 30 s at most."""
    import streamlit as st

    from ui import streamlit_internals as headline_hold

    st.metric("head", 1)
    st.session_state["held"] = headline_hold.hold(0.05)
    st.markdown("held")
    st.session_state["left"] = headline_hold._test_left.wait(30)
    st.markdown("late")


def test_a_wait_after_the_headline_does_not_hold_the_rest(timeline):
    # the timer sends what is held at the deadline, while the script still waits on something
    # that sends nothing (a worker, a file)
    at = AppTest.from_function(wait_after_the_headline, default_timeout=60).run()
    assert not at.exception
    assert [m.value for m in at.markdown] == ["held", "late"]
    start = next(t for t, k, _ in timeline if k == "hold")
    assert _at(timeline, "sent", "metric:head") < start
    assert at.session_state["held"] is True  # the script went on (held, no sleep)
    assert start + 0.05 <= _at(timeline, "sent", "markdown:held")  # the quiet spell kept
    # it left while the script still waited, sent by the timer, not by the run's end
    assert at.session_state["left"] is True
    assert _at(timeline, "sent", "markdown:held") < _at(timeline, "made", "markdown:late")
    assert _sent(timeline)[-2:] == ["markdown:held", "markdown:late"]


@pytest.mark.parametrize("ending", ["end", "stop", "error"])
def test_a_run_that_ends_before_the_deadline_sends_everything_before_it_finishes(timeline, ending):
    # Streamlit's "run finished" removes every element the run did not send: what is held
    # must leave first, whether the script ends, stops or raises
    def script():
        import streamlit as st

        from ui import streamlit_internals as headline_hold

        st.metric("head", 1)
        headline_hold.hold(0.1)
        st.markdown("one")
        st.markdown("two")
        ending = st.session_state.get("ending")
        if ending == "stop":
            st.stop()
        if ending == "error":
            raise ValueError("boom")
        st.markdown("three")

    at = AppTest.from_function(script, default_timeout=10)
    at.session_state["ending"] = ending
    at.run()
    expected = ["one", "two"] if ending != "end" else ["one", "two", "three"]
    assert [m.value for m in at.markdown] == expected
    assert bool(at.exception) == (ending == "error")
    start = next(t for t, k, _ in timeline if k == "hold")
    finished = next(t for t, k, _ in timeline if k == "finished")
    assert _at(timeline, "sent", "markdown:one") >= start + 0.1  # the quiet spell kept
    assert all(t <= finished for t, k, _ in timeline if k == "sent")
    assert finished >= start + 0.1


def page_run(monkeypatch, timeline: list, pause_s: float):
    """The Roofline page, run once and again after a change, with the headline pause
    ``pause_s``: the app and the timeline of the second run."""
    from ui import page

    monkeypatch.setattr(page, "HEADLINE_PAUSE_S", pause_s)
    timeline.clear()
    at = open_page("pages/1_Roofline.py", pairs=[("scenario", "seed-3b-4090")], timeout=60)
    at.number_input(key="w_batch").set_value(8)
    timeline.clear()
    at.run()
    assert not at.exception
    return at, list(timeline)


def test_a_page_sends_the_same_messages_in_the_same_order_with_the_hold(timeline, monkeypatch):
    plain, without = page_run(monkeypatch, timeline, 0.0)
    held, with_hold = page_run(monkeypatch, timeline, 0.08)
    assert _sent(with_hold) == _sent(without)
    assert [m.value for m in held.metric] == [m.value for m in plain.metric]
    assert held.sidebar.number_input(key="w_batch").value == 8
    start = next(t for t, k, _ in with_hold if k == "hold")
    made = [t for t, k, _ in with_hold if k == "made" and t > start]
    sent = [t for t, k, _ in with_hold if k == "sent" and t > start]
    # the rest of the page was built meanwhile: the hold kept its messages, no sleep
    assert made and [w for _, k, w in with_hold if k == "held"] == [True]
    assert sent and min(sent) >= start + 0.08  # and nothing left before the deadline
    finished = next(t for t, k, _ in with_hold if k == "finished")
    assert max(sent) <= finished


def test_a_second_run_on_the_same_runner_holds_again(timeline):
    def script():
        import streamlit as st

        from ui import streamlit_internals as headline_hold

        st.metric("head", st.session_state.get("n", 0))
        st.session_state["held"] = headline_hold.hold(0.02)
        st.markdown("rest")

    at = AppTest.from_function(script, default_timeout=10).run()
    for n in range(3):
        at.session_state["n"] = n
        at.run()
        assert at.session_state["held"] is True
        assert [m.value for m in at.markdown] == ["rest"]


def test_outside_a_run_it_sleeps():
    start = time.monotonic()
    assert headline_hold.hold(0.01) is False
    assert time.monotonic() - start >= 0.01
