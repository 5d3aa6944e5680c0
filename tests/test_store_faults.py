"""Issue 40, R10: one damaged data set, or one session's failed read, never switches sharing
off for the other sessions; a held write lock never makes a reader wait for it."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import datastore
from datastore import Limits
from datastore.sqlite import SQLiteStore
from tests.pages import open_page

ROOT = Path(__file__).resolve().parent.parent
PAGE = str(ROOT / "pages" / "6_Measurements.py")
CSV = b"batch,step_ms\n1,5.1\n8,6.0\n64,9.5\n"
OTHER = b"batch,step_ms\n1,5.3\n8,6.2\n64,9.9\n"


@pytest.fixture
def store_dir(tmp_path, monkeypatch):
    monkeypatch.delenv(datastore.ENV_URL, raising=False)
    monkeypatch.setenv(datastore.ENV_DIR, str(tmp_path / "store"))
    return tmp_path / "store"


def _damage(path: Path, data_id: str) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(
            f"UPDATE {datastore.TABLE} SET last_read = 'not a time' WHERE id = ?", (data_id,)
        )


def test_a_damaged_entry_is_refused_alone_and_the_store_answers(tmp_path):
    path = tmp_path / "s" / "datasets.sqlite3"
    store = SQLiteStore(path, Limits())
    bad, good = store.put("a.csv", CSV), store.put("b.csv", OTHER)
    _damage(path, bad)
    with pytest.raises(datastore.Unavailable, match="damaged"):
        store.get(bad)
    assert store.healthy() is True
    assert store.get(good).data == OTHER


def test_a_store_whose_file_is_gone_is_not_healthy(tmp_path):
    path = tmp_path / "s" / "datasets.sqlite3"
    store = SQLiteStore(path, Limits())
    for f in path.parent.glob("datasets.sqlite3*"):
        f.unlink()
    path.mkdir()  # a folder where the database file was: nothing can open it
    assert store.healthy() is False
    assert datastore.UnavailableStore("down").healthy() is False


def _page(**query) -> AppTest:
    return open_page(PAGE, **query)


def _warnings(at) -> str:
    return " ".join(w.value for w in at.warning).replace("\\", "")


def test_a_damaged_data_set_leaves_sharing_on_for_everyone(store_dir):
    store = datastore.get_store()  # the process's store, as the server opens it
    bad, good = store.put("a.csv", CSV), store.put("b.csv", OTHER)
    _damage(store.path, bad)
    one = _page(data=f"{bad},{good}")
    text = _warnings(one)
    assert "could not be read" in text and "Sharing data sets is unavailable" not in text
    assert datastore.get_store().kind == "sqlite"  # not switched off for the process
    other = _page(data=good)  # another session, just after
    assert "unavailable" not in _warnings(other)
    assert any(m.label == "Data sets" and m.value == "1" for m in other.metric)


def test_a_store_that_does_not_answer_pauses_that_session_only(store_dir, monkeypatch):
    store = datastore.get_store()
    good = store.put("b.csv", OTHER)
    broken = {"on": True}
    real_get, real_healthy = type(store).get, type(store).healthy

    def get(self, data_id, reader=""):
        if broken["on"]:
            raise datastore.Unavailable("the database does not answer")
        return real_get(self, data_id, reader)

    monkeypatch.setattr(type(store), "get", get)
    monkeypatch.setattr(
        type(store), "healthy", lambda self: not broken["on"] and real_healthy(self)
    )
    hit = _page(data=good)
    assert "could not be opened just now" in _warnings(hit)
    assert datastore.get_store() is store  # the process keeps its store
    broken["on"] = False
    fresh = _page(data=good)  # another session is not paused by the first one's failure
    assert "could not be opened" not in _warnings(fresh)
    assert any(m.label == "Data sets" and m.value == "1" for m in fresh.metric)


def test_a_read_never_waits_for_another_writers_lock(tmp_path, monkeypatch):
    """A read of a data set not opened for an hour records the read; with another write
    holding the lock, it answers without waiting for it (it asked for the lock with no
    wait) and records the read another time."""
    now = [time.time()]
    path = tmp_path / "s" / "datasets.sqlite3"
    store = SQLiteStore(path, Limits(), clock=lambda: now[0])
    data_id = store.put("a.csv", CSV)
    now[0] += 2 * 3600
    asked = []
    connect = sqlite3.connect
    monkeypatch.setattr(
        sqlite3, "connect", lambda *a, **k: (asked.append(k.get("timeout")), connect(*a, **k))[1]
    )
    holder = connect(path, timeout=0, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        got = store.get(data_id)
    finally:
        holder.rollback()
        holder.close()
    assert got.data == CSV
    assert asked[-1] == 0.0  # the touch asked for the lock without waiting
