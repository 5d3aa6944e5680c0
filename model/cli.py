"""``whatif``: evaluate scenarios, print share URLs, list presets (SPEC section 3, CLI).

Bad input exits with status 2 and one line on stderr naming the key and what is accepted.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from model import codecs
from model.errors import ScenarioError
from model.evaluate import evaluate, strict_figures
from model.overrides import resolve
from model.presets import all_preset_ids

MAX_FILE_BYTES = codecs.MAX_YAML_BYTES


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, status 2
        raise ScenarioError("usage", message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="whatif", description="Inference What-If Explorer (command line)")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def scenario_args(sp):
        sp.add_argument("file", nargs="?", help="scenario YAML file")
        sp.add_argument("--scenario", help="named preset scenario used as the base")
        sp.add_argument(
            "--set", action="append", default=[], metavar="KEY=VALUE", help="override one key"
        )

    ev = sub.add_parser("eval", help="evaluate a scenario")
    scenario_args(ev)
    ev.add_argument("--json", action="store_true", help="print one JSON object")
    url = sub.add_parser("url", help="print the share URL of a scenario")
    scenario_args(url)
    url.add_argument("--page", default="roofline", choices=list(codecs.PAGES))
    url.add_argument("--base", default=codecs.DEFAULT_BASE_URL, help="app address")
    yml = sub.add_parser("yaml", help="print the scenario as self-contained YAML")
    scenario_args(yml)
    sub.add_parser("presets", help="list every preset id by kind")
    return p


def _read_file(name: str) -> str:
    """A scenario file's text, read at most ``MAX_FILE_BYTES`` + 1 bytes (a FIFO, a device or a
    huge file is refused without reading it all)."""
    path = Path(name)
    try:
        if not path.exists():
            raise ScenarioError("FILE", f"{name}: no such file")
        if not path.is_file():
            raise ScenarioError("FILE", f"{name}: not a regular file")
        with path.open("rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ScenarioError("FILE", f"{name}: cannot be read ({exc.strerror or exc})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ScenarioError("FILE", f"{name}: larger than {MAX_FILE_BYTES:,} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError("FILE", f"{name}: not UTF-8 text") from None


def _items(args) -> list[tuple[str, object]]:
    items: list[tuple[str, object]] = []
    if args.scenario is not None:
        items.append(("scenario", args.scenario))
    if args.file:
        data = codecs.yaml_items(_read_file(args.file), args.file)
        if args.scenario is not None and "scenario" in data and data["scenario"] != args.scenario:
            raise ScenarioError("scenario", "given both in FILE and by --scenario; keep one")
        items.extend(data.items())
    for text in args.set:
        key, sep, value = text.partition("=")
        if not sep or not key.strip():
            raise ScenarioError("--set", f"expected KEY=VALUE, got {text[:60]!r}")
        items.append((key.strip(), value))
    return items


def _print_text(result: dict) -> None:
    for section, figures in result.items():
        if not isinstance(figures, dict):
            print(f"{section}: {figures}")
            continue
        print(f"[{section}]")
        for key, value in figures.items():
            shown = f"{value:.6g}" if isinstance(value, float) else value
            print(f"  {key} = {shown}")


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        if args.command == "presets":
            for kind, ids in all_preset_ids().items():
                print(f"{kind}: {' '.join(ids)}")
            return 0
        scenario, _ = resolve(_items(args), strict=True)
        if args.command == "url":
            size = codecs.link_size(scenario)
            if size > codecs.MAX_QUERY_CHARS:
                raise ScenarioError(
                    "url",
                    f"the link's query would be {size} characters and the app accepts at most "
                    f"{codecs.MAX_QUERY_CHARS}; share the scenario as YAML instead (whatif yaml)",
                )
            print(codecs.to_url(scenario, page=args.page, base=args.base))
        elif args.command == "yaml":
            print(codecs.to_yaml(scenario), end="")
        else:
            result = strict_figures(evaluate(scenario))
            if args.json:
                print(json.dumps(result, indent=2, allow_nan=False))
            else:
                _print_text(result)
        return 0
    except ScenarioError as err:
        print(f"whatif: error: {err}", file=sys.stderr)
        return 2
    except (BrokenPipeError, KeyboardInterrupt):
        return 1
    except Exception as exc:  # noqa: BLE001 - the contract: one line, never a traceback
        print(
            f"whatif: internal error ({type(exc).__name__}); please report it with the command "
            "line that caused it",
            file=sys.stderr,
        )
        return 1
