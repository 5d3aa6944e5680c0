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


def _measurements(**query) -> AppTest:
    return open_page("pages/6_Measurements.py", **query)


def _link_ids(at) -> list[str]:
    q = at.query_params.get("data")
    values = q if isinstance(q, list) else [q] if q else []
    return [i for v in values for i in v.split(",") if i]


def test_a_link_opened_while_the_store_is_down_keeps_its_ids_and_opens_them_later(flaky):
    data_id = flaky.put("decode.csv", CSV)
    flaky.fail_get = True
    at = _measurements(data=data_id)
    warnings = " ".join(w.value for w in at.warning)
    assert "could not be opened just now" in warnings
    assert _link_ids(at) == [data_id]  # a reload or a re-share keeps it
    assert "db.internal" not in warnings and "5432" not in warnings  # no server internals
    flaky.fail_get = False
    at.session_state["_whatif_store_backoff"] = None  # this session's pause is over
    at.run()  # the next run tries again
    assert not at.exception
    assert _link_ids(at) == [data_id]
    assert any(m.label == "Data sets" and m.value == "1" for m in at.metric)


def test_one_failed_write_does_not_switch_sharing_off_for_everyone(flaky, monkeypatch):
    import datastore

    other = flaky.put("other.csv", CSV + b"16,7.5\n")
    marked = []
    monkeypatch.setattr(datastore, "mark_unavailable", lambda store, why: marked.append(why))
    flaky.fail_put = True
    at = _measurements()
    at.text_area(key="w_meas_paste").input(CSV.decode())
    [b for b in at.button if b.label == "Read pasted text"][0].click()
    at.run()
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "stays in this session only" in warnings
    assert "/srv/secret" not in warnings
    # the store is not switched off for the other sessions (it was, for 60 s, reads included)
    assert not marked
    second = _measurements(data=other)
    assert _link_ids(second) == [other]
    assert any(m.label == "Data sets" and m.value == "1" for m in second.metric)


def test_an_unavailable_store_is_named_without_its_path(tmp_path, monkeypatch):
    import datastore

    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.delenv(datastore.ENV_URL, raising=False)
    monkeypatch.setenv(datastore.ENV_DIR, str(blocker / "secret-folder"))
    monkeypatch.setattr(datastore, "_cached", None)
    at = _measurements()
    shown = " ".join(x.value for x in [*at.warning, *at.caption, *at.markdown, *at.info])
    shown = shown.replace("\\", "")  # markdown escapes
    assert "Sharing data sets is unavailable" in shown
    assert "secret-folder" not in shown and str(tmp_path) not in shown


def test_a_sqlite_store_that_cannot_be_written_opens_read_only(tmp_path):
    import contextlib

    import datastore
    from datastore.sqlite import SQLiteStore

    path = tmp_path / "store" / "datasets.sqlite3"
    data_id = SQLiteStore(path, datastore.Limits()).put("decode.csv", CSV)

    class ReadOnlyDisk(SQLiteStore):
        """Writes fail as on a read-only file or folder (root ignores file modes, so the test
        makes the driver's refusal itself)."""

        @contextlib.contextmanager
        def _transaction(self, write):
            if write:
                raise self._unavailable(Exception("attempt to write a readonly database"))
            with super()._transaction(write) as cur:
                yield cur

    store = ReadOnlyDisk(path, datastore.Limits())
    assert store.kind == "sqlite" and store.read_only
    assert store.get(data_id) == ("decode.csv", CSV)  # every existing share link still opens
    with pytest.raises(datastore.Refused, match="read-only"):
        store.put("new.csv", CSV + b"16,7.5\n")


def test_a_read_only_postgresql_database_still_opens_share_links(postgres_url):
    import psycopg

    from datastore import Limits, Refused
    from datastore.postgres import PostgresStore
    from tests.helpers import drop_table

    drop_table(postgres_url)
    data_id = PostgresStore(postgres_url, Limits()).put("decode.csv", CSV)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        db = conn.execute("SELECT current_database()").fetchone()[0]
        conn.execute(f'ALTER DATABASE "{db}" SET default_transaction_read_only = on')
    try:
        store = PostgresStore(postgres_url, Limits())
        assert store.read_only
        assert store.get(data_id) == ("decode.csv", CSV)
        with pytest.raises(Refused, match="read-only"):
            store.put("new.csv", CSV + b"16,7.5\n")
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute("SET default_transaction_read_only = off")
            conn.execute(f'ALTER DATABASE "{db}" SET default_transaction_read_only = off')


TRACE_CSV = "arrival_s,input_tokens,output_tokens\n" + "".join(
    f"{i * 37.5:.1f},{512 + (i * 97) % 2048},{64 + (i * 31) % 512}\n" for i in range(2000)
)


def test_a_trace_in_the_link_is_replayed_from_the_store(flaky):
    profile = _scale_to_zero(scenario="default")
    trace_id = flaky.put("our-day.csv", TRACE_CSV.encode())
    at = _scale_to_zero(scenario="default", trace=trace_id)
    assert any("trace our" in c.value for c in at.caption), [c.value for c in at.caption]
    assert _cost(at) != _cost(profile)  # the trace's figures, not the profile's
    assert at.query_params.get("trace") == trace_id
    assert not any("session only" in w.value for w in at.warning)


def test_a_trace_the_store_cannot_open_just_now_stays_in_the_link_and_is_said(flaky):
    trace_id = flaky.put("our-day.csv", TRACE_CSV.encode())
    flaky.fail_get = True
    at = _scale_to_zero(scenario="default", trace=trace_id)
    warnings = " ".join(w.value for w in at.warning)
    assert "could not be opened just now" in warnings and "not the link author's" in warnings
    assert "db.internal" not in warnings
    assert at.query_params.get("trace") == trace_id  # a reload or a re-share keeps it
    flaky.fail_get = False
    at.session_state["_whatif_store_backoff"] = None  # this session's pause is over
    at.run()  # the next run tries again
    assert not at.exception
    assert any("trace our" in c.value for c in at.caption)


@pytest.mark.parametrize("bad", ["0" * 64, "not-an-id", "ex-azure"])
def test_a_trace_id_that_is_not_stored_is_said_and_dropped(flaky, bad):
    at = _scale_to_zero(scenario="default", trace=bad)
    warnings = " ".join(w.value for w in at.warning)
    assert "traffic profile instead" in warnings, warnings
    assert not at.query_params.get("trace")
    assert any("traffic: " in c.value for c in at.caption)


def test_a_trace_that_cannot_be_stored_says_the_link_does_not_carry_it(flaky):
    from model.readers.traces import read_trace
    from ui import economics_view

    flaky.fail_put = True
    at = _scale_to_zero(scenario="default")
    # the uploader's callback, as Streamlit runs it, with the session's state
    tr = read_trace("our-day.csv", TRACE_CSV.encode())
    at.session_state[economics_view.TRACE] = tr
    at.session_state[economics_view.TRACE_ID] = None
    at.run()
    warnings = " ".join(w.value for w in at.warning)
    assert "in this session only" in warnings and "does not carry it" in warnings
    assert not at.query_params.get("trace")


def _scale_to_zero(**query) -> AppTest:
    return open_page("pages/5_Scale_to_zero.py", **query)


def _cost(at) -> str:
    return next(m.value for m in at.metric if m.label == "Total per day")
