"""Which GPU and how many (issue 43, section 1): the plan's rows against the Serving lens's own
capacity, the pruning against an exhaustive search, prices × GPUs, and bad input."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

from model import plan, serving
from model.errors import ScenarioError
from model.overrides import resolve

ROOT = Path(__file__).resolve().parents[1]
#: a small scenario: Llama 3.1 8B, 300 requests per capacity run, at 4 req/s
BASE = [
    ("model", "llama-3.1-8b"),
    ("gpus", "1"),
    ("weights_dtype", "bf16"),
    ("request_rate", "4"),
    ("num_requests", "300"),
]
HW = ["h100-sxm", "l4", "a100-80gb"]


def _s(*pairs):
    return resolve([*BASE, *pairs], strict=True)[0]


@pytest.fixture(scope="module")
def planned():
    return plan.plan(_s(), hardware=HW)


def test_a_plan_row_is_the_serving_lenss_capacity_at_the_rate(planned):
    assert planned["plans"], planned["unfit"]
    for p in planned["plans"]:
        query = urlsplit(p["link"]).query
        s = resolve(parse_qsl(query), strict=True)[0]
        assert s.hardware.id == p["hardware"] and s.gpus == p["tensor_parallel"]
        assert s.weights_dtype == p["weights_dtype"]
        cap = serving.capacity(s)  # what the Serving page shows for the link
        assert cap["replicas_needed"] == p["replicas"]
        assert cap["gpus_needed"] == p["gpus_total"]
        # the replicas hold the SLO at the rate: each gets rate / replicas
        assert serving.meets_at(s, 4.0 / p["replicas"])
        # prices × GPUs = $/hour; the money per output token follows from the rate
        assert p["usd_per_hour"] == pytest.approx(p["gpus_total"] * p["usd_per_gpu_hour"])
        tokens_per_h = 4.0 * s.output_tokens * 3600
        assert p["usd_per_million_output_tokens"] == pytest.approx(
            p["usd_per_hour"] / tokens_per_h * 1e6
        )
        assert p["output_tokens_per_s_per_gpu"] == pytest.approx(
            4.0 * s.output_tokens / p["gpus_total"]
        )
    costs = [p["usd_per_hour"] for p in planned["plans"]]
    assert costs == sorted(costs)


def test_pruning_finds_what_an_exhaustive_search_finds(planned):
    s = _s()
    rate = 4.0
    prices = plan.prices(None, s)
    for hw in HW:
        best = math.inf
        for r in plan.runs(s, [hw]):
            if r.reason is not None:
                continue
            try:
                per = serving.max_rate(r.s)["max_request_rate"]
            except serving.DoesNotFit:
                continue
            if per > 0:
                best = min(best, math.ceil(rate / per - 1e-9) * r.s.replica_gpus * prices[hw])
        found = [p for p in planned["plans"] if p["hardware"] == hw]
        if math.isinf(best):
            assert not found
        else:
            assert found and found[0]["usd_per_hour"] == pytest.approx(best), hw


def test_the_bound_never_prunes_a_configuration_that_could_serve():
    s = _s()
    for r in plan.runs(s, HW):
        plan.bound(r, 4.0, 1.0)
        if r.reason is not None or r.s is None:
            continue
        sat = serving.max_rate(r.s)["saturation_request_rate"]
        assert r.rate_bound >= sat * (1 - 1e-9), (r.hardware, r.tensor_parallel, r.weights_dtype)


def test_a_named_scenario_stays_the_base_of_every_run():
    s = resolve([("scenario", "llama-8b-1xh100"), ("request_rate", "4")], strict=True)[0]
    runs = plan.runs(s, ["h100-sxm", "l4"])
    assert all(r.s.model.id == "llama-3.1-8b" for r in runs if r.s is not None)
    out = plan.plan(s, hardware=["h100-sxm"])
    (p,) = out["plans"]
    reopened = resolve(parse_qsl(urlsplit(p["link"]).query), strict=True)[0]
    assert reopened.model.id == "llama-3.1-8b" and reopened.scenario == "llama-8b-1xh100"


def test_a_slo_no_preset_meets_lists_the_closest():
    out = plan.plan(_s(("tpot_slo_ms", "1")), hardware=["h100-sxm", "l4"])
    assert out["plans"] == []
    assert {u["hardware"] for u in out["unfit"]} == {"h100-sxm", "l4"}
    for u in out["unfit"]:
        assert "TPOT" in u["reason"] and u["closest"]["tpot_ms"] > 1


def test_a_model_that_fits_nowhere_says_why():
    out = plan.plan(
        resolve([("model", "llama-3.1-405b"), ("request_rate", "1")], strict=True)[0],
        hardware=["rtx-4090"],
    )
    assert out["plans"] == [] and out["unfit"][0]["reason"]
    assert "8×" in out["unfit"][0]["reason"]  # the widest layout's reason, not one GPU's


@pytest.mark.parametrize(
    ("overrides", "key"),
    [({"h100-sxm": 0.0}, "price"), ({"h100-sxm": -1.0}, "price"), ({"nope": 1.0}, "price")],
)
def test_bad_prices_are_refused_by_name(overrides, key):
    with pytest.raises(ScenarioError) as err:
        plan.prices(overrides)
    assert err.value.key == key


def test_an_infinite_rate_cannot_be_planned():
    with pytest.raises(ScenarioError) as err:
        plan.target_rate(_s(("request_rate", "inf")))
    assert err.value.key == "request_rate"


def test_a_price_override_moves_the_cost():
    s = _s()
    a = plan.plan(s, hardware=["h100-sxm"])["plans"][0]
    b = plan.plan(s, hardware=["h100-sxm"], price_overrides={"h100-sxm": 1.0})["plans"][0]
    assert b["usd_per_hour"] == pytest.approx(a["gpus_total"] * 1.0)


def test_cli_plan_json_contract():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "whatif", "plan", "--json", "--jobs", "1"]
    for k, v in BASE:
        cmd += ["--set", f"{k}={v}"]
    cmd += ["--hardware", "h100-sxm", "--hardware", "l4", "--price", "h100-sxm=2"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    keys = {
        "hardware",
        "gpus",
        "replicas",
        "gpus_total",
        "weights_dtype",
        "max_num_seqs",
        "usd_per_hour",
        "usd_per_million_output_tokens",
        "output_tokens_per_s_per_gpu",
        "link",
    }
    assert out["plans"] and keys <= set(out["plans"][0])
    h100 = [p for p in out["plans"] if p["hardware"] == "h100-sxm"][0]
    assert h100["usd_per_hour"] == pytest.approx(2 * h100["gpus_total"])


@pytest.mark.parametrize(
    "args",
    [
        ["--set", "request_rate=inf"],
        ["--set", "request_rate=1e-320"],
        ["--set", "request_rate=1e-9"],
        ["--set", "request_rate=0"],
        ["--price", "h100-sxm=0"],
        ["--price", "h100-sxm"],
        ["--hardware", "nope"],
        ["--jobs", "0"],
    ],
)
def test_cli_plan_bad_input_is_one_line_and_exit_2(args):
    done = subprocess.run(
        [sys.executable, "-m", "whatif", "plan", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("whatif: error:")


def test_plan_page_fills_its_table(monkeypatch):
    from tests.pages import open_page

    monkeypatch.setenv("WHATIF_SERVING_INLINE", "1")
    at = open_page(
        "pages/8_Plan.py",
        pairs=[*BASE, ("tpot_slo_ms", "40")],
        timeout=600,
    )
    labels = {m.label: m.value for m in at.metric}
    assert "Cheapest GPU" in labels and float(labels["USD per hour"]) > 0
    assert len(at.dataframe) >= 1


def test_plan_page_says_why_an_infinite_rate_has_no_plan():
    from tests.pages import open_page

    at = open_page("pages/8_Plan.py", pairs=[*BASE[:-2], ("request_rate", "inf")])
    assert any("finite rate" in w.value for w in at.warning)


def test_a_mixture_of_experts_is_also_planned_as_data_parallel_ranks_with_ep():
    s = resolve([("model", "qwen3-30b-a3b"), ("gpus", "1"), ("request_rate", "20")], strict=True)[0]
    assert {(1, 2, True), (1, 4, True), (1, 8, True)} <= set(plan.layouts(s))
    runs = plan.runs(s, ["l40s"])
    assert any(r.data_parallel == 4 and r.expert_parallel and r.reason is None for r in runs)
    out = plan.plan(s, hardware=["l40s"])
    (p,) = out["plans"]
    assert p["layout"] == plan.layout_name(
        p["tensor_parallel"], p["data_parallel"], p["expert_parallel"]
    )
    assert p["gpus"] == p["tensor_parallel"] * p["data_parallel"]
    # a dense model keeps tensor parallel alone
    assert plan.layouts(_s()) == [(1, 1, False), (2, 1, False), (4, 1, False), (8, 1, False)]


def test_a_trace_plans_for_its_busiest_hour(tmp_path):
    from model.readers.traces import read_trace_text

    # two hours: 360 requests in the first, 1,800 in the second (0.5 req/s at its peak)
    arrivals = [i * 10.0 for i in range(360)] + [3600.0 + i * 2.0 for i in range(1800)]
    text = "arrival_s\n" + "".join(f"{a}\n" for a in arrivals)
    trace = read_trace_text(text, "two-hours.csv")
    assert plan.trace_rate(trace) == pytest.approx(1800 / 3600, rel=1e-3)
    # replayed twice as fast, both parts fall within one hour: all 2,160 requests in 3,599 s
    assert plan.trace_rate(trace, rate_scale=2.0) == pytest.approx(2160 / 3599, rel=1e-3)
    short = read_trace_text("arrival_s\n0\n1\n2\n3\n4\n", "short.csv")
    assert plan.trace_rate(short) == pytest.approx(5 / 4)
    path = tmp_path / "two-hours.csv"
    path.write_text(text)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "whatif",
            "plan",
            "--json",
            "--jobs",
            "1",
            "--trace",
            str(path),
            "--hardware",
            "h100-sxm",
            *[a for k, v in BASE for a in ("--set", f"{k}={v}")],
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["request_rate"] == pytest.approx(0.5, rel=1e-3)


def test_on_a_shared_server_nothing_past_its_budget_runs(monkeypatch):
    """A link that makes every search expensive (one-token prefill chunks) costs the server
    no simulation: every run is refused by the budget before its first check."""
    monkeypatch.setattr(serving, "SERVER_BUDGET", True)
    calls = []
    monkeypatch.setattr(serving, "meets_at", lambda *a: calls.append(a) or True)
    s = _s(("max_num_batched_tokens", "1"), ("ttft_slo_ms", "100000"))
    row = plan.hardware_plan(s, "h100-sxm", 4.0, 1.0, search=lambda x: calls.append(x))
    assert calls == [] and row["searches"] == 0 and row["checks"] == 0
    assert "budget" in row["reason"]


@pytest.mark.parametrize(
    "pairs",
    [
        [("request_rate", "1e-320")],
        [("rate_scale", "0.000001"), ("request_rate", "1")],
        [("max_num_batched_tokens", "1")],
        [("model.name", "<b>x</b> [a](javascript:alert(1))")],
    ],
)
def test_plan_page_survives_hostile_links(pairs):
    from tests.pages import open_page

    at = open_page("pages/8_Plan.py", pairs=[*BASE[:2], *pairs], timeout=300)
    assert not at.exception


def test_the_levers_are_tried_against_the_scenarios_own_setting():
    dense = _s()
    assert plan.levers(dense) == [(), (("disaggregated", "true"),)]
    spec = _s(("speculative", "eagle3"))
    assert (("speculative", "none"),) in plan.levers(spec)
    r1 = resolve([("model", "deepseek-r1"), ("hardware", "h200"), ("gpus", "8")], strict=True)[0]
    assert (("speculative", "mtp"),) in plan.levers(r1)
    runs = plan.runs(r1, ["mi300x"])
    # no data-parallel layout is disaggregated; every lever run names what it turned
    assert not any(r.data_parallel > 1 and ("disaggregated", "true") in r.levers for r in runs)
    mtp = [r for r in runs if ("speculative", "mtp") in r.levers and r.s is not None]
    assert mtp and all(r.s.speculative == "mtp" for r in mtp)
    out = plan.plan(
        resolve([*BASE, ("speculative", "eagle3")], strict=True)[0], hardware=["h100-sxm"]
    )
    (p,) = out["plans"]
    assert p["levers"] == plan.lever_name(
        resolve(parse_qsl(urlsplit(p["link"]).query), strict=True)[0]
    )
