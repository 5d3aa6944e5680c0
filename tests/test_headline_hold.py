"""The headline pause holds the rest of the page's messages while the script goes on
(ui.headline_hold, issue 22): nothing leaves during the pause, everything leaves in order, and
before Streamlit says the run finished, however the run ends."""

import time
from pathlib import Path

import pytest
from streamlit.runtime.scriptrunner.script_runner import ScriptRunner
from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext
from streamlit.testing.v1 import AppTest

from ui import headline_hold

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


@pytest.fixture
def timeline(monkeypatch):
    """(time, what) for: each message the script makes (made), each message that leaves the
    run (sent), the hold's start, and the run's end."""
    events = []
    make, send, hold = (
        ScriptRunContext.enqueue,
        ScriptRunner._enqueue_forward_msg,
        headline_hold.hold,
    )

    def made(self, msg):
        events.append((time.monotonic(), "made", _label(msg)))
        return make(self, msg)

    def sent(self, msg):
        events.append((time.monotonic(), "sent", _label(msg)))
        return send(self, msg)

    def held(seconds):
        events.append((time.monotonic(), "hold", seconds))
        return hold(seconds)

    from streamlit.testing.v1.local_script_runner import LocalScriptRunner

    finish = LocalScriptRunner._on_script_finished

    def finished(self, *args, **kwargs):
        events.append((time.monotonic(), "finished", None))
        return finish(self, *args, **kwargs)

    monkeypatch.setattr(ScriptRunContext, "enqueue", made)
    monkeypatch.setattr(ScriptRunner, "_enqueue_forward_msg", sent)
    monkeypatch.setattr(headline_hold, "hold", held)
    monkeypatch.setattr(LocalScriptRunner, "_on_script_finished", finished)
    return events


def _at(events, kind, label):
    return next(t for t, k, what in events if k == kind and what == label)


def _sent(events):
    return [what for _, k, what in events if k == "sent"]


def test_a_wait_after_the_headline_does_not_hold_the_rest(timeline):
    # the timer sends what is held at the deadline, while the script still waits on something
    # that sends nothing (a worker, a file)
    def script():
        import time

        import streamlit as st

        from ui import headline_hold

        st.metric("head", 1)
        headline_hold.hold(0.05)
        st.markdown("held")
        time.sleep(0.4)
        st.markdown("late")

    at = AppTest.from_function(script, default_timeout=10).run()
    assert not at.exception
    assert [m.value for m in at.markdown] == ["held", "late"]
    start = next(t for t, k, _ in timeline if k == "hold")
    assert _at(timeline, "sent", "metric:head") < start
    assert _at(timeline, "made", "markdown:held") < start + 0.05  # the script went on
    assert start + 0.05 <= _at(timeline, "sent", "markdown:held") < start + 0.35
    assert _sent(timeline)[-2:] == ["markdown:held", "markdown:late"]


@pytest.mark.parametrize("ending", ["end", "stop", "error"])
def test_a_run_that_ends_before_the_deadline_sends_everything_before_it_finishes(timeline, ending):
    # Streamlit's "run finished" removes every element the run did not send: what is held
    # must leave first, whether the script ends, stops or raises
    def script():
        import streamlit as st

        from ui import headline_hold

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


def test_a_page_sends_the_same_messages_in_the_same_order_with_the_hold(timeline, monkeypatch):
    from ui import sidebar

    def page_run(pause_s):
        monkeypatch.setattr(sidebar, "HEADLINE_PAUSE_S", pause_s)
        timeline.clear()
        at = AppTest.from_file(str(ROOT / "pages/1_Roofline.py"), default_timeout=60)
        at.query_params["scenario"] = "seed-3b-4090"
        at.run()
        assert not at.exception
        at.number_input(key="w_batch").set_value(8)
        timeline.clear()
        at.run()
        assert not at.exception
        return at, list(timeline)

    plain, without = page_run(0.0)
    held, with_hold = page_run(0.08)
    assert _sent(with_hold) == _sent(without)
    assert [m.value for m in held.metric] == [m.value for m in plain.metric]
    assert held.sidebar.number_input(key="w_batch").value == 8
    start = next(t for t, k, _ in with_hold if k == "hold")
    made = [t for t, k, _ in with_hold if k == "made" and t > start]
    sent = [t for t, k, _ in with_hold if k == "sent" and t > start]
    assert made and min(made) < start + 0.08  # the rest of the page was built meanwhile
    assert sent and min(sent) >= start + 0.08  # and nothing left before the deadline
    finished = next(t for t, k, _ in with_hold if k == "finished")
    assert max(sent) <= finished


def test_a_second_run_on_the_same_runner_holds_again(timeline):
    def script():
        import streamlit as st

        from ui import headline_hold

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
