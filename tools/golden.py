"""The golden set: what the explorer shows and writes, recorded so that a change of where code
lives (not of what it does) can be shown to move nothing.

It holds, for a fixed list of cases:

- ``whatif eval --json`` of every named scenario and of a handful of variants;
- every page under AppTest, every lazy tab of it, for a few scenarios, with and without a
  pinned baseline: each element's content in order (metrics with their deltas and helps, text,
  tables, charts with their download names, download buttons with their file names and what
  they write, the sidebar's widgets and share link);
- the HTML report's text, without its timestamp, with and without a baseline.

Each element is kept as a fingerprint of its normalised content, with a short readable
summary beside it, so a difference names the case and the element. A fingerprint holds the
digest of the content's text with every floating-point number (a JSON float, or a decimal written
inside a string: a CSV cell, a chart's JSON, a table) replaced by ``#``, and those numbers in
order at 9 significant digits. Two fingerprints match when the texts are the same and each
number agrees within :data:`RTOL` (relative) or :data:`ATOL`: a least-squares fit's last digits,
which depend on the CPU's BLAS kernel, do not fail the set, and any change a user could see
does.

``python -m tools.golden --update`` records ``tests/data/golden.json`` anew (do it only for a
change that is meant to change what users see, and say so in the commit);
``python -m tools.golden --dump DIR`` writes every case's full normalised content for a diff.
``tests/test_golden.py`` checks the recorded set.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import subprocess
import sys
from pathlib import Path

from ui.lenses import PAGE_OF
from ui.lenses import PAGES as REGISTERED_PAGES

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "golden.json"

#: scenarios every page is opened with (the default, a seed, a cold-start seed, MoE, small GPU)
SCENARIOS = ["default", "seed-3b-4090", "seed-70b-fp8-cold-start", "mixtral-fp8-2xh100"]
#: query keys of a pinned baseline (the link carries it as ``base.*``)
BASELINE = {"base.scenario": "seed-70b-bf16-1xh100", "base.batch": "8"}
#: lazy tabs of each page: (session key, labels); None for a page without tabs
PAGES = {
    page.file: (page.tab_key, list(page.tabs)) if page.tabs else None
    for page in REGISTERED_PAGES
    if not page.has_tabs or page.tabs  # Measurements' tabs depend on what is loaded: below
}
#: the Measurements page with an example data set (its tabs depend on what is loaded)
MEASUREMENTS = PAGE_OF["measurements"].file
MEASURE_EXAMPLES = [
    "ex-gptoss-h100x8-tpot",
    "ex-qwen3-14b-a100-requests",
    "ex-vllm-085-warm-cache-log",
    "ex-launch-rtx5070ti",
]
#: extra CLI cases: (name, key=value overrides)
CLI_VARIANTS = [
    ("fp8-tp2-b64", ["gpus=2", "batch=64", "weights_dtype=fp8"]),
    ("ideal-eager", ["engine=ideal", "cuda_graphs=none", "batch=16"]),
    ("v0-int4", ["engine=vllm-v0", "weights_dtype=int4", "context_tokens=8192"]),
    ("sleep-runai", ["loader=runai_streamer", "storage=nvme_raid0", "sleep_level=1"]),
    ("trace-bursts", ["traffic=bursts", "rate_scale=3", "idle_timeout_s=60"]),
]
#: report cases: (name, scenario query, baseline query or None)
REPORTS = [
    ("report-default", {"scenario": "default"}, None),
    (
        "report-seed-with-baseline",
        {"scenario": "seed-3b-4090"},
        {"scenario": "seed-70b-bf16-1xh100"},
    ),
]


# ---------------------------------------------------------------------------------------------
# normalising


def _round(obj):
    """Floats to 12 significant digits, recursively (JSON-able output, for ``--dump``)."""
    if isinstance(obj, float):
        if not math.isfinite(obj):
            return repr(obj)
        return float(f"{obj:.12g}")
    if isinstance(obj, dict):
        return {str(k): _round(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_round(v) for v in obj]
    return obj


#: a chart's data revision (ui.chart_common.SpecFigure): a digest of its traces, whose numbers
#: are compared within tolerance already; its hex would change with their last bits
_REVISION = re.compile(r'("datarevision":\s*)"[0-9a-f]*"')
#: a decimal number written in text (a point or an exponent: integers stay in the text), not
#: part of a word (a hash's ``660e8`` is text)
_DECIMAL = re.compile(r"(?<![\w.])-?(?:\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)(?![\w.])")
#: how closely two recorded numbers must agree: relative, and absolute near zero
RTOL = 1e-6
ATOL = 1e-9


def _fingerprint(obj) -> dict:
    """``{"text": digest of the content with its floats as #, "num": the floats in order}``."""
    nums: list[float] = []

    def decimal(m: re.Match) -> str:
        x = float(m.group())
        if not math.isfinite(x):  # digits of a digest that read as 1e17479280536, not a number
            return m.group()
        nums.append(x)
        return "#"

    def walk(o):
        if isinstance(o, bool) or o is None or isinstance(o, int):
            return o
        if isinstance(o, float):
            if not math.isfinite(o):
                return repr(o)
            nums.append(o)
            return "#"
        if isinstance(o, str):
            return _DECIMAL.sub(decimal, _REVISION.sub(r'\1"-"', o))
        if isinstance(o, dict):
            return {str(k): walk(o[k]) for k in sorted(o, key=str) if k != "datarevision"}
        if isinstance(o, (list, tuple)):
            return [walk(v) for v in o]
        return walk(str(o))

    text = json.dumps(walk(obj), ensure_ascii=False)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    if len(nums) <= MAX_LISTED:
        return {"text": digest, "num": [float(f"{x:.9g}") for x in nums]}
    return {"text": digest, "n": len(nums), "sums": _sums(nums)}


#: an element with more numbers than this (a chart's series, a CSV) keeps weighted sums of them
MAX_LISTED = 48
#: the golden ratio's and √2's fractional steps: two weightings no reordering of numbers keeps
_STEPS = (0.6180339887498949, 0.41421356237309515)


def _sums(nums: list[float]) -> list[float]:
    """Σ wᵢ · sign(xᵢ) · ln(1 + |xᵢ| / ATOL) for two weightings wᵢ in [1, 2): each number on a
    log scale, so a change of one small number among large ones moves them as much as a change
    of a large one, by its relative size."""
    import numpy as np

    x = np.asarray(nums, dtype=float)
    y = np.copysign(np.log1p(np.abs(x) / ATOL), x)
    i = np.arange(len(x), dtype=float)
    return [round(float(((1.0 + (i * s) % 1.0) * y).sum()), 9) for s in _STEPS]


def _sums_agree(a: list[float], b: list[float], n: int) -> bool:
    """Within RTOL / 10 per number, in the same direction for all (the largest a coherent
    rounding drift of every number moves them)."""
    tol = RTOL / 10 * 2.0 * n + 1e-9
    return all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


def same(a, b) -> bool:
    """Two fingerprints (or anything holding them) agree: the same texts, numbers within
    :data:`RTOL` / :data:`ATOL`."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return False
        if "sums" in a and "text" in a:
            return (
                a["text"] == b["text"]
                and a["n"] == b["n"]
                and _sums_agree(a["sums"], b["sums"], a["n"])
            )
        if "num" in a and "text" in a:
            if a["text"] != b["text"] or len(a["num"]) != len(b["num"]):
                return False
            return all(
                x == y or abs(x - y) <= RTOL * max(abs(x), abs(y)) + ATOL
                for x, y in zip(a["num"], b["num"], strict=True)
            )
        return all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


_MADE = re.compile(r'<p class="meta"><b>Made:</b>[^<]*</p>')
_DROP = {"id", "deferredFileId", "formId", "fragmentId"}


def _dropped(obj):
    """``obj`` without the run- and checkout-dependent keys (_DROP) at any depth: a keyed
    popover's or expander's id, nested in its proto, hashes the page's path."""
    if isinstance(obj, dict):
        return {k: _dropped(v) for k, v in obj.items() if k not in _DROP}
    if isinstance(obj, list):
        return [_dropped(v) for v in obj]
    return obj


def _report_text(text: str) -> str:
    return _MADE.sub("", text)


def _deferred(file_id: str):
    """The file name and contents a deferred download button would write."""
    entry = _DEFERRED[file_id]
    name = entry["filename"] or ""
    if name.endswith(".html"):  # the report: large, timestamped; checked on its own below
        return {"file": re.sub(r"\d{8}-\d{4}", "<date>", name)}
    data = entry["callable"]()
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    return {"file": name, "data": data}


#: deferred downloads registered during a run (AppTest drops its runtime when the run ends)
_DEFERRED: dict[str, dict] = {}


def _record_deferred() -> None:
    from ui.streamlit_internals import runner_internals

    MediaFileManager = runner_internals().MediaFileManager  # noqa: N806 - a class

    if getattr(MediaFileManager.add_deferred, "_golden", False):
        return
    original = MediaFileManager.add_deferred

    def add_deferred(self, data_callable, mimetype, coordinates, file_name=None, **kw):
        file_id = original(self, data_callable, mimetype, coordinates, file_name, **kw)
        _DEFERRED[file_id] = {"callable": data_callable, "filename": file_name}
        return file_id

    add_deferred._golden = True
    MediaFileManager.add_deferred = add_deferred


def _element(node) -> dict | None:
    """One leaf element as plain data, or None for layout blocks."""
    from google.protobuf.json_format import MessageToDict

    kind = getattr(node, "type", type(node).__name__)
    proto = getattr(node, "proto", None)
    if proto is None:
        return None
    try:
        raw = MessageToDict(proto)
    except Exception:  # noqa: BLE001 - a proto the converter cannot read: its text
        raw = {"text": str(proto)}
    out = _dropped(raw)
    if kind == "plotly_chart":
        spec = json.loads(proto.spec) if proto.spec else {}
        config = json.loads(proto.config) if proto.config else {}
        out = {"spec": spec, "config": config}
    elif kind in ("arrow_data_frame", "dataframe", "table"):
        try:
            out = {"frame": node.value.to_csv(index=False)}
        except Exception:  # noqa: BLE001
            out = {"text": str(raw)[:2000]}
        out["kind"] = kind
    elif kind == "download_button" and proto.HasField("deferred_file_id"):
        out["deferred"] = _deferred(proto.deferred_file_id)
    elif "value" in dir(node) and kind not in ("markdown", "caption", "metric"):
        try:
            out["value"] = str(node.value)
        except Exception:  # noqa: BLE001
            pass
    return {"type": kind, **out}


def _summary(e: dict) -> str:
    for key in ("label", "body", "file"):
        if isinstance(e.get(key), str):
            return f"{e['type']}: {e[key][:70]}"
    if "deferred" in e:
        return f"{e['type']}: {e['deferred']['file']}"
    if "spec" in e:
        title = (e["spec"].get("layout", {}).get("title") or {}).get("text", "")
        return f"{e['type']}: {str(title)[:70]}"
    return e["type"]


def _walk(node, out: list) -> None:
    children = getattr(node, "children", None)
    if isinstance(children, dict) and children:
        for key in sorted(children):
            _walk(children[key], out)
        return
    e = _element(node)
    if e is not None:
        out.append(e)


# ---------------------------------------------------------------------------------------------
# the cases


def page_case(page: str, query: dict, tab: tuple[str, str] | None = None) -> dict:
    """Every element of one run of ``page`` (after the second run, once widgets are drawn) and
    the share link the run leaves in the URL."""
    from streamlit.testing.v1 import AppTest

    _record_deferred()
    _DEFERRED.clear()
    at = AppTest.from_file(str(ROOT / page), default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    if tab:
        at.session_state[tab[0]] = tab[1]
    at.run()
    if at.exception:
        return {"exception": [str(e.value) for e in at.exception]}
    elements: list = []
    _walk(at._tree, elements)  # noqa: SLF001 - the whole tree, sidebar included
    link = sorted((k, str(v)) for k, v in at.query_params.items())
    return {"link": link, "elements": elements}


def cli_case(args: list[str]) -> dict:
    cmd = [sys.executable, "-m", "whatif", "eval", "--json", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
    try:
        body = json.loads(done.stdout)
    except ValueError:
        body = done.stdout
    if done.returncode != 0:  # every case is a valid scenario: a refusal is a broken case
        raise RuntimeError(f"whatif eval {' '.join(args)} failed: {done.stderr.strip()}")
    return {"rc": done.returncode, "out": body, "err": done.stderr}


def report_case(query: dict, base_query: dict | None) -> dict:
    from model.overrides import resolve
    from ui.report import build_report

    s = resolve(list(query.items()), strict=True)[0]
    b = resolve(list(base_query.items()), strict=True)[0] if base_query else None
    link = "http://localhost:8501/?" + "&".join(f"{k}={v}" for k, v in query.items())
    text = build_report(s, link, baseline=b, plotly_js="/* plotly */")
    return {"text": _report_text(text)}


def cases():
    """(name, thunk) for every case of the golden set."""
    from model.presets import scenario_names

    for name in scenario_names():
        yield f"cli/{name}", lambda name=name: cli_case(["--scenario", name])
    for name, args in CLI_VARIANTS:
        sets = [a for kv in args for a in ("--set", kv)]
        yield f"cli/{name}", lambda sets=sets: cli_case(sets)
    for name, q, bq in REPORTS:
        yield name, lambda q=q, bq=bq: report_case(q, bq)
    for page, tabs in PAGES.items():
        for scen in SCENARIOS:
            for with_base in (False, True):
                if with_base and scen != SCENARIOS[0] and scen != SCENARIOS[1]:
                    continue
                if page == PAGE_OF["plan"].file and scen != "seed-3b-4090":
                    continue  # a plan sizes every preset: one small model's keeps the set quick
                query = {"scenario": scen, **(BASELINE if with_base else {})}
                if page == "pages/7_Compare.py":
                    query["vs"] = "scenario=llama-8b-1xh100"
                tag = f"{page}?{scen}{'+base' if with_base else ''}"
                if tabs is None:
                    yield tag, lambda page=page, query=query: page_case(page, query)
                    continue
                key, labels = tabs
                for label in labels:
                    yield (
                        f"{tag}#{label}",
                        lambda page=page, query=query, t=(key, label): page_case(page, query, t),
                    )
    for ex in MEASURE_EXAMPLES:
        for label in _measure_tabs(ex):
            query = {"data": ex}
            yield (
                f"{MEASUREMENTS}?{ex}#{label}",
                lambda q=query, t=(PAGE_OF["measurements"].tab_key, label): page_case(
                    MEASUREMENTS, q, t
                ),
            )


def view_labels(at, key: str) -> list[str]:
    """The labels of the page's views (``ui.views.lazy_tabs``, session key ``key``) in an
    AppTest run."""
    return [bg for bg in at.get("button_group") if bg.key == key][0].options


def _measure_tabs(example: str) -> list[str]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / MEASUREMENTS), default_timeout=120)
    at.query_params["data"] = example
    at.run()
    return view_labels(at, PAGE_OF["measurements"].tab_key)


def record(dump: Path | None = None) -> dict:
    """The golden set as ``{case: {"body": fingerprint}}``, or for a page
    ``{case: {"link": fingerprint, "elements": [[summary, fingerprint], …]}}``."""
    out = {}
    for name, thunk in cases():
        body = thunk()
        if dump is not None:
            path = dump / (re.sub(r"[^A-Za-z0-9._-]+", "_", name) + ".json")
            path.write_text(
                json.dumps(_round(body), indent=1, sort_keys=True, ensure_ascii=False, default=str)
            )
        if "elements" in body:
            entry = {
                "link": _fingerprint(body["link"]),
                "elements": [[_summary(e), _fingerprint(e)] for e in body["elements"]],
            }
        else:
            entry = {"body": _fingerprint(body)}
        out[name] = entry
    return out


#: the packages whose output the golden set records: another version may render differently
VERSIONED = ("streamlit", "plotly", "numpy", "pandas", "pydantic")


def versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in VERSIONED}


def load() -> dict:
    """The recorded golden set: ``{"versions": …, "cases": …}``."""
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


def differences(got: dict, want: dict) -> list[str]:
    """One line per case that differs: its name and the first elements that differ."""
    out = []
    for name in sorted(set(got) | set(want)):
        a, b = got.get(name), want.get(name)
        if a is not None and b is not None and same(a, b):
            continue
        if a is None or b is None:
            out.append(f"{name}: {'missing' if a is None else 'new'}")
            continue
        line = f"{name}:"
        ea, eb = a.get("elements") or [], b.get("elements") or []
        if not same(a.get("link"), b.get("link")):
            line += " the share link differs;"
        diff = [
            f"{x[0]} ≠ {y[0]}" if x[0] != y[0] else f"{x[0]}: its content differs"
            for x, y in zip(ea, eb, strict=False)
            if not same(x, y)
        ][:3]
        if len(ea) != len(eb):
            line += f" {len(ea)} elements, recorded {len(eb)};"
        out.append(line + (" " + "; ".join(str(d) for d in diff) if diff else " content differs"))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--update", action="store_true", help=f"write {GOLDEN.relative_to(ROOT)}")
    p.add_argument("--dump", type=Path, help="write each case's full content into this folder")
    a = p.parse_args(argv)
    if a.dump:
        a.dump.mkdir(parents=True, exist_ok=True)
    got = record(a.dump)
    if a.update:
        body = {"versions": versions(), "cases": got}
        GOLDEN.write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"recorded {len(got)} cases in {GOLDEN}")
        return 0
    bad = differences(got, load()["cases"] if GOLDEN.exists() else {})
    for line in bad:
        print("differs:", line)
    print(f"{len(got)} cases, {len(bad)} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
