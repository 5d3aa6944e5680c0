"""Prefill/decode disaggregation (issue 42, section 2): the replica's GPUs, the KV transfer
(hand-calculated from the model's KV bytes and the interconnect), the two pools' engines (a
request's TTFT is the prefill instance's part, the transfer and the decode instance's first
step), the lean prefill loop against the general simulator, capacity and the best split, the
Pareto points, the keys' bad input and the page. Expected values are hand calculations or the
scenario's own one-engine figures."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from model import disagg, serving
from model.errors import ScenarioError
from model.units import MS


def test_replica_gpus_count_both_pools(scenario):
    assert scenario().replica_gpus == 4
    s = scenario(disaggregated="true", prefill_gpus=2, decode_gpus=4, decode_instances=2)
    assert s.replica_gpus == 2 * 1 + 4 * 2
    # auto GPUs per instance are the scenario's gpus
    assert scenario(disaggregated="true", gpus=2, prefill_instances=3).replica_gpus == 2 * 3 + 2
    # set but off: one engine of gpus
    assert scenario(prefill_instances=3).replica_gpus == 4


def test_kv_transfer_rate_and_time_by_hand(scenario):
    # Llama 3.1 70B, BF16 KV: 80 layers × 8 KV heads × 128 × 2 (K, V) × 2 B = 327,680 B/token
    s = scenario(disaggregated="true", kv_dtype="bf16")
    # 8 GPUs: one node; min(4, 4, 8 KV heads over 4 ranks) = 4 ranks × 450 GB/s NVLink
    assert disagg.transfer_rate_b_s(s) == pytest.approx(4 * 450e9)
    assert float(disagg.transfer_bytes(s, 1024)) == pytest.approx(1024 * 327_680)
    assert float(disagg.transfer_s(s, 1024)) == pytest.approx(1024 * 327_680 / 1.8e12)
    # 12 GPUs cross nodes: a 400 Gb/s NIC per rank
    far = scenario(disaggregated="true", kv_dtype="bf16", decode_instances=2)
    assert disagg.transfer_rate_b_s(far) == pytest.approx(4 * 50e9)
    # ranks: the fewer of the two pools' GPUs
    assert disagg.transfer_rate_b_s(
        scenario(disaggregated="true", prefill_gpus=2)
    ) == pytest.approx(2 * 450e9)
    # an MLA latent is one shard, replicated on every rank: one rank's link
    ds = scenario(model="deepseek-r1", hardware="h200", gpus=8, disaggregated="true")
    assert disagg.transfer_rate_b_s(ds) == pytest.approx(50e9)  # 16 GPUs: two nodes
    # set by the user
    assert disagg.transfer_rate_b_s(
        scenario(disaggregated="true", kv_transfer_gb_s=12.5)
    ) == pytest.approx(12.5e9)


def test_one_request_ttft_is_prefill_transfer_and_a_decode_step(scenario):
    s = scenario(disaggregated="true", kv_transfer_gb_s=10)
    wl = serving.Workload(np.array([0.0]), np.array([1024]), np.array([64]))
    sim = disagg.simulate(s, wl)
    ps, ds = disagg.pool(s, "prefill"), disagg.pool(s, "decode")
    sms = disagg.step_models(s)
    # the prefill instance: its front end and the whole prompt in one chunk
    attn, kv = sms["prefill"].chunk_attended(1024, 0)
    prefill = ps.frontend_ms * MS + sms["prefill"].mixed(0, 0.0, 1024, attn, kv)
    assert_allclose(sim["disagg"]["prefill_done_s"][0], prefill, rtol=1e-12)
    move = 1024 * disagg.memory.kv_bytes_per_token(ps) / 10e9
    assert_allclose(sim["disagg"]["kv_ready_s"][0] - prefill, move, rtol=1e-12)
    # the decode instance: its front end, then one decode step at a context of the prompt
    first = prefill + move + ds.frontend_ms * MS + sms["decode"].decode(1, np.array([1024.0]))[0]
    assert_allclose(sim["first_token_s"][0], first, rtol=1e-9)
    # and 63 more decode steps, each one token longer
    steps = sms["decode"].decode(1, 1024.0 + np.arange(1, 64, dtype=float))
    assert_allclose(sim["finish_s"][0], first + steps.sum(), rtol=1e-9)
    f = serving.figures(sim, s)
    assert_allclose(f["mean_kv_transfer_ms"], move / MS, rtol=1e-9)
    assert_allclose(
        f["mean_prefill_instance_ms"]
        + f["mean_kv_transfer_ms"]
        + f["mean_decode_instance_first_ms"],
        f["mean_ttft_ms"],
        rtol=1e-9,
    )


def test_decodes_see_no_prefill_interference(scenario):
    # at a load where the one-engine replica mixes prefill chunks into its decode steps, the
    # decode instance's steps hold decodes only: p99 ITL falls to about a decode step
    agg = scenario(request_rate=8, num_requests=300)
    dis = scenario(request_rate=8, num_requests=300, disaggregated="true")
    fa, fd = serving.run(agg)["figures"], serving.run(dis)["figures"]
    assert fd["p99_itl_ms"] < 0.5 * fa["p99_itl_ms"]
    assert fd["mean_tpot_ms"] < fa["mean_tpot_ms"]
    # every request served, its output tokens all counted
    assert fd["completed"] == 300 and fd["total_output_tokens"] == fa["total_output_tokens"]
    # the decode steps carry decodes only: no step holds more sequences than max_num_seqs
    assert fd["max_batch"] <= dis.max_num_seqs


@pytest.mark.parametrize(
    "pairs",
    [
        {},
        {"model": "gpt-oss-120b", "gpus": 2},  # sliding-window layers
        {"prompt_tokens": 9000, "max_num_batched_tokens": 2048},  # chunked prompts
        {"lengths": "random", "range_ratio": 0.9},
        {"engine": "sglang"},
        {"gpus": 1, "weights_dtype": "int4", "prompt_tokens": 30000, "output_tokens": 10},
        {"hardware": "rtx-4090", "model": "llama-3.2-3b", "gpus": 1},
        # the lean loop itself (no prefix cache), a front end longer than frontend_ms shared by
        # four API servers (model.stepmodel.lone_frontend_s)
        {"prefix_caching": "false", "prompt_tokens": 20000, "api_server_count": 4},
    ],
)
@pytest.mark.parametrize("rate", [2.0, 30.0, "inf"])
def test_the_lean_prefill_loop_is_the_simulator(scenario, pairs, rate):
    s = scenario(disaggregated="true", num_requests=300, **pairs)
    ps, sm = disagg.pool(s, "prefill"), disagg.step_models(s)["prefill"]
    wl0 = serving.workload(s, rate=rate, max_concurrency=None)
    wl = serving.Workload(wl0.arrival_s, wl0.prompt_tokens, np.ones(len(wl0.arrival_s), np.int64))
    general = serving.simulate(ps, wl, sm)
    lean = disagg.prefill_run(ps, wl, sm)
    for key in ("entry_s", "first_token_s", "finish_s"):
        assert_allclose(lean[key], general[key], rtol=1e-12, atol=1e-12)
    fg, fl = serving.figures(general, ps), serving.figures(lean, ps)
    assert fg.keys() == fl.keys()
    for key, value in fg.items():
        if isinstance(value, float):
            assert fl[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key
        else:
            assert fl[key] == value, key


def test_prefix_hits_and_a_full_cache_take_the_general_simulator(scenario):
    s = scenario(disaggregated="true", shared_prefix_tokens=512, num_requests=100)
    ps, sm = disagg.pool(s, "prefill"), disagg.step_models(s)["prefill"]
    wl0 = serving.workload(s, rate=5.0, max_concurrency=None)
    wl = serving.Workload(wl0.arrival_s, wl0.prompt_tokens, np.ones(100, np.int64))
    sim = disagg.prefill_run(ps, wl, sm)
    assert sim["prefix_caching"] and sim["prefix_cache_hit_tokens"] > 0


def test_a_closed_loop_run_settles(scenario):
    s = scenario(disaggregated="true", request_rate="inf", max_concurrency=32, num_requests=300)
    r = serving.run(s)
    f, sim = r["figures"], r["sim"]
    assert 1 <= f["closed_loop_rounds"] <= disagg.CLOSED_LOOP_ROUNDS
    # the time-averaged requests in flight stay near the limit (the sends are the limit's)
    span = sim["finish_s"].max() - sim["send_s"].min()
    in_flight = float((sim["finish_s"] - sim["send_s"]).sum()) / span
    assert 0.7 * 32 <= in_flight <= 1.15 * 32
    assert not f["saturated"]


def test_capacity_counts_the_replicas_gpus(scenario):
    s = scenario(disaggregated="true", request_rate=20, prefill_gpus=2)
    cap = serving.capacity(s)
    assert cap["gpus_per_replica"] == 2 + 4
    assert cap["gpus_needed"] == cap["replicas_needed"] * 6
    # a 1P1D replica is limited by the slower pool (pools sized apart agree within ~10 %)
    pc = disagg.pool_capacity(s)
    pools = min(pc["prefill_rate_per_instance"], pc["decode_rate_per_instance"])
    assert cap["max_request_rate"] == pytest.approx(pools, rel=0.1)
    # Scale to zero bills the replica's GPUs
    from model.economics import service_of

    assert service_of(s).gpus == 6


def test_best_split_by_hand():
    pc = {
        "prefill_rate_per_instance": 3.0,
        "decode_rate_per_instance": 1.0,
        "prefill_gpus": 1,
        "decode_gpus": 1,
    }
    best = disagg.best_split(pc)
    # 1P3D: min(3, 3) = 3 req/s on 4 GPUs, 0.75 per GPU; nothing does better
    assert (best["prefill_instances"], best["decode_instances"]) == (1, 3)
    assert best["request_rate_per_gpu"] == pytest.approx(0.75)
    assert best["gpus"] == 4
    pc["decode_gpus"] = 2  # decode instances twice as big: 1P3D is 7 GPUs, 3/7 per GPU
    assert disagg.best_split(pc)["request_rate_per_gpu"] == pytest.approx(3 / 7)
    assert disagg.best_split({**pc, "decode_rate_per_instance": 0.0}) is None


def test_comparison_curves(scenario):
    s = scenario(request_rate=20)
    view = disagg.comparison(s, serving.max_rate)
    assert view["preview"] and view["as_set"]["prefill_instances"] == 1
    c = view["curve"]
    for key in ("aggregated_gpus", "as_set_gpus", "pools_gpus"):
        y = np.asarray(c[key], dtype=float)
        assert np.all(np.diff(y) >= 0), key  # more rate never needs fewer GPUs
    agg = serving.max_rate(s)["max_request_rate"]
    assert view["aggregated_rate_per_replica"] == pytest.approx(agg)
    assert view["at_rate"]["aggregated_gpus"] == 4 * np.ceil(20 / agg)


def test_pareto_has_disaggregated_points(scenario):
    points = serving.pareto(scenario())
    pd_points = [p for p in points if p["disaggregated"]]
    assert pd_points and any(not p["disaggregated"] for p in points)
    for p in pd_points:
        assert p["gpus"] == pytest.approx(p["decode_gpus"] + p["prefill_gpus_per_decode_instance"])
        assert p["tokens_per_s_per_gpu"] > 0 and p["tokens_per_s_per_user"] > 0


def test_a_pool_that_cannot_hold_the_model_says_which(scenario):
    s = scenario(disaggregated="true", prefill_gpus=1, weights_dtype="bf16")
    with pytest.raises(serving.DoesNotFit, match="a prefill instance"):
        serving.run(s)
    assert "prefill instance" in serving.disagg_view(s)["reason"]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("prefill_instances", "0"),
        ("decode_instances", "0"),
        ("kv_transfer_gb_s", "0"),
        ("kv_transfer_gb_s", "-1"),
        ("prefill_gpus", "0"),
        ("decode_gpus", "65"),
        ("disaggregated", "maybe"),
    ],
)
def test_bad_input_names_the_key(scenario, key, value):
    with pytest.raises(ScenarioError) as exc:
        scenario(**{"disaggregated": "true", key: value})
    assert exc.value.key == key and exc.value.message


def test_the_cli_reports_the_pools(tmp_path):
    import json
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "whatif", "eval", "--set", "disaggregated=true", "--set",
         "num_requests=200", "--set", "decode_instances=2", "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    d = json.loads(out.stdout)
    assert d["capacity"]["gpus_per_replica"] == 12
    assert d["serving"]["mean_kv_transfer_ms"] > 0
    view = d["disaggregation"]
    assert view["as_set"] == {
        "prefill_instances": 1, "decode_instances": 2, "prefill_gpus": 4, "decode_gpus": 4,
    }  # fmt: skip
    assert view["best_split"]["gpus"] >= 2
    bad = subprocess.run(
        [sys.executable, "-m", "whatif", "eval", "--set", "kv_transfer_gb_s=0"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode == 2 and "kv_transfer_gb_s" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_serving_page_shows_the_comparison(app_page):
    at = app_page(
        "pages/2_Serving.py",
        disaggregated="true",
        decode_instances="2",
        num_requests="50",
        request_rate="5",
        state={"t_serving": "Disaggregation", "x_serving_pd": True},
    )
    assert not at.exception
    notes = " ".join(c.value for c in at.caption) + " ".join(m.value for m in at.markdown)
    assert "the best split is" in notes
    assert "on the prefill instance" in notes  # this run's TTFT, split by where it goes
    assert at.session_state["w_disaggregated"] is True
    assert at.session_state["w_decode_instances"] == 2


def test_serving_page_warns_on_a_bad_key_and_keeps_working(app_page):
    at = app_page(
        "pages/2_Serving.py",
        scenario="llama-8b-1xh100",
        disaggregated="true",
        decode_instances="0",
        num_requests="50",
    )
    text = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "decode_instances" in text
    assert at.metric  # the headline still drawn


def test_published_pairs_and_the_page_agree():
    # every row held out (nothing in the model was chosen from them): the docs page's summary
    # must be the tool's, and every row sourced and quoted
    import re

    from tools import published_disagg as pd

    figures, levers = pd.compare()
    summ = pd.summary(figures, levers)
    assert summ["absolute"]["n"] == 30 and summ["lever"]["n"] == 15
    text = pd.PAGE.read_text(encoding="utf-8")
    stale = "run: python -m tools.published_disagg --write"
    for key, name in (
        ("lever", "lever: disaggregated ÷ aggregated"),
        ("absolute", "absolute: every figure"),
    ):
        line = re.search(rf"\| {re.escape(name)} \| (\d+) \| ([\d.]+) % \|", text)
        assert line, stale
        assert int(line[1]) == summ[key]["n"], stale
        assert float(line[2]) == pytest.approx(100 * summ[key]["median"], abs=0.11), stale
    for row in pd.rows():
        assert row["source"].startswith("http") and row["quote"], row["id"]
    # the Mooncake pairs' ITL: disaggregation lowers it, as measured
    itl = {r["id"]: r for r in levers if r["metric"] == "mean_itl_ms"}
    assert itl["D09/D10"]["predicted"] < 1 and itl["D21/D22"]["predicted"] < 1


def test_the_view_follows_the_request_rate(scenario, monkeypatch):
    # the view's GPUs at the scenario's rate must not come from another rate's cached view
    from ui import serving_worker

    monkeypatch.setenv("WHATIF_SERVING_INLINE", "1")
    a = serving_worker.view("disagg", scenario(disaggregated="true", request_rate=5))
    b = serving_worker.view("disagg", scenario(disaggregated="true", request_rate=40))
    assert a["at_rate"]["request_rate"] == 5 and b["at_rate"]["request_rate"] == 40
    assert b["at_rate"]["as_set_gpus"] > a["at_rate"]["as_set_gpus"]


def test_a_model_name_stays_text_in_the_levers_notes(app_page):
    # a name from a link is user text: escaped for markdown in the notes and the expander
    name = "**x**[y](http://evil.example)"
    at = app_page(
        "pages/2_Serving.py",
        **{"model.name": name},
        disaggregated="true",
        prefill_gpus="1",
        weights_dtype="bf16",
        num_requests="50",
        state={"t_serving": "Disaggregation", "x_serving_dp": True},
    )
    assert not at.exception
    texts = [c.value for c in (*at.caption, *at.error) if "evil" in c.value]
    assert len(texts) >= 2, "the name appears in the notes and the page's error"
    for t in texts:
        assert "[y](http" not in t and "**x**" not in t
