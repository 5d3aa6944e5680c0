"""Count the DOM walks a widget change sets off in Chromium, and what their filters cost.

    .venv/bin/python benchmarks/dom_walks.py [--changes 4] [--only "Launch overhead"]
        [--compare base=/path/to/another/checkout]

Why it exists (issue 22): a CPU profile of a change on the Launch overhead page showed
react-aria's ``useHasTabbableChild`` (the tab panel of ``st.tabs``) walking the open panel's
DOM with a ``TreeWalker`` after every render and on every mutation inside the panel, calling
``checkVisibility`` on each node until it found a focusable one: through the Plotly charts'
SVG, that was 22,000-29,000 nodes and 30-56 ms of filter time per change, on the main thread,
before and around the headline metric's render. This script makes that visible for any page:
it wraps ``document.createTreeWalker`` in the page (before Streamlit loads), makes the
browser_speed cases' widget change, and reports per change the walks, the nodes their filters
saw and the filters' time, by the walk's root (its ``data-testid``).

Uses ``browser_speed``'s servers and cases; a benchmark, not a test.
"""

from __future__ import annotations

import collections
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import browser_speed as bs  # noqa: E402

WRAP_WALKER = """
window.__walks = [];
(() => {
  const orig = Document.prototype.createTreeWalker;
  Document.prototype.createTreeWalker = function (root, what, filter) {
    const name = (root && root.getAttribute && (root.getAttribute('data-testid')
                  || root.tagName)) || String(root && root.nodeName);
    const rec = {root: name, nodes: 0, ms: 0};
    window.__walks.push(rec);
    let wrapped = filter;
    if (filter && filter.acceptNode) {
      const accept = filter.acceptNode.bind(filter);
      wrapped = {acceptNode(node) {
        const t0 = performance.now(); rec.nodes++;
        const r = accept(node); rec.ms += performance.now() - t0; return r;
      }};
    }
    return orig.call(this, root, what, wrapped);
  };
})();
"""


def measure(base: str, case: bs.Case, changes: int, browser) -> list[dict]:
    ctx, pg = bs.open_case(browser, base, case, WRAP_WALKER)
    out = []
    for step in range(changes):
        pg.evaluate("() => { window.__walks = []; }")
        bs.make_change(pg, case, step)
        time.sleep(0.2)
        pg.evaluate("() => window.__bench.settled(400, 60000)")
        walks = pg.evaluate("() => window.__walks")
        by_root = collections.Counter()
        for w in walks:
            by_root[w["root"]] += w["nodes"]
        out.append(
            {
                "walks": len(walks),
                "nodes": sum(w["nodes"] for w in walks),
                "ms": sum(w["ms"] for w in walks),
                "roots": dict(by_root),
            }
        )
    ctx.close()
    return out


def main() -> int:
    args = bs.tool_arguments(__doc__.splitlines()[0])
    cases = [c for c in bs.pick_cases(bs.default_cases(), args.only) if c.server == "app"]
    with bs.served_browser("dom-walks-", bs.compare_dirs(args.compare), minimal=False) as (
        servers,
        browser,
    ):
        print(
            f"{'page · scenario':<52}{'walks':>7}{'nodes':>9}{'filter ms':>11}"
            "  (median per change)  nodes by walk root"
        )
        for case in cases:
            for label, srv in servers.items():
                rows = measure(srv.base, case, args.changes, browser)
                name = case.name if label == "app" else f"{case.name} [{label}]"
                roots = collections.Counter()
                for r in rows:
                    roots.update(r["roots"])
                top = ", ".join(f"{k}: {v // len(rows)}" for k, v in roots.most_common(3))
                print(
                    f"{name:<52}{statistics.median(r['walks'] for r in rows):>7.0f}"
                    f"{statistics.median(r['nodes'] for r in rows):>9.0f}"
                    f"{statistics.median(r['ms'] for r in rows):>11.1f}  {top}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
