"""Scale to zero (SPEC 4.4): the hand cases, a hand-built trace counted by hand, the Poisson
replay agreeing with the analytic model, and the properties the issue names."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.cold_start import cold_start
from model.economics import _strategies, economics, poisson_hour, replay, service_of
from model.overrides import resolve


def scenario(**extra):
    s, _ = resolve(extra)
    return s


def test_hand_case_poisson_one_per_minute():
    # λ = 1/min, T = 5 min, C = 28 s: 1440·e^(−5) ≈ 9.70 cold starts a day (the case)
    miss, up, delayed = poisson_hour(1 / 60, 300.0, 28.0)
    assert miss * 86400 == pytest.approx(1440 * np.exp(-5), rel=1e-9)
    assert miss * 86400 == pytest.approx(9.70, abs=0.01)
    assert up == pytest.approx((1 - np.exp(-5)) + (1 / 60) * np.exp(-5) * 28)
    assert delayed * 86400 == pytest.approx(1440 * np.exp(-5) * (1 + 28 / 60))


def test_hand_built_trace_is_counted_by_hand():
    a = np.array([0, 10, 20, 1000, 1005, 5000], float)
    r = replay(a, 2.0, T=300.0, C=28.0, horizon_s=6000.0)
    assert r["cold"].tolist() == [True, False, False, True, False, True]
    assert r["wait_s"].tolist() == pytest.approx([28, 18, 8, 28, 23, 28])
    # up: 0 → 30 + 300, 1000 → 1030 + 300, 5000 → 5030 + 300
    assert r["up_s"] == pytest.approx(990.0)


def test_a_start_that_delays_requests_can_close_the_next_gap():
    # without the 28 s start the gap before 335 would be 335 − 2 = 333 > 300; with it the
    # requests end at 30, so the gap is 305 > 300: still a start. At 325 it is 295: no start.
    r = replay(np.array([0.0, 325.0]), 2.0, T=300.0, C=28.0, horizon_s=1000.0)
    assert r["cold"].tolist() == [True, False]
    assert r["wait_s"].tolist() == pytest.approx([28, 0])


def test_poisson_replay_agrees_with_the_analytic_model_within_sampling_error():
    rng = np.random.default_rng(7)
    lam, T, C, days = 1 / 120, 240.0, 20.0, 60
    gaps = rng.exponential(1 / lam, int(lam * days * 86400 * 1.2))
    a = np.cumsum(gaps)
    a = a[a < days * 86400]
    r = replay(a, 0.01, T=T, C=C, horizon_s=days * 86400)  # service ≪ 1/λ, as the model assumes
    miss, up, delayed = poisson_hour(lam, T, C)
    expected = miss * days * 86400
    assert abs(r["cold"].sum() - expected) < 4 * np.sqrt(expected)
    assert r["up_s"] / (days * 86400) == pytest.approx(float(up), rel=0.03)
    exp_delayed = delayed * days * 86400
    assert abs(np.sum(r["wait_s"] > 0) - exp_delayed) < 4 * np.sqrt(exp_delayed)


arrivals = st.lists(st.floats(0, 20000, allow_nan=False), min_size=1, max_size=60).map(sorted)


@settings(max_examples=60, deadline=None)
@given(a=arrivals, t1=st.floats(1, 2000), t2=st.floats(1, 2000), c=st.floats(0, 120))
def test_a_longer_idle_timeout_never_adds_cold_starts(a, t1, t2, c):
    lo, hi = sorted((t1, t2))
    a = np.array(a)
    assert replay(a, 1.0, hi, c, 20000)["cold"].sum() <= replay(a, 1.0, lo, c, 20000)["cold"].sum()


@settings(max_examples=60, deadline=None)
@given(a=arrivals, c1=st.floats(0, 300), c2=st.floats(0, 300), t=st.floats(1, 2000))
def test_a_shorter_cold_start_never_makes_anyone_wait_longer(a, c1, c2, t):
    # (its GPU time can be longer: a longer start may bridge a gap that a short one leaves
    # open, and the replica then stops and starts again, as a real autoscaler would)
    lo, hi = sorted((c1, c2))
    a = np.array(a)
    fast, slow = replay(a, 1.0, t, lo, 20000), replay(a, 1.0, t, hi, 20000)
    assert fast["wait_s"].max() <= slow["wait_s"].max() + 1e-9


@settings(max_examples=40, deadline=None)
@given(
    rates=st.lists(st.floats(0, 5000), min_size=24, max_size=24),
    c1=st.floats(0, 600),
    c2=st.floats(0, 600),
    t=st.floats(1, 3600),
)
def test_in_the_analytic_model_a_shorter_cold_start_never_costs_more(rates, c1, c2, t):
    lo, hi = sorted((c1, c2))
    s = scenario(idle_timeout_s=t)
    svc = service_of(s)
    lam = np.array(rates) / 3600
    fast = _strategies(s, svc, lam, lo, only="scale_to_zero")["scale_to_zero"]
    slow = _strategies(s, svc, lam, hi, only="scale_to_zero")["scale_to_zero"]
    assert fast["total_usd_per_day"] <= slow["total_usd_per_day"] + 1e-9


@pytest.mark.parametrize("traffic", ["steady", "business-hours", "bursts", "spiky-internal"])
def test_a_warm_floor_never_makes_anyone_wait(traffic):
    e = economics(scenario(traffic=traffic))
    warm = e["warm"]
    assert warm["cold_starts_per_day"] == 0 and warm["worst_wait_s"] == 0
    assert warm["sla_misses_per_day"] == 0 and warm["delayed_requests_per_day"] == 0


def test_economics_section_has_the_spec_layout():
    e = economics(scenario())
    for k in ("warm", "scale_to_zero", "scale_to_zero_optimised", "prewarm", "sleep"):
        assert set(e[k]) == {
            "gpu_hours_per_day",
            "cost_usd_per_day",
            "cold_starts_per_day",
            "delayed_requests_per_day",
            "p99_wait_s",
            "worst_wait_s",
            "sla_misses_per_day",
            "total_usd_per_day",
        }
    assert e["recommended"] in (
        "warm",
        "scale_to_zero",
        "scale_to_zero_optimised",
        "prewarm",
        "sleep",
    )
    assert {"break_even_cold_start_s", "cold_start_s", "requests_per_day"} <= set(e)


def test_cold_start_comes_from_the_cold_start_lens_so_a_warm_compile_cache_moves_it():
    cold = economics(scenario())
    cached = economics(scenario(compile_cache=True))
    assert cached["cold_start_s"] < cold["cold_start_s"]
    assert cached["cold_start_s"] == pytest.approx(
        cold_start(scenario(compile_cache=True))["total_s"]
    )


def test_a_trace_starts_with_the_replica_up_as_the_traffic_before_it_left_it():
    # up at 0: a request within T of the start is served warm; one after T finds it stopped
    assert replay(np.array([100.0]), 1.0, 300, 28, 1000, up_at_start=True)["cold"].tolist() == [
        False
    ]
    r = replay(np.array([400.0]), 1.0, 300, 28, 1000, up_at_start=True)
    assert r["cold"].tolist() == [True] and r["wait_s"].tolist() == [28.0]
    assert r["up_s"] == pytest.approx(300 + (429 - 400) + 300)  # 0 → 300, 400 → 429 + T


def test_replaying_a_trace_through_the_cli_counts_what_a_hand_count_gives(tmp_path, capsys):
    import json

    from whatif.cli import main

    f = tmp_path / "t.csv"
    f.write_text("arrival_s,input_tokens,output_tokens\n0,10,1\n10,10,1\n1000,10,1\n5000,10,1\n")
    code = main(
        ["eval", "--trace", str(f), "--json", "--set", "idle_timeout_s=300", "--set", "sla_s=5"]
    )
    e = json.loads(capsys.readouterr().out)["economics"]
    assert code == 0
    assert e["trace"] == {"requests": 4, "span_s": 5000.0, "rows_refused": 0}
    # up at 0 serves the requests at 0 and 10; 1000 and 5000 each find it stopped: 2 starts in
    # 5000 s, so 2 × 86400 / 5000 per day
    assert e["scale_to_zero"]["cold_starts_per_day"] == pytest.approx(2 * 86400 / 5000)
    assert e["scale_to_zero"]["worst_wait_s"] == pytest.approx(e["cold_start_s"])


@pytest.mark.parametrize("name", ["azure_midnight.csv", "burstgpt.csv", "burstgpt_sessions.csv"])
def test_every_trace_format_replays_through_the_cli(name, capsys):
    import json
    from pathlib import Path

    from whatif.cli import main

    path = Path(__file__).resolve().parent / "data" / "traces" / name
    assert main(["eval", "--trace", str(path), "--json"]) == 0
    e = json.loads(capsys.readouterr().out)["economics"]
    assert e["trace"]["requests"] > 0 and e["recommended"]


def test_a_bad_trace_is_one_line_and_status_2(tmp_path, capsys):
    from whatif.cli import main

    f = tmp_path / "bad.csv"
    f.write_text("when,what\n1,2\n")
    assert main(["eval", "--trace", str(f), "--json"]) == 2
    err = capsys.readouterr().err
    assert "bad.csv" in err and len(err.strip().splitlines()) == 1


@settings(max_examples=25, deadline=None)
@given(
    traffic=st.sampled_from(["steady", "business-hours", "bursts", "nightly-batch"]),
    scale=st.floats(0.01, 50.0),
    sla=st.floats(1.0, 600.0),
    prewarm=st.sampled_from(["", "8-18", "22-6"]),
)
def test_a_sweep_in_one_call_is_the_sweep_point_by_point(traffic, scale, sla, prewarm):
    # the Scale to zero page's idle-timeout and cold-start sweeps are one vectorised call each
    # (developers' guide: a sweep is one call, not a Python loop); each point must be what the
    # scalar call for that point gives, every strategy and every figure
    from model.economics import TIMEOUT_GRID_S, profile_rates

    s = scenario(traffic=traffic, rate_scale=scale, sla_s=sla, prewarm_hours=prewarm)
    svc = service_of(s)
    lam = profile_rates(s)
    grid_c = np.linspace(0.0, 900.0, 7)
    for only in ("warm", "scale_to_zero", "scale_to_zero_optimised", "prewarm", "sleep"):
        by_t = _strategies(s, svc, lam, only=only, T=TIMEOUT_GRID_S)[only]
        by_c = _strategies(s, svc, lam, grid_c, only=only)[only]
        for i, T in enumerate(TIMEOUT_GRID_S):
            one = _strategies(s, svc, lam, only=only, T=float(T))[only]
            for key, value in one.items():
                if key != "_timeline":
                    assert np.broadcast_to(by_t[key], len(TIMEOUT_GRID_S))[i] == value, key
        for i, C in enumerate(grid_c):
            one = _strategies(s, svc, lam, float(C), only=only)[only]
            for key, value in one.items():
                if key != "_timeline":
                    assert np.broadcast_to(by_c[key], len(grid_c))[i] == value, key


@pytest.mark.parametrize("name", ["default", "seed-70b-fp8-cold-start", "llama-8b-1xh100"])
def test_p99_wait_is_taken_over_the_whole_days_requests(name):
    """Under 1 % of the day's requests delayed means a p99 wait of 0 for every strategy;
    pre-warm (fewer delayed requests than scale to zero) never shows a larger p99 (it showed
    115 s against scale to zero's 0 s, its percentile taken over the night's requests only)."""
    from model.economics import economics_lens

    s = resolve([("scenario", name)], strict=True)[0]
    eco = economics_lens(s)["figures"]
    day = eco["requests_per_day"]
    for key in ("scale_to_zero", "scale_to_zero_optimised", "prewarm", "sleep"):
        if eco[key]["delayed_requests_per_day"] < 0.01 * day:
            assert eco[key]["p99_wait_s"] == 0.0, (key, eco[key])
    if (
        eco["prewarm"]["delayed_requests_per_day"]
        <= eco["scale_to_zero"]["delayed_requests_per_day"]
    ):
        assert eco["prewarm"]["p99_wait_s"] <= eco["scale_to_zero"]["p99_wait_s"] + 1e-9


@pytest.mark.parametrize("name", ["default", "seed-70b-fp8-cold-start", "llama-8b-1xh100"])
def test_the_penalty_flips_are_where_the_recommendation_changes(name):
    from model.economics import economics

    s = resolve([("scenario", name)], strict=True)[0]
    eco = economics(s)
    for side, factor in (("up", 1.05), ("down", 0.95)):
        at = eco[f"penalty_flip_{side}_usd"]
        if at is None:
            continue
        if at > 1e-3:
            before = resolve(
                [("scenario", name), ("sla_penalty_usd", f"{at / factor:.6g}")], strict=True
            )[0]
            assert economics(before)["recommended"] == eco["recommended"]
        after = resolve(
            [("scenario", name), ("sla_penalty_usd", f"{at * factor:.6g}")], strict=True
        )[0]
        assert economics(after)["recommended"] == eco[f"penalty_flip_{side}_to"]
