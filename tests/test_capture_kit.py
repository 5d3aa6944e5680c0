"""The capture kit (tools/capture) on a machine without a GPU and without torch.

Statistics, bandwidth arithmetic, CSV cells and headers (held to
model.readers.measurements.CSV_SCHEMAS), the command line, the no-torch and no-GPU exits, and the
whole run driven through a stand-in ``torch`` package (tests only: it checks the kit's calls and
files, not any timing).
"""

from __future__ import annotations

import ast
import csv
import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from model.readers.measurements import CSV_SCHEMAS, number
from tools.capture import cli, cold, gpu
from tools.capture.output import (
    FILES,
    app_summary,
    bandwidth_rows,
    build_env,
    cold_rows,
    fmt,
    h2d_rows,
    launch_rows,
    parse_smi,
    write_csv,
)
from tools.capture.stats import (
    GIB,
    MIB,
    gb_s,
    l2_warning,
    launch_us,
    matvec_bytes,
    parse_ints,
    parse_matrix,
    parse_size,
    parse_sizes,
    round_robin_copies,
    summarize,
)

ROOT = Path(__file__).resolve().parent.parent
KIT = ROOT / "tools" / "capture"


# --- statistics and arithmetic ---------------------------------------------------------------


def test_summary_median_and_quartiles_by_hand():
    s = summarize([4, 1, 3, 2])
    assert (s.n, s.median, s.q1, s.q3, s.iqr, s.low, s.high) == (4, 2.5, 1.75, 3.25, 1.5, 1, 4)
    s = summarize([1, 2, 3, 4, 100])  # an outlier moves neither median nor quartiles much
    assert (s.median, s.q1, s.q3) == (3, 2, 4)
    s = summarize([0.5, 0.52, 0.51])
    assert s.median == 0.51
    assert s.q1 == pytest.approx(0.505) and s.q3 == pytest.approx(0.515)


def test_summary_of_one_sample_and_non_finite_samples():
    s = summarize([5.0])
    assert (s.n, s.median, s.q1, s.q3, s.iqr) == (1, 5.0, 5.0, 5.0, 0.0)
    assert summarize([1.0, math.nan, 3.0, math.inf]).median == 2.0
    with pytest.raises(ValueError):
        summarize([])
    with pytest.raises(ValueError):
        summarize([math.nan])


def test_bandwidth_arithmetic():
    # 8192 × 28672 bf16 weight + 1 × 28672 in + 1 × 8192 out, two bytes each
    assert matvec_bytes(8192, 28672, 1) == 2 * (8192 * 28672 + 28672 + 8192) == 469_835_776
    assert matvec_bytes(8192, 28672, 256, "fp32") == 4 * (8192 * 28672 + 256 * 28672 + 256 * 8192)
    assert gb_s(1e9, 1.0) == pytest.approx(1000.0)  # decimal GB: 1e9 bytes in 1 ms
    assert gb_s(469_835_776, 0.1) == pytest.approx(4698.35776)
    assert math.isnan(gb_s(1e9, 0.0))
    assert launch_us(1000, 5.1, 0.1) == pytest.approx(5.0)  # (eager − graph) / kernels


def test_round_robin_copies_and_l2_warning():
    weight = 8192 * 28672 * 2
    assert round_robin_copies(weight) == 5  # ≥ 2 GiB together
    assert round_robin_copies(4 * GIB) == 2  # never fewer than two…
    assert round_robin_copies(1000) == 16  # …nor more than 16
    assert round_robin_copies(weight, free_bytes=int(1e9)) == 1  # half the free memory
    assert round_robin_copies(weight, free_bytes=int(140e9)) == 5
    assert l2_warning(weight, 50 * MIB) is None  # 0.47 GB ≫ 8 × 50 MiB
    assert "L2" in l2_warning(100 * MIB, 50 * MIB)
    assert l2_warning(100 * MIB, None) is None


def test_sizes_and_lists_from_the_command_line():
    assert parse_size("256M") == parse_size("256MiB") == 256 * MIB
    assert parse_size("1G") == parse_size("1 GiB") == GIB
    assert parse_size("1.5g") == 3 * GIB // 2
    assert parse_size("2GB") == 2_000_000_000 and parse_size("500kb") == 500_000
    assert parse_size("1048576") == 1048576
    assert parse_sizes("256M, 1G") == [256 * MIB, GIB]
    for bad in ("abc", "-1G", "0", "1T", "G", ""):
        with pytest.raises(ValueError, match="size|no sizes"):
            parse_sizes(bad)
    assert parse_ints("1,2, 4") == [1, 2, 4]
    for bad in ("1,x", "0", ""):
        with pytest.raises(ValueError):
            parse_ints(bad)
    assert parse_matrix("8192x28672") == parse_matrix("8192×28672") == (8192, 28672)
    for bad in ("8192", "0x5", "axb"):
        with pytest.raises(ValueError, match="matrix"):
            parse_matrix(bad)


# --- CSV cells, rows and files -----------------------------------------------------------------


def test_cells_integers_as_integers_floats_to_four_significant_digits():
    assert fmt(3) == "3" and fmt(1073741824) == "1073741824"
    assert fmt(0.52) == "0.52" and fmt(5.10349) == "5.103" and fmt(0.0213456) == "0.02135"
    assert fmt(20.0) == "20" and fmt(53.4) == "53.4" and fmt(0.0) == "0"
    assert fmt(12345.6) == "12346"  # the integer part is never rounded away
    assert fmt(2684.354) == "2684" and fmt(-1.23456) == "-1.235" and fmt(9.99996) == "10"
    assert fmt(1e-9) == "0.000000001"  # no exponent
    assert fmt(None) == fmt(math.nan) == fmt(math.inf) == ""
    assert fmt("pinned") == "pinned"
    assert fmt(0.012345678, 6) == "0.0123457"


def test_every_file_has_the_schema_columns_and_only_those():
    for name, (kind, columns) in FILES.items():
        schema = CSV_SCHEMAS[kind]
        assert name == f"{kind}.csv"
        for alternatives in schema["required"]:
            assert any(c in columns for c in alternatives), (name, alternatives)
        known = {c for alts in schema["required"] for c in alts} | set(schema["optional"])
        assert set(columns) <= known, (name, set(columns) - known)
    # the brief's column order
    assert FILES["launch.csv"][1][:3] == ("kernels", "eager_ms", "graph_ms")
    assert FILES["h2d.csv"][1][:4] == ("mode", "bytes", "ms", "gb_s")
    assert FILES["cold_start.csv"][1][:2] == ("item", "seconds")
    assert FILES["bandwidth.csv"][1][:7] == (
        "batch",
        "bytes",
        "ms",
        "gb_s",
        "rows",
        "cols",
        "dtype",
    )


RUNS = [
    {"python_s": 0.05, "import_s": 2.0, "context_s": 0.5},
    {"python_s": 0.03, "import_s": 1.5, "context_s": 0.4},
    {"python_s": 0.04, "import_s": 1.6, "context_s": 0.45},
]


def _all_rows():
    return {
        "launch.csv": launch_rows(
            [
                (10, [0.06, 0.05, 0.07], [0.01, 0.01, 0.012]),
                (100, [0.5, 0.52, 0.51], [0.02, 0.021, 0.022]),
            ]
        ),
        "h2d.csv": h2d_rows([("pinned", GIB, [20.0, 21.0, 20.5]), ("pageable", GIB, [60.0, 61.0])]),
        "cold_start.csv": cold_rows(RUNS),
        "bandwidth.csv": bandwidth_rows(
            [(1, [0.1, 0.11, 0.1]), (256, [0.25])], 8192, 28672, "bf16", 5
        ),
    }


def test_rows_from_samples():
    rows = _all_rows()
    launch = rows["launch.csv"]
    assert [(r["kernels"], r["eager_ms"], r["graph_ms"]) for r in launch] == [
        (10, 0.06, 0.01),
        (100, 0.51, 0.021),
    ]
    pinned, pageable = rows["h2d.csv"]
    assert (pinned["mode"], pinned["bytes"], pinned["ms"]) == ("pinned", GIB, 20.5)
    assert pinned["gb_s"] == pytest.approx(GIB / 20.5e-3 / 1e9)
    assert pageable["ms"] == 60.5
    init, ctx = rows["cold_start.csv"]
    assert init["item"] == "process_init" and init["seconds"] == pytest.approx(1.64)  # 0.04 + 1.6
    assert ctx["item"] == "cuda_context" and ctx["seconds"] == 0.45  # not counting the import
    b1, b256 = rows["bandwidth.csv"]
    assert b1["bytes"] == matvec_bytes(8192, 28672, 1) and b1["ms"] == 0.1
    assert b1["gb_s"] == pytest.approx(b1["bytes"] / 1e-4 / 1e9)
    assert (b256["batch"], b256["rows"], b256["cols"], b256["dtype"]) == (256, 8192, 28672, "bf16")


def test_written_files_read_back_in_the_schema(tmp_path):
    for name, rows in _all_rows().items():
        path = write_csv(tmp_path, name, rows)
        kind, columns = FILES[name]
        with path.open(encoding="utf-8", newline="") as fh:
            table = list(csv.reader(fh))
        assert tuple(table[0]) == columns
        assert len(table) == len(rows) + 1
        schema_numeric = {"kernels", "eager_ms", "graph_ms", "bytes", "ms", "gb_s", "seconds"}
        for line in table[1:]:
            cells = dict(zip(columns, line, strict=True))
            assert "," not in cells["note"]  # one plain cell, no quoting needed
            for col in set(columns) & (schema_numeric | {"batch", "rows", "cols"}):
                assert number(cells[col]) is not None, (name, col, cells[col])
            for col in ("kernels", "bytes", "batch", "rows", "cols"):
                if col in cells:
                    assert cells[col].isdigit(), (name, col, cells[col])
    text = (tmp_path / "launch.csv").read_text(encoding="utf-8")
    assert text.splitlines()[0] == "kernels,eager_ms,graph_ms,note"
    assert text.splitlines()[2].startswith("100,0.51,0.021,eager median of 3; IQR 0.505–0.515 ms")
    assert (
        (tmp_path / "h2d.csv")
        .read_text()
        .splitlines()[1]
        .startswith("pinned,1073741824,20.5,52.38,")
    )
    assert (
        (tmp_path / "cold_start.csv").read_text().splitlines()[1].startswith("process_init,1.64,")
    )


def test_summary_for_the_app():
    s = app_summary(_all_rows())
    assert s["launch_us"] == pytest.approx((0.51 - 0.021) / 100 * 1e3)
    assert s["h2d_gb_s"] == pytest.approx(52.38, abs=0.01)
    assert s["process_init_s"] == 1.64 and s["cuda_context_s"] == 0.45
    assert s["bandwidth_gb_s_batch1"] == 4698  # four significant digits
    assert app_summary({}) == {}


# --- env.json ------------------------------------------------------------------------------------

SMI = (
    "0, NVIDIA H200, 550.54.15, 00000000:19:00.0, 143771, P0, Enabled, 1980, 3201, 1980, 3201,"
    " 1980, 700.00, 34\n"
    "1, NVIDIA H200, 550.54.15, 00000000:3B:00.0, 143771, P0, Disabled, [N/A], 3201, 1980, 3201,"
    " [Not Supported], 700.00, 31\n"
    "garbage line\n"
)


def test_nvidia_smi_lines_tolerate_missing_fields():
    gpus = parse_smi(SMI)
    assert len(gpus) == 2
    assert gpus[0]["name"] == "NVIDIA H200" and gpus[0]["driver_version"] == "550.54.15"
    assert gpus[0]["clocks.sm"] == 1980 and gpus[0]["power.limit"] == 700.0
    assert gpus[0]["pci.bus_id"] == "00000000:19:00.0"
    assert gpus[1]["clocks.sm"] is None and gpus[1]["clocks.applications.graphics"] is None
    assert parse_smi(None) == [] and parse_smi("") == []


def test_env_tolerates_missing_fields():
    env = build_env(["--out", "m"], None, [])
    assert env["command"].endswith("-m tools.capture --out m")
    assert env["utc"].endswith("Z") and len(env["utc"]) == 20
    assert env["torch"] is None and env["driver"] is None and env["gpus_nvidia_smi"] == []
    json.dumps(env)
    info = {"torch": "2.5.1", "cuda": "12.4", "gpu_count": 8, "gpu": {"name": "H200"}, "x": 1}
    env = build_env([], info, parse_smi(SMI), summary={"launch_us": 4.2})
    assert env["driver"] == "550.54.15" and env["gpu_count"] == 8 and env["x"] == 1
    assert env["gpus_nvidia_smi"][0]["clocks.max.sm"] == 1980
    assert env["summary"] == {"launch_us": 4.2}


# --- the command line ----------------------------------------------------------------------------


def _run(*args, code=None, env=None):
    cmd = (
        [sys.executable, "-m", "tools.capture", *args]
        if code is None
        else [sys.executable, "-c", code, *args]
    )
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=environ, timeout=120)


def test_help():
    proc = _run("--help")
    assert proc.returncode == 0, proc.stderr
    for word in (
        "--out",
        "--quick",
        "--device",
        "--sizes",
        "launch.csv",
        "bandwidth.csv",
        "h2d.csv",
    ):
        assert word in proc.stdout


BLOCK_TORCH = (
    "import sys; sys.modules['torch'] = None\n"
    "from tools.capture.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def test_without_torch_one_line_and_status_2(tmp_path):
    out = tmp_path / "m"
    proc = _run("--out", str(out), code=BLOCK_TORCH)  # torch blocked even where it is installed
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert proc.stderr.strip().count("\n") == 0
    assert "PyTorch is not installed: pip install -e '.[capture]'" in proc.stderr
    assert not out.exists()  # nothing written


def test_without_torch_as_a_module(tmp_path):
    """``python -m tools.capture`` itself, where torch is not installed (this machine)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("torch is installed here; the blocked-import test covers this path")
    proc = _run("--out", str(tmp_path / "m"))
    assert proc.returncode == 2 and "PyTorch is not installed" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_without_torch_in_process(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)
    assert cli.main(["--out", str(tmp_path / "m"), "--quick"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("capture: PyTorch is not installed") and err.count("\n") == 1


def test_bad_arguments_are_usage_errors(capsys):
    for args in (["--quick"], ["--out", "m", "--sizes", "1T"], ["--out", "m", "--only", "nope"]):
        with pytest.raises(SystemExit) as exc:
            cli.build_parser().parse_args(args)
        assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--out" in err and "bad size" in err and "unknown measurement" in err


def test_plan_defaults_quick_and_overrides():
    parse = cli.build_parser().parse_args
    full = cli.make_plan(parse(["--out", "m"]))
    assert full.steps == ["cold_start", "launch", "h2d", "bandwidth"]
    assert full.h2d_sizes == [256 * MIB, GIB] and full.kernels == [10, 100, 1000]
    assert full.batches == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert (full.rows, full.cols, full.dtype) == (8192, 28672, "bf16")
    assert full.repeats == {"launch": 20, "h2d": 10, "bandwidth": 50, "cold_start": 3}
    quick = cli.make_plan(parse(["--out", "m", "--quick"]))
    assert quick.h2d_sizes == [256 * MIB] and quick.repeats["cold_start"] == 1
    custom = cli.make_plan(
        parse(["--out", "m", "--quick", "--repeats", "7", "--cold-runs", "2", "--sizes", "1G"])
    )
    assert custom.repeats == {"launch": 7, "h2d": 7, "bandwidth": 7, "cold_start": 2}
    assert custom.h2d_sizes == [GIB]
    only = cli.make_plan(parse(["--out", "m", "--only", "h2d,launch.csv", "--matrix", "4096x8192"]))
    assert only.steps == ["launch", "h2d"] and (only.rows, only.cols) == (4096, 8192)


# --- lazy torch ----------------------------------------------------------------------------------


def test_no_module_of_the_kit_imports_torch_at_import_time():
    for path in KIT.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:  # module level only; gpu.py imports torch inside its functions
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            assert not any(n.split(".")[0] == "torch" for n in names), path.name
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import tools.capture, tools.capture.gpu, tools.capture.cli, tools.capture.cold\n"
        "import tools.capture.output, tools.capture.stats, tools.capture.__main__\n"
        "print(sorted(m for m in sys.modules if m.startswith(('torch', 'numpy', 'pandas'))))\n"
    )
    proc = _run(code=code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['torch']"  # only the blocker: no torch, and stdlib only


def test_the_kit_parses_as_python_3_9():
    """Cluster environments with torch are often older than the app's 3.11."""
    for path in KIT.glob("*.py"):
        ast.parse(path.read_text(encoding="utf-8"), feature_version=(3, 9))
        assert "strict=" not in path.read_text(encoding="utf-8"), path.name  # zip(strict) is 3.10


def test_gpu_module_says_torch_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(gpu.Unavailable, match="PyTorch is not installed"):
        gpu.check_device(0)
    with pytest.raises(gpu.Unavailable):
        gpu.measure_launch("cuda:0", [10], 1)


# --- the whole run through a stand-in torch ------------------------------------------------------

FAKE_TORCH = '''
"""A stand-in for torch: what tools.capture calls, on no GPU (tests only)."""
import contextlib
import time
import types

__version__ = "0.0+fake"
version = types.SimpleNamespace(cuda="12.4")
bfloat16, float16, float32, uint8 = "bfloat16", "float16", "float32", "uint8"
LOG = {"capture": [], "zero_": 0, "copies": [], "linear": [], "set_device": []}
_STATE = {"capturing": False}


class device:
    def __init__(self, kind, index=None):
        self.type, self.index = kind, index


class Tensor:
    def __init__(self, *shape, dtype=None, device=None):
        self.shape, self.dtype, self.device, self.pinned = shape, dtype, device, False

    def zero_(self):
        if _STATE["capturing"]:
            LOG["capture"][-1] += 1
        else:
            LOG["zero_"] += 1
        return self

    def normal_(self, *args):
        return self

    def pin_memory(self):
        t = Tensor(*self.shape, dtype=self.dtype)
        t.pinned = True
        return t

    def copy_(self, src, non_blocking=False):
        assert src.shape == self.shape and src.device is None and self.device is not None
        LOG["copies"].append(("pinned" if src.pinned else "pageable", src.shape[0]))
        return self


def _tensor(*shape, dtype=None, device=None):
    return Tensor(*shape, dtype=dtype, device=device)


empty = zeros = ones = randn = _tensor


class Event:
    def __init__(self, enable_timing=False):
        assert enable_timing
        self.t = None

    def record(self):
        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        return max(end.t - self.t, 1e-6) * 1e3


class CUDAGraph:
    def replay(self):
        pass


@contextlib.contextmanager
def _graph(g):
    LOG["capture"].append(0)
    _STATE["capturing"] = True
    yield
    _STATE["capturing"] = False


class _Stream:
    def __init__(self, device=None):
        pass

    def wait_stream(self, other):
        pass


cuda = types.SimpleNamespace(
    is_available=lambda: True,
    device_count=lambda: 2,
    get_device_properties=lambda i: types.SimpleNamespace(
        name="Fake GPU", major=9, minor=0, total_memory=141 * 2**30,
        multi_processor_count=132, L2_cache_size=50 * 2**20,
    ),
    init=lambda: None,
    set_device=lambda i: LOG["set_device"].append(i),
    synchronize=lambda device=None: None,
    empty_cache=lambda: None,
    mem_get_info=lambda device=None: (140 * 10**9, 141 * 2**30),
    Event=Event,
    Stream=_Stream,
    current_stream=lambda device=None: _Stream(),
    stream=lambda s: contextlib.nullcontext(),
    graph=_graph,
    CUDAGraph=CUDAGraph,
)
backends = types.SimpleNamespace(cudnn=types.SimpleNamespace(version=lambda: 90100))
'''

FAKE_FUNCTIONAL = """
import torch

def linear(x, w):
    assert x.shape[1] == w.shape[1], (x.shape, w.shape)
    torch.LOG["linear"].append((x.shape[0], id(w)))
    return torch.Tensor(x.shape[0], w.shape[0], dtype=x.dtype, device=x.device)
"""


@pytest.fixture
def fake_torch(tmp_path, monkeypatch):
    """A stand-in ``torch`` package on sys.path (and on the children's PYTHONPATH)."""
    root = tmp_path / "fake"
    (root / "torch" / "nn").mkdir(parents=True)
    (root / "torch" / "__init__.py").write_text(textwrap.dedent(FAKE_TORCH), encoding="utf-8")
    (root / "torch" / "nn" / "__init__.py").write_text("", encoding="utf-8")
    (root / "torch" / "nn" / "functional.py").write_text(FAKE_FUNCTIONAL, encoding="utf-8")
    for name in [m for m in sys.modules if m == "torch" or m.startswith("torch.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(root), str(ROOT)]))
    import torch

    assert torch.__version__ == "0.0+fake"
    yield torch
    for name in [m for m in sys.modules if m == "torch" or m.startswith("torch.")]:
        del sys.modules[name]


def test_cold_start_child_in_a_fresh_process(fake_torch):
    runs = cold.measure_cold_start(device=1, runs=2)
    assert len(runs) == 2
    for run in runs:
        assert set(run) == {"python_s", "import_s", "context_s"}
        assert all(0 <= v < 60 for v in run.values())
    assert cold.parse_child(
        'a warning\nCAPTURE_COLD {"python_s": 1, "import_s": 2, "context_s": 3}\n'
    ) == {"python_s": 1.0, "import_s": 2.0, "context_s": 3.0}
    with pytest.raises(ValueError):
        cold.parse_child("nothing")


def test_cold_start_child_failure_is_one_line(fake_torch, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the child finds no torch
    monkeypatch.setattr(cold, "CHILD", "import sys; sys.modules['torch'] = None; import torch")
    with pytest.raises(RuntimeError, match="exited with 1: .*torch"):
        cold.run_child(0)


def test_whole_run_through_a_stand_in_torch(fake_torch, tmp_path, capsys):
    out = tmp_path / "m"
    args = [
        "--out",
        str(out),
        "--quick",
        "--device",
        "1",
        "--kernels",
        "10,100",
        "--batches",
        "1,8",
    ]
    assert cli.main([*args, "--matrix", "1024x4096"]) == 0
    stdout = capsys.readouterr().out
    assert "capture: GPU 1 of 2" in stdout and "GPU 1: Fake GPU" in stdout
    assert "τ ≈" in stdout and "for the app: launch_us" in stdout
    assert sorted(p.name for p in out.iterdir()) == sorted([*FILES, "env.json"])
    for name, (_, columns) in FILES.items():
        with (out / name).open(encoding="utf-8", newline="") as fh:
            table = list(csv.DictReader(fh))
        assert tuple(table[0]) == columns
    log = fake_torch.LOG
    # the graph holds the whole chain; eager ran it 3 warm-ups + 5 repeats
    assert log["capture"] == [10, 100]
    assert log["zero_"] == (3 + 5) * 110
    assert log["set_device"] == [1]
    # 256 MiB, pinned then pageable, 1 warm-up + 3 repeats each
    assert log["copies"] == [("pinned", 256 * MIB)] * 4 + [("pageable", 256 * MIB)] * 4
    # bandwidth: 1024 × 4096 bf16 is 8 MiB, so 16 copies, each visited in the repeats
    batches = [b for b, _ in log["linear"]]
    assert batches == [1] * (16 + 10) + [8] * (16 + 10)
    assert len({w for _, w in log["linear"][16:26]}) == 10  # round-robin, no weight twice
    env = json.loads((out / "env.json").read_text(encoding="utf-8"))
    assert env["torch"] == "0.0+fake" and env["gpu"]["name"] == "Fake GPU"
    assert env["gpu"]["l2_bytes"] == 50 * 2**20 and env["gpu_count"] == 2
    assert env["failures"] == {} and env["settings"]["device"] == 1
    assert set(env["summary"]) >= {"launch_us", "h2d_gb_s", "process_init_s", "cuda_context_s"}
    assert "--matrix 1024x4096" in env["command"]
    bw = list(csv.DictReader((out / "bandwidth.csv").open(encoding="utf-8")))
    assert [r["batch"] for r in bw] == ["1", "8"] and bw[0]["bytes"] == str(
        matvec_bytes(1024, 4096, 1)
    )
    assert "16 weight copies" in bw[0]["note"]


def test_a_failed_measurement_does_not_stop_the_others(fake_torch, tmp_path, capsys, monkeypatch):
    def boom(*args):
        raise RuntimeError("CUDA out of memory.\nTried to allocate 4 GiB")

    monkeypatch.setattr(gpu, "measure_bandwidth", boom)
    out = tmp_path / "m"
    assert cli.main(["--out", str(out), "--quick", "--only", "launch,bandwidth"]) == 1
    err = capsys.readouterr().err
    assert (
        "bandwidth.csv: failed: RuntimeError: CUDA out of memory." in err and "Traceback" not in err
    )
    assert sorted(p.name for p in out.iterdir()) == ["env.json", "launch.csv"]
    env = json.loads((out / "env.json").read_text(encoding="utf-8"))
    assert env["failures"] == {"bandwidth.csv": "RuntimeError: CUDA out of memory."}


def test_torch_without_a_gpu_or_without_that_gpu(fake_torch, tmp_path, monkeypatch, capsys):
    assert cli.main(["--out", str(tmp_path / "a"), "--device", "5"]) == 2
    assert "--device 5: this node has 2 visible GPU(s), 0–1" in capsys.readouterr().err
    monkeypatch.setattr(fake_torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(fake_torch.version, "cuda", None)
    assert cli.main(["--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert "sees no CUDA GPU" in err and "CPU-only build" in err and err.count("\n") == 1
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_gpu_that_cannot_be_used_is_reported(fake_torch, tmp_path, capsys, monkeypatch):
    def busy(index):
        raise RuntimeError("CUDA error: all CUDA-capable devices are busy or unavailable")

    monkeypatch.setattr(gpu, "use_device", busy)
    out = tmp_path / "m"
    assert cli.main(["--out", str(out), "--quick", "--only", "launch,h2d"]) == 1
    assert "busy or unavailable" in capsys.readouterr().err
    env = json.loads((out / "env.json").read_text(encoding="utf-8"))
    assert list(env["failures"]) == ["cuda:0"]
    assert sorted(p.name for p in out.iterdir()) == ["env.json"]
