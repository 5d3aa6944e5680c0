"""The Serving lens's computation, and the reading of uploaded files, off the server's
interpreter, shared fairly between sessions, each job within a time and memory budget.

A run, the capacity search and the Pareto sweep take about a second of pure Python and numpy
for one scenario; run in a script thread, that second holds the interpreter every session
shares (the GIL), so every other user's page would wait. Here it runs in worker processes
(``python -m ui.serving_worker``, started on first use and kept): the session's thread writes
the scenario to a free one and waits on the pipe without holding the interpreter, and results
are cached per scenario (its link parameters are the key) for every session.

Issue 40 (one link must not take the server from everyone):

* **Two lanes.** A job's size is predicted before it starts
  (:func:`model.serving.predicted_work`): a light one (the default scenario's lens, a
  search) goes to the light lane (:data:`MAX_WORKERS` workers at nice :data:`WORKER_NICE`), a
  heavy one (past :data:`HEAVY_WORK`, a file past 1 MB) to the heavy lane
  (:data:`MAX_HEAVY` workers at nice :data:`HEAVY_NICE`, which the kernel runs only when a
  light worker leaves it a core). A light job still running after :data:`LONG_S` is niced to
  the heavy lane's priority and moves there when it has room, so a mispredicted job cannot keep
  a light slot busy at a light job's priority.
* **Fair turns.** Within a lane a free worker goes to the waiting job whose session has the
  fewest jobs running, then the fewest started in the last minute, then the oldest: a session's
  queued work never waits in front of another session's first run.
* **Cancelled when not shown.** A session that moves on (its user changed something, or the
  tab is gone) leaves the queue, or has its worker stopped, at once.
* **Budgets.** Every job has a wall-clock budget (:data:`RUN_BUDGET_S`, files
  :data:`FILE_BUDGET_S`) and every worker an address-space cap (:data:`MEMORY_MB`); past either
  the worker is stopped and replaced, and the page says so in one sentence with the CLI command
  that runs the scenario on one's own machine. A worker that dies twice on one job is reported
  the same way; nothing is ever computed in the server process instead (only
  ``WHATIF_SERVING_INLINE=1``, a platform without subprocesses, computes in the calling
  thread). A worker whose server dies ends with it (a watchdog thread).

The worker reads a scenario as JSON (the raw keys, validated there like any other input), or
an uploaded file as base64 inside that JSON (read there by the same readers as ever), and
writes back the result pickled; only this process reads that pickle, from the child it
started itself, never anything from outside: a user's bytes reach it only as data the child's
own ``pickle.dumps`` wrote (strings and numbers of a parsed file), never as pickle opcodes.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import pickle
import struct
import subprocess
import sys
import threading
import time
from collections import Counter, OrderedDict, deque
from pathlib import Path

from model import codecs, serving
from model.errors import ScenarioError
from model.scenario import Scenario
from ui import streamlit_internals
from ui.settings import env_number

log = logging.getLogger(__name__)
serving.SERVER_BUDGET = True  # this process serves pages: the budget applies
CACHE_SIZE = 64
ROOT = Path(__file__).resolve().parent.parent

_lock = threading.Lock()  # the cache
LIGHT, HEAVY = "light", "heavy"
#: light-lane workers at most: each takes one job at a time
MAX_WORKERS = int(env_number("WHATIF_SERVING_WORKERS", 2, 1, 64))
#: heavy-lane workers at most (a hundred-thousand-request run, a big file)
MAX_HEAVY = int(env_number("WHATIF_HEAVY_WORKERS", 2, 1, 64))
#: predicted work (:func:`model.serving.predicted_work`, decode steps' worth) past which a job
#: is heavy: the default scenario's lens is ~800,000 (about 0.7 s), the largest the server
#: accepts :data:`model.serving.SERVER_MAX_WORK`, 6,000,000
HEAVY_WORK = env_number("WHATIF_HEAVY_WORK", 1_600_000, 0, 1e12)
HEAVY_BYTES = 1_000_000  #: a file past this size is read in the heavy lane
#: seconds after which a light job is niced like a heavy one and moved to the heavy lane
LONG_S = env_number("WHATIF_LONG_S", 3, 0.1, 3600)
#: a lens run's or a search's wall-clock budget [s]; past it the worker is stopped
RUN_BUDGET_S = env_number("WHATIF_RUN_BUDGET_S", 120, 1, 86400)
#: a worker's address-space cap [MB] (0: none); a job past it fails with MemoryError there
MEMORY_MB = int(env_number("WHATIF_WORKER_MEMORY_MB", 2048, 0, 1 << 20))
_cache: OrderedDict[tuple, dict] = OrderedDict()


class WorkerFailed(Exception):
    """A job the workers could not finish (past its time or memory budget, or its worker died
    twice), in one sentence for the page; ``again`` says whether running the same job again
    could succeed (a died worker, a time budget a busy machine used up) or would fail the same
    way (the memory cap)."""

    def __init__(self, message: str, again: bool = False):
        super().__init__(message)
        self.message, self.again = message, again


def _work(raw: dict, kind: str = "lens"):
    from model import serving

    if kind in FILE_KINDS:  # a file to read: {"name": …, "data": base64}
        import base64

        return FILE_KINDS[kind](raw["name"], base64.b64decode(raw["data"]))
    if kind == "plan":  # one hardware preset of the Plan page: {"job": [query, hw, …]}
        from model import plan

        return plan.plan_job(tuple(raw["job"]))
    s = Scenario.model_validate(raw)
    if kind == "search":  # the capacity search alone (what the Scale to zero lens needs)
        return serving.max_rate(s)
    if kind in serving.VIEWS:  # the Disaggregation view, the Pareto front: only while shown
        return serving.VIEWS[kind](s)
    return serving.serving_lens(s)


def _import_file(name: str, data: bytes):
    from model.readers.importers import import_file

    return import_file(name, data)


def _read_trace(name: str, data: bytes):
    from model.readers.traces import read_trace

    return read_trace(name, data)


#: the files the worker reads for a session (issue 22): every importer has to scan a crafted
#: 5 MB file before refusing it, seconds of pure Python that would hold every other session
FILE_KINDS = {"import": _import_file, "trace": _read_trace}
FILE_BUDGET_S = env_number("WHATIF_FILE_BUDGET_S", 60, 1, 3600)


def read_file(kind: str, name: str, data: bytes):
    """Read an uploaded or stored file off the session's thread: ``kind`` "import" (a
    measurement file, :func:`model.readers.importers.import_file`) or "trace"
    (:func:`model.readers.traces.read_trace`). Raises the reader's :class:`ScenarioError` as
    the reader would, and one naming the file when the read passes :data:`FILE_BUDGET_S` or
    the worker's memory cap (the worker is stopped and a fresh one takes the next job)."""
    if os.environ.get("WHATIF_SERVING_INLINE") == "1":
        return FILE_KINDS[kind](name, data)
    import base64

    raw = {"name": name, "data": base64.b64encode(bytes(data)).decode("ascii")}
    lane = HEAVY if len(data) > HEAVY_BYTES else LIGHT
    try:  # the user's file: read to the end even if the session moves on
        return _ask(raw, kind, lane, budget_s=FILE_BUDGET_S, cancellable=False)
    except WorkerFailed as exc:
        raise ScenarioError(name, exc.message) from None


def _start(lane: str) -> subprocess.Popen:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "WHATIF_WORKER_NICE_NOW": str(HEAVY_NICE if lane == HEAVY else WORKER_NICE),
        "WHATIF_WORKER_PARENT": str(os.getpid()),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "ui.serving_worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=str(ROOT),
        env=env,
    )


def _read(stream, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = stream.read(n - len(out))
        if not chunk:
            raise EOFError("the serving worker closed its pipe")
        out += chunk
    return out


_pool_lock = threading.Lock()
_idle: dict[str, list[subprocess.Popen]] = {LIGHT: [], HEAVY: []}  # started, free, per nice


def _take(lane: str = LIGHT) -> subprocess.Popen:
    """A free worker of ``lane``'s priority (started if none is idle); the caller holds a
    turn of :data:`_lanes`."""
    with _pool_lock:
        while _idle[lane]:
            proc = _idle[lane].pop()
            if proc.poll() is None:
                return proc
    return _start(lane)


def _give(proc: subprocess.Popen, lane: str) -> None:
    """Keep a worker that finished its job for the next of ``lane`` (its priority now); one
    more than the lane holds is stopped."""
    with _pool_lock:
        if len(_idle[lane]) < (MAX_HEAVY if lane == HEAVY else MAX_WORKERS):
            _idle[lane].append(proc)
            return
    proc.kill()
    proc.wait()


class _Turn:
    __slots__ = ("seq", "session", "lane")

    def __init__(self, seq: int, session: str, lane: str):
        self.seq, self.session, self.lane = seq, session, lane


class Lanes:
    """Turns on the workers, per lane, handed out fairly between sessions: when a worker of a
    lane is free, the waiting job whose session has the fewest jobs running goes first, then
    the one whose session started the fewest jobs in the last :data:`RECENT_S`, then the
    oldest. :meth:`acquire` gives up waiting when ``moved_on()`` says so (:class:`MovedOn`)."""

    RECENT_S = 60.0

    def __init__(self, sizes: dict[str, int]):
        self.sizes = dict(sizes)
        self._cv = threading.Condition()
        self._running: Counter = Counter()  # per lane
        self._per_session: Counter = Counter()  # jobs running per session, every lane
        self._started: deque = deque()  # (monotonic time, session) of recent starts
        self._waiting: list[_Turn] = []
        self._seq = itertools.count()

    def _recent(self, session: str) -> int:
        cut = time.monotonic() - self.RECENT_S
        while self._started and self._started[0][0] < cut:
            self._started.popleft()
        return sum(1 for _, who in self._started if who == session)

    def _first(self, lane: str) -> _Turn | None:
        mine = [t for t in self._waiting if t.lane == lane]
        if not mine:
            return None
        return min(
            mine, key=lambda t: (self._per_session[t.session], self._recent(t.session), t.seq)
        )

    def acquire(self, session: str, lane: str, moved_on=lambda: False) -> _Turn:
        with self._cv:
            turn = _Turn(next(self._seq), session, lane)
            self._waiting.append(turn)
            try:
                while not (self._running[lane] < self.sizes[lane] and self._first(lane) is turn):
                    if moved_on():
                        raise MovedOn
                    self._cv.wait(POLL_S)
            finally:
                self._waiting.remove(turn)
                self._cv.notify_all()
            self._running[lane] += 1
            self._per_session[session] += 1
            self._started.append((time.monotonic(), session))
            return turn

    def move(self, turn: _Turn, lane: str) -> bool:
        """Move a running job to ``lane`` if that lane has a free turn (its old turn frees)."""
        with self._cv:
            if turn.lane == lane or self._running[lane] >= self.sizes[lane]:
                return False
            self._running[turn.lane] -= 1
            self._running[lane] += 1
            turn.lane = lane
            self._cv.notify_all()
            return True

    def release(self, turn: _Turn) -> None:
        with self._cv:
            self._running[turn.lane] -= 1
            self._per_session[turn.session] -= 1
            if self._per_session[turn.session] <= 0:
                del self._per_session[turn.session]
            self._cv.notify_all()

    def running(self) -> dict:
        with self._cv:
            return {lane: self._running[lane] for lane in self.sizes}


_lanes = Lanes({LIGHT: MAX_WORKERS, HEAVY: MAX_HEAVY})


def _leave_for_the_next_run() -> None:
    """Hand control back to Streamlit, which starts the session's new run (or stops): any
    element the script sends is where Streamlit acts on a pending rerun or stop request (its
    RerunException or StopException propagates from here)."""
    import streamlit as st

    st.empty()


class MovedOn(Exception):
    """The session asked for another run (a widget changed) or is gone while its job waited
    or computed: the worker was stopped (or never taken), and the stale result is not waited
    for."""


POLL_S = 0.1  #: how often a waiting session checks whether it has moved on


#: whether the session waiting on a job moved on (a module name, so tests can stand in for it)
session_moved_on = streamlit_internals.session_moved_on


def session_key() -> str:
    """Whose job this is: the Streamlit session's id, or the calling thread's outside one."""
    return streamlit_internals.session_id() or f"thread-{threading.get_ident()}"


def _renice(proc: subprocess.Popen, nice: int) -> None:
    try:
        os.setpriority(os.PRIO_PROCESS, proc.pid, nice)
    except (OSError, AttributeError):  # gone, or not this platform
        pass


def _wait(
    proc: subprocess.Popen, budget_s: float | None, moved_on=session_moved_on, on_long=None
) -> None:
    """Until the worker's answer starts (no interpreter held): TimeoutError past the budget,
    :class:`MovedOn` as soon as the session has asked for another run (checked every
    :data:`POLL_S`); ``on_long()`` once the job has run :data:`LONG_S`."""
    import select

    start = time.monotonic()
    while True:
        spent = time.monotonic() - start
        if on_long is not None and spent >= LONG_S:
            on_long()
            on_long = None
        left = None if budget_s is None else budget_s - spent
        if left is not None and left <= 0:
            raise TimeoutError
        step = POLL_S if left is None else min(POLL_S, left)
        ready, _, _ = select.select([proc.stdout], [], [], step)
        if ready:
            return
        if moved_on():
            raise MovedOn


def _stop(proc: subprocess.Popen) -> None:
    proc.kill()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:  # a zombie the kernel reaps later
        pass


def _ask(
    raw: dict,
    kind: str = "lens",
    lane: str = LIGHT,
    budget_s: float | None = None,
    cancellable: bool = True,
    session: str | None = None,
):
    """``kind`` of work on ``raw`` in a worker of ``lane`` (its turn taken fairly, see
    :class:`Lanes`), within ``budget_s`` (default :data:`RUN_BUDGET_S`); with
    ``cancellable``, a session that moves on while it waits or computes stops the job and
    goes to its next run (:class:`MovedOn`). Raises :class:`WorkerFailed` past a budget or
    when the worker died twice; never computes here."""
    budget_s = RUN_BUDGET_S if budget_s is None else budget_s
    moved_on = session_moved_on if cancellable else (lambda: False)
    body = json.dumps({"kind": kind, "scenario": raw}).encode()
    session = session or session_key()
    for attempt in range(2):
        try:
            turn = _lanes.acquire(session, lane, moved_on)
        except MovedOn:
            _leave_for_the_next_run()  # raises Streamlit's rerun (or stop)
            return _ask(raw, kind, lane, budget_s, cancellable, session)  # it did not: go on
        nice_lane = turn.lane
        proc = _take(nice_lane)

        def demote(proc=proc, turn=turn):
            nonlocal nice_lane
            if nice_lane == HEAVY:
                return
            _renice(proc, HEAVY_NICE)  # a long job yields the CPU to light ones from now on
            nice_lane = HEAVY
            _lanes.move(turn, HEAVY)  # and frees its light turn when the heavy lane has room

        try:
            proc.stdin.write(struct.pack("<Q", len(body)) + body)
            proc.stdin.flush()
            _wait(proc, budget_s, moved_on, on_long=demote)
            (size,) = struct.unpack("<Q", _read(proc.stdout, 8))
            ok, value = pickle.loads(_read(proc.stdout, size))  # noqa: S301 - our child
        except TimeoutError:
            log.warning("a worker passed its %g s budget on a %s job; stopped", budget_s, kind)
            _stop(proc)
            _lanes.release(turn)
            raise WorkerFailed(  # not kept: on a less busy server the same job may finish
                f"it ran past the {budget_s:g} s a page may compute on this shared server and "
                "was stopped (its worker was replaced)",
                again=True,
            ) from None
        except MovedOn:  # the session changed something: its stale job is not finished
            _stop(proc)
            _lanes.release(turn)
            _leave_for_the_next_run()  # raises Streamlit's rerun (or stop)
            continue  # it did not: the request was withdrawn, so compute again
        except (OSError, EOFError, struct.error, pickle.UnpicklingError):
            log.exception("a serving worker failed (attempt %d)", attempt + 1)
            _stop(proc)
            _lanes.release(turn)
            continue
        except BaseException:  # Streamlit's own stop, or anything else: the turn comes back
            _stop(proc)
            _lanes.release(turn)
            raise
        if ok == "memory":  # past the address-space cap: the worker is not reused
            _stop(proc)
            _lanes.release(turn)
            raise WorkerFailed(
                f"it needed more than the {MEMORY_MB:,} MB of memory a page may use on this "
                "shared server and was stopped"
            )
        _give(proc, nice_lane)  # before the turn frees, so the next job finds it idle
        _lanes.release(turn)
        if ok == "refused":  # a reader's refusal, raised again as the reader raised it
            raise ScenarioError(*value)
        if ok:
            return value
        raise RuntimeError(value)
    log.error("a %s job's worker died twice; not computed", kind)
    raise WorkerFailed(
        "its worker process ended unexpectedly twice (it was replaced); try again", again=True
    )


def _lane_of(s: Scenario, search_only: bool = False) -> str:
    return HEAVY if serving.predicted_work(s, search_only) > HEAVY_WORK else LIGHT


def cached(s: Scenario) -> dict | None:
    """The lens's cached result for ``s``, or None when it has to be computed."""
    with _lock:
        return _cache.get(tuple(codecs.to_params(s)))


def describe(s: Scenario) -> str:
    """What :func:`compute` is about to do for ``s``, in one line for the page while it works
    (issue 40, item 4): the run's size, and whether it waits for a turn first."""
    rate = "all at once" if s.request_rate == "inf" else f"at {float(s.request_rate):g} req/s"
    steps, work = serving.predicted(s)
    lane = HEAVY if work > HEAVY_WORK else LIGHT  # as _lane_of, from the same estimate
    busy = _lanes.running()[lane] >= _lanes.sizes[lane]
    wait = "; every worker is busy, so it waits for a turn first" if busy else ""
    return (
        f"Simulating {s.num_requests:,} requests {rate}, then the capacity search and its "
        f"sweep (about {steps:,.0f} engine steps in a worker process){wait}…"
    )


def compute(s: Scenario) -> dict:
    """The Serving lens's result for ``s`` (:func:`model.serving.serving_lens`), cached; a
    scenario past the shared server's budget, predicted or met, comes back ``refused`` with
    the reason and the CLI command that runs it."""
    key = tuple(codecs.to_params(s))
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    refused = serving.server_refusal(s)  # predicted from the scenario's size, before it runs
    if refused:
        return {"fits": False, "refused": True, "reason": refused, "figures": {}}
    raw = s.raw.model_dump(mode="json")
    if os.environ.get("WHATIF_SERVING_INLINE") == "1":
        result = _work(raw)
    else:
        try:
            result = _ask(raw, "lens", _lane_of(s))
        except WorkerFailed as exc:
            reason = f"{exc.message}; run it on your own machine: {serving._cli(s)}"
            result = {"fits": False, "refused": True, "reason": reason, "figures": {}}
            if exc.again:
                return result  # not kept: the next try may well succeed
    with _lock:
        _cache[key] = result
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    if result.get("fits"):
        _keep_search(s, result["search"])
    return result


#: the capacity searches this server has (from the Serving lens's results or run for
#: :func:`search`), by :func:`model.serving.search_key`: kept here, by the caller, and passed
#: to the core (model/ keeps no cache the app fills)
_searches: OrderedDict = OrderedDict()


def _keep_search(s: Scenario, found) -> None:
    with _lock:
        _searches[serving.search_key(s)] = found
        while len(_searches) > CACHE_SIZE:
            _searches.popitem(last=False)


def search(s: Scenario) -> dict | str | None:
    """The capacity search for ``s`` (:func:`model.serving.max_rate`), run in a worker so a lens
    that sizes replicas (Scale to zero, the landing page, Compare) never runs it in the
    session's thread; pass it to the core (``search=`` of :func:`model.serving.replica`,
    :func:`model.economics.economics_lens`, :func:`model.evaluate.summary`).

    :data:`model.serving.NOT_RUN` when the workers could not finish it (the core then sizes the
    replica by one request, basis "budget"); None for a scenario that cannot serve or whose
    search is past the server's budget: the core says so at once, without searching."""
    key = serving.search_key(s)
    with _lock:
        if key in _searches:
            _searches.move_to_end(key)
            return _searches[key]
    if serving.search_over_budget(s):
        return None  # the core's own budget says so
    raw = s.raw.model_dump(mode="json")
    try:
        found = (
            _work(raw, "search")
            if os.environ.get("WHATIF_SERVING_INLINE") == "1"
            else (_ask(raw, "search", _lane_of(s, search_only=True)))
        )
    except (RuntimeError, ValueError):  # the worker's refusal: DoesNotFit, said again by the core
        return None
    except WorkerFailed:
        found = serving.NOT_RUN  # kept: the same search would fail the same way soon after
    _keep_search(s, found)
    return found


#: the views of model.serving.VIEWS this server has computed: the Disaggregation view reads the
#: search's keys and the rate it sizes the GPUs for, the Pareto front neither rate nor SLOs
_views: OrderedDict = OrderedDict()


def _view_key(kind: str, s: Scenario) -> tuple:
    if kind == "pareto":
        return (kind, serving.pareto_key(s))
    return (kind, serving.search_key(s), str(s.request_rate))


def view_cached(kind: str, s: Scenario) -> dict | None:
    """The view ``kind``'s cached result for ``s``, or None."""
    with _lock:
        return _views.get(_view_key(kind, s))


def view(kind: str, s: Scenario) -> dict:
    """The Serving page's view ``kind`` (:data:`model.serving.VIEWS`) for ``s``: ``disagg``,
    :func:`model.serving.disagg_view` (the pools' capacity searches and the aggregated one);
    ``pareto``, :func:`model.serving.pareto_view`. Run in a worker as the lens is, cached;
    ``reason`` instead when it cannot run (a pool's instance does not fit, the server's budget,
    a worker that failed)."""
    key = _view_key(kind, s)
    with _lock:
        if key in _views:
            _views.move_to_end(key)
            return _views[key]
    # neither view runs the scenario's own requests: each is sized like the capacity search
    # (the lens's budget, serving._LENS_RUNS, counts the Pareto sweep's runs with it)
    if serving.search_over_budget(s):
        shown = s.model_copy(update={"disaggregated": True}) if kind == "disagg" else s
        return {
            "reason": f"past this shared server's budget; run it on your own machine: "
            f"{serving._cli(shown)}",
        }
    raw = s.raw.model_dump(mode="json")
    try:
        found = (
            _work(raw, kind)
            if os.environ.get("WHATIF_SERVING_INLINE") == "1"
            else _ask(raw, kind, _lane_of(s, search_only=True))
        )
    except WorkerFailed as exc:
        return {"reason": exc.message}  # not kept: a later try may succeed
    except (RuntimeError, ValueError) as exc:  # the core's refusal, in its words
        return {"reason": str(exc)}
    with _lock:
        _views[key] = found
        while len(_views) > CACHE_SIZE:
            _views.popitem(last=False)
    return found


#: the workers' scheduling priority below the server's (os.nice): heavy work yields the CPU
#: to the sessions' page runs on a busy machine (with two workers busy on two cores, another
#: session's Roofline run went from 24 to 36 ms at the median; niced, see the README)
WORKER_NICE = int(env_number("WHATIF_WORKER_NICE", 10, 0, 19))
#: the heavy lane's priority: the kernel gives a nice-19 process about a seventh of a core
#: that a nice-10 one also wants (CFS weights 15 against 110)
HEAVY_NICE = max(WORKER_NICE, int(env_number("WHATIF_HEAVY_NICE", 19, 0, 19)))


def _end_with_the_server() -> None:
    """Make this worker end when the process that started it does (no orphan keeps running
    a job nobody waits for): a watchdog thread that exits once the worker's parent is no
    longer the server. (Not Linux's PR_SET_PDEATHSIG: it fires when the parent *thread*
    ends, and every Streamlit script run is a thread of its own.)"""
    parent = int(os.environ.get("WHATIF_WORKER_PARENT") or os.getppid())

    def watch():
        while True:
            if os.getppid() != parent:
                os._exit(0)
            time.sleep(WATCH_S)

    threading.Thread(target=watch, daemon=True, name="watchdog").start()


WATCH_S = 0.5  #: how often a worker checks that its server is still there


def _limit_memory() -> None:
    if MEMORY_MB <= 0:
        return
    try:
        import resource

        cap = MEMORY_MB * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (ImportError, ValueError, OSError):  # not this platform, or a lower hard limit
        pass


def _serve() -> None:
    """The worker's loop: a length-prefixed JSON scenario in, a length-prefixed result out."""
    nice = int(os.environ.get("WHATIF_WORKER_NICE_NOW", WORKER_NICE))
    if nice and hasattr(os, "nice"):
        try:
            os.nice(nice)
        except OSError:  # not allowed here: run at the server's priority
            pass
    _end_with_the_server()
    _limit_memory()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = stdin.read(8)
        if len(head) < 8:
            return
        (size,) = struct.unpack("<Q", head)
        try:
            ask = json.loads(_read(stdin, size))
            out = (True, _work(ask["scenario"], ask["kind"]))
        except ScenarioError as exc:  # a reader's refusal: raised again as it was
            out = ("refused", (exc.key, exc.message))
        except MemoryError:  # past the cap: said as such, and this worker is replaced
            out = ("memory", None)
        except Exception as exc:  # noqa: BLE001 - reported to the caller, which raises it
            out = (False, f"{type(exc).__name__}: {exc}")
        try:
            body = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
        except MemoryError:
            body = pickle.dumps(("memory", None))
        stdout.write(struct.pack("<Q", len(body)) + body)
        stdout.flush()


if __name__ == "__main__":
    _serve()


_plans: OrderedDict = OrderedDict()


def plan_cached(job: tuple) -> dict | None:
    """The Plan page's row for ``job`` (:func:`model.plan.plan_job`'s), or None."""
    with _lock:
        return _plans.get(tuple(job))


def plan_row(job: tuple, session: str) -> dict:
    """One hardware preset's row of the Plan page (:func:`model.plan.plan_job`), run in a
    worker of the light lane for ``session`` (its turn taken fairly), cached for every
    session. Called from the page's own threads, so it is not cancelled from inside: the page
    stops handing out jobs when its session moves on. A worker that fails gives a row with
    the reason (not kept: a later try may succeed)."""
    job = tuple(job)
    hit = plan_cached(job)
    if hit is not None:
        return hit
    try:
        if os.environ.get("WHATIF_SERVING_INLINE") == "1":
            found = _work({"job": list(job)}, "plan")
        else:
            found = _ask({"job": list(job)}, "plan", LIGHT, cancellable=False, session=session)
    except WorkerFailed as exc:
        return {"hardware": job[1], "reason": exc.message, "closest": None, "transient": True}
    except (RuntimeError, ValueError) as exc:  # the core's refusal, in its words
        return {"hardware": job[1], "reason": str(exc), "closest": None, "transient": True}
    with _lock:
        _plans[job] = found
        while len(_plans) > CACHE_SIZE * 4:
            _plans.popitem(last=False)
    return found
