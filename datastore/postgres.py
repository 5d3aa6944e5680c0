"""The shared store for several app replicas: a PostgreSQL database named by
``WHATIF_DATABASE_URL`` (driver: psycopg 3, the ``postgres`` extra). One connection per call
with a short connect timeout and a statement timeout, so a dead database costs a page a few
seconds at most; puts take a transaction-scoped advisory lock so replicas take turns."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from urllib.parse import unquote, urlsplit

from datastore._base import (
    CONNECT_TIMEOUT_S,
    ENV_URL,
    STATEMENT_TIMEOUT_S,
    TABLE,
    Limits,
    Unavailable,
)
from datastore._sql import SQLStore

SCHEMES = ("postgresql", "postgres")
LOCK_KEY = 0x57484154_49460001  #: pg_advisory_xact_lock key of the store's writes ("WHATIF")


def describe(url: str) -> tuple[str, str]:
    """Where a database URL points, for people (no user, no password), and the password (to
    keep out of messages). :class:`Unavailable` for a URL that is not ``postgresql://``."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError as exc:
        raise Unavailable(f"{ENV_URL} is not a valid database URL ({exc})") from None
    if parts.scheme not in SCHEMES:
        shown = f"'{parts.scheme}://…'" if parts.scheme else "a URL without a scheme"
        raise Unavailable(
            f"{ENV_URL} must be a postgresql:// URL "
            f"(postgresql://user:password@host:5432/dbname), not {shown}"
        )
    db = unquote(parts.path.lstrip("/")) or "the default database"
    where = f"PostgreSQL database {db} on {host or 'the local socket'}" + (
        f":{port}" if port else ""
    )
    return where, unquote(parts.password or "")


class PostgresStore(SQLStore):
    kind = "postgresql"
    mark = "%s"
    blob = "BYTEA"
    real = "DOUBLE PRECISION"

    def __init__(self, url: str, limits: Limits, clock: Callable[[], float] = time.time):
        super().__init__(limits, clock)
        self.where, self._password = describe(url)
        self._url = url
        try:
            import psycopg
        except ImportError:
            raise Unavailable(
                "the PostgreSQL driver (psycopg) is not installed on the server"
            ) from None
        self._psycopg = psycopg
        self._create_schema()

    def _add_owner(self) -> list[str]:
        return [
            f"ALTER TABLE {TABLE} ADD COLUMN IF NOT EXISTS owner TEXT NOT NULL DEFAULT ''",
            f"ALTER TABLE {TABLE} ADD COLUMN IF NOT EXISTS opened INTEGER NOT NULL DEFAULT 1",
        ]

    def _unavailable(self, exc: Exception) -> Unavailable:
        text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        if self._password:
            text = text.replace(self._password, "***")
        return Unavailable(f"the {self.where} cannot be used ({text[:300]})")

    @contextlib.contextmanager
    def _transaction(self, write: bool, wait: bool = True) -> Iterator:
        psycopg = self._psycopg
        try:
            conn = psycopg.connect(
                self._url,
                connect_timeout=CONNECT_TIMEOUT_S,
                options=f"-c statement_timeout={STATEMENT_TIMEOUT_S * 1000}",
            )
        except psycopg.Error as exc:
            raise self._unavailable(exc) from None
        try:
            with conn, conn.cursor() as cur:  # commits on success, rolls back on error
                if write and wait:
                    cur.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
                elif write:  # the lock now or not at all
                    cur.execute("SELECT pg_try_advisory_xact_lock(%s)", (LOCK_KEY,))
                    if not cur.fetchone()[0]:
                        raise Unavailable("another write holds the store's lock")
                yield cur
        except psycopg.Error as exc:
            raise self._unavailable(exc) from None
        finally:
            conn.close()
