"""The Serving lens's computation, and the reading of uploaded files, off the server's
interpreter.

A run, the capacity search and the Pareto sweep take about a second of pure Python and numpy
for one scenario; run in a script thread, that second holds the interpreter every session
shares (the GIL), so every other user's page would wait. Here it runs in worker processes
(``python -m ui.serving_worker``, started on first use and kept, at most
:data:`MAX_WORKERS`): the session's thread writes the scenario to a free one and waits on the
pipe without holding the interpreter, and results are cached per scenario (its link
parameters are the key) for every session.

The worker reads a scenario as JSON (the raw keys, validated there like any other input), or
an uploaded file as base64 inside that JSON (read there by the same readers as ever), and
writes back the result pickled; only this process reads that pickle, from the child it
started itself, never anything from outside: a user's bytes reach it only as data the child's
own ``pickle.dumps`` wrote (strings and numbers of a parsed file), never as pickle opcodes.
``WHATIF_SERVING_INLINE=1`` computes in the calling thread (a platform without subprocesses); a worker that dies is restarted once, then
the call computes inline, and says so in the server log.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections import OrderedDict
from pathlib import Path

from model import codecs, serving
from model.errors import ScenarioError
from model.scenario import Scenario
from ui.settings import env_number

log = logging.getLogger(__name__)
serving.SERVER_BUDGET = True  # this process serves pages: the budget applies
CACHE_SIZE = 64
ROOT = Path(__file__).resolve().parent.parent

_lock = threading.Lock()  # the cache
#: worker processes at most: a session's long run (a million requests) occupies one, and the
#: other sessions' pages are served by the next; each takes one request at a time
MAX_WORKERS = int(env_number("WHATIF_SERVING_WORKERS", 2, 1, 64))
_idle: list[subprocess.Popen] = []  # started, free
_started = threading.BoundedSemaphore(MAX_WORKERS)  # a slot per worker in use
_pool_lock = threading.Lock()
_cache: OrderedDict[tuple, dict] = OrderedDict()


def _work(raw: dict, kind: str = "lens"):
    from model import serving

    if kind in FILE_KINDS:  # a file to read: {"name": …, "data": base64}
        import base64

        return FILE_KINDS[kind](raw["name"], base64.b64decode(raw["data"]))
    s = Scenario.model_validate(raw).effective()
    if kind == "search":  # the capacity search alone (what the Scale to zero lens needs)
        return serving.max_rate(s)
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
    the reader would, and one naming the file when the read passes
    :data:`FILE_BUDGET_S` (the worker is stopped and a fresh one takes the next job)."""
    if os.environ.get("WHATIF_SERVING_INLINE") == "1":
        return FILE_KINDS[kind](name, data)
    import base64

    raw = {"name": name, "data": base64.b64encode(bytes(data)).decode("ascii")}
    try:
        return _ask(raw, kind, budget_s=FILE_BUDGET_S, cancellable=False)  # the user's file
    except TimeoutError:
        raise ScenarioError(
            name, f"reading it took longer than {FILE_BUDGET_S:g} s and was stopped"
        ) from None


def _start() -> subprocess.Popen:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
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


def _take() -> subprocess.Popen:
    """A free worker (started if none is idle); the caller holds a slot of ``_started``."""
    with _pool_lock:
        while _idle:
            proc = _idle.pop()
            if proc.poll() is None:
                return proc
    return _start()


def _give(proc: subprocess.Popen) -> None:
    with _pool_lock:
        _idle.append(proc)


def _leave_for_the_next_run() -> None:
    """Hand control back to Streamlit, which starts the session's new run (or stops): any
    element the script sends is where Streamlit acts on a pending rerun or stop request (its
    RerunException or StopException propagates from here)."""
    import streamlit as st

    st.empty()


class MovedOn(Exception):
    """The session asked for another run (a widget changed) while its job was computing: the
    worker was stopped, and the stale result is not waited for."""


POLL_S = 0.1  #: how often a waiting session checks whether it has moved on


def session_moved_on() -> bool:
    """Whether the calling script run has been asked to stop or rerun (its user changed
    something). Streamlit has no public call for it: this reads the run's request state, and
    says False wherever that is not there (a bare call, another Streamlit)."""
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx
        from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType

        ctx = get_script_run_ctx(suppress_warning=True)
        requests = getattr(ctx, "script_requests", None) if ctx is not None else None
        state = getattr(requests, "_state", None)
        return state is not None and state != ScriptRequestType.CONTINUE
    except Exception:  # noqa: BLE001 - no way to tell: wait for the result
        return False


def _wait(proc: subprocess.Popen, budget_s: float | None, moved_on=session_moved_on) -> None:
    """Until the worker's answer starts (no interpreter held): TimeoutError past the budget,
    :class:`MovedOn` as soon as the session has asked for another run (checked every
    :data:`POLL_S`)."""
    import select
    import time

    start = time.monotonic()
    while True:
        left = None if budget_s is None else budget_s - (time.monotonic() - start)
        if left is not None and left <= 0:
            raise TimeoutError
        step = POLL_S if left is None else min(POLL_S, left)
        ready, _, _ = select.select([proc.stdout], [], [], step)
        if ready:
            return
        if moved_on():
            raise MovedOn


def _ask(raw: dict, kind: str = "lens", budget_s: float | None = None, cancellable: bool = True):
    """``kind`` of work on ``raw`` in a worker; with ``cancellable``, a session that moves on
    while it waits stops the worker and goes to its next run (:class:`MovedOn`)."""
    moved_on = session_moved_on if cancellable else (lambda: False)
    body = json.dumps({"kind": kind, "scenario": raw}).encode()
    with _started:  # waits only while every worker is busy
        for attempt in range(2):
            proc = _take()
            try:
                proc.stdin.write(struct.pack("<Q", len(body)) + body)
                proc.stdin.flush()
                _wait(proc, budget_s, moved_on)
                (size,) = struct.unpack("<Q", _read(proc.stdout, 8))
                ok, value = pickle.loads(_read(proc.stdout, size))  # noqa: S301 - our child
            except TimeoutError:
                log.warning("a worker passed its %g s budget on a %s job; stopped", budget_s, kind)
                proc.kill()
                raise
            except MovedOn:  # the session changed something: its stale job is not finished
                proc.kill()
                _leave_for_the_next_run()  # raises Streamlit's rerun (or stop)
                continue  # it did not: the request was withdrawn, so compute again
            except (OSError, EOFError, struct.error):
                log.exception("a serving worker failed (attempt %d)", attempt + 1)
                proc.kill()
                continue
            _give(proc)
            if ok == "refused":  # a reader's refusal, raised again as the reader raised it
                raise ScenarioError(*value)
            if ok:
                return value
            raise RuntimeError(value)
    log.error("the serving worker is unavailable; computing in the session's thread")
    return _work(raw, kind)


def compute(s: Scenario) -> dict:
    """The Serving lens's result for ``s`` (:func:`model.serving.serving_lens`), cached."""
    key = tuple(codecs.to_params(s))
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    refused = serving.server_refusal(s)  # predicted from the scenario's size, before it runs
    if refused:
        return {"fits": False, "refused": True, "reason": refused, "figures": {}, "pareto": []}
    raw = s.raw.model_dump(mode="json")
    result = _work(raw) if os.environ.get("WHATIF_SERVING_INLINE") == "1" else _ask(raw)
    with _lock:
        _cache[key] = result
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    if result.get("fits"):
        serving.remember_max_rate(s, result["search"])
    return result


def prime(s: Scenario) -> None:
    """Make the capacity search for ``s`` available to the core (:func:`model.serving.max_rate`)
    by running it in the worker, so a lens that sizes replicas (Scale to zero, the landing
    page, Compare) never runs it in the session's thread. A scenario that cannot serve is left
    to the core, which says so at once."""
    if serving.known_max_rate(s) or serving.search_over_budget(s):
        return  # a refused search is left to the core, whose own budget says so
    raw = s.raw.model_dump(mode="json")
    try:
        found = (
            _work(raw, "search")
            if os.environ.get("WHATIF_SERVING_INLINE") == "1"
            else (_ask(raw, "search"))
        )
    except (RuntimeError, ValueError):  # the worker's refusal: DoesNotFit, said again by the core
        return
    serving.remember_max_rate(s, found)


#: the workers' scheduling priority below the server's (os.nice): heavy work yields the CPU
#: to the sessions' page runs on a busy machine (with two workers busy on two cores, another
#: session's Roofline run went from 24 to 36 ms at the median; niced, see the README)
WORKER_NICE = int(env_number("WHATIF_WORKER_NICE", 10, 0, 19))


def _serve() -> None:
    """The worker's loop: a length-prefixed JSON scenario in, a length-prefixed result out."""
    if WORKER_NICE and hasattr(os, "nice"):
        try:
            os.nice(WORKER_NICE)
        except OSError:  # not allowed here: run at the server's priority
            pass
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
        except Exception as exc:  # noqa: BLE001 - reported to the caller, which raises it
            out = (False, f"{type(exc).__name__}: {exc}")
        body = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
        stdout.write(struct.pack("<Q", len(body)) + body)
        stdout.flush()


if __name__ == "__main__":
    _serve()
