"""Server-side store of shared measurement data sets, addressed only by their content hash.

An uploaded or pasted measurement file (its raw bytes and its file name) is put here so a share
link can carry ``data=<id>`` and a reviewer's fresh session reads the same file again with the
same importer. The id is the SHA-256 of the bytes as 64 lowercase hex digits: the same bytes
are stored once, and nothing is ever overwritten (:meth:`DataStore.put` inserts if absent).
There is no listing: a data set is found by its id or not at all.

Backends: SQLite in the app's data directory (the default, no set-up) and PostgreSQL when
``WHATIF_DATABASE_URL`` names a ``postgresql://`` database (several app replicas behind a load
balancer share it). A store that cannot be opened is an :class:`UnavailableStore` with the
reason; the app keeps working without sharing.

Environment (read by :func:`config_from_env`):

- ``WHATIF_DATABASE_URL``: ``postgresql://user:password@host:port/dbname`` (or
  ``postgres://``); unset or empty for SQLite.
- ``WHATIF_DATA_DIR``: the SQLite file's folder; default ``$XDG_DATA_HOME/inference-whatif``
  or ``~/.local/share/inference-whatif``.
- ``WHATIF_DATA_RETENTION_DAYS``: a data set not opened for this many days is deleted
  (default 90).
- ``WHATIF_DATA_OWNER_SHARE``: the share of the total one client (its address) may hold,
  default 0.1; past it, that client's own oldest-opened data sets make room. Behind a reverse
  proxy every client has the proxy's address: raise it there (or make the proxy pass the
  client's address).
- ``WHATIF_DATA_MAX_TOTAL_MB``: the store's total size; a new data set that would pass it
  deletes the uploader's own data sets first, then those opened longest ago (default 1000 MB).

Limits are enforced on :meth:`DataStore.put`; :meth:`DataStore.get` also treats a data set past
its retention as gone. No Streamlit here: the page's integration is ``ui.measure_data``.

Modules: :mod:`datastore._base` (the id rule, limits, errors and settings' names, all
re-exported here), :mod:`datastore._sql` (the SQL both backends run), :mod:`datastore.sqlite`
and :mod:`datastore.postgres`. The backends import ``_base``, never this module; this module
opens them (:func:`open_store`), so there is no import circle.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from datastore._base import (
    CONNECT_TIMEOUT_S,
    DEFAULT_MAX_TOTAL_MB,
    DEFAULT_RETENTION_DAYS,
    ENV_DIR,
    ENV_OWNER_SHARE,
    ENV_RETENTION,
    ENV_TOTAL,
    ENV_URL,
    ID_LENGTH,
    MAX_NAME_CHARS,
    OWNER_SHARE,
    READ_TOUCH_S,
    STATEMENT_TIMEOUT_S,
    TABLE,
    InvalidId,
    Limits,
    Refused,
    Stored,
    StoreError,
    Unavailable,
    check_id,
    check_put,
    content_id,
)

__all__ = [
    "CONNECT_TIMEOUT_S",
    "DEFAULT_MAX_TOTAL_MB",
    "DEFAULT_RETENTION_DAYS",
    "ENV_DIR",
    "ENV_RETENTION",
    "ENV_OWNER_SHARE",
    "ENV_TOTAL",
    "ENV_URL",
    "ID_LENGTH",
    "MAX_NAME_CHARS",
    "READ_TOUCH_S",
    "RETRY_UNAVAILABLE_S",
    "STATEMENT_TIMEOUT_S",
    "TABLE",
    "Config",
    "DataStore",
    "InvalidId",
    "Limits",
    "Refused",
    "StoreError",
    "Stored",
    "Unavailable",
    "UnavailableStore",
    "check_id",
    "check_put",
    "config_from_env",
    "content_id",
    "default_data_dir",
    "get_store",
    "mark_unavailable",
    "open_store",
]

_log = logging.getLogger(__name__)

RETRY_UNAVAILABLE_S = 60.0  #: :func:`get_store` tries an unavailable store again after this


class DataStore(Protocol):
    kind: str  #: "sqlite", "postgresql" or "unavailable"
    where: str  #: where the data lives, for people (no password)

    def put(self, name: str, data: bytes, owner: str = "") -> str:
        """Store ``data`` under its id unless it is there already; return the id. ``owner``:
        an opaque key of the uploading client (its share of the store is bounded)."""
        ...

    def get(self, data_id: str, reader: str = "") -> Stored | None:
        """The data set with this id, or None when it is not (or no longer) stored.
        ``reader``: the opening client's opaque key (another client than the uploader marks
        it opened: it outlives never-opened uploads when the store is full)."""
        ...

    def healthy(self) -> bool:
        """Whether the store answers at all (after a call failed)."""
        ...


class UnavailableStore:
    """A store that cannot be used; every call raises :class:`Unavailable` with the reason."""

    kind = "unavailable"

    def __init__(self, reason: str) -> None:
        self.reason = reason
        self.where = "nowhere"

    def put(self, name: str, data: bytes, owner: str = "") -> str:
        raise Unavailable(self.reason)

    def get(self, data_id: str, reader: str = "") -> Stored | None:
        check_id(data_id)
        raise Unavailable(self.reason)

    def healthy(self) -> bool:
        return False


@dataclass(frozen=True)
class Config:
    url: str | None
    data_dir: Path
    limits: Limits
    problem: str | None = None  #: a setting that is not accepted (the store is unavailable)


def default_data_dir(env: Mapping[str, str]) -> Path:
    if env.get(ENV_DIR):
        return Path(env[ENV_DIR]).expanduser()
    base = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local/share")
    return Path(base).expanduser() / "inference-whatif"


def _positive(env: Mapping[str, str], key: str, default: float, what: str) -> float:
    raw = (env.get(key) or "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not (0 < value < 1e9):
        raise ValueError(f"{key} must be a positive number of {what}, not {raw[:40]!r}")
    return value


def config_from_env(env: Mapping[str, str] | None = None) -> Config:
    """The store's settings from the environment (see the module docstring)."""
    env = os.environ if env is None else env
    url = (env.get(ENV_URL) or "").strip() or None
    data_dir = default_data_dir(env)
    try:
        days = _positive(env, ENV_RETENTION, DEFAULT_RETENTION_DAYS, "days")
        total_mb = _positive(env, ENV_TOTAL, DEFAULT_MAX_TOTAL_MB, "megabytes")
        share = _positive(env, ENV_OWNER_SHARE, OWNER_SHARE, "the store's share (0 to 1)")
        if share > 1:
            raise ValueError(f"{ENV_OWNER_SHARE} must be a share from 0 to 1, not {share:g}")
    except ValueError as exc:
        return Config(url, data_dir, Limits(), problem=str(exc))
    limits = Limits(
        max_total_bytes=int(total_mb * 1e6), retention_s=days * 86400.0, owner_share=share
    )
    return Config(url, data_dir, limits)


def open_store(config: Config | None = None, *, clock: Callable[[], float] = time.time):
    """The configured store, opened and ready, or an :class:`UnavailableStore` with the reason
    (never raises). PostgreSQL when the config has a URL, else SQLite in ``data_dir``."""
    config = config_from_env() if config is None else config
    if config.problem:
        return UnavailableStore(config.problem)
    try:
        if config.url:
            from datastore.postgres import PostgresStore

            return PostgresStore(config.url, config.limits, clock=clock)
        from datastore.sqlite import SQLiteStore

        return SQLiteStore(config.data_dir / "datasets.sqlite3", config.limits, clock=clock)
    except Unavailable as exc:
        return UnavailableStore(exc.message)


_lock = threading.Lock()
_cached: tuple[Config, DataStore, float] | None = None


def get_store() -> DataStore:
    """The process's store for the current environment, opened once (Streamlit sessions are
    threads of one process). An unavailable store is tried again after
    :data:`RETRY_UNAVAILABLE_S`; a changed environment opens the store anew."""
    global _cached
    config = config_from_env()
    with _lock:
        now = time.monotonic()
        if _cached is not None:
            cfg, store, opened = _cached
            fresh = store.kind != "unavailable" or now - opened < RETRY_UNAVAILABLE_S
            if cfg == config and fresh:
                return store
        store = open_store(config)
        if store.kind == "unavailable":  # the reason, with paths and hosts, for the server's log
            _log.warning("the data-set store is unavailable: %s", store.reason)
        _cached = (config, store, now)
        return store


def mark_unavailable(store: DataStore, reason: str) -> None:
    """A call on ``store`` found it unusable (say, its database went away): until the next
    retry, :func:`get_store` answers an :class:`UnavailableStore` with ``reason`` instead of
    making every page wait for the database again."""
    global _cached
    _log.warning(
        "the data-set store failed a read and is off for %g s: %s", RETRY_UNAVAILABLE_S, reason
    )
    with _lock:
        if _cached is not None and _cached[1] is store:
            _cached = (_cached[0], UnavailableStore(reason), time.monotonic())
