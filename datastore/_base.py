"""What the data-set store and its backends share: the id rule, the limits, the errors and the
names of the settings (see :mod:`datastore` for what they mean). Everything here is also
importable from :mod:`datastore`, which is where callers take it from.

The backends (:mod:`datastore.sqlite`, :mod:`datastore.postgres` and their common
:mod:`datastore._sql`) import this module, never the package's ``__init__``, and this module
imports no other module of the package: ``datastore/__init__`` opens the backends without an
import circle.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import NamedTuple

from model.readers.measurements import MAX_BYTES

ID_LENGTH = 64
_ID = re.compile(r"[0-9a-f]{64}")
MAX_NAME_CHARS = 200  #: a stored file name is cut to this many characters
DEFAULT_RETENTION_DAYS = 90.0
DEFAULT_MAX_TOTAL_MB = 1000.0
CONNECT_TIMEOUT_S = 3  #: a database that does not answer is given up after this long
STATEMENT_TIMEOUT_S = 5
READ_TOUCH_S = 3600.0  #: a read refreshes a data set's "last opened" at most once an hour
TABLE = "whatif_datasets"
OWNER_SHARE = 0.1  #: one client holds at most a tenth of the store (100 MB of the default 1 GB)

ENV_URL = "WHATIF_DATABASE_URL"
ENV_DIR = "WHATIF_DATA_DIR"
ENV_RETENTION = "WHATIF_DATA_RETENTION_DAYS"
ENV_TOTAL = "WHATIF_DATA_MAX_TOTAL_MB"
ENV_OWNER_SHARE = "WHATIF_DATA_OWNER_SHARE"


class StoreError(Exception):
    """A data-store problem, with a message for the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Unavailable(StoreError):
    """The store cannot be used (not configured right, not reachable, not writable)."""


class InvalidId(StoreError):
    """A data set id that is not 64 lowercase hex digits."""


class Refused(StoreError):
    """A data set the store does not take (too large, empty, larger than the whole store)."""


class Stored(NamedTuple):
    name: str
    data: bytes


@dataclass(frozen=True)
class Limits:
    max_bytes: int = MAX_BYTES  #: one data set
    max_total_bytes: int = int(DEFAULT_MAX_TOTAL_MB * 1e6)  #: the whole store
    retention_s: float = DEFAULT_RETENTION_DAYS * 86400.0  #: since a data set was last opened
    #: the share of the whole store one client (its address; a session where none is known)
    #: may hold: past it, its own oldest-opened data sets make room for its new one
    owner_share: float = OWNER_SHARE

    @property
    def max_owner_bytes(self) -> int:
        return max(self.max_bytes, int(self.max_total_bytes * self.owner_share))


def content_id(data: bytes) -> str:
    """The id of a data set: SHA-256 of its bytes, 64 lowercase hex digits."""
    return hashlib.sha256(data).hexdigest()


def check_id(data_id: object) -> str:
    """``data_id`` if it is a well-formed id, else :class:`InvalidId` saying what is accepted.
    Every backend calls this before any query."""
    if not isinstance(data_id, str) or not _ID.fullmatch(data_id):
        shown = repr(data_id)[:40] if isinstance(data_id, str) else type(data_id).__name__
        raise InvalidId(
            f"{shown} is not a data set id; an id is {ID_LENGTH} lowercase hexadecimal "
            "characters (0-9, a-f)"
        )
    return data_id


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_name(name: object) -> str:
    """A file name either backend stores and any page shows: valid UTF-8 (a lone surrogate
    becomes U+FFFD), no NUL or other control characters (a run of them becomes one space), at
    most :data:`MAX_NAME_CHARS` characters, never empty."""
    text = _SURROGATE.sub("\ufffd", str(name))
    text = _CONTROL.sub(" ", text).strip()
    return text[:MAX_NAME_CHARS] or "data"


def check_put(name: str, data: bytes, limits: Limits) -> tuple[str, str]:
    """The id and the (cut) name of a data set the store takes, or :class:`Refused`."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise Refused("a data set is bytes")
    data = bytes(data)
    if not data:
        raise Refused("an empty file is not stored")
    if len(data) > limits.max_bytes:
        raise Refused(
            f"larger than {limits.max_bytes / 1e6:g} MB, the most a shared data set may have"
        )
    if len(data) > limits.max_total_bytes:
        raise Refused("larger than the whole store may hold")
    return content_id(data), clean_name(name)
