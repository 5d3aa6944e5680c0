"""The Measurements page's data sets: uploads, pasted text and examples, kept in the session
and shared through the link.

Every file is read once, when it arrives (the uploader's callback), by the same importer as the
CLI (:func:`model.readers.importers.import_file`); what could not be read is kept as an error naming the
file, shown on the page, and never stops the other files or the page. At most
:data:`MAX_DATASETS` data sets are kept; a file with the name of one already kept replaces it.

Sharing: a file that was read is put, as its raw bytes and name, in the server's data-set store
(:mod:`datastore`, addressed by the SHA-256 of the bytes) and its id joins the link's ``data``
key (:func:`ui.state.set_data_ids`); an example is ``ex-<example id>`` and needs no storage. A
session opened from a link with ``data=`` reads those files again with the same importer
(:func:`sync_from_link`, run by :func:`datasets`, so every page that draws the session's
measurements shows them). A missing, malformed or unreachable data set is a notice
(:func:`notices`); the rest of the link opens as usual.
"""

from __future__ import annotations

import logging
import re
import time

import streamlit as st

import datastore
from model.errors import ScenarioError
from model.readers.examples import examples, load_example
from model.readers.measurements import MAX_BYTES, Dataset
from ui import state
from ui.text import md_escape

_log = logging.getLogger(__name__)

DATASETS = "_whatif_datasets"  #: name → Dataset, in the order they arrived
ERRORS = "_whatif_dataset_errors"  #: [(file, message)] of the last arrivals
SEEN = "_whatif_uploads_seen"  #: uploader file ids already read
VERSION = "_whatif_datasets_version"  #: bumped on every change of the data sets
LINK_IDS = "_whatif_dataset_ids"  #: name → the id the link carries for it
LINK_SEEN = "_whatif_link_ids_seen"  #: link ids this session has opened (or failed to)
NOTICES = "_whatif_dataset_notices"  #: what sharing could not do, for the page
SHARED = "_whatif_datasets_shared"  #: how many files this session has put in the store
PENDING = "_whatif_link_ids_pending"  #: link ids not opened because the store was unavailable
MAX_DATASETS = 12
MAX_PASTE_CHARS = MAX_BYTES
MAX_SHARED = 50  #: files one session may put in the store
EXAMPLE_PREFIX = "ex-"
_EXAMPLE_ID = re.compile(r"[a-z0-9][a-z0-9.-]{0,63}")
ACCEPTED_IDS = (
    "a stored data set's id (64 lowercase hexadecimal characters) or ex-<example> "
    "for an example data set, separated by commas"
)


def datasets() -> list[Dataset]:
    sync_from_link()
    return list(st.session_state.get(DATASETS, {}).values())


def errors() -> list[tuple[str, str]]:
    return list(st.session_state.get(ERRORS, []))


def notices() -> list[str]:
    """What sharing could not do on this run or the last change (markdown, user text escaped):
    a data set the link names that is no longer stored or malformed, an unavailable store."""
    return list(st.session_state.get(NOTICES, []))


def _notice(text: str) -> None:
    found = st.session_state.setdefault(NOTICES, [])
    if text not in found:
        found.append(text)


def _reset_messages() -> None:
    st.session_state[ERRORS] = []
    st.session_state[NOTICES] = []


def _changed() -> None:
    st.session_state[VERSION] = st.session_state.get(VERSION, 0) + 1


def _keep(ds: Dataset, link_id: str | None = None) -> bool:
    """Keep ``ds`` (replacing one of the same name) under ``link_id`` in the link; False when
    the session holds :data:`MAX_DATASETS` already."""
    _changed()
    store = st.session_state.setdefault(DATASETS, {})
    ids = st.session_state.setdefault(LINK_IDS, {})
    store.pop(ds.name, None)
    ids.pop(ds.name, None)
    if len(store) >= MAX_DATASETS:
        st.session_state.setdefault(ERRORS, []).append(
            (ds.name, f"at most {MAX_DATASETS} data sets at once; remove one first")
        )
        return False
    store[ds.name] = ds
    if link_id:
        ids[ds.name] = link_id
    return True


def _import(name: str, data: bytes) -> Dataset:
    """:func:`model.readers.importers.import_file`, run in a worker process
    (:func:`ui.serving_worker.read_file`): a crafted 5 MB file takes seconds of pure Python to
    refuse, and in the session's thread it would hold every other session's page."""
    from ui import serving_worker

    return serving_worker.read_file("import", name, data)


def _read(name: str, data: bytes) -> None:
    try:
        ds = _import(name, data)
    except ScenarioError as exc:
        st.session_state.setdefault(ERRORS, []).append((name, exc.message))
        return
    except Exception as exc:  # noqa: BLE001 - one bad file never breaks the page
        st.session_state.setdefault(ERRORS, []).append(
            (name, f"could not be read ({type(exc).__name__}); please report the file")
        )
        return
    if _keep(ds):
        link_id = _share(name, data)
        if link_id:
            st.session_state[LINK_IDS][ds.name] = link_id
    _publish()


BACKOFF = "_whatif_store_backoff"  #: (monotonic time until, reason): this session's pause
PAUSE_S = 15.0  #: how long a session whose read found the store down stops asking it


def session_store():
    """The data-set store for this session: the process's (:func:`datastore.get_store`), or,
    for :data:`PAUSE_S` after it failed this session's read and did not
    answer a probe either, an unavailable one for this session only. A failure in one
    session never switches sharing off for the others (issue 40, R10)."""
    paused = st.session_state.get(BACKOFF)
    if paused and time.monotonic() < paused[0]:
        return datastore.UnavailableStore(paused[1])
    return datastore.get_store()


def store_down(store, exc: Exception) -> bool:
    """After a read of ``store`` failed with ``exc``: whether the store itself does not answer
    (a probe fails too: this session pauses its reads), or only that data set could not be
    read (a damaged row: the others read on, nobody pauses)."""
    healthy = getattr(store, "healthy", None)
    if healthy is not None and healthy():
        _log.warning("one data set could not be read, the store answers: %s", exc)
        return False
    _log.warning("the data-set store does not answer this session's reads: %s", exc)
    st.session_state[BACKOFF] = (
        time.monotonic() + PAUSE_S,
        getattr(exc, "message", str(exc)),
    )
    return True


def _unavailable_text() -> str:
    """What a visitor is told when the store cannot be used: the problem, never the server's
    internals (its data path, its database host); :func:`datastore.get_store` logs those."""
    return (
        "Sharing data sets is unavailable just now (the server's data-set store cannot be "
        "used; its log says why); uploads still work in this session, but the share link does "
        "not carry them."
    )


def _share(name: str, data: bytes, notice=None) -> str | None:
    """Put a file that was read in the store; its id, or None (with a notice, given to
    ``notice``: the Measurements page's list by default) when it cannot be shared. The page
    goes on either way. The Scale to zero page shares its trace through it too."""
    say = notice or _notice
    shared = st.session_state.get(SHARED, 0)
    if shared >= MAX_SHARED:
        say(
            f"**{md_escape(name)}** stays in this session only: one session may share at most "
            f"{MAX_SHARED} files."
        )
        return None
    store = session_store()
    try:
        data_id = store.put(name, data, owner=client_key())
    except datastore.Unavailable as exc:
        # one write that fails (a lock timeout, a full disk, a read-only store) concerns this
        # upload only: reads and the other sessions' uploads go on
        _log.warning("data-set store refused a write: %s", exc.message)
        say(
            f"**{md_escape(name)}** stays in this session only: the server could not store it "
            "just now, so the share link does not carry it. Upload it again to retry."
        )
        return None
    except datastore.Refused as exc:
        say(f"**{md_escape(name)}** stays in this session only: {md_escape(exc.message)}.")
        return None
    st.session_state[SHARED] = shared + 1
    return data_id


def client_key() -> str:
    """An opaque key of the client behind this session, the store's owner of what it uploads:
    a hash of its address (so fresh sessions of one client share one bound), or of the session
    where no address is known."""
    import hashlib

    who = None
    try:
        who = st.context.ip_address
    except Exception:  # noqa: BLE001 - no request context (a bare script run)
        who = None
    if not who:
        from ui.streamlit_internals import session_id

        who = "session:" + (session_id() or "none")
    return hashlib.sha256(f"whatif-owner:{who}".encode()).hexdigest()[:32]


def current_ids() -> list[str]:
    """The link ids of the session's data sets, in the order they arrived."""
    ids = st.session_state.get(LINK_IDS, {})
    return [ids[n] for n in st.session_state.get(DATASETS, {}) if n in ids]


def pending_ids() -> list[str]:
    """Link ids this session could not open because the store was unavailable: the link keeps
    them and the next run tries again."""
    return list(st.session_state.get(PENDING, []))


def _publish() -> None:
    """The link carries exactly the session's shared data sets, and the ids it could not open
    yet because the store was unavailable (so a reload or a re-share does not lose them)."""
    have = current_ids()
    ids = have + [i for i in pending_ids() if i not in have]
    st.session_state.setdefault(LINK_SEEN, set()).update(ids)
    if state.data_ids() != ids:
        state.set_data_ids(ids)


def sync_from_link() -> None:
    """Open the data sets the link names that this session has not opened yet (a fresh session
    from a share link), then make the link carry exactly the session's data sets (a link id
    that could not be opened is dropped, with a notice). Cheap when nothing is new."""
    wanted = state.data_ids()
    seen = st.session_state.setdefault(LINK_SEEN, set())
    pending = st.session_state.setdefault(PENDING, [])
    seen.difference_update(pending)  # tried again on every run until the store answers
    pending.clear()
    have = set(current_ids())
    new = [i for i in dict.fromkeys(wanted) if i not in have and i not in seen]
    for i in new:
        seen.add(i)
        if len(st.session_state.get(DATASETS, {})) >= MAX_DATASETS:
            _notice(
                f"The link names more than {MAX_DATASETS} data sets; the page opens the first "
                f"{MAX_DATASETS}."
            )
            break
        _open_link_id(i)
    if new or wanted != current_ids() + [i for i in pending if i not in have]:
        _publish()


def _open_link_id(link_id: str) -> None:
    if link_id.startswith(EXAMPLE_PREFIX):
        example_id = link_id[len(EXAMPLE_PREFIX) :]
        if not _EXAMPLE_ID.fullmatch(example_id) or example_id not in examples():
            _notice(
                f"The link's `data` field names {_shown(link_id)}, which is not one of the "
                "example data sets; the scenario opens without it."
            )
            return
        try:
            _keep(load_example(example_id), link_id)
        except ScenarioError as exc:
            st.session_state.setdefault(ERRORS, []).append(
                (examples()[example_id].file, exc.message)
            )
        return
    try:
        datastore.check_id(link_id)
    except datastore.InvalidId:
        _notice(
            f"The link's `data` field has {_shown(link_id)}, which is not a data set id; "
            f"accepted: {ACCEPTED_IDS}. The scenario opens without it."
        )
        return
    store = session_store()
    try:
        found = store.get(link_id, reader=client_key())
    except datastore.Unavailable as exc:
        _log.warning("data set %s could not be opened: %s", link_id, exc.message)
        if not store_down(store, exc):  # this data set alone (a damaged row)
            _notice(
                f"The data set `{link_id}` could not be read (the store answers, this one "
                "entry does not); the scenario opens without it."
            )
            return
        st.session_state.setdefault(PENDING, []).append(link_id)
        _notice(
            f"The data set `{link_id}` could not be opened just now: the server's data-set store "
            "is unavailable. The link keeps it, and the page tries again on your next change "
            f"or reload from {PAUSE_S:g} s on."
        )
        return
    if found is None:
        _notice(f"The data set `{link_id}` is no longer stored; the scenario opens without it.")
        return
    name = _free_name(found.name)
    try:
        ds = _import(name, found.data)
    except ScenarioError as exc:  # stored files were read once; a changed reader may refuse
        st.session_state.setdefault(ERRORS, []).append((name, exc.message))
        return
    _keep(ds, link_id)


def _shown(link_id: str) -> str:
    """A link id as a notice shows it: quoted, escaped, cut when long."""
    if len(link_id) <= 72:
        return f"“{md_escape(link_id)}”"
    return f"“{md_escape(link_id[:72])}…” ({len(link_id)} characters)"


def _free_name(name: str) -> str:
    """``name``, or ``name (2)`` … when the session already has a data set of that name (two
    shared files can both be ``pasted-1.txt``)."""
    taken = st.session_state.get(DATASETS, {})
    if name not in taken:
        return name
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    n = 2
    while (candidate := f"{stem} ({n}){'.' + ext if ext else ''}") in taken:
        n += 1
    return candidate


def on_upload() -> None:
    """The uploader's callback: read the files not read yet."""
    _reset_messages()
    seen = st.session_state.setdefault(SEEN, set())
    for f in st.session_state.get("w_meas_upload") or []:
        fid = getattr(f, "file_id", None) or (f.name, f.size)
        if fid in seen:
            continue
        seen.add(fid)
        if f.size > MAX_BYTES:
            st.session_state[ERRORS].append((f.name, f"larger than {MAX_BYTES // 10**6} MB"))
            continue
        _read(f.name, f.getvalue())


def on_paste() -> None:
    """The 'Read pasted text' button: the text area as a file called ``pasted-N.txt``."""
    _reset_messages()
    text = st.session_state.get("w_meas_paste") or ""
    if not text.strip():
        st.session_state[ERRORS].append(("pasted text", "nothing pasted"))
        return
    n = 1 + sum(1 for d in datasets() if d.name.startswith("pasted-"))
    _read(f"pasted-{n}.txt", text[:MAX_PASTE_CHARS].encode("utf-8"))


def on_example(example_id: str) -> None:
    """Load an example data set; when it is the session's only one, the scenario is set to
    what the example measured (its hardware, GPUs, model, dtype) and a notice says so, so the
    overlay and the fit compare like with like."""
    _reset_messages()
    try:
        kept = _keep(load_example(example_id), EXAMPLE_PREFIX + example_id)
    except ScenarioError as exc:  # a broken example is a bug, shown like any bad file
        st.session_state[ERRORS].append((examples()[example_id].file, exc.message))
        kept = False
    ex = examples()[example_id]
    if kept and ex.scenario and len(st.session_state.get(DATASETS, {})) == 1:
        pairs = [
            (k, str(v).lower() if isinstance(v, bool) else str(v)) for k, v in ex.scenario.items()
        ]
        state.apply_change(pairs)
        _notice(
            "The scenario is set to what this example measured ("
            + md_escape(", ".join(f"{k} = {v}" for k, v in pairs))
            + "); the sidebar shows it and the share link carries it."
        )
    _publish()


def remove(name: str) -> None:
    _changed()
    st.session_state[NOTICES] = []
    st.session_state.get(DATASETS, {}).pop(name, None)
    st.session_state.get(LINK_IDS, {}).pop(name, None)
    _publish()


def clear() -> None:
    _changed()
    st.session_state[DATASETS] = {}
    st.session_state[LINK_IDS] = {}
    _reset_messages()
    _publish()


def sharing_status() -> tuple[bool, str]:
    """Whether uploads are shared through the link, and a sentence for the page."""
    store = session_store()
    if store.kind == "unavailable":
        return False, _unavailable_text()
    if getattr(store, "read_only", False):
        return False, (
            "This server's data-set store is read-only: share links open the data sets it "
            "holds, but files you upload or paste stay in this session and the share link does "
            "not carry them."
        )
    days = store.limits.retention_s / 86400
    return True, (
        "Files you upload or paste are kept on this server under their content hash, so the "
        f"share link shows them to whoever opens it; a file not opened for {days:g} days is "
        "deleted. Examples are shared by name."
    )


def example_for(ds: Dataset):
    """The example a data set came from, if any."""
    for ex in examples().values():
        if ex.file == ds.name:
            return ex
    return None


def lens_points(quantities: set[str]) -> list:
    """The session's measured points of the given quantities (for the lens pages' own charts);
    empty when nothing was uploaded. Points come from :func:`model.calibrate.points_of`."""
    from model.calibrate import points_of

    out = []
    for ds in datasets():
        pts, _ = points_of(ds)
        out += [p for p in pts if p.quantity in quantities]
    return out


def measured_items() -> dict[int, float]:
    """Cold-start items 1–5 measured in the session's data sets [s]: a cold-start CSV's items,
    and a start-up log's items 4 and 5 (the last data set that states an item wins)."""
    out: dict[int, float] = {}
    for ds in datasets():
        source = ds.figures if ds.kind == "cold_start" else ds.extra.get("items") or {}
        if ds.kind not in ("cold_start", "startup_log"):
            continue
        for n in range(1, 6):
            v = source.get(f"item{n}_s")
            if isinstance(v, int | float) and not isinstance(v, bool):
                out[n] = float(v)
    return out


CAL_CACHE = "_whatif_calibration_cache"


def calibrated(s, sets: list[Dataset]):
    """:func:`model.calibrate.calibrate` and :func:`model.calibrate.overlay_curves` for the
    scenario and the session's data sets, kept for the next run while neither changes (a tab
    switch or an expander costs nothing; a fit over several data sets takes ~0.1 s)."""
    from model import codecs
    from model.calibrate import calibrate, overlay_curves

    def compute():
        cal = calibrate(s, sets)
        return cal, overlay_curves(s, cal)

    key = (codecs.to_query(s), st.session_state.get(VERSION, 0), len(sets))
    return state.session_cached(CAL_CACHE, key, compute)
