"""Measure, in Chromium, how long each page takes to show new metrics after a widget change,
against a minimal one-widget, one-metric, one-chart page served the same way.

    .venv/bin/python benchmarks/browser_speed.py [--rounds 12] [--quiet-ms 400]

Two ``streamlit run`` servers (headless, loopback, free ports, the repo's .streamlit config):
one serves ``app.py`` (with its pages), the other ``benchmarks/minimal_page.py``. Headless
Debian Chromium (``/usr/bin/chromium``) opens one tab per case and keeps it open; the cases are
measured round-robin (one change per case per round), so load drift on the machine hits the
app and the minimal page alike.

Each measurement is timed inside the page: Playwright types the next value into the widget
(the sidebar "Batch" number input, +1 and −1 alternately) and presses Enter, or clicks a
toggle; a capture-phase listener stamps ``t0 = performance.now()`` at that Enter keydown or
click (before Streamlit's handlers see it), and a MutationObserver stamps

* **metric**: the first DOM mutation after which the headline metric's text differs from its
  text before the click (what the user waits for), and
* **settle**: the last DOM mutation before the page went quiet (``--quiet-ms``) with no
  'Running' status: charts, tables and everything else redrawn.

Reported per case: median and p90 of both, and the medians' ratio to the minimal page's.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1400, "height": 1000}
SERVER_START_S = 90.0


@dataclass
class Case:
    name: str
    server: str  # "app" or "minimal"
    path: str  # URL path and query
    widget: tuple[str, str]  # ("number", label): step up/down; ("toggle", label)
    metric: str  # the metric label whose text must change
    metric_ms: list[float] = field(default_factory=list)
    settle_ms: list[float] = field(default_factory=list)
    server_ms: list[float] = field(default_factory=list)  # script runs of the change (wall)
    gc_ms: list[float] = field(default_factory=list)  # their post-run gc.collect(2) (wall)
    cpu_ms: list[float] = field(default_factory=list)  # run + gc thread CPU time
    counts: dict = field(default_factory=dict)


def default_cases() -> list[Case]:
    batch = ("number", "Batch")
    return [
        Case("minimal page", "minimal", "/", batch, "Aggregate tok/s"),
        Case("app (landing) · default", "app", "/", batch, "Aggregate tok/s"),
        Case("Roofline · default", "app", "/Roofline", batch, "Aggregate tok/s"),
        Case("Roofline · seed-3b-4090", "app", "/Roofline?scenario=seed-3b-4090", batch,
             "Aggregate tok/s"),
        Case("Launch overhead · default", "app", "/Launch_overhead", batch, "Aggregate tok/s"),
        Case("Launch overhead · seed-3b-4090", "app", "/Launch_overhead?scenario=seed-3b-4090",
             batch, "Aggregate tok/s"),
        Case("Cold start · seed-70b-fp8-cold-start", "app",
             "/Cold_start?scenario=seed-70b-fp8-cold-start", ("toggle", "Compile cache"),
             "Time to ready"),
        # issue 22: every page, the Serving page included (a GPUs change: its figures and
        # the replica's capacity change, so each change is a fresh computation in the worker)
        Case("Scale to zero · default", "app", "/Scale_to_zero", ("number", "GPUs (TP)"),
             "Total per day"),
        Case("Serving · default", "app", "/Serving", ("number", "GPUs (TP)"), "p99 TPOT"),
    ]  # fmt: skip


# --- servers -------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.status == 200 and resp.read().decode().strip() == "ok"
    except (urllib.error.URLError, OSError, ValueError):
        return False


class Server:
    """``streamlit run SCRIPT`` on a free loopback port, from the repo root (its config) or
    from ``cwd`` (another copy of the app, for a side-by-side comparison)."""

    def __init__(self, script: str, log_dir: Path, cwd: Path = ROOT, name: str = ""):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = log_dir / f"{name or Path(script).stem}.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        # serve_timed.py is `python -m streamlit run` plus one log line per script run
        cmd = [sys.executable, str(ROOT / "benchmarks" / "serve_timed.py"), "run", script,
               "--server.port", str(self.port),
               "--server.headless", "true", "--server.address", "127.0.0.1",
               "--browser.gatherUsageStats", "false"]  # fmt: skip
        self.proc = subprocess.Popen(cmd, cwd=cwd, stdout=self._log, stderr=subprocess.STDOUT)

    def runs(self) -> list[tuple[float, float, float, float]]:
        """The script runs logged since the last call: (run wall, run CPU, GC wall, GC CPU) s."""
        self._log.flush()
        with open(self.log_path, "rb") as f:
            f.seek(getattr(self, "_read", 0))
            text = f.read()
            self._read = f.tell()
        out = []
        for line in text.decode(errors="replace").splitlines():
            if line.startswith("WHATIF_RUN "):
                out.append(tuple(float(x) for x in line.split()[1:5]))
        return out

    def wait(self) -> None:
        deadline = time.monotonic() + SERVER_START_S
        while not _healthy(f"{self.base}/_stcore/health"):
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited ({self.proc.returncode}); {self.log_path}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not start; see {self.log_path}")
            time.sleep(0.25)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self._log.close()


# --- in-page JavaScript --------------------------------------------------------------------

JS_HELPERS = """
window.__bench = {
  metricEl(label) {
    for (const m of document.querySelectorAll('[data-testid="stMetric"]')) {
      const l = m.querySelector('[data-testid="stMetricLabel"]');
      if (l && l.textContent.trim() === label)
        return m.querySelector('[data-testid="stMetricValue"]');
    }
    return null;
  },
  running() {
    const w = document.querySelector('[data-testid="stStatusWidget"]');
    return !!w && /Running/i.test(w.textContent || '');
  },
  // the element to act on: a number input's <input>, or a toggle's <input type=checkbox>
  widget(kind, label) {
    const sel = kind === 'number' ? '[data-testid="stNumberInput"]' : '[data-testid="stCheckbox"]';
    for (const w of document.querySelectorAll(sel)) {
      const l = w.querySelector('[data-testid="stWidgetLabel"]') || w;
      if (l.textContent.trim() === label || (kind !== 'number' && l.textContent.trim().startsWith(label)))
        return w.querySelector('input');
    }
    return null;
  },
  counts() {
    const n = (sel) => document.querySelectorAll(sel).length;
    return {
      charts: n('[data-testid="stPlotlyChart"]'),
      tables: n('[data-testid="stDataFrame"]'),
      metrics: n('[data-testid="stMetric"]'),
      elements: n('[data-testid="stElementContainer"]'),
      dom_nodes: n('*'),
    };
  },
  // resolve once nothing has mutated for quietMs and no run is in progress
  settled(quietMs, timeoutMs) {
    return new Promise((resolve, reject) => {
      let last = performance.now();
      const obs = new MutationObserver(() => { last = performance.now(); });
      obs.observe(document.body, {subtree: true, childList: true, characterData: true,
                                  attributes: true});
      const t0 = performance.now();
      const poll = setInterval(() => {
        const now = performance.now();
        if (!this.running() && now - last >= quietMs) {
          clearInterval(poll); obs.disconnect(); resolve(now - t0);
        } else if (now - t0 > timeoutMs) {
          clearInterval(poll); obs.disconnect(); reject(new Error('never settled'));
        }
      }, 10);
    });
  },
  // arm: stamp t0 at the committing event (Enter keydown or click, capture phase, before
  // React sees it), then watch the metric; collect() resolves with the timings
  arm(metric, quietMs, timeoutMs) {
    // metric null: no metric to watch, only the settle time (and metric = settle)
    const first = metric ? this.metricEl(metric) : null;
    if (metric && !first) throw new Error('metric not found: ' + metric);
    const before = first ? first.textContent : null;
    const st = {t0: null, tMetric: null, last: null};
    const onEvent = (e) => {
      if (st.t0 === null && (e.type === 'click' || e.key === 'Enter')) st.t0 = performance.now();
    };
    window.addEventListener('keydown', onEvent, true);
    window.addEventListener('click', onEvent, true);
    const obs = new MutationObserver(() => {
      if (st.t0 === null) return;
      const now = performance.now();
      st.last = now;
      if (st.tMetric === null && metric) {
        const el = this.metricEl(metric);
        if (el && el.textContent !== before) st.tMetric = now;
      }
    });
    obs.observe(document.body, {subtree: true, childList: true, characterData: true,
                                attributes: true});
    this.pending = new Promise((resolve, reject) => {
      const tArm = performance.now();
      const poll = setInterval(() => {
        const now = performance.now();
        const changed = metric ? st.tMetric !== null : st.last !== null;
        const done = changed && !this.running() && now - st.last >= quietMs;
        if (done || now - tArm > timeoutMs) {
          clearInterval(poll); obs.disconnect();
          window.removeEventListener('keydown', onEvent, true);
          window.removeEventListener('click', onEvent, true);
          if (done) resolve({metric: (metric ? st.tMetric : st.last) - st.t0,
                             settle: st.last - st.t0, before,
                             after: metric ? this.metricEl(metric).textContent : null});
          else reject(new Error('metric ' + metric + ' never changed from ' + before));
        }
      }, 5);
    });
    return before;
  },
};
"""


def compare_dirs(items: list[str]) -> dict[str, str]:
    """``--compare`` items, "LABEL=DIR", as {label: dir}."""
    return dict(item.split("=", 1) for item in items)


def pick_cases(cases: list[Case], only: str | None) -> list[Case]:
    """The cases whose names contain one of ``only``'s comma-separated substrings (any case,
    with ``only`` empty), and the minimal page's case always."""
    if not only:
        return cases
    keys = [k.strip().lower() for k in only.split(",")]
    return [c for c in cases if c.server == "minimal" or any(k in c.name.lower() for k in keys)]


def start_servers(log_dir: Path, compare: dict[str, str | Path] | None = None,
                  minimal: bool = True) -> dict[str, Server]:  # fmt: skip
    """The servers a benchmark measures: "app" (this checkout), "minimal" (the reference page,
    with ``minimal``) and one per ``compare`` label (another copy of the app)."""
    servers = {"app": Server("app.py", log_dir)}
    if minimal:
        servers["minimal"] = Server("benchmarks/minimal_page.py", log_dir)
    for label, cwd in (compare or {}).items():
        servers[label] = Server("app.py", log_dir, cwd=Path(cwd), name=label)
    return servers


def tool_arguments(description: str | None = None) -> argparse.Namespace:
    """The arguments of the per-change diagnostics (dom_walks, react_renders, main_thread): --changes,
    --only and --compare LABEL=DIR (repeatable)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--changes", type=int, default=4)
    parser.add_argument("--only", help="comma-separated substrings of case names")
    parser.add_argument("--compare", action="append", default=[], metavar="LABEL=DIR")
    return parser.parse_args()


def open_case(browser, base: str, case: Case, *init_scripts: str):
    """A fresh context and tab on the case's page, with the benchmark's helpers and
    ``init_scripts`` installed before the page loads; returned once the page is quiet."""
    ctx = browser.new_context(viewport=VIEWPORT)
    pg = ctx.new_page()
    for script in (JS_HELPERS, *init_scripts):
        pg.add_init_script(script)
    pg.goto(base + case.path, wait_until="domcontentloaded")
    pg.locator('[data-testid="stMetric"]').first.wait_for(state="visible", timeout=60_000)
    pg.evaluate("() => window.__bench.settled(400, 60000)")
    return ctx, pg


@contextlib.contextmanager
def served_browser(prefix: str, compare: dict[str, str | Path] | None = None,
                   minimal: bool = True):  # fmt: skip
    """Start the servers (:func:`start_servers`), wait for them, launch headless Chromium;
    yield (servers, browser); stop everything after."""
    from playwright.sync_api import sync_playwright

    log_dir = Path(tempfile.mkdtemp(prefix=prefix))
    servers = start_servers(log_dir, compare, minimal)
    try:
        for srv in servers.values():
            srv.wait()
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                         args=CHROMIUM_ARGS)  # fmt: skip
            try:
                yield servers, browser
            finally:
                browser.close()
    finally:
        for srv in servers.values():
            srv.stop()


def widget_handle(pg, case: Case, wait_s: float = 30.0):
    """The case's widget on the page (a number input's ``<input>`` or a toggle's checkbox),
    waiting up to ``wait_s`` while the page still redraws it; None if it never shows."""
    kind, label = case.widget
    deadline = time.monotonic() + wait_s
    while True:
        handle = pg.evaluate_handle("([k, l]) => window.__bench.widget(k, l)", [kind, label])
        handle = handle.as_element()
        if handle is not None or time.monotonic() > deadline:
            return handle
        time.sleep(0.2)


def make_change(pg, case: Case, step: int, arm=None) -> None:
    """Make the case's change: step its number input up (even ``step``) or down and press
    Enter, or click its toggle; ``arm()`` runs just before the Enter or the click."""
    kind, label = case.widget
    handle = widget_handle(pg, case)
    if handle is None:
        raise RuntimeError(f"{case.name}: widget {label!r} not found")
    if kind == "number":
        value = int(handle.input_value())
        handle.fill(str(value + 1 if step % 2 == 0 else value - 1))
    if arm is not None:
        arm()
    if kind == "number":
        handle.press("Enter")
    else:
        handle.click(force=True)


def _summary(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[int(0.9 * (len(ordered) - 1))]


def run(rounds: int = 8, quiet_ms: int = 300, warmup: int = 2, cases: list[Case] | None = None,
        out=sys.stdout, compare: dict[str, Path] | None = None) -> list[Case]:  # fmt: skip
    """Start the servers and Chromium, measure every case, print the table, return the cases.

    ``compare`` maps a label to another copy of the app (e.g. ``git archive`` of a baseline):
    each app case is measured on it too, in the same rounds, as "NAME [label]"."""

    if not os.path.exists(CHROMIUM):
        raise SystemExit(f"{CHROMIUM} not found: install Debian's chromium")
    cases = cases or default_cases()
    for label in compare or {}:
        cases = cases + [
            Case(f"{c.name} [{label}]", label, c.path, c.widget, c.metric)
            for c in cases
            if c.server == "app"
        ]
    timeout_ms = 60_000
    with served_browser("browser-speed-", compare) as (servers, browser):
        pages = []
        for case in cases:
            ctx = browser.new_context(viewport=VIEWPORT)
            ctx.set_default_timeout(timeout_ms)
            pg = ctx.new_page()
            pg.add_init_script(JS_HELPERS)
            pg.goto(servers[case.server].base + case.path, wait_until="domcontentloaded")
            pg.locator('[data-testid="stMetric"]').first.wait_for(state="visible")
            pg.evaluate(f"() => window.__bench.settled({quiet_ms}, {timeout_ms})")
            pages.append(pg)

        def once(pg, case: Case, step: int) -> dict:
            try:
                make_change(pg, case, step, arm=lambda: pg.evaluate(
                    "([m, q, t]) => window.__bench.arm(m, q, t)",
                    [case.metric, quiet_ms, timeout_ms],
                ))  # fmt: skip
                return pg.evaluate("() => window.__bench.pending")
            except Exception as exc:
                raise RuntimeError(f"{case.name} ({pg.url}), step {step}: {exc}") from None

        for pg, case in zip(pages, cases, strict=True):
            for step in range(warmup):
                once(pg, case, step)
            case.counts = pg.evaluate("() => window.__bench.counts()")
        for srv in servers.values():
            srv.runs()  # forget the page loads and warm-up changes
        for r in range(rounds):
            for pg, case in zip(pages, cases, strict=True):
                res = once(pg, case, warmup + r)
                case.metric_ms.append(res["metric"])
                case.settle_ms.append(res["settle"])
                runs = servers[case.server].runs()
                case.server_ms.append(sum(x[0] for x in runs) * 1e3)
                case.gc_ms.append(sum(x[2] for x in runs) * 1e3)
                case.cpu_ms.append(sum(x[1] + x[3] for x in runs) * 1e3)
    print_table(cases, rounds, quiet_ms, out)
    return cases


def print_table(cases: list[Case], rounds: int, quiet_ms: int, out=sys.stdout) -> None:
    base = next(c for c in cases if c.server == "minimal")
    bm, _ = _summary(base.metric_ms)
    bs, _ = _summary(base.settle_ms)
    bsrv, _ = _summary([a + b for a, b in zip(base.server_ms, base.gc_ms, strict=True)])
    bcpu, _ = _summary(base.cpu_ms)
    print(
        f"Chromium: widget change → headline metric text changed (metric) and → page quiet for "
        f"{quiet_ms} ms (settle); {rounds} changes per page, round-robin. server: the live "
        "server's script run for the change + its post-run gc.collect(2) (wall, median; a "
        "page's run lasts at least its headline pause, 25 ms after the headline, during which "
        "the script goes on and its messages are held); cpu: the same run's thread CPU time "
        "(what holds the interpreter)",
        file=out,
    )
    print(
        f"{'page · scenario':48} {'metric ms':>9} {'p90':>6} {'× min':>6} "
        f"{'settle ms':>9} {'p90':>6} {'× min':>6} {'server ms':>9} {'(gc)':>5} {'× min':>6}"
        f" {'cpu ms':>7} {'× min':>6}  charts tables metrics",
        file=out,
    )
    for c in cases:
        m, m90 = _summary(c.metric_ms)
        s, s90 = _summary(c.settle_ms)
        srv, _ = _summary([a + b for a, b in zip(c.server_ms, c.gc_ms, strict=True)])
        g, _ = _summary(c.gc_ms)
        cpu, _ = _summary(c.cpu_ms)
        k = c.counts
        print(
            f"{c.name:48} {m:9.0f} {m90:6.0f} {m / bm:6.2f} {s:9.0f} {s90:6.0f} {s / bs:6.2f} "
            f"{srv:9.1f} {g:5.0f} {srv / bsrv:6.2f} {cpu:7.1f} {cpu / bcpu:6.2f}  "
            f"{k.get('charts', 0):6} {k.get('tables', 0):6} {k.get('metrics', 0):7}",
            file=out,
        )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--quiet-ms", type=int, default=300)
    parser.add_argument("--only", help="comma-separated substrings of case names (plus minimal)")
    parser.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="LABEL=DIR",
        help="also serve the app from DIR (another checkout) and measure it alongside",
    )
    args = parser.parse_args()
    cases = pick_cases(default_cases(), args.only)
    compare = compare_dirs(args.compare)
    run(args.rounds, args.quiet_ms, cases=cases, compare=compare)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
