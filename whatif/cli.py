"""``whatif``: evaluate scenarios, print share URLs, list presets, read and calibrate against
measurements (SPEC section 3, CLI, and 4.5).

Bad input exits with status 2 and one line on stderr naming the key and what is accepted.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import sys
from pathlib import Path

from model import calibrate, codecs
from model.errors import ScenarioError
from model.evaluate import evaluate, strict_figures
from model.overrides import resolve
from model.presets import all_preset_ids
from model.readers import importers, vllm_log
from model.readers.measurements import MAX_BYTES
from whatif.pages import page_url

MAX_FILE_BYTES = codecs.MAX_YAML_BYTES
MAX_DATA_BYTES = MAX_BYTES  #: a measurement file (CSV, log, benchmark output)


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
    ev.add_argument(
        "--trace",
        metavar="FILE",
        help="replay a request trace (plain arrival_s, Azure or BurstGPT CSV) for economics",
    )
    url = sub.add_parser("url", help="print the share URL of a scenario")
    scenario_args(url)
    url.add_argument(
        "--page",
        default="roofline",
        help="the page the link opens: home, roofline, launch, cold_start, … (a page's key, "
        "as the pages declare it; an unknown one is refused with the list)",
    )
    url.add_argument("--base", default=codecs.DEFAULT_BASE_URL, help="app address")
    yml = sub.add_parser("yaml", help="print the scenario as self-contained YAML")
    scenario_args(yml)
    cmds = sub.add_parser(
        "commands",
        help="print the vllm serve, SGLang, vllm bench serve and Kubernetes commands of a scenario",
    )
    scenario_args(cmds)
    cmds.add_argument("--json", action="store_true", help="print one JSON object")
    cmds.add_argument("--base", default=codecs.DEFAULT_BASE_URL, help="app address for the link")
    pl_ = sub.add_parser(
        "plan", help="the cheapest configuration on every hardware preset that holds the SLO"
    )
    scenario_args(pl_)
    pl_.add_argument("--json", action="store_true", help="print one JSON object")
    pl_.add_argument(
        "--peak", action="store_true", help="plan for the traffic profile's busiest hour"
    )
    pl_.add_argument(
        "--trace",
        metavar="FILE",
        help="plan for a request trace's busiest hour (plain, Azure, BurstGPT or Mooncake)",
    )
    pl_.add_argument(
        "--price",
        action="append",
        default=[],
        metavar="HARDWARE=USD",
        help="price per GPU-hour of one hardware preset (default: the preset's)",
    )
    pl_.add_argument(
        "--hardware", action="append", default=[], metavar="ID", help="only these presets"
    )
    pl_.add_argument("--jobs", type=int, default=None, help="processes (default: the CPUs, ≤ 8)")
    pl_.add_argument("--base", default=codecs.DEFAULT_BASE_URL, help="app address for the links")
    sub.add_parser("presets", help="list every preset id by kind")
    pl = sub.add_parser("parse-log", help="read the cold-start figures of a vLLM start-up log")
    pl.add_argument("file", help="vLLM server log (text)")
    imp = sub.add_parser("import", help="read a measurement file (CSV, log, benchmark output)")
    imp.add_argument("file", help="measurement file")
    imp.add_argument("--json", action="store_true", help="print one JSON object")
    cal = sub.add_parser(
        "calibrate", help="fit the scenario's efficiencies and overheads to measurement files"
    )
    cal.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="measurement files; a .yaml/.yml file among them is the scenario",
    )
    cal.add_argument("--scenario", help="named preset scenario used as the base")
    cal.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="override one key"
    )
    cal.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _read_file(name: str) -> str:
    """A scenario file's text, read at most ``MAX_FILE_BYTES`` + 1 bytes (a FIFO, a device or a
    huge file is refused without reading it all)."""
    raw = _read_bytes(name, MAX_FILE_BYTES)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError("FILE", f"{name}: not UTF-8 text") from None


def _read_bytes(name: str, limit: int) -> bytes:
    """A file's bytes, at most ``limit`` (larger files are refused without reading them all)."""
    path = Path(name)
    try:
        if not path.exists():
            raise ScenarioError("FILE", f"{name}: no such file")
        if not path.is_file():
            raise ScenarioError("FILE", f"{name}: not a regular file")
        with path.open("rb") as fh:
            raw = fh.read(limit + 1)
    except OSError as exc:
        raise ScenarioError("FILE", f"{name}: cannot be read ({exc.strerror or exc})") from None
    if len(raw) > limit:
        raise ScenarioError("FILE", f"{name}: larger than {limit:,} bytes")
    return raw


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
    mem = result.get("memory")
    if isinstance(mem, dict) and mem.get("weights_fit") is False:  # first, not buried below
        print(
            f"does not fit: the weights take {mem['weights_per_gpu_gb']:.4g} GB per GPU (plus "
            f"{mem.get('graph_memory_gb', 0):.3g} GB of graphs) against "
            f"{mem['usable_per_gpu_gb']:.4g} GB usable; the figures below assume it ran anyway"
        )
    for section, figures in result.items():
        if not isinstance(figures, dict):
            print(f"{section}: {figures}")
            continue
        print(f"[{section}]")
        for key, value in figures.items():
            shown = f"{value:.6g}" if isinstance(value, float) else value
            print(f"  {key} = {shown}")


def _summary(out: dict) -> str:
    """An imported file in a few lines of text (``whatif import`` without ``--json``)."""
    lines = [f"{out['file']}: {out['format']} ({out['kind']})"]
    if out.get("rows"):
        lines.append(f"  rows: {len(out['rows'])}")
    for key, value in {**out.get("conditions", {}), **out.get("figures", {})}.items():
        lines.append(f"  {key} = {value:.6g}" if isinstance(value, float) else f"  {key} = {value}")
    lines += [f"  note: {n}" for n in out.get("notes", [])]
    lines += [f"  not read: {p}" for p in out.get("problems", [])]
    return "\n".join(lines)


@contextlib.contextmanager
def _stdout_to_stderr():
    """Anything written to the process's standard output while the numbers are computed goes to
    standard error instead, at the file-descriptor level: a LAPACK routine reports a bad argument
    with C's ``printf`` (``** On entry to DLASCL …``), which would otherwise come before
    ``--json``'s output and spoil it."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no real descriptor (an embedding host): nothing below C to redirect
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        try:
            ctypes.CDLL(None).fflush(None)  # C's buffered output, before the swap back
        except (OSError, AttributeError):
            pass
        os.dup2(saved, 1)
        os.close(saved)


def _calibrate(args) -> int:
    """``whatif calibrate FILE... [FILE.yaml]``: fit, print the keys to apply and the report."""
    yamls = [f for f in args.files if f.lower().endswith((".yaml", ".yml"))]
    if len(yamls) > 1:
        raise ScenarioError("FILE", "give at most one scenario YAML file")
    args.file = yamls[0] if yamls else None
    scenario = resolve(_items(args), strict=True)[0]  # resolved once, here
    with _stdout_to_stderr():
        data = [
            importers.import_file(f, _read_bytes(f, MAX_DATA_BYTES))
            for f in args.files
            if f not in yamls
        ]
        if not data:
            raise ScenarioError("FILE", "give at least one measurement file")
        result = calibrate.calibrate(scenario, data).to_json()
    if args.json:
        print(json.dumps(result, indent=2, allow_nan=False))
    else:
        for entry in result["data_sets"]:  # a file of another set-up, said before the fit
            if entry.get("mismatch"):
                fix = " ".join(f"--set {k}={v}" for k, v in entry["set_scenario"].items())
                print(
                    f"warning: {entry['file']} may not match the scenario: "
                    + "; ".join(entry["mismatch"])
                    + (f" (to compare with what it measured: {fix})" if fix else "")
                )
        set_args = " ".join(f"--set {k}={v}" for k, v in result["keys"].items())
        print(f"keys: {set_args or '(none fitted)'}")
        for key, fit in result["fit"].items():
            unc = "" if fit["uncertainty"] is None else f" ± {fit['uncertainty']}"
            note = f": {fit['note']}" if fit["note"] else ""
            print(f"  {key} = {fit['value']}{unc} {fit['unit']} ({fit['points']} points, ", end="")
            print(f"{fit['data']}){note}")
        for key, why in result["refused"].items():
            print(f"  refused {key}: {why}")
        for note in result["notes"]:
            print(f"  note: {note}")
        err = result["median_abs_error_pct"]
        print(f"median |error|: {err['before']} % before, {err['after']} % after")
    return 0


def _price_overrides(items: list[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for text in items:
        hw, sep, value = text.partition("=")
        try:
            usd = float(value)
        except ValueError:
            usd = float("nan")
        if not sep or not hw.strip():
            raise ScenarioError("--price", f"expected HARDWARE=USD, got {text[:60]!r}")
        out[hw.strip()] = usd
    return out


def _plan(args, scenario) -> int:
    """``whatif plan``: the cheapest configuration per hardware preset (model.plan)."""
    from concurrent.futures import ProcessPoolExecutor

    from model import plan
    from model.presets import hardware_presets

    known = hardware_presets()
    for hw in args.hardware:
        if hw not in known:
            raise ScenarioError(
                "--hardware", f"unknown hardware id {hw[:60]!r}; known ids: {', '.join(known)}"
            )
    if args.jobs is not None and not 1 <= args.jobs <= 64:
        raise ScenarioError("--jobs", f"{args.jobs} is not accepted; an integer from 1 to 64")
    prices = plan.prices(_price_overrides(args.price), scenario)
    if args.trace and args.peak:
        raise ScenarioError("--trace", "give --trace or --peak, not both")
    if args.trace:
        from model.readers.traces import read_trace_file

        rate = plan.trace_rate(read_trace_file(args.trace), scenario.rate_scale)
    else:
        rate = plan.target_rate(scenario, args.peak)
    link_to = page_url("serving", args.base)
    jobs = plan.jobs(scenario, rate, prices, list(dict.fromkeys(args.hardware)), link_to)
    n = args.jobs or min(os.cpu_count() or 1, 8, len(jobs))
    with _stdout_to_stderr():
        if n <= 1:
            rows = list(map(plan.plan_job, jobs))
        else:
            with ProcessPoolExecutor(max_workers=n) as pool:
                rows = list(pool.map(plan.plan_job, jobs))
        out = plan.assemble(scenario, rate, rows)
    if args.json:
        print(json.dumps(out, indent=2, allow_nan=False))
    else:
        print(plan.as_text(out))
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        if args.command == "presets":
            for kind, ids in all_preset_ids().items():
                print(f"{kind}: {' '.join(ids)}")
            return 0
        if args.command == "parse-log":
            with _stdout_to_stderr():
                ds = vllm_log.parse_log_bytes(args.file, _read_bytes(args.file, MAX_DATA_BYTES))
                out = ds.to_json()
            print(json.dumps(out, indent=2, allow_nan=False))
            return 0
        if args.command == "import":
            with _stdout_to_stderr():
                out = importers.import_file(args.file, _read_bytes(args.file, MAX_DATA_BYTES))
                out = out.to_json()
            print(json.dumps(out, indent=2, allow_nan=False) if args.json else _summary(out))
            return 0
        if args.command == "calibrate":
            return _calibrate(args)
        scenario = resolve(_items(args), strict=True)[0]  # resolved once, here
        if args.command == "url":
            size = codecs.link_size(scenario)
            if size > codecs.MAX_QUERY_CHARS:
                raise ScenarioError(
                    "url",
                    f"the link's query would be {size} characters and the app accepts at most "
                    f"{codecs.MAX_QUERY_CHARS}; share the scenario as YAML instead (whatif yaml)",
                )
            print(codecs.to_url(scenario, page_url(args.page, args.base)))
        elif args.command == "yaml":
            print(codecs.to_yaml(scenario), end="")
        elif args.command == "plan":
            return _plan(args, scenario)
        elif args.command == "commands":
            from model import commands  # only for this command

            link = codecs.to_url(scenario, page_url("serving", args.base))
            out = commands.commands(scenario, link).to_json()
            if args.json:
                print(json.dumps(out, indent=2, allow_nan=False))
            else:
                print(commands.as_text(out))
        else:
            trace = None
            if args.trace:
                from model.readers.traces import read_trace_file  # only when a trace is replayed

                trace = read_trace_file(args.trace)
            with _stdout_to_stderr():  # every run the same sections (issue 40, item 10)
                result = strict_figures(evaluate(scenario, trace, serving_section=True))
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
