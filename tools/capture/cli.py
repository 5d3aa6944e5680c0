"""``python -m tools.capture``: the command line, and the order the measurements run in.

No torch at import time: without torch (or without a CUDA GPU) the command prints one line and
exits with status 2. Each measurement writes its CSV as soon as it is done; one that fails is
reported in a line (and in env.json) and the others still run (exit status 1).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from tools.capture import cold, gpu
from tools.capture.output import (
    FILES,
    app_summary,
    bandwidth_rows,
    build_env,
    cold_rows,
    fmt,
    h2d_rows,
    launch_rows,
    write_csv,
    write_json,
)
from tools.capture.stats import (
    DEFAULT_BATCHES,
    DEFAULT_H2D_SIZES,
    DEFAULT_KERNELS,
    DEFAULT_MATRIX,
    DTYPE_BYTES,
    QUICK_H2D_SIZES,
    l2_warning,
    launch_us,
    parse_ints,
    parse_matrix,
    parse_sizes,
    round_robin_copies,
)

#: measurement → file, in the order they run (cold start first: this process has no CUDA
#: context yet, so the child's is the only one being created)
STEPS = {
    "cold_start": "cold_start.csv",
    "launch": "launch.csv",
    "h2d": "h2d.csv",
    "bandwidth": "bandwidth.csv",
}

#: repeats per measurement: (full, --quick)
REPEATS = {"launch": (20, 5), "h2d": (10, 3), "bandwidth": (50, 10), "cold_start": (3, 1)}

DESCRIPTION = """\
Measure, on this GPU node, what the Inference What-If Explorer's model needs, and write CSVs in
the app's upload schema (Measurements page):

  launch.csv      kernel launch cost τ: a chain of N empty kernels, eager against a CUDA graph
  bandwidth.csv   achieved HBM bandwidth of a decode-like matrix-vector product per batch
  h2d.csv         host-to-device copy rate, pinned and pageable
  cold_start.csv  python + import torch, and CUDA context creation, in a fresh process
  env.json        GPU, driver, CUDA, torch, clocks, this command line, UTC time

Needs PyTorch with CUDA (pip install -e '.[capture]'). The full run takes about a minute,
--quick under 30 s."""

EPILOG = """\
examples:
  python -m tools.capture --out measurements/
  python -m tools.capture --out measurements/ --quick --device 1
  python -m tools.capture --out m/ --only h2d --sizes 64M,256M,1G,4G"""


def _arg(parse):
    """An argparse type from one of the stats parsers (their ValueError becomes a usage error)."""

    def convert(text):
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = parse.__name__
    return convert


def _steps(text: str) -> list[str]:
    names = [t.strip().removesuffix(".csv") for t in text.split(",") if t.strip()]
    bad = [n for n in names if n not in STEPS]
    if bad or not names:
        raise ValueError(
            f"unknown measurement {', '.join(bad) or text!r}; known: {', '.join(STEPS)}"
        )
    return names


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m tools.capture",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the files (created)")
    p.add_argument(
        "--quick", action="store_true", help="fewer repeats and sizes: under 30 s, noisier"
    )
    p.add_argument("--device", type=int, default=0, metavar="N", help="CUDA device index (0)")
    p.add_argument(
        "--sizes",
        type=_arg(parse_sizes),
        metavar="LIST",
        help="host-to-device copy sizes, e.g. 256M,1G (K/M/G binary, KB/MB/GB decimal); "
        "default 256M,1G (--quick: 256M)",
    )
    p.add_argument(
        "--matrix",
        type=_arg(parse_matrix),
        default=DEFAULT_MATRIX,
        metavar="ROWSxCOLS",
        help="weight matrix of the bandwidth sweep, far larger than L2; default 8192x28672 "
        "(0.47 GB in bf16)",
    )
    p.add_argument(
        "--dtype", choices=sorted(DTYPE_BYTES), default="bf16", help="bandwidth sweep dtype (bf16)"
    )
    p.add_argument(
        "--batches",
        type=_arg(parse_ints),
        default=list(DEFAULT_BATCHES),
        metavar="LIST",
        help="bandwidth sweep batches; default 1,2,4,8,16,32,64,128,256",
    )
    p.add_argument(
        "--kernels",
        type=_arg(parse_ints),
        default=list(DEFAULT_KERNELS),
        metavar="LIST",
        help="launch chain lengths; default 10,100,1000",
    )
    p.add_argument(
        "--repeats",
        type=_arg(lambda t: parse_ints(t, 1, 10_000)[0]),
        metavar="N",
        help="repeats of every timing (default launch 20, h2d 10, bandwidth 50; --quick 5, 3, 10)",
    )
    p.add_argument(
        "--cold-runs",
        type=_arg(lambda t: parse_ints(t, 1, 100)[0]),
        metavar="N",
        help="fresh processes for cold_start.csv (default 3, --quick 1)",
    )
    p.add_argument(
        "--only",
        type=_arg(_steps),
        metavar="LIST",
        help=f"run only these measurements: {','.join(STEPS)}",
    )
    return p


@dataclass
class Plan:
    """Every setting of one run, the --quick defaults resolved."""

    out: str
    device: int
    quick: bool
    steps: list[str]
    kernels: list[int]
    h2d_sizes: list[int]
    rows: int
    cols: int
    dtype: str
    batches: list[int]
    repeats: dict[str, int]


def make_plan(args: argparse.Namespace) -> Plan:
    q = 1 if args.quick else 0
    repeats = {k: v[q] for k, v in REPEATS.items()}
    if args.repeats:
        repeats.update(launch=args.repeats, h2d=args.repeats, bandwidth=args.repeats)
    if args.cold_runs:
        repeats["cold_start"] = args.cold_runs
    sizes = args.sizes or list(QUICK_H2D_SIZES if args.quick else DEFAULT_H2D_SIZES)
    return Plan(
        out=args.out,
        device=args.device,
        quick=args.quick,
        steps=[s for s in STEPS if s in (args.only or STEPS)],
        kernels=list(args.kernels),
        h2d_sizes=list(sizes),
        rows=args.matrix[0],
        cols=args.matrix[1],
        dtype=args.dtype,
        batches=list(args.batches),
        repeats=repeats,
    )


def _bytes_text(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


def run_cold_start(plan: Plan, info: dict):
    rows = cold_rows(cold.measure_cold_start(plan.device, plan.repeats["cold_start"]))
    return rows, ", ".join(f"{r['item']} {fmt(r['seconds'])} s" for r in rows)


def run_launch(plan: Plan, info: dict):
    results = gpu.measure_launch(info["torch_device"], plan.kernels, plan.repeats["launch"])
    rows = launch_rows(results)
    r = max(rows, key=lambda r: r["kernels"])
    tau = launch_us(r["kernels"], r["eager_ms"], r["graph_ms"])
    return rows, (
        f"τ ≈ {fmt(tau, 3)} µs per launch ({r['kernels']} kernels: eager {fmt(r['eager_ms'])} ms, "
        f"one graph replay {fmt(r['graph_ms'])} ms)"
    )


def run_h2d(plan: Plan, info: dict):
    rows = h2d_rows(gpu.measure_h2d(info["torch_device"], plan.h2d_sizes, plan.repeats["h2d"]))
    return rows, ", ".join(
        f"{r['mode']} {_bytes_text(r['bytes'])} {fmt(r['gb_s'], 3)} GB/s" for r in rows
    )


def run_bandwidth(plan: Plan, info: dict):
    weight = plan.rows * plan.cols * DTYPE_BYTES[plan.dtype]
    warning = l2_warning(weight, (info.get("gpu") or {}).get("l2_bytes"))
    if warning:
        print(f"  warning: {warning}", file=sys.stderr)
    copies = round_robin_copies(weight, gpu.free_bytes(info["torch_device"]))
    results = gpu.measure_bandwidth(
        info["torch_device"],
        plan.rows,
        plan.cols,
        plan.dtype,
        plan.batches,
        plan.repeats["bandwidth"],
        copies,
    )
    rows = bandwidth_rows(results, plan.rows, plan.cols, plan.dtype, copies)
    shown = [rows[0], rows[-1]] if len(rows) > 1 else rows
    return rows, ", ".join(f"batch {r['batch']} {fmt(r['gb_s'], 4)} GB/s" for r in shown) + (
        f" ({copies} × {plan.rows}×{plan.cols} {plan.dtype} round-robin)"
    )


RUNNERS = {
    "cold_start": run_cold_start,
    "launch": run_launch,
    "h2d": run_h2d,
    "bandwidth": run_bandwidth,
}


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    plan = make_plan(build_parser().parse_args(argv))
    try:
        count = gpu.check_device(plan.device)
    except gpu.Unavailable as exc:
        print(f"capture: {exc}", file=sys.stderr)
        return 2
    out = Path(plan.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"capture: cannot create {out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    mode = " (--quick)" if plan.quick else ""
    print(f"capture: GPU {plan.device} of {count} → {out}/{mode}", flush=True)
    smi = gpu.nvidia_smi()
    info: dict = {}
    written: dict[str, list[dict]] = {}
    failures: dict[str, str] = {}
    try:
        for step in plan.steps:
            if step != "cold_start" and "torch_device" not in info:
                try:
                    info["torch_device"] = gpu.use_device(plan.device)  # creates this context
                except Exception as exc:  # a busy or broken GPU: no measurement can run
                    failures[f"cuda:{plan.device}"] = _one_line(exc)
                    print(f"  GPU {plan.device}: {_one_line(exc)}", file=sys.stderr, flush=True)
                    break
                info.update(_device_info(plan.device))
                print(
                    f"  GPU {plan.device}: {(info.get('gpu') or {}).get('name', '?')}", flush=True
                )
            file = STEPS[step]
            began = time.monotonic()
            try:
                rows, message = RUNNERS[step](plan, info)
            except Exception as exc:  # one failed measurement does not stop the others
                failures[file] = _one_line(exc)
                print(f"  {file}: failed: {failures[file]}", file=sys.stderr, flush=True)
                continue
            write_csv(out, file, rows)
            written[file] = rows
            print(f"  {file}: {message} [{time.monotonic() - began:.0f} s]", flush=True)
    except KeyboardInterrupt:
        failures["interrupted"] = "stopped by Ctrl-C"
        print("capture: interrupted; what finished is written", file=sys.stderr)
    if "gpu" not in info:
        info.update(_device_info(plan.device))
    info.pop("torch_device", None)
    summary = app_summary(written)
    settings = asdict(plan)
    env = build_env(argv, info, smi, settings=settings, summary=summary, failures=failures)
    write_json(out / "env.json", env)
    files = [*written, "env.json"]
    print(f"capture: wrote {', '.join(files)} in {out}/")
    if summary:
        print("capture: for the app: " + ", ".join(f"{k} = {v:g}" for k, v in summary.items()))
    return 1 if failures else 0


def _device_info(index: int) -> dict:
    try:
        return gpu.device_info(index)
    except Exception as exc:  # env.json tolerates what torch cannot tell
        return {"device_info_error": _one_line(exc)}


__all__ = ["FILES", "Plan", "build_parser", "main", "make_plan"]
