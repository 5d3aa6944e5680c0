"""The default store: one SQLite file in the app's data directory (Python's own ``sqlite3``, no
set-up). One connection per call, WAL journal (readers never wait for a writer), and
``BEGIN IMMEDIATE`` for puts so concurrent sessions (threads) and processes on one machine
take turns."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from datastore._base import CONNECT_TIMEOUT_S, TABLE, Limits, Unavailable
from datastore._sql import SQLStore


class SQLiteStore(SQLStore):
    kind = "sqlite"

    def __init__(self, path: Path, limits: Limits, clock: Callable[[], float] = time.time):
        super().__init__(limits, clock)
        self.path = Path(path)
        self.where = f"SQLite file {self.path}"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if self.path.is_file():  # a read-only folder that holds the file: read it
                self.read_only = True
                self._create_schema()
                return
            raise Unavailable(
                f"the data folder {self.path.parent} cannot be created ({exc.strerror or exc})"
            ) from None
        try:
            with self._connect() as conn:
                conn.execute("PRAGMA journal_mode=WAL")
        except (sqlite3.Error, Unavailable):
            pass  # a read-only file keeps its journal mode; _create_schema says what it can do
        self._create_schema()
        if not self.read_only:
            self._add_owner_column()

    def _add_owner_column(self) -> None:
        """A table made before owners were kept gets its ``owner`` column (SQLite has no
        ``ADD COLUMN IF NOT EXISTS``)."""
        with self._transaction(write=True) as cur:
            cur.execute(f"PRAGMA table_info({TABLE})")
            columns = {row[1] for row in cur.fetchall()}
            if "owner" not in columns:
                cur.execute(f"ALTER TABLE {TABLE} ADD COLUMN owner TEXT NOT NULL DEFAULT ''")
            if "opened" not in columns:  # a row kept from before counts as opened
                cur.execute(f"ALTER TABLE {TABLE} ADD COLUMN opened INTEGER NOT NULL DEFAULT 1")

    def _unavailable(self, exc: Exception) -> Unavailable:
        return Unavailable(f"the data file {self.path} cannot be used ({exc})")

    @contextlib.contextmanager
    def _connect(self, timeout_s: float = CONNECT_TIMEOUT_S) -> Iterator[sqlite3.Connection]:
        try:
            if self.read_only:
                conn = sqlite3.connect(
                    f"file:{self.path}?mode=ro",
                    uri=True,
                    timeout=timeout_s,
                    isolation_level=None,
                )
            else:
                conn = sqlite3.connect(self.path, timeout=timeout_s, isolation_level=None)
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from None
        try:
            yield conn
        finally:
            conn.close()

    @contextlib.contextmanager
    def _transaction(self, write: bool, wait: bool = True) -> Iterator[sqlite3.Cursor]:
        with self._connect(CONNECT_TIMEOUT_S if wait else 0.0) as conn:
            try:
                cur = conn.cursor()
                cur.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield cur
                except BaseException:
                    conn.rollback()
                    raise
                conn.commit()
            except sqlite3.Error as exc:
                raise self._unavailable(exc) from None
