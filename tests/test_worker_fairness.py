"""Issue 40, R1-R5: the workers that compute Serving runs and read files are shared fairly
between sessions, within a time and memory budget, and a worker that hangs, runs out of
memory or dies is replaced with one sentence for the page, never computed in the server.

Every wait here is a hang guard far above normal; what is asserted is order, cancellation,
budgets and messages, never a wall-clock limit (those are in benchmarks/serving_fairness.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from model import serving
from model.overrides import resolve
from tests.helpers import hang_guard
from ui import serving_worker as w


def scen(*pairs):
    return resolve([(k, str(v)) for k, v in pairs])[0]


@pytest.fixture
def fresh_pool(monkeypatch):
    """Workers of this test's own (the module's idle ones are not touched), stopped after."""
    monkeypatch.delenv("WHATIF_SERVING_INLINE", raising=False)
    idle = {w.LIGHT: [], w.HEAVY: []}
    monkeypatch.setattr(w, "_idle", idle)
    monkeypatch.setattr(w, "_lanes", w.Lanes({w.LIGHT: 2, w.HEAVY: 2}))
    started = []
    start = w._start

    def spy_start(lane):
        proc = start(lane)
        started.append(proc)
        return proc

    monkeypatch.setattr(w, "_start", spy_start)
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _dead(proc, guard_s=60.0) -> bool:
    """Whether ``proc`` has ended (waited for up to a hang guard)."""
    try:
        proc.wait(timeout=guard_s)
    except subprocess.TimeoutExpired:
        return False
    return True


# ------------------------------------------------------------------ fair turns


def test_a_session_first_run_goes_before_another_sessions_queued_work():
    """One worker; session A runs a job and queues three more; B then asks once. When A's
    job ends, B's first run goes next, before A's queue."""
    lanes = w.Lanes({"light": 1})
    order, ready = [], []
    first = lanes.acquire("A", "light")

    def ask(who, tag):
        ready.append(tag)
        turn = lanes.acquire(who, "light")
        order.append(tag)
        lanes.release(turn)

    threads = [threading.Thread(target=ask, args=("A", f"A{i}")) for i in range(3)]
    for th in threads:
        th.start()
    with hang_guard(60, "A's queue forming"):
        while len(ready) < 3 or len(lanes._waiting) < 3:
            time.sleep(0.01)
    b = threading.Thread(target=ask, args=("B", "B0"))
    b.start()
    with hang_guard(60, "B joining the queue"):
        while len(lanes._waiting) < 4:
            time.sleep(0.01)
    lanes.release(first)
    for th in [*threads, b]:
        th.join(60)
    assert order[0] == "B0"
    assert sorted(order[1:]) == ["A0", "A1", "A2"]


def test_a_session_holding_a_worker_waits_behind_one_holding_none():
    """Two workers: A holds one; A and B both wait for the other. B goes first even though
    A asked first (A already has a job running)."""
    lanes = w.Lanes({"light": 2})
    a1 = lanes.acquire("A", "light")
    b1 = lanes.acquire("B", "light")
    order = []

    def ask(who):
        turn = lanes.acquire(who, "light")
        order.append(who)
        lanes.release(turn)

    ta = threading.Thread(target=ask, args=("A",))
    ta.start()
    with hang_guard(60):
        while len(lanes._waiting) < 1:
            time.sleep(0.01)
    tc = threading.Thread(target=ask, args=("C",))
    tc.start()
    with hang_guard(60):
        while len(lanes._waiting) < 2:
            time.sleep(0.01)
    lanes.release(b1)  # one turn frees: C (nothing running) before A (one running)
    with hang_guard(60):
        while not order:
            time.sleep(0.01)
    assert order[0] == "C"
    lanes.release(a1)
    ta.join(60)
    tc.join(60)
    assert order == ["C", "A"]


def test_a_session_that_moves_on_leaves_the_queue():
    lanes = w.Lanes({"light": 1})
    held = lanes.acquire("A", "light")
    with pytest.raises(w.MovedOn), hang_guard(60):
        lanes.acquire("B", "light", moved_on=lambda: True)
    assert lanes._waiting == []
    lanes.release(held)
    assert lanes.running() == {"light": 0}


def test_heavy_jobs_have_their_own_lane_and_a_light_job_is_not_queued_behind_them():
    lanes = w.Lanes({"light": 1, "heavy": 1})
    heavy = lanes.acquire("A", "heavy")
    with hang_guard(60, "a light turn while the heavy lane is full"):
        light = lanes.acquire("B", "light")
    assert lanes.running() == {"light": 1, "heavy": 1}
    assert not lanes.move(light, "heavy")  # full: it stays
    lanes.release(heavy)
    assert lanes.move(light, "heavy")  # room: it moves and frees the light turn
    assert lanes.running() == {"light": 0, "heavy": 1}
    lanes.release(light)
    assert lanes.running() == {"light": 0, "heavy": 0}


def test_the_lane_follows_the_predicted_size():
    assert w._lane_of(scen(("seed", 1))) == w.LIGHT
    assert w._lane_of(scen(("num_requests", 30000), ("seed", 1))) == w.HEAVY


def test_the_predicted_steps_follow_the_rate():
    """The run's steps shrink as more requests share a decode step: at a light rate each
    request decodes nearly alone, all at once they share as many as fit."""
    slow = serving.predicted_steps(scen(("request_rate", 0.1), ("num_requests", 5000)))
    fast = serving.predicted_steps(scen(("request_rate", "inf"), ("num_requests", 5000)))
    search = serving.predicted_steps(scen(("request_rate", 0.1), ("num_requests", 5000)), True)
    assert slow - search == pytest.approx(5000 * (1 + 256), rel=0.01)  # one chunk, 256 alone
    assert fast < slow


# ------------------------------------------------------------------ budgets and faults


def _stopping_take(monkeypatch, handed):
    take = w._take

    def stopped(lane="light"):
        proc = take(lane)
        os.kill(proc.pid, signal.SIGSTOP)  # frozen: it never answers
        handed.append(proc)
        return proc

    monkeypatch.setattr(w, "_take", stopped)


def test_a_frozen_worker_is_stopped_at_its_budget_and_replaced(fresh_pool, monkeypatch):
    handed = []
    _stopping_take(monkeypatch, handed)
    s = scen(("seed", 4401))
    with pytest.raises(w.WorkerFailed) as err, hang_guard(120):
        w._ask(s.raw.model_dump(mode="json"), budget_s=1)
    assert "ran past the 1 s" in err.value.message and err.value.again  # not kept: may finish later
    assert _dead(handed[0])  # stopped, not left holding its slot
    assert w._lanes.running() == {w.LIGHT: 0, w.HEAVY: 0}
    monkeypatch.undo()  # the next job gets a fresh worker that answers
    monkeypatch.delenv("WHATIF_SERVING_INLINE", raising=False)
    with hang_guard(300):
        got = w._ask(s.raw.model_dump(mode="json"))
    assert got["fits"]


def test_a_page_is_told_in_one_sentence_with_the_cli_command(fresh_pool, monkeypatch):
    handed = []
    _stopping_take(monkeypatch, handed)
    monkeypatch.setattr(w, "RUN_BUDGET_S", 1)
    s = scen(("seed", 4402), ("request_rate", 3))
    with hang_guard(120):
        r = w.compute(s)
    assert r["refused"] and not r["fits"]
    assert "ran past the 1 s" in r["reason"]
    assert "whatif eval" in r["reason"] and "--set request_rate=3" in r["reason"]
    assert r["reason"].count(". ") == 0  # one sentence


def test_a_search_that_cannot_finish_sizes_the_replica_by_one_request(fresh_pool, monkeypatch):
    from model.economics import service_of

    handed = []
    _stopping_take(monkeypatch, handed)
    monkeypatch.setattr(w, "RUN_BUDGET_S", 1)
    s = scen(("seed", 4403), ("scenario", "llama-8b-1xh100"))
    with hang_guard(120):
        found = w.search(s)
    assert found == serving.NOT_RUN

    def no_search(*a, **k):
        raise AssertionError("the search ran in the server's thread")

    monkeypatch.setattr(serving, "max_rate", no_search)
    assert service_of(s, found).capacity_basis == "budget"


def test_a_worker_that_dies_twice_is_reported_not_computed_here(fresh_pool, monkeypatch):
    take = w._take
    handed = []

    def dying(lane="light"):
        proc = take(lane)
        proc.kill()
        proc.wait()
        handed.append(proc)
        return proc

    def here(*a, **k):
        raise AssertionError("computed in the server process")

    monkeypatch.setattr(w, "_take", dying)
    monkeypatch.setattr(w, "_work", here)
    s = scen(("seed", 4404))
    with hang_guard(120):
        r = w.compute(s)
    assert len(handed) == 2
    assert r["refused"] and "ended unexpectedly twice" in r["reason"]
    assert tuple(w.codecs.to_params(s)) not in w._cache  # a next try may succeed


def test_a_worker_past_its_memory_cap_is_reported_and_replaced(fresh_pool, monkeypatch):
    """A cap of 305 MB of address space (one BLAS thread, so the figure does not follow the
    machine's cores): the default scenario's lens fits in it (~265 MB), 100,000 requests of
    32,000 prompt tokens all at once (~350 MB) do not."""
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    monkeypatch.setenv("WHATIF_WORKER_MEMORY_MB", "305")
    monkeypatch.setattr(w, "MEMORY_MB", 305)
    small = scen(("seed", 4405))
    big = scen(("seed", 4406), ("num_requests", 100000), ("prompt_tokens", 32000),
               ("request_rate", "inf"))  # fmt: skip
    with hang_guard(300):
        assert w._ask(small.raw.model_dump(mode="json"))["fits"]
    with pytest.raises(w.WorkerFailed) as err, hang_guard(600):
        w._ask(big.raw.model_dump(mode="json"), "lens", w.HEAVY)
    assert "305 MB of memory" in err.value.message
    assert all(p.poll() is not None for p in fresh_pool if p not in w._idle[w.LIGHT])


def test_a_light_job_that_runs_long_is_niced_and_moved_to_the_heavy_lane(fresh_pool, monkeypatch):
    monkeypatch.setattr(w, "LONG_S", 0.05)
    given = []
    give = w._give
    monkeypatch.setattr(
        w, "_give", lambda proc, lane: (given.append((proc, lane)), give(proc, lane))
    )
    s = scen(("seed", 4407), ("num_requests", 3000))
    with hang_guard(300):
        assert w._ask(s.raw.model_dump(mode="json"))["fits"]
    ((proc, lane),) = given
    assert lane == w.HEAVY
    assert os.getpriority(os.PRIO_PROCESS, proc.pid) == w.HEAVY_NICE
    assert proc in w._idle[w.HEAVY]


def test_a_worker_outlives_the_script_thread_that_started_it(fresh_pool):
    """Every Streamlit run is a thread of its own: the worker one run started serves the
    next run's job (a parent-thread death signal would have ended it with the first run)."""
    s = scen(("seed", 4408))
    first = threading.Thread(target=lambda: w._ask(s.raw.model_dump(mode="json")))
    first.start()
    first.join(300)
    with hang_guard(300):
        got = w._ask(scen(("seed", 4409)).raw.model_dump(mode="json"))
    assert got["fits"]
    assert len(fresh_pool) == 1 and fresh_pool[0].poll() is None


_ORPHAN = """
import os, sys
from ui import serving_worker as w
proc = w._start(w.LIGHT)
print(proc.pid, flush=True)
os._exit(0)  # the server dies without stopping its worker
"""


def test_a_worker_ends_when_its_server_dies():
    out = subprocess.run(
        [sys.executable, "-c", _ORPHAN], capture_output=True, text=True, timeout=120
    )
    pid = int(out.stdout.split()[0])
    guard = time.monotonic() + 60  # a hang guard only
    while time.monotonic() < guard:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{pid}/stat") as f:
            if f.read().split()[2] == "Z":  # ended, waiting to be reaped by init
                break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail("the orphaned worker kept running")


def test_the_page_says_what_it_computes_and_whether_it_waits(monkeypatch):
    lanes = w.Lanes({w.LIGHT: 1, w.HEAVY: 1})
    monkeypatch.setattr(w, "_lanes", lanes)
    s = scen(("seed", 4410), ("num_requests", 2000), ("request_rate", 4))
    free = w.describe(s)
    assert "Simulating 2,000 requests at 4 req/s" in free and "engine steps" in free
    assert "waits for a turn" not in free
    held = lanes.acquire("someone else", w.LIGHT)
    assert "every worker is busy, so it waits for a turn first" in w.describe(s)
    lanes.release(held)
