"""Does one session's heavy Serving link slow another session's Serving page? (issue 40, R1)

The victim opens the Serving page for a scenario nobody computed yet (the default scenario with
a fresh ``seed``, so the cache never answers) and is timed from the page's start to its last
element, alone and while 1 and 4 attacking sessions keep the workers busy. Each attacker loops
over fresh seeds of one link:

* ``repro``: the issue's reproducer, ``/Serving?max_num_batched_tokens=1&seed=N`` (now refused
  from its predicted size before it runs), and
* ``heavy``: the heaviest kind of link the server still accepts,
  ``/Serving?max_num_batched_tokens=16&num_requests=300&seed=N`` (about 5,000,000 steps'
  worth of work, ~6 s of one core here), which runs in the heavy lane.

Two ways: ``server`` runs every session as a thread of this process asking the workers for
the lens as a page does (:func:`ui.serving_worker.compute`; the workers are this process's, as
on the team server, each thread a session of its own); ``browser`` starts ``streamlit run app.py`` and
opens the attackers and the victim as Chromium tabs, timing the victim from navigation to its
headline metric. The goal is the victim's median within 1.5x of its time alone. The browser
way ends with a control: four tabs opening the landing page at the same moment, what any four
page loads cost the victim on this machine (2026-12-07, two cores: 2.0x, the same as four tabs
of the refused reproducer).

    .venv/bin/python -m benchmarks.serving_fairness [--rounds 5] [--only server|browser]
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ATTACKS = {
    "repro": {"max_num_batched_tokens": "1"},
    "heavy": {"max_num_batched_tokens": "16", "num_requests": "300"},
}
_seeds = itertools.count(910_000)
#: an attacking session's pause between its runs: 20 page runs a second, faster than any
#: tab reruns a page (a refused link's check costs ~1 ms in the server's thread)
PACE_S = 0.05


def _scenario(link: dict):
    from model.overrides import resolve

    pairs = [*link.items(), ("seed", str(next(_seeds)))]
    return resolve(pairs)[0]


def victim_once() -> float:
    """One fresh Serving lens computation as the page asks for it (the worker API)."""
    from ui import serving_worker

    s = _scenario({})
    t = time.perf_counter()
    r = serving_worker.compute(s)
    took = time.perf_counter() - t
    assert r.get("fits"), r.get("reason")
    return took


def attacker(stop: threading.Event, link: dict, done: list) -> None:
    from ui import serving_worker

    while not stop.is_set():  # each thread is a session of its own (its thread id)
        serving_worker.compute(_scenario(link))
        done.append(1)
        time.sleep(PACE_S)


def server(rounds: int) -> None:
    victim_once()  # start the workers and import everything once
    alone = [victim_once() for _ in range(rounds)]
    base = statistics.median(alone)
    print(f"server side (worker API), victim alone: median {base:.2f} s, worst {max(alone):.2f} s")
    for name, link in ATTACKS.items():
        for n in (1, 4):
            stop, done = threading.Event(), []
            threads = [
                threading.Thread(target=attacker, args=(stop, link, done), daemon=True)
                for _ in range(n)
            ]
            for th in threads:
                th.start()
            time.sleep(1.0)  # the attackers' runs are under way
            runs = [victim_once() for _ in range(rounds)]
            stop.set()
            for th in threads:
                th.join(600)
            med = statistics.median(runs)
            print(
                f"  {n} x {name:5s}: median {med:.2f} s ({med / base:.2f}x alone), "
                f"worst {max(runs):.2f} s; attacker runs meanwhile: {len(done)}"
            )
    again = [victim_once() for _ in range(rounds)]
    print(f"  alone again: median {statistics.median(again):.2f} s, worst {max(again):.2f} s")


def browser(rounds: int) -> None:
    from benchmarks.browser_speed import served_browser

    headline = '[data-testid="stMetric"]'

    def open_victim(pg, base_url) -> float:
        t = time.perf_counter()
        pg.goto(f"{base_url}/Serving?seed={next(_seeds)}", wait_until="commit")
        pg.locator(headline).first.wait_for(state="visible", timeout=600_000)
        return time.perf_counter() - t

    with served_browser("fairness-") as (servers, chromium):
        base_url = servers["app"].base
        ctx = chromium.new_context(viewport={"width": 1440, "height": 1000})
        victim = ctx.new_page()
        open_victim(victim, base_url)  # the server's first run
        alone = [open_victim(victim, base_url) for _ in range(rounds)]
        base = statistics.median(alone)
        print(f"Chromium, victim alone: median {base:.2f} s, worst {max(alone):.2f} s")

        def beside(n: int, url, label: str) -> None:
            """The victim's page while ``n`` tabs open ``url()`` (a fresh one each round)."""
            tabs = [ctx.new_page() for _ in range(n)]
            runs = []
            for _ in range(rounds):
                for tab in tabs:
                    tab.goto(url(), wait_until="commit")
                time.sleep(0.5)
                runs.append(open_victim(victim, base_url))
            for tab in tabs:
                tab.close()
            med = statistics.median(runs)
            print(
                f"  {label}: median {med:.2f} s ({med / base:.2f}x alone), worst {max(runs):.2f} s"
            )

        for name, link in ATTACKS.items():
            query = "&".join(f"{k}={v}" for k, v in link.items())
            for n in (1, 4):  # a fresh heavy run in every attacking tab
                beside(
                    n,
                    lambda q=query: f"{base_url}/Serving?{q}&seed={next(_seeds)}",
                    f"{n} x {name:5s}",
                )
        # the control: four tabs opening the landing page at the same moment, the cost of any
        # four page loads beside the victim's (on a small machine the browsers' own rendering)
        beside(4, lambda: f"{base_url}/", "control, 4 tabs opening Home")
        again = [open_victim(victim, base_url) for _ in range(rounds)]
        print(f"  alone again: median {statistics.median(again):.2f} s, worst {max(again):.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", choices=("server", "browser"))
    args = ap.parse_args()
    print(f"{os.cpu_count()} CPUs; python {sys.version.split()[0]}")
    if args.only in (None, "server"):
        server(args.rounds)
    if args.only in (None, "browser"):
        browser(args.rounds)


if __name__ == "__main__":
    main()
