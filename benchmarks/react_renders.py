"""Count the React renders a widget change costs in Chromium, and which elements they render.

    .venv/bin/python benchmarks/react_renders.py [--changes 4] [--only "Roofline"]
        [--compare base=/path/to/another/checkout]

Why it exists (issue 22): after a change, Streamlit's frontend (1.67) commits the React tree
on every state change of the app (the widget's value, the rerun request, the new session, the
run's status, each 10 ms batch of deltas), and each commit that follows the rerun request
renders again the wrapper of every element and column on the page (about ten components each,
changed or not: they take the run's status to mark elements stale), every popover and
expander whole, and the elements whose deltas arrived. What a change costs the browser before
the headline metric is therefore about the components those commits render, and it grows with
every element and column the page holds, the sidebar's included. This script makes it
visible: it installs a stand-in for React's devtools hook before the page loads (React calls
``onCommitFiberRoot`` once per commit, production builds included), makes the browser_speed
cases' widget change, and reports per change

* the commits up to the headline metric's new value and after it, the components rendered
  before it (in all those commits) and in the largest of them, against the minimal page's; and
* for that largest commit, the components by the element they belong to (the nearest
  ``data-testid`` of an element kind: selectbox, metric, page link, …; the wrappers of an
  element count as layout), with the count of such elements on the page.

A component counts as rendered in a commit when React worked on it then (its fiber is new in
the committed tree, not one kept from the last commit) and called it (React's PerformedWork
flag). The hook walks the whole tree at every commit, so it slows the page: read the counts,
not the times. Uses ``browser_speed``'s servers and cases; a benchmark, not a test.
"""

from __future__ import annotations

import collections
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import browser_speed as bs  # noqa: E402

#: element kinds the per-element table names (a component belongs to the nearest one above it)
KINDS = (
    "stMetric stNumberInput stSelectbox stMarkdown stCaptionContainer stPlotlyChart stPageLink "
    "stButton stExpander stPopover stHeading stCode stRadio stButtonGroup stDownloadButton "
    "stDataFrame stTable stSlider stCheckbox stFileUploader stAlert stToolbar stHeader "
    "stSidebarHeader stMainMenu stTooltipIcon"
).split()

HOOK = """
window.__renders = {t0: null, commits: [], kinds: __KINDS__, seen: new WeakMap()};
window.__REACT_DEVTOOLS_GLOBAL_HOOK__ = {
  supportsFiber: true, renderers: new Map(), isDisabled: false,
  inject() { return 1; }, checkDCE() {}, onScheduleFiberRoot() {}, onPostCommitFiberRoot() {},
  onCommitFiberUnmount() {},
  onCommitFiberRoot(id, root) {
    const R = window.__renders;
    // a fiber React worked on in this commit is a new object in the committed tree (it was
    // cloned from the last one); a subtree React bailed out of keeps the very objects of the
    // last commit, with the flags of the commit that last rendered them: count only the new
    const last = R.seen.get(root) || new WeakSet(), now = new WeakSet();
    R.seen.set(root, now);
    const kinds = new Set(R.kinds), by = {};
    let rendered = 0, total = 0;
    const walk = (f, kind) => {
      for (; f; f = f.sibling) {
        let k = kind;
        const tid = f.stateNode && f.stateNode.dataset && f.stateNode.dataset.testid;
        if (tid && kinds.has(tid)) k = tid === 'stTooltipIcon' ? (kind || '') + ' > tooltip' : tid;
        total++;
        now.add(f);
        if (!last.has(f) && (f.flags & 1)) { rendered++; by[k || '(layout, app shell)'] = (by[k || '(layout, app shell)'] || 0) + 1; }
        if (f.child) walk(f.child, k);
      }
    };
    walk(root.current.child, null);
    if (R.t0 !== null) R.commits.push({t: performance.now() - R.t0, rendered, total, by});
  },
};
const __arm = (e) => {
  if (e.type === 'click' || e.key === 'Enter') {
    window.__renders.t0 = performance.now(); window.__renders.commits = [];
  }
};
window.addEventListener('keydown', __arm, true);
window.addEventListener('click', __arm, true);
""".replace("__KINDS__", json.dumps(KINDS))

ELEMENTS = """() => { const c = {};
  document.querySelectorAll('[data-testid]').forEach(e => {
    c[e.dataset.testid] = (c[e.dataset.testid] || 0) + 1; });
  return c; }"""


def measure(base: str, case: bs.Case, changes: int, browser) -> list[dict]:
    ctx, pg = bs.open_case(browser, base, case, HOOK)
    out = []
    for step in range(changes):
        bs.make_change(
            pg, case, step, arm=lambda: pg.evaluate(
                "([m]) => window.__bench.arm(m, 300, 60000)", [case.metric]
            )
        )  # fmt: skip
        res = pg.evaluate("() => window.__bench.pending")
        pg.evaluate("() => window.__bench.settled(400, 60000)")
        commits = pg.evaluate("() => window.__renders.commits")
        pg.evaluate("() => { window.__renders.t0 = null; }")
        before = [c for c in commits if c["t"] <= res["metric"] + 0.5]
        after = [c for c in commits if c["t"] > res["metric"] + 0.5]
        largest = max(before, key=lambda c: c["rendered"])
        out.append(
            {
                "metric_ms": res["metric"],
                "before": len(before),
                "after": len(after),
                "rendered": sum(c["rendered"] for c in before),
                "largest": largest["rendered"],
                "total": max(c["total"] for c in commits),
                "by": largest["by"],
            }
        )
    out[-1]["elements"] = pg.evaluate(ELEMENTS)
    ctx.close()
    return out


def main() -> int:
    args = bs.tool_arguments(__doc__.splitlines()[0])
    cases = bs.pick_cases(bs.default_cases(), args.only)
    with bs.served_browser("react-renders-", bs.compare_dirs(args.compare)) as (servers, browser):
        print(
            f"{'page · scenario':<52}{'commits to metric':>18}{'after':>7}"
            f"{'rendered to metric':>19}{'largest':>9}{'components':>11}   (median per change)"
        )
        tables = []
        for case in cases:
            targets = [("minimal", servers["minimal"])] if case.server == "minimal" else [
                (label, srv) for label, srv in servers.items() if label != "minimal"
            ]  # fmt: skip
            for label, srv in targets:
                rows = measure(srv.base, case, args.changes, browser)
                name = case.name if label in ("app", "minimal") else f"{case.name} [{label}]"
                print(
                    f"{name:<52}{statistics.median(r['before'] for r in rows):>18.0f}"
                    f"{statistics.median(r['after'] for r in rows):>7.0f}"
                    f"{statistics.median(r['rendered'] for r in rows):>19.0f}"
                    f"{statistics.median(r['largest'] for r in rows):>9.0f}"
                    f"{max(r['total'] for r in rows):>11}"
                )
                tables.append((name, rows[-1]))
        for name, row in tables:
            by = collections.Counter(row["by"])
            print(
                f"\n{name}: components rendered in the largest commit before the metric, by element"
            )
            for kind, n in by.most_common(14):
                count = row["elements"].get(kind.split(" > ")[0], "")
                each = f"{n / count:5.0f} each" if count else ""
                print(f"  {n:6}  {kind:<34} {str(count):>4} on the page {each}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
