"""What the SQLite and PostgreSQL stores share: the table and the put/get rules, in SQL that
both run (``INSERT … ON CONFLICT (id) DO NOTHING``); only the placeholder, the connection and
the put lock differ. Every query is parameterised; ids are checked before any query."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

from datastore._base import (
    READ_TOUCH_S,
    TABLE,
    Limits,
    Refused,
    Stored,
    Unavailable,
    check_id,
    check_put,
)

READ_ONLY = (
    "this server's data-set store is read-only: share links open the data sets it holds, new "
    "uploads are not shared"
)


class SQLStore:
    kind = "sql"
    where = ""
    mark = "?"  #: the driver's placeholder
    blob = "BLOB"
    real = "REAL"

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.time) -> None:
        self.limits = limits
        self.clock = clock
        self.read_only = False  #: reads only: the table could not be created or written

    def _create_schema(self) -> None:
        """The table, made if it is missing; where the store cannot be written (a read-only
        file, folder, database or role) but the table is there, the store opens read-only:
        every existing share link still opens. Else :class:`Unavailable`."""
        try:
            with self._transaction(write=True) as cur:
                for statement in self._schema():
                    cur.execute(statement)
        except Unavailable as exc:
            self.read_only = True
            try:
                with self._transaction(write=False) as cur:
                    cur.execute(self._sql("SELECT 1 FROM {table} LIMIT 1"))
                    cur.fetchall()
            except Unavailable:
                self.read_only = False
                raise exc from None

    # -- what a backend provides ------------------------------------------------------------
    @contextlib.contextmanager
    def _transaction(self, write: bool, wait: bool = True) -> Iterator[Any]:
        """A cursor in one transaction (committed on success, rolled back on error); with
        ``write``, no other put runs until it ends. Without ``wait``, a write that would wait
        for another writer's lock raises ``Unavailable`` at once. Driver errors become
        ``Unavailable``."""
        raise NotImplementedError
        yield

    def healthy(self) -> bool:
        """Whether the store answers a trivial query (after one call failed: the database
        itself, or only that call's data set?)."""
        try:
            with self._transaction(write=False) as cur:
                cur.execute("SELECT 1")
                cur.fetchone()
        except Unavailable:
            return False
        return True

    # -- shared -----------------------------------------------------------------------------
    def _sql(self, text: str) -> str:
        return text.replace("?", self.mark).replace("{table}", TABLE)

    def _schema(self) -> list[str]:
        return [
            f"CREATE TABLE IF NOT EXISTS {TABLE} (id CHAR(64) PRIMARY KEY, "
            f"name TEXT NOT NULL, data {self.blob} NOT NULL, size BIGINT NOT NULL, "
            f"created_at {self.real} NOT NULL, last_read {self.real} NOT NULL, "
            "owner TEXT NOT NULL DEFAULT '', opened INTEGER NOT NULL DEFAULT 1)",
            f"CREATE INDEX IF NOT EXISTS {TABLE}_last_read ON {TABLE} (last_read)",
            *self._add_owner(),
        ]

    def _add_owner(self) -> list[str]:
        """The statements that give a table made before owners (and opens) were kept its
        ``owner`` and ``opened`` columns (a backend's own: the two speak different SQL for it;
        a row kept from before counts as opened)."""
        return []

    def put(self, name: str, data: bytes, owner: str = "") -> str:
        """Store ``data`` under its id (see :class:`datastore.DataStore`). ``owner`` is an
        opaque key of the client that uploads it (a hash of its address): one owner holds at
        most :attr:`Limits.max_owner_bytes`, its own oldest-opened data sets making room first,
        and when the whole store is full the owner pushing it over loses its own first."""
        data_id, name = check_put(name, data, self.limits)
        owner = str(owner)[:64]
        if self.read_only:
            raise Refused(READ_ONLY)
        data = bytes(data)
        now = self.clock()
        with self._transaction(write=True) as cur:
            cur.execute(
                self._sql("DELETE FROM {table} WHERE last_read < ?"),
                (now - self.limits.retention_s,),
            )
            cur.execute(self._sql("SELECT 1 FROM {table} WHERE id = ?"), (data_id,))
            if cur.fetchone() is not None:
                # the same bytes again: stored once, never overwritten; opened again, so kept
                cur.execute(
                    self._sql("UPDATE {table} SET last_read = ? WHERE id = ?"), (now, data_id)
                )
                return data_id
            self._make_room(cur, len(data), owner)
            cur.execute(
                self._sql(
                    "INSERT INTO {table} "
                    "(id, name, data, size, created_at, last_read, owner, opened) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, 0) ON CONFLICT (id) DO NOTHING"
                ),
                (data_id, name, data, len(data), now, now, owner),
            )
        return data_id

    def _make_room(self, cur, size: int, owner: str) -> None:
        """Make room for ``size`` more bytes of ``owner``'s: first within the owner's own
        share (its data sets opened longest ago go), then within the whole store, where the
        owner's own data sets go first and then everyone's, opened longest ago first. A
        stranger's uploads cannot flush the other users' data sets."""
        cur.execute(
            self._sql("SELECT COALESCE(SUM(size), 0) FROM {table} WHERE owner = ?"), (owner,)
        )
        mine = int(cur.fetchone()[0]) + size - self.limits.max_owner_bytes
        if mine > 0:
            cur.execute(
                self._sql("SELECT id, size FROM {table} WHERE owner = ? ORDER BY last_read, id"),
                (owner,),
            )
            self._delete(cur, cur.fetchall(), mine)
        cur.execute(self._sql("SELECT COALESCE(SUM(size), 0) FROM {table}"))
        excess = int(cur.fetchone()[0]) + size - self.limits.max_total_bytes
        if excess <= 0:
            return
        # the owner's own first; then what nobody but its uploader ever opened (junk uploads
        # from many addresses go before a data set a share link was opened from); then the
        # rest, opened longest ago first (issue 40, R9)
        cur.execute(
            self._sql(
                "SELECT id, size FROM {table} "
                "ORDER BY CASE WHEN owner = ? THEN 0 ELSE 1 END, opened, last_read, id"
            ),
            (owner,),
        )
        self._delete(cur, cur.fetchall(), excess)

    def _delete(self, cur, rows, excess: int) -> None:
        """Delete ``rows`` (id, size) in order until ``excess`` bytes are freed."""
        doomed = []
        for row_id, row_size in rows:
            if excess <= 0:
                break
            doomed.append(row_id)
            excess -= int(row_size)
        for row_id in doomed:
            cur.execute(self._sql("DELETE FROM {table} WHERE id = ?"), (row_id,))

    def get(self, data_id: str, reader: str = "") -> Stored | None:
        """The data set ``data_id``, or None. ``reader``: the opaque key of the client who
        opens it; a client other than its uploader marks it opened, so it outlives uploads
        nobody else opened when the store is full."""
        data_id = check_id(data_id)
        now = self.clock()
        with self._transaction(write=False) as cur:
            cur.execute(
                self._sql("SELECT name, data, last_read, owner, opened FROM {table} WHERE id = ?"),
                (data_id,),
            )
            row = cur.fetchone()
        if row is None:
            return None
        try:
            name, data, last_read = str(row[0]), bytes(row[1]), float(row[2])
            first_open = bool(reader) and str(reader)[:64] != str(row[3]) and not int(row[4])
        except (TypeError, ValueError) as exc:  # a damaged entry: this one, not the store
            raise Unavailable(f"the stored entry {data_id[:12]}… is damaged ({exc})") from None
        if last_read < now - self.limits.retention_s:
            if self.read_only:
                return None  # expired; a read-only store leaves the row for its writer
            with self._transaction(write=True) as cur:
                cur.execute(
                    self._sql("DELETE FROM {table} WHERE id = ? AND last_read < ?"),
                    (data_id, now - self.limits.retention_s),
                )
            return None
        if (last_read < now - READ_TOUCH_S or first_open) and not self.read_only:
            with contextlib.suppress(Unavailable), self._transaction(True, wait=False) as cur:
                # a read that cannot be recorded at once (another writer holds the lock) still
                # answers, without waiting for the lock (issue 40, R10)
                cur.execute(
                    self._sql(
                        "UPDATE {table} SET last_read = ?, opened = ? WHERE id = ? AND "
                        "last_read <= ?"
                    ),
                    (now, 1 if first_open else int(row[4]), data_id, now),
                )
        return Stored(name, data)
