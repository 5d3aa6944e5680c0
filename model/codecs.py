"""The scenario's four doors: URL query, YAML, CLI ``--set`` and widgets (SPEC section 3).

The URL carries only the fields that differ from the named base, so links stay short; YAML is
a self-contained dump. Both round-trip exactly: ``from_url(to_url(s)) == s`` and
``from_yaml(to_yaml(s)) == s``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

import yaml

from model import safeyaml
from model.errors import ScenarioError
from model.overrides import DTYPE_KEYS, resolve, shared_base
from model.presets import hardware_presets, model_presets
from model.scenario import Scenario

MAX_QUERY_CHARS = 4096
MAX_YAML_BYTES = safeyaml.MAX_CHARS  #: a scenario YAML file, uploaded or given to the CLI
DEFAULT_BASE_URL = "http://localhost:8501"
#: a link's keys that are not the scenario's: the pinned baseline (``base.<key>``, a scenario
#: of its own in the same key language) and shared measurement data sets (``data=<id>,…``)
BASE_PREFIX = "base."
DATA_KEY = "data"
COMPARE_KEY = "vs"  #: a further scenario for the Compare page, as a link's query string
TAB_KEY = "tab"  #: the page's open tab (its label), so a reviewer lands where the author was
TRACE_KEY = "trace"  #: a request trace the Scale to zero page replays: its data-set store id
MAX_TAB_CHARS = 80
MAX_COMPARE = 2


def _text(value: Any) -> str:
    """A value as URL text that parses back to the same value."""
    if value is None:
        return "auto"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list):
        return ",".join(_text(v) for v in value)
    return str(value)


def _flat(prefix: str, value: dict) -> dict[str, Any]:
    out = {}
    for key, sub in value.items():
        if isinstance(sub, dict):
            out.update(_flat(f"{prefix}.{key}", sub))
        else:
            out[f"{prefix}.{key}"] = sub
    return out


def _spec_diff(kind: str, spec: dict, base_spec: dict, presets: dict) -> list[tuple[str, str]]:
    """Pairs that turn ``base_spec`` into ``spec``: a preset id, then dotted field changes."""
    out: list[tuple[str, str]] = []
    ref = base_spec
    if spec["id"] in presets:
        if spec["id"] != base_spec["id"]:
            out.append((kind, spec["id"]))
            ref = presets[spec["id"]].model_dump()
    elif spec["id"] != base_spec["id"]:
        out.append((f"{kind}.id", spec["id"]))
    mine = _flat(kind, {k: v for k, v in spec.items() if k != "id"})
    theirs = _flat(kind, {k: v for k, v in ref.items() if k != "id"})
    for key, value in mine.items():
        if theirs.get(key, object()) != value or type(theirs.get(key)) is not type(value):
            out.append((key, _text(value)))
    for key in theirs:
        if key not in mine and key.startswith((f"{kind}.peak_tflops.", f"{kind}.sources.")):
            out.append((key, "none"))
    return out


def _base_of(s: Scenario) -> Scenario:
    """The scenario ``s`` is written against (its named base, or the built-in defaults): the
    shared cached instance, read only."""
    return shared_base(s.scenario or None)


def to_params(s: Scenario) -> list[tuple[str, str]]:
    """The scenario as (key, text) pairs relative to its base.

    Knobs left to the engine stay ``auto`` (the link carries the engine, not its numbers), and
    the engine is always named with its version, so a link reopens with the same numbers after
    a profile is revised (SPEC 4.0).
    """
    s = s.raw
    base = _base_of(s).raw.model_dump()
    mine = s.model_dump()
    out: list[tuple[str, str]] = []
    if s.scenario:
        out.append(("scenario", s.scenario))
    out.append(("engine", s.engine))
    out += _spec_diff("hardware", mine["hardware"], base["hardware"], hardware_presets())
    out += _spec_diff("model", mine["model"], base["model"], model_presets())
    # a link that names another model takes that checkpoint's dtypes unless it states them
    # (model.overrides.resolve), so it states them
    pinned = DTYPE_KEYS if any(k.split(".")[0] == "model" for k, _ in out) else ()
    for key, value in mine.items():
        if key in ("scenario", "hardware", "model", "engine"):
            continue
        if key in pinned or value != base[key] or type(value) is not type(base[key]):
            out.append((key, _text(value)))
    return out


def to_query(s: Scenario, extra: list[tuple[str, str]] = ()) -> str:
    """The URL query string of the scenario (without the leading ``?``), then ``extra`` pairs
    (a baseline's ``base.*`` keys, ``data``)."""
    return urlencode(to_params(s) + list(extra), quote_via=quote, safe=",@")


def split_link(pairs) -> tuple[list, list, list, list]:
    """A link's pairs split into the scenario's, the baseline's (``base.`` removed), the data
    set ids (every ``data`` value, comma-separated lists flattened, in order) and the Compare
    page's further scenarios (``vs`` values: query strings)."""
    own, base, data, more = [], [], [], []
    for key, value in pairs:
        if key.startswith(BASE_PREFIX):
            base.append((key[len(BASE_PREFIX) :], value))
        elif key == DATA_KEY:
            data += [v.strip() for v in str(value).split(",") if v.strip()]
        elif key == COMPARE_KEY:
            more.append(str(value))
        elif key in (TAB_KEY, TRACE_KEY):
            continue  # the view and the replayed trace, not the scenario: ``link_tab``, …
        else:
            own.append((key, value))
    return own, base, data, more


def link_tab(pairs) -> str | None:
    """The open tab a link names (``tab=<label>``, the last one), or None. Unvalidated beyond
    its length: the page opens it only when it is one of its own tabs' labels."""
    tabs = [str(v) for k, v in pairs if k == TAB_KEY and v and len(str(v)) <= MAX_TAB_CHARS]
    return tabs[-1] if tabs else None


def link_trace(pairs) -> str | None:
    """The id of the request trace a link replays (``trace=<id>``, the last one), or None;
    unvalidated (the Scale to zero page checks it as a data-set id)."""
    ids = [str(v).strip() for k, v in pairs if k == TRACE_KEY and str(v).strip()]
    return ids[-1] if ids else None


def baseline_params(b: Scenario) -> list[tuple[str, str]]:
    """A pinned baseline as link pairs: its own keys, each prefixed ``base.``."""
    return [(BASE_PREFIX + k, v) for k, v in to_params(b)]


def to_url(
    s: Scenario, page_url: str = DEFAULT_BASE_URL + "/", extra: list[tuple[str, str]] = ()
) -> str:
    """The share URL of the scenario: the page's address (``page_url``, which the edges make
    from the page's declaration, :meth:`ui.lens.Page.url`; the app's address is its landing
    page), then the scenario's query and ``extra`` pairs (a baseline, data sets)."""
    query = to_query(s, extra)
    return page_url + (f"?{query}" if query else "")


def query_size(pairs) -> int:
    """Characters of a query's decoded key=value pairs (what the app measures against
    ``MAX_QUERY_CHARS``)."""
    return sum(len(k) + len(v) + 2 for k, v in pairs)


def link_size(s: Scenario) -> int:
    """How long the share link's query is, in the app's measure."""
    return query_size(to_params(s))


def parse_query(query: str) -> list[tuple[str, str]]:
    """Split a query string into pairs, refusing an oversized one."""
    query = query.lstrip("?")
    if len(query) > 4 * MAX_QUERY_CHARS:  # never decode a huge string
        size = len(query)
    else:
        pairs = parse_qsl(query, keep_blank_values=True)
        size = query_size(pairs)  # decoded, as the app measures it
    if size > MAX_QUERY_CHARS:
        raise ScenarioError(
            "url",
            f"the query string is {size} characters; at most {MAX_QUERY_CHARS} are accepted",
        )
    return pairs


def from_params(pairs, *, strict: bool = True) -> tuple[Scenario, list[ScenarioError]]:
    """A scenario from URL-style pairs (see :func:`model.overrides.resolve`)."""
    return resolve(pairs, strict=strict)


def from_url(url_or_query: str, *, strict: bool = True) -> Scenario:
    """A scenario from a share URL or its query string (strict: raise on the first bad key)."""
    query = url_or_query.split("?", 1)[1] if "?" in url_or_query else url_or_query
    if "://" in url_or_query and "?" not in url_or_query:
        query = ""
    own, *_ = split_link(parse_query(query))  # a baseline and data sets are not the scenario
    scenario, _ = resolve(own, strict=strict)
    return scenario


def to_yaml(s: Scenario) -> str:
    """A self-contained YAML dump of the scenario (hardware and model inline, with their ids)."""
    data = s.raw.model_dump()
    if data["scenario"] is None:
        data.pop("scenario")
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def yaml_items(text: str, what: str = "YAML file") -> dict:
    """The mapping of a scenario YAML file: judged before it is expanded, then
    ``yaml.safe_load`` (see :mod:`model.safeyaml`)."""
    return safeyaml.load_mapping(text, what, max_chars=MAX_YAML_BYTES)


def from_yaml(text: str, *, strict: bool = True) -> Scenario:
    """A scenario from YAML text (a mapping of public keys; nested or dotted specs)."""
    scenario, _ = resolve(yaml_items(text), strict=strict)
    return scenario


def from_yaml_upload(data: bytes) -> tuple[Scenario | None, list[ScenarioError]]:
    """A scenario from an uploaded YAML file, leniently: bad keys are reported and dropped.

    Returns ``(None, [error])`` when the file as a whole is unusable (too large, not UTF-8
    text, not YAML, not a mapping, a Python tag).
    """
    if len(data) > MAX_YAML_BYTES:
        return None, [ScenarioError("YAML file", f"{len(data)} bytes; at most {MAX_YAML_BYTES}")]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, [ScenarioError("YAML file", "not UTF-8 text (is it a binary file?)")]
    try:
        items = yaml_items(text, "YAML file")
    except ScenarioError as err:
        return None, [err]
    return resolve(items, strict=False)
