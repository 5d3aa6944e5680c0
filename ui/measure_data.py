"""The Measurements page's data sets: uploads, pasted text and examples, kept in the session.

Every file is read once, when it arrives (the uploader's callback), by the same importer as the
CLI (:func:`model.importers.import_file`); what could not be read is kept as an error naming the
file, shown on the page, and never stops the other files or the page. At most
:data:`MAX_DATASETS` data sets are kept; a file with the name of one already kept replaces it.
"""

from __future__ import annotations

import streamlit as st

from model.errors import ScenarioError
from model.examples import examples, load_example
from model.importers import import_file
from model.measurements import MAX_BYTES, Dataset
from ui import state

DATASETS = "_whatif_datasets"  #: name → Dataset, in the order they arrived
ERRORS = "_whatif_dataset_errors"  #: [(file, message)] of the last arrivals
SEEN = "_whatif_uploads_seen"  #: uploader file ids already read
VERSION = "_whatif_datasets_version"  #: bumped on every change of the data sets
MAX_DATASETS = 12
MAX_PASTE_CHARS = MAX_BYTES


def datasets() -> list[Dataset]:
    return list(st.session_state.get(DATASETS, {}).values())


def errors() -> list[tuple[str, str]]:
    return list(st.session_state.get(ERRORS, []))


def _changed() -> None:
    st.session_state[VERSION] = st.session_state.get(VERSION, 0) + 1


def _keep(ds: Dataset) -> None:
    _changed()
    store = st.session_state.setdefault(DATASETS, {})
    store.pop(ds.name, None)
    if len(store) >= MAX_DATASETS:
        st.session_state.setdefault(ERRORS, []).append(
            (ds.name, f"at most {MAX_DATASETS} data sets at once; remove one first")
        )
        return
    store[ds.name] = ds


def _read(name: str, data: bytes) -> None:
    try:
        _keep(import_file(name, data))
    except ScenarioError as exc:
        st.session_state.setdefault(ERRORS, []).append((name, exc.message))
    except Exception as exc:  # noqa: BLE001 - one bad file never breaks the page
        st.session_state.setdefault(ERRORS, []).append(
            (name, f"could not be read ({type(exc).__name__}); please report the file")
        )


def on_upload() -> None:
    """The uploader's callback: read the files not read yet."""
    st.session_state[ERRORS] = []
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
    st.session_state[ERRORS] = []
    text = st.session_state.get("w_meas_paste") or ""
    if not text.strip():
        st.session_state[ERRORS].append(("pasted text", "nothing pasted"))
        return
    n = 1 + sum(1 for d in datasets() if d.name.startswith("pasted-"))
    _read(f"pasted-{n}.txt", text[:MAX_PASTE_CHARS].encode("utf-8"))


def on_example(example_id: str) -> None:
    st.session_state[ERRORS] = []
    try:
        _keep(load_example(example_id))
    except ScenarioError as exc:  # a broken example is a bug, shown like any bad file
        st.session_state[ERRORS].append((examples()[example_id].file, exc.message))


def remove(name: str) -> None:
    _changed()
    st.session_state.get(DATASETS, {}).pop(name, None)


def clear() -> None:
    _changed()
    st.session_state[DATASETS] = {}
    st.session_state[ERRORS] = []


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
