"""The fixtures every test module may ask for by name: a scenario builder, a page opened with a
link's query (AppTest), and the data-set stores (SQLite, and a real PostgreSQL server of the
module's own)."""

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from datastore import Limits
from datastore.sqlite import SQLiteStore
from model.overrides import resolve
from tests.helpers import drop_table, free_port, need, pg_bindir

DEFAULT_LIMITS = Limits()

# Uploads the tests make (AppTest sessions and the browser suite's servers, which inherit the
# environment) go to a store of their own, never the user's ~/.local/share/inference-whatif.
os.environ["WHATIF_DATA_DIR"] = tempfile.mkdtemp(prefix="whatif-test-store-")
os.environ.pop("WHATIF_DATABASE_URL", None)  # SQLite unless a test sets up PostgreSQL
# AppTest has no browser to paint the headline first: no pause between it and the rest of the
# page (ui.page.HEADLINE_PAUSE_S; tests/test_app.py checks the pause itself)
os.environ.setdefault("WHATIF_HEADLINE_PAUSE_MS", "0")


@pytest.fixture
def scenario():
    """Build a scenario from key=value overrides, strictly (the CLI's path)."""

    def build(**overrides):
        pairs = [(k.replace("__", "."), v) for k, v in overrides.items()]
        return resolve(pairs, strict=True)[0]

    return build


@pytest.fixture
def app_page():
    """Open a page under AppTest with a link query (:func:`tests.pages.open_page`):
    ``app_page("pages/1_Roofline.py", scenario="seed-3b-4090")`` (the browser suite's
    ``page`` is Playwright's)."""
    from tests.pages import open_page

    return open_page


@pytest.fixture(scope="module")
def postgres_url():
    """A real PostgreSQL server of this module's own; yields its URL (unix socket, trust)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        need("psycopg is not installed (the 'test' extra brings it: pip install -e '.[test]')")
    bindir = pg_bindir()
    if bindir is None:
        need("PostgreSQL's initdb and pg_ctl were not found (Debian: apt-get install postgresql)")
    prefix: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root: run the server as 'postgres'
        import pwd

        runuser = shutil.which("runuser")
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            runuser = None
        if runuser is None:
            need("running as root without a 'postgres' user and runuser to start PostgreSQL")
        prefix = [runuser, "-u", "postgres", "--"]
    tmp = Path(tempfile.mkdtemp(prefix="whatif-pg-"))  # short: a socket path has ~100 chars
    if prefix:
        shutil.chown(tmp, user="postgres")
    data, log, port = tmp / "data", tmp / "server.log", free_port()

    def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*prefix, *args], cwd=tmp, capture_output=True, text=True, timeout=timeout
        )

    started = False
    try:
        done = run(
            str(bindir / "initdb"),
            *("-D", str(data), "-U", "whatif", "--auth=trust", "--no-sync", "-E", "UTF8"),
            "--locale=C",
        )
        assert done.returncode == 0, f"initdb failed: {done.stderr[-2000:]}"
        done = run(
            str(bindir / "pg_ctl"),
            *("-D", str(data), "-l", str(log), "-w", "-t", "60"),
            *("-o", f"-k {tmp} -p {port} -c listen_addresses='' -c fsync=off"),
            "start",
            timeout=90,
        )
        started = True
        assert done.returncode == 0, f"pg_ctl start failed: {done.stderr[-2000:]}"
        yield f"postgresql://whatif@/postgres?host={tmp}&port={port}"
    finally:
        if started:
            run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request, tmp_path):
    """A factory of stores of one backend sharing one database: ``make(limits, clock)``."""
    if request.param == "sqlite":
        path = tmp_path / "store" / "datasets.sqlite3"
        return lambda limits=DEFAULT_LIMITS, clock=time.time: SQLiteStore(path, limits, clock)
    url = request.getfixturevalue("postgres_url")
    drop_table(url)
    from datastore.postgres import PostgresStore

    return lambda limits=DEFAULT_LIMITS, clock=time.time: PostgresStore(url, limits, clock)


class Flaky:
    """The real store, with reads or writes failing while told to."""

    def __init__(self, store):
        self.store, self.kind, self.where = store, store.kind, store.where
        self.limits = store.limits
        self.fail_get = self.fail_put = False

    def put(self, name, data, owner=""):
        import datastore

        if self.fail_put:
            raise datastore.Unavailable("database is locked (/srv/secret/path)")
        return self.store.put(name, data, owner=owner)

    def get(self, data_id, reader=""):
        import datastore

        if self.fail_get:
            raise datastore.Unavailable("could not connect to db.internal.example:5432")
        return self.store.get(data_id, reader=reader)


@pytest.fixture
def flaky(tmp_path, monkeypatch):
    import datastore

    monkeypatch.delenv(datastore.ENV_URL, raising=False)
    monkeypatch.setenv(datastore.ENV_DIR, str(tmp_path / "store"))
    monkeypatch.setattr(datastore, "_cached", None)
    store = Flaky(datastore.get_store())
    monkeypatch.setattr(datastore, "get_store", lambda: store)
    return store
