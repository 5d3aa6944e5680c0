"""Build a scenario from outside input: a named base, then key=value overrides.

The same resolver serves the URL, the CLI (``--set``), YAML files and the app's widgets:

1. ``scenario`` picks the base (a named preset, else the built-in defaults);
2. ``hardware`` / ``model`` pick a preset by id, or (YAML) give an inline mapping;
3. every other key overrides one field; ``hardware.X``, ``model.X`` and
   ``hardware.peak_tflops.DTYPE`` reach into the specs.

``strict=True`` (CLI, YAML files) stops at the first bad key. ``strict=False`` (pages) drops each
bad key with a :class:`ScenarioError` and keeps the rest, so the page still shows a scenario.
"""

from __future__ import annotations

import math
import reprlib
import types
import typing
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import annotated_types
from pydantic import ValidationError

from model.errors import ScenarioError
from model.presets import get_hardware, get_model, scenario_files
from model.scenario import HardwareSpec, ModelSpec, Scenario
from model.units import PEAK_DTYPES

DEFAULT_HARDWARE = "h100-sxm"
DEFAULT_MODEL = "llama-3.1-70b"
#: keys whose ``auto`` is the model checkpoint's dtype; a change of model without them takes it
DTYPE_KEYS = ("weights_dtype", "kv_dtype")
MAX_ITEMS = 200  #: key=value pairs, counting the fields of inline hardware/model mappings
MAX_VALUE_CHARS = 2000
#: keys whose values may be longer: 512 capture sizes of up to 5 digits and their commas
MAX_VALUE_CHARS_BY_KEY = {"capture_sizes": 3600}
_NONE_WORDS = {"", "auto", "none", "null", "default"}
_SPECS = {"hardware": HardwareSpec, "model": ModelSpec}
_META_KEYS = {"description"}  # allowed in YAML files, ignored


def built_in_defaults() -> Scenario:
    """The scenario with no base: SPEC section 3's defaults (Llama 3.1 70B, FP8, 4×H100 SXM)."""
    return _built_in_defaults().model_copy(deep=True)


def shared_base(name: str | None = None) -> Scenario:
    """The named scenario ``name`` (the built-in defaults for none), the cached instance
    itself, for reading only (``model_dump`` makes fresh containers, attributes are read):
    :func:`built_in_defaults` and :func:`named_scenario` hand out deep copies, which cost
    ~1 ms each and were made 8-10 times per page run only to be dumped or compared."""
    return _named_scenario(name) if name else _built_in_defaults()


@lru_cache(maxsize=1)
def _built_in_defaults() -> Scenario:
    return Scenario(hardware=get_hardware(DEFAULT_HARDWARE), model=get_model(DEFAULT_MODEL))


def known_keys() -> list[str]:
    """Every public top-level key, then the dotted spec keys."""
    top = list(Scenario.model_fields)
    nested = [
        f"{spec}.{field}"
        for spec, cls in _SPECS.items()
        for field in cls.model_fields
        if field not in ("peak_tflops", "sources")
    ]
    return top + nested + [f"hardware.peak_tflops.{d}" for d in PEAK_DTYPES]


# ----------------------------------------------------------------------------- messages


def _field_info(path: tuple):
    """The pydantic FieldInfo of a loc path such as ('hardware', 'memory_gb'), or None."""
    cls, info = Scenario, None
    for part in path:
        if isinstance(part, int):
            continue
        if cls is None or part not in getattr(cls, "model_fields", {}):
            if info is not None and path and path[-2:-1] == ("peak_tflops",):
                return info
            return None
        info = cls.model_fields[part]
        cls = _SPECS.get(part) if part in _SPECS else None
    return info


def _numeric(info) -> tuple[Any, bool, Any, str, Any, str]:
    """A field's annotation without ``None``, whether it is optional, and its bounds:
    ``(ann, optional, lo, lo_op, hi, hi_op)`` (``≥``/``>`` and ``≤``/``<``; None and "" where
    it has none)."""
    ann = info.annotation
    optional = False
    args = typing.get_args(ann)
    if typing.get_origin(ann) in (typing.Union, types.UnionType) and type(None) in args:
        optional = True
        ann = next(a for a in args if a is not type(None))
    lo = hi = None
    lo_op = hi_op = ""
    for meta in info.metadata:
        if isinstance(meta, annotated_types.Ge):
            lo, lo_op = meta.ge, "≥"
        elif isinstance(meta, annotated_types.Gt):
            lo, lo_op = meta.gt, ">"
        elif isinstance(meta, annotated_types.Le):
            hi, hi_op = meta.le, "≤"
        elif isinstance(meta, annotated_types.Lt):
            hi, hi_op = meta.lt, "<"
    return ann, optional, lo, lo_op, hi, hi_op


def bounds(key: str) -> tuple[float | int | None, float | int | None, type | None]:
    """``(low, high, kind)`` of the public key ``key`` (dotted, ``hardware.h2d_gb_s``) as its
    ``Field`` declares them: the inclusive bounds (None where the Field has none, or where it
    excludes the bound, ``> 0``: a widget then leaves it to the validation) and ``int`` or
    ``float`` (None for a key that is not a number). The widgets read these, so a key's bounds
    are declared once (issue 41)."""
    info = _field_info(tuple(key.split(".")))
    if info is None:
        return None, None, None
    ann, _, lo, lo_op, hi, hi_op = _numeric(info)
    if ann not in (int, float):
        return None, None, None
    return (
        ann(lo) if lo_op == "≥" else None,
        ann(hi) if hi_op == "≤" else None,
        ann,
    )


def accepted(path: tuple) -> str:
    """A short phrase saying what a field accepts, read from its type and bounds."""
    if path[:1] in (("hardware",), ("model",)) and len(path) == 1:
        return "a preset id"
    if path[-2:-1] == ("peak_tflops",) or path[-1:] == ("peak_tflops",):
        return "a number ≥ 0.001 and ≤ 100000 (TFLOPS) per dtype: " + ", ".join(PEAK_DTYPES)
    if path[:1] == ("capture_sizes",):
        return "comma-separated integers, strictly increasing, each 1–65536, 1 to 512 of them"
    info = _field_info(path)
    if info is None:
        return ""
    ann, optional, lo, lo_op, hi, hi_op = _numeric(info)
    if typing.get_origin(ann) is typing.Literal:
        text = "one of: " + ", ".join(str(a) for a in typing.get_args(ann))
    elif ann is bool:
        text = "true or false"
    elif ann is int:
        if lo_op == "≥" and hi_op == "≤":
            text = f"an integer from {lo} to {hi}"
        else:
            text = f"an integer {lo_op} {lo} and {hi_op} {hi}"
    elif ann is float:
        text = f"a number {lo_op} {lo} and {hi_op} {hi}"
    elif ann is str:
        longest = next(
            (m.max_length for m in info.metadata if getattr(m, "max_length", None)), None
        )
        text = f"text of at most {longest} characters, no control characters" if longest else "text"
    else:
        text = ""
    if optional and text:
        # what an empty value is called: 'auto' (the engine's or the app's value) unless the
        # field names its own word (max_concurrency: 'none', no limit)
        word = (info.json_schema_extra or {}).get("empty", "auto")
        text += f", or '{word}'"
    return text


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxdict, _REPR.maxlist = 2, 3, 3
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = 36


def _short(value: Any) -> str:
    """A value as a short quote for a message, without ever expanding it whole: ``repr`` of a
    value from outside may be enormous (a YAML bomb), ``reprlib`` stops at a few items."""
    text = _REPR.repr(value)
    return text if len(text) <= 40 else text[:37] + "…"


def _message(err: dict, value: Any) -> str:
    loc = tuple(err.get("loc", ()))
    msg = err.get("msg", "invalid")
    msg = msg.removeprefix("Value error, ")
    what = accepted(loc)
    got = f" (got {_short(value)})" if value is not _MISSING else ""
    # a validator's own message may already say what is accepted: never say it twice
    said = what and (what in msg or "accepted" in msg)
    return f"{msg}{got}" + (f"; accepted: {what}" if what and not said else "")


_MISSING = object()


# ----------------------------------------------------------------------------- resolving


def _normalise(items: Iterable[tuple[str, Any]] | dict) -> list[tuple[str, Any]]:
    pairs = list(items.items()) if isinstance(items, dict) else list(items)
    out = []
    for key, value in pairs:
        if not isinstance(key, str):
            raise ScenarioError(str(key), "keys must be text")
        out.append((key.strip(), value))
    return out


def _flatten(prefix: str, mapping: dict) -> list[tuple[str, Any]]:
    out = []
    for key, value in mapping.items():
        dotted = f"{prefix}.{key}"
        if isinstance(value, dict):
            out.extend(_flatten(dotted, value))
        else:
            out.append((dotted, value))
    return out


def _check_value(key: str, value: Any) -> Any:
    if isinstance(value, str):
        cap = MAX_VALUE_CHARS_BY_KEY.get(key, MAX_VALUE_CHARS)
        if len(value) > cap:
            what = accepted(tuple(key.split(".")))
            raise ScenarioError(
                key,
                f"value is {len(value)} characters; at most {cap}"
                + (f"; accepted: {what}" if what else ""),
            )
        value = value.strip()
    if isinstance(value, float) and not math.isfinite(value):
        raise ScenarioError(key, f"must be a finite number (got {value!r})")
    return value


def _trial_copy(state: dict, key: str) -> dict:
    """A copy of the scenario dict ``state`` that :func:`_set` may change for ``key`` without
    touching ``state``: the dicts on the key's path (the top level, a spec, a spec's
    ``peak_tflops`` or ``sources``) are copied, the rest is shared. ``_set`` only assigns on
    that path, so this is what a deep copy of the whole state (specs and their source lists
    included, once per key: most of ``resolve``'s time) gave."""
    trial = dict(state)
    parts = key.split(".")
    head = parts[0]
    if isinstance(trial.get(head), dict):
        trial[head] = dict(trial[head])
        if len(parts) > 2 and isinstance(trial[head].get(parts[1]), dict):
            trial[head][parts[1]] = dict(trial[head][parts[1]])
    return trial


def _set(state: dict, key: str, value: Any) -> None:
    """Apply one dotted override to the scenario dict ``state`` (checks the key, not the value)."""
    parts = key.split(".")
    head = parts[0]
    if head in _META_KEYS and len(parts) == 1:
        return
    if head not in Scenario.model_fields or head == "scenario":
        raise ScenarioError(key, _unknown_key_text(key))
    if head in _SPECS:
        if len(parts) == 1:
            raise ScenarioError(key, "internal: preset handled elsewhere")
        cls = _SPECS[head]
        field = parts[1]
        if field not in cls.model_fields:
            raise ScenarioError(key, _unknown_key_text(key))
        if field == "id":
            getter = get_hardware if head == "hardware" else get_model
            try:
                getter(str(value))
            except ScenarioError:
                state[head]["id"] = value  # a label for an inline part; validated as an id
                return
            raise ScenarioError(key, f"{value!r} is a preset id: load it with {head}={value}")
        if field in ("peak_tflops", "sources"):
            if len(parts) != 3:
                sample = "hardware.peak_tflops.bf16=989" if field == "peak_tflops" else ""
                raise ScenarioError(key, f"give one entry, for example {sample or key + '.KEY'}")
            if field == "peak_tflops" and parts[2] not in PEAK_DTYPES:
                raise ScenarioError(
                    key, f"unknown dtype {parts[2]!r}; accepted: {', '.join(PEAK_DTYPES)}"
                )
            sub = state[head].setdefault(field, {})
            if isinstance(value, str) and value.lower() in ("none", "remove"):
                sub.pop(parts[2], None)
            else:
                sub[parts[2]] = value
            return
        if len(parts) != 2:
            raise ScenarioError(key, _unknown_key_text(key))
        state[head][field] = _none_word(cls.model_fields[field], value)
        state[head]["id"] = state[head].get("id") or "custom"
        return
    if len(parts) != 1:
        raise ScenarioError(key, _unknown_key_text(key))
    state[head] = _none_word(Scenario.model_fields[head], value)


def _none_word(info, value):
    args = typing.get_args(info.annotation)
    optional = type(None) in args
    literals = {
        str(v) for a in args if typing.get_origin(a) is typing.Literal for v in typing.get_args(a)
    }
    if optional and isinstance(value, str) and value.lower() in _NONE_WORDS - literals:
        return None  # 'auto' (and 'none' where 'none' is not itself a value: cuda_graphs=none)
    return value


def _unknown_key_text(key: str) -> str:
    return (
        f"unknown key {key[:60]!r}; known keys: {', '.join(k for k in known_keys() if '.' not in k)}"
        ", and hardware.FIELD, model.FIELD, hardware.peak_tflops.DTYPE"
    )


def _apply_spec(state: dict, kind: str, value: Any) -> list:
    """``hardware``/``model`` given a preset id or an inline mapping; returns dotted leftovers."""
    getter = get_hardware if kind == "hardware" else get_model
    if isinstance(value, str):
        state[kind] = getter(value.strip()).model_dump()
        return []
    if isinstance(value, dict):
        preset_id = value.get("id")
        rest = {k: v for k, v in value.items() if k != "id"}
        cls = _SPECS[kind]
        required = [f for f, info in cls.model_fields.items() if info.is_required()]
        full = all(f in rest for f in required)
        if full and not (isinstance(preset_id, str) and _is_preset(kind, preset_id)):
            # a complete inline definition: nothing is inherited from the base's spec
            state[kind] = {"id": preset_id if isinstance(preset_id, str) else "custom"}
            return _flatten(kind, rest)
        if isinstance(preset_id, str):
            try:
                state[kind] = getter(preset_id).model_dump()
            except ScenarioError:
                state[kind]["id"] = preset_id  # an inline part with an id of its own
        elif preset_id is not None:
            raise ScenarioError(f"{kind}.id", "must be text")
        else:
            state[kind]["id"] = "custom"
        if "sources" in rest and isinstance(rest["sources"], dict):
            state[kind]["sources"] = {}
        if "peak_tflops" in rest and isinstance(rest["peak_tflops"], dict):
            state[kind]["peak_tflops"] = {}
        return _flatten(kind, rest)
    raise ScenarioError(kind, f"must be a preset id or a mapping (got {_short(value)})")


def _is_preset(kind: str, preset_id: str) -> bool:
    try:
        (get_hardware if kind == "hardware" else get_model)(preset_id)
    except ScenarioError:
        return False
    return True


def _base_state(name: Any) -> dict:
    if not isinstance(name, str) or name.strip() in ("", "none"):
        if name in (None, "", "none"):
            return shared_base().raw.model_dump()
        raise ScenarioError("scenario", f"must be a scenario name (got {_short(name)})")
    name = name.strip()
    return shared_base(name).raw.model_dump()


def named_scenario(name: str) -> Scenario:
    """The named scenario ``name`` (``presets/scenarios/NAME.yaml``) resolved on the defaults."""
    return _named_scenario(name).model_copy(deep=True)


@lru_cache(maxsize=64)
def _named_scenario(name: str) -> Scenario:
    files = scenario_files()
    if name not in files:
        raise ScenarioError(
            "scenario", f"unknown scenario {name[:60]!r}; known: {', '.join(sorted(files))}"
        )
    raw = dict(files[name])
    if "scenario" in raw:
        raise ScenarioError("scenario", f"preset {name!r} may not itself name a base scenario")
    scenario, _ = resolve(raw, strict=True)
    return scenario.model_copy(update={"scenario": name})


def resolve(
    items: Iterable[tuple[str, Any]] | dict, *, strict: bool = True
) -> tuple[Scenario, list[ScenarioError]]:
    """Build a scenario from ``items`` (key, value pairs or a mapping).

    Returns the scenario and the list of errors. With ``strict`` the first error is raised.
    """
    errors: list[ScenarioError] = []

    def fail(err: ScenarioError) -> None:
        if strict:
            raise err
        errors.append(err)

    pairs = _normalise(items)
    if any(k == "model" for k, _ in pairs):
        # another model: its checkpoint's dtypes unless the items state them (issue 39)
        given = {k for k, _ in pairs}
        pairs = pairs + [(k, "auto") for k in DTYPE_KEYS if k not in given]
    if len(pairs) > MAX_ITEMS:
        fail(ScenarioError("", f"{len(pairs)} keys given; at most {MAX_ITEMS} are accepted"))
        pairs = pairs[:0]

    state, leftovers = _start(pairs, fail)
    base_name = state.get("scenario")
    rest = leftovers + [(k, v) for k, v in pairs if k not in ("scenario", "hardware", "model")]
    if len(rest) > MAX_ITEMS:
        # an inline hardware/model mapping flattens to dotted keys: bound those too
        fail(ScenarioError("", f"{len(rest)} values given; at most {MAX_ITEMS} are accepted"))
        rest = []

    applied: list[tuple[str, Any]] = []
    for key, value in rest:
        trial = _trial_copy(state, key)
        try:
            value = _check_value(key, value)
            _set(trial, key, value)
        except ScenarioError as err:
            fail(err)
            continue
        state = trial
        applied.append((key, value))

    state["scenario"] = base_name
    # validate; drop the keys an error points at and try again (non-strict)
    for _ in range(len(applied) + 2):
        try:
            return Scenario.model_validate(state), errors
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = tuple(err["loc"])
            culprits = [(k, v) for k, v in applied if _matches(k, loc)]
            if len(loc) == 1 and loc[0] in _SPECS:
                # a check across fields (e.g. kv_heads ≤ heads): name the spec, not one key
                msg = err.get("msg", "invalid").removeprefix("Value error, ")
                fail(ScenarioError(loc[0], msg))
            else:
                value = culprits[-1][1] if culprits else err.get("input", _MISSING)
                key = culprits[-1][0] if culprits else ".".join(str(p) for p in loc)
                fail(ScenarioError(key, _message(err, value)))
            if not culprits:
                # not traceable to one key (e.g. a base spec made inconsistent): start clean
                fallback = shared_base().raw.model_dump()
                return Scenario.model_validate(fallback), errors
            if len(loc) == 1 and loc[0] in _SPECS:
                bad = {k for k, _ in culprits}
                applied = [(k, v) for k, v in applied if k not in bad]
            else:
                # drop only the pair in effect (the last one for that key), so an earlier
                # good value of the same key (the URL's, before a bad widget entry) survives
                last = max(i for i, (k, _) in enumerate(applied) if _matches(k, loc))
                applied = applied[:last] + applied[last + 1 :]
            state, _ = _start(pairs, lambda err: None)
            for key, value in applied:
                _set(state, key, value)
    return built_in_defaults(), errors  # pragma: no cover - loop always returns


def _start(pairs: list[tuple[str, Any]], fail) -> tuple[dict, list[tuple[str, Any]]]:
    """Steps 1 and 2: the base scenario's state, then the hardware/model presets or inline
    specs. Returns the state and the dotted keys an inline spec leaves for step 3."""
    state = None
    base_names = [v for k, v in pairs if k == "scenario"]
    if base_names:
        try:
            state = _base_state(base_names[-1])
        except ScenarioError as err:
            fail(err)
    if state is None:
        state = shared_base().raw.model_dump()
    leftovers: list[tuple[str, Any]] = []
    for kind in ("hardware", "model"):
        for key, value in pairs:
            if key == kind:
                try:
                    leftovers.extend(_apply_spec(state, kind, _check_value(key, value)))
                except ScenarioError as err:
                    fail(err)
    return state, leftovers


def _matches(key: str, loc: tuple) -> bool:
    kparts = tuple(key.split("."))
    lparts = tuple(str(p) for p in loc if not isinstance(p, int))
    n = min(len(kparts), len(lparts))
    return kparts[:n] == lparts[:n]
