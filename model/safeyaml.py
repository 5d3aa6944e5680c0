"""YAML from outside, judged before it is expanded (SPEC section 6; hardening issue, part 1).

``yaml.safe_load`` refuses Python tags but still expands aliases: a few hundred bytes of nested
aliases (a "billion laughs") become billions of nodes, a recursive anchor becomes a cyclic
object, a mapping nested hundreds deep exhausts the recursion limit, and an integer of thousands
of digits trips Python's int-to-text limit. Any of them, once built, stalls the server for
every session (the GIL is shared) or prints a traceback.

So :func:`load` first walks YAML's *event stream* (nothing is built; aliases are counted by the
size of what they would expand to, not expanded) and refuses, with one line naming the file and
what is accepted, anything over these bounds:

- text size (``max_chars``), scalar length, nesting depth, events parsed;
- aliases: how many, recursive ones (an alias inside its own anchor), and the node count of the
  document *as it would be expanded*;

then builds the (now small) document with ``yaml.safe_load`` and checks what came out: mapping
keys must be text, numbers must be finite-sized, and only plain YAML values (text, numbers,
true/false, null, lists, mappings) are accepted — no dates, binary or sets.

Every bound is checked as the events stream in, so refusing a hostile file costs time and memory
in proportion to the bound, not to the file's expansion.
"""

from __future__ import annotations

import math

import yaml

from model.errors import ScenarioError

MAX_CHARS = 100_000  #: text size [characters]
MAX_EVENTS = 20_000  #: parser events (about two per node)
MAX_DEPTH = 16  #: nesting of lists and mappings (a scenario needs 3: hardware.peak_tflops.bf16)
MAX_NODES = 5_000  #: nodes of the document as expanded (aliases counted by their target's size)
MAX_ALIASES = 100
MAX_SCALAR_CHARS = 4_000  #: one value (512 capture sizes of 5 digits fit)
MAX_INT = 10**15  #: larger integers are refused (no figure of a scenario comes near)
MAX_KEY_CHARS = 200

#: libyaml's C parser where PyYAML was built with it (about ten times faster), else pure Python
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_ACCEPTED = "plain YAML: a mapping of text keys to text, numbers, true/false, lists or mappings"


def _refuse(what: str, message: str) -> ScenarioError:
    return ScenarioError(what, message)


def judge(text: str, what: str, max_chars: int = MAX_CHARS) -> None:
    """Raise :class:`ScenarioError` when ``text`` is over any bound (see the module's text).

    Walks the event stream only: nothing is constructed and no alias is expanded.
    """
    if len(text) > max_chars:
        raise _refuse(what, f"{len(text):,} characters; at most {max_chars:,} are accepted")
    # per open list or mapping: [expanded node count, anchor, is mapping, next is a key, key]
    stack: list[list] = []
    done: dict[str, int] = {}  # anchor -> expanded node count of its finished node
    open_anchors: set[str] = set()
    total = aliases = 0

    def where() -> str:
        keys = [str(f[4]) for f in stack if f[2] and f[4] is not None]
        return f" (at {'.'.join(keys)[:120]})" if keys else ""

    def node(is_scalar: bool, value: str | None = None) -> None:
        """A node starts: refuse a list, mapping or alias where a mapping key goes."""
        if stack and stack[-1][2]:
            frame = stack[-1]
            if frame[3]:
                if not is_scalar:
                    raise _refuse(
                        what, f"keys must be text, found a list, mapping or alias{where()}"
                    )
                frame[4] = (value or "")[:60]
            frame[3] = not frame[3]

    def add(count: int) -> None:
        nonlocal total
        if stack:
            stack[-1][0] += count
            if stack[-1][0] > MAX_NODES:
                raise _too_many()
        else:
            total += count
            if total > MAX_NODES:
                raise _too_many()

    def _too_many() -> ScenarioError:
        return _refuse(
            what,
            f"expands to more than {MAX_NODES:,} values (aliases count as what they repeat); "
            f"a scenario has a few dozen. Accepted: {_ACCEPTED}",
        )

    try:
        for n, event in enumerate(yaml.parse(text, Loader=_LOADER)):
            if n > MAX_EVENTS:
                raise _refuse(what, f"more than {MAX_EVENTS:,} YAML events; a scenario has ~100")
            if isinstance(event, yaml.ScalarEvent):
                if len(event.value) > MAX_SCALAR_CHARS:
                    raise _refuse(
                        what,
                        f"a value of {len(event.value):,} characters{where()}; at most "
                        f"{MAX_SCALAR_CHARS:,} are accepted",
                    )
                node(True, event.value)
                if event.anchor is not None:
                    done[event.anchor] = 1
                add(1)
            elif isinstance(event, yaml.AliasEvent):
                node(False)
                aliases += 1
                if aliases > MAX_ALIASES:
                    raise _refuse(what, f"more than {MAX_ALIASES} aliases (*name)")
                if event.anchor in open_anchors:
                    raise _refuse(
                        what,
                        f"the alias *{event.anchor[:40]} refers to itself (a recursive anchor)"
                        f"{where()}",
                    )
                if event.anchor not in done:
                    raise _refuse(what, f"the alias *{event.anchor[:40]} has no anchor{where()}")
                add(done[event.anchor])
            elif isinstance(event, yaml.CollectionStartEvent):
                node(False)
                if len(stack) >= MAX_DEPTH:
                    raise _refuse(
                        what,
                        f"nested more than {MAX_DEPTH} levels deep{where()}; a scenario needs 3",
                    )
                if event.anchor is not None:
                    open_anchors.add(event.anchor)
                    done.pop(event.anchor, None)  # an anchor redefined: the newest counts
                is_map = isinstance(event, yaml.MappingStartEvent)
                stack.append([1, event.anchor, is_map, True, None])
            elif isinstance(event, yaml.CollectionEndEvent):
                count, anchor = stack.pop()[:2]
                if anchor is not None:
                    open_anchors.discard(anchor)
                    done[anchor] = count
                add(count)
    except yaml.YAMLError as exc:
        raise _refuse(what, f"not valid YAML ({_first_line(exc)})") from None


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else "invalid YAML"


def _check_tree(value, what: str, path: str = "") -> None:
    """Key types, number sizes and value types of a built (already bounded) document."""
    where = f" at {path[:120]}" if path else ""
    if isinstance(value, dict):
        for key, sub in value.items():
            if not isinstance(key, str):
                raise _refuse(
                    what,
                    f"keys must be text, found the key {_brief(key)}{where}"
                    f' (quote it, e.g. "{_brief(key)}")',
                )
            if len(key) > MAX_KEY_CHARS:
                raise _refuse(what, f"a key of {len(key):,} characters{where}")
            _check_tree(sub, what, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            _check_tree(sub, what, f"{path}[{i}]")
    elif isinstance(value, bool) or value is None or isinstance(value, str):
        return
    elif isinstance(value, int):
        if abs(value) > MAX_INT:
            digits = int(abs(value).bit_length() * math.log10(2)) + 1
            raise _refuse(
                what, f"an integer of about {digits:,} digits{where}; at most {MAX_INT:.0e}"
            )
    elif isinstance(value, float):
        if not math.isfinite(value):
            return  # judged by the resolver, which names the key
    else:
        kind = {"datetime": "a date", "date": "a date", "bytes": "binary data", "set": "a set"}
        name = kind.get(type(value).__name__, f"a {type(value).__name__}")
        raise _refuse(
            what, f"{name}{where} is not accepted (quote it to make it text); {_ACCEPTED}"
        )


def _brief(value) -> str:
    if value is None:
        return "null"
    text = repr(value).lower() if isinstance(value, (int, float, bool)) else "…"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**30:
        return "(a very large integer)"
    return text[:40]


def load(text: str, what: str, max_chars: int = MAX_CHARS):
    """Parse YAML text from outside: :func:`judge` it, ``yaml.safe_load`` it, check the tree.

    Returns the document (any plain YAML value). Raises :class:`ScenarioError` naming ``what``.
    """
    judge(text, what, max_chars)
    try:
        loader = _LOADER(text)  # what yaml.safe_load does, with the C parser where present
        try:
            data = loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise _refuse(what, f"not valid YAML ({_first_line(exc)})") from None
    except (ValueError, RecursionError, OverflowError) as exc:  # e.g. int digits limit
        raise _refuse(what, f"a value could not be read ({type(exc).__name__})") from None
    _check_tree(data, what)
    return data


def load_mapping(text: str, what: str, max_chars: int = MAX_CHARS) -> dict:
    """:func:`load`, insisting on a mapping (an empty document is an empty mapping)."""
    data = load(text, what, max_chars)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise _refuse(
            what, f"must be a YAML mapping of keys to values, got a {type(data).__name__}"
        )
    return data
