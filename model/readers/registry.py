"""Every measurement file format, declared once (issue 41, item 4).

A format is a :class:`Reader`: its name, the ``Dataset.format`` values it returns, how it
recognises a file, how it reads one, and how the accepted-formats sentences name it. Each
format's module declares its readers itself, in a module-level ``READERS`` tuple at its end:
the benchmark outputs are one module each in :mod:`model.readers.formats`, found by listing
that package (a new module there is a new format, with nothing else to edit); our CSVs
(:mod:`~model.readers.csv_import`) and vLLM start-up logs (:mod:`~model.readers.vllm_log`)
declare theirs in their own modules.

A reader's ``stage`` says where :mod:`model.readers.importers` tries it, and ``order`` when
within the stage (lowest first):

``json``
    The parsed JSON value of a file that is JSON (:func:`recognise` gets the value).
``text``
    A benchmark's printed output, tried in order on the text after JSON (a JSONL file is text
    whose lines are JSON); a reader that returns None passes the file on.
``csv``
    A CSV file's text, tried before the ``text`` readers when the text looks like CSV.
``log``
    The last resort: the text is read as a vLLM start-up log, whose refusal names every
    accepted format.

The sentences every refusal quotes, :func:`accepted` and :func:`accepted_json`, are made from
the readers' ``accepted`` and ``accepted_json`` phrases in ``shown`` order, so they cannot drift
from what is read.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from model.readers.measurements import STAGES, Reader

_READERS: dict[str, Reader] = {}
_LOADED = False


def _add(reader: Reader) -> None:
    if reader.stage not in STAGES:
        raise ValueError(f"reader {reader.name}: stage {reader.stage!r} is not one of {STAGES}")
    if reader.name in _READERS and _READERS[reader.name] is not reader:
        raise ValueError(f"reader {reader.name} is declared twice")
    _READERS[reader.name] = reader


def reader_modules() -> list:
    """Every module that declares readers: each module of :mod:`model.readers.formats`
    (found by listing the package), our CSVs and vLLM start-up logs."""
    from model.readers import csv_import, formats, vllm_log

    found = [
        importlib.import_module(f"{formats.__name__}.{info.name}")
        for info in sorted(pkgutil.iter_modules(formats.__path__), key=lambda m: m.name)
    ]
    return [csv_import, vllm_log, *found]


def _load() -> None:
    """Collect every reader module's ``READERS`` once."""
    global _LOADED
    if _LOADED:
        return
    for module in reader_modules():
        for reader in getattr(module, "READERS", ()):
            _add(reader)
    _LOADED = True


def readers(stage: str | None = None) -> list[Reader]:
    """The registered readers of ``stage`` (all when None) in the order they are tried."""
    _load()
    found = [r for r in _READERS.values() if stage is None or r.stage == stage]
    return sorted(found, key=lambda r: (STAGES.index(r.stage), r.order, r.name))


def _phrases(attr: str) -> list[str]:
    shown = sorted((r for r in readers() if getattr(r, attr)), key=lambda r: (r.shown, r.name))
    return list(dict.fromkeys(getattr(r, attr) for r in shown))


def accepted() -> str:
    """The accepted-formats sentence every refusal of a file quotes."""
    return "; ".join(_phrases("accepted"))


def accepted_json() -> str:
    """What a JSON file may be, for the refusal of one that none of the readers recognises."""
    return ", ".join(_phrases("accepted_json"))


def read_json(name: str, value) -> Any:
    """The first JSON reader's Dataset for this parsed value, or None when none recognises
    it (or every one that does passes it on)."""
    for r in readers("json"):
        if r.recognise(value):
            ds = r.read(name, value)
            if ds is not None:
                return ds
    return None


def read_text(name: str, text: str, stage: str = "text") -> Any:
    """The first Dataset a ``stage`` reader makes of ``text``, or None."""
    for r in readers(stage):
        if r.recognise(text):
            ds = r.read(name, text)
            if ds is not None:
                return ds
    return None
