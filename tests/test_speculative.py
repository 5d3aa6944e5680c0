"""Speculative decoding (issue 42, section 1): the expected tokens a verify step emits, the step
that verifies k + 1 tokens after k drafts, the drafter's memory, the serving simulator's draws,
the crossover, and the keys' bad input. Expected values are hand calculations from
Leviathan et al. (ICML 2023) eq. (1) and from the scenario's own plain figures."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from model import decode, memory, serving, spec_gain, speculative
from model.errors import ScenarioError
from model.evaluate import evaluate


def test_accepted_tokens_is_leviathans_expectation():
    # α = 0.8, k = 3: 1 + 0.8 + 0.64 + 0.512 = 2.952 (the bonus token included)
    assert_allclose(speculative.accepted_tokens(0.8, 3), 2.952, rtol=1e-12)
    # α = 0.5, k = 1: 1 + 0.5
    assert_allclose(speculative.accepted_tokens(0.5, 1), 1.5, rtol=1e-12)
    # nothing accepted: the bonus token only; every draft accepted: k + 1
    assert_allclose(speculative.accepted_tokens(0.0, 5), 1.0)
    assert_allclose(speculative.accepted_tokens(1.0, 5), 6.0)
    assert_allclose(speculative.accepted_tokens(1.0 - 1e-13, 5), 6.0, rtol=1e-9)
    # vectorised over both
    assert_allclose(speculative.accepted_tokens([0.0, 0.5], [2, 2]), [1.0, 1.75])


@given(st.floats(0.0, 0.999), st.integers(1, 16))
@settings(max_examples=60, deadline=None)
def test_accepted_tokens_bounds_and_inverse(alpha, k):
    tau = float(speculative.accepted_tokens(alpha, k))
    assert 1.0 <= tau <= k + 1 + 1e-9
    # more drafts never emit fewer tokens
    assert float(speculative.accepted_tokens(alpha, k + 1)) >= tau - 1e-12
    if 1.0 + 1e-6 < tau < k + 1 - 1e-6:
        back = float(speculative.acceptance_from_length(tau, k))
        assert_allclose(back, alpha, atol=1e-6)


def test_the_verify_step_reads_weights_once_and_computes_k_plus_one(scenario):
    plain = scenario(batch=8)
    spec = scenario(batch=8, speculative="eagle3", num_speculative_tokens=3, spec_acceptance=0.8)
    p = decode.sweep(plain, [8])
    v = decode.sweep(spec, [8])
    # 8 sequences × 4 tokens through the target; the same weights read (dense model)
    assert int(v["padded_batch"][0]) == 32
    assert_allclose(v["flops"], decode.sweep(plain, [32])["flops"], rtol=1e-9)
    assert_allclose(v["t_verify_s"] + v["t_draft_s"], v["t_step_s"], rtol=1e-12)
    assert v["t_draft_s"][0] > 0
    assert_allclose(v["accepted_tokens_per_step"], 2.952, rtol=1e-12)
    assert_allclose(v["tokens_per_s"], 8 * 2.952 / v["t_step_s"], rtol=1e-12)
    assert_allclose(v["t_token_s"], v["t_step_s"] / 2.952, rtol=1e-12)
    # memory-bound at batch 8: the verify costs about the plain step, so the gain is near τ
    assert v["t_verify_s"][0] < 1.3 * p["t_step_s"][0]
    assert 1.8 < v["tokens_per_s"][0] / p["tokens_per_s"][0] < 2.952


def test_ngram_costs_host_time_only(scenario):
    s = scenario(speculative="ngram", num_speculative_tokens=2, spec_acceptance=0.5)
    v = decode.sweep(s, [1, 16])
    per_seq = speculative.methods()["ngram"].host_us_per_seq * 1e-6
    assert_allclose(v["t_draft_s"], [per_seq, 16 * per_seq], rtol=1e-12)
    assert speculative.drafter_spec(s) is None
    assert memory.memory_figures(s)["drafter_weights_gb"] == 0


def test_the_gain_shrinks_with_batch_and_crosses_over(scenario):
    s = scenario(speculative="draft", num_speculative_tokens=4, spec_acceptance=0.6)
    b = np.array([1, 4, 16, 64, 128, 256, 512])
    sw = spec_gain.speedup_sweep(s, b)
    assert sw["speedup"][0] > 1.5
    # it shrinks up to the compute roof, then levels off: there both steps' GEMMs grow with the
    # batch and the KV read, once per sequence whatever it verifies, adds the same to both
    # (model.roofline.gpu_time), so the ratio tends to a constant
    assert np.all(np.diff(sw["speedup"][:-1]) < 1e-9)
    assert sw["speedup"][-1] == pytest.approx(sw["speedup"][-2], rel=0.03)
    cross = sw["crossover_batch"]
    assert cross is not None and b[0] < cross < b[-1]
    i = np.searchsorted(b, cross)
    assert sw["speedup"][i - 1] >= 1.0 > sw["speedup"][i]
    assert sw["crossover_request_rate"] > 0


def test_crossover_batch_interpolates():
    assert speculative.crossover_batch([2.0, 1.5, 0.5], [1, 10, 20]) == pytest.approx(15.0)
    assert speculative.crossover_batch([2.0, 1.5], [1, 10]) is None
    assert speculative.crossover_batch([0.9, 0.8], [1, 10]) == 1.0


def test_the_drafter_comes_out_of_the_kv_cache(scenario):
    plain = memory.memory_figures(scenario())
    for method in ("eagle", "eagle3", "draft"):
        spec = memory.memory_figures(scenario(speculative=method))
        assert spec["drafter_weights_gb"] > 0
        assert spec["weights_gb"] == pytest.approx(plain["weights_gb"])
        assert spec["kv_bytes_per_token"] > plain["kv_bytes_per_token"]
        assert spec["max_batch"] < plain["max_batch"]
    # the draft model is the named preset: Llama 3.2 1B in BF16 at FP8 target → its FP8 bytes
    d = scenario(speculative="draft", draft_model="llama-3.2-1b")
    assert speculative.drafter_spec(d).id == "llama-3.2-1b"


def test_mtp_loads_the_checkpoints_module(scenario):
    s = scenario(model="deepseek-r1", gpus=8, hardware="h200", speculative="mtp")
    mtp = s.model.mtp_params_b
    assert mtp == 14
    bytes_per = s.bytes_per_param
    assert speculative.drafter_weights_bytes(s) == pytest.approx(mtp * 1e9 * bytes_per)
    assert speculative.k_of(s) == speculative.methods()["mtp"].num_speculative_tokens


def test_steps_needed_draws_the_capped_geometric():
    tokens = np.full(4000, 200)
    alpha, k = 0.7, 3
    steps = speculative.steps_needed(tokens, alpha, k, seed=1)
    mu = float(speculative.accepted_tokens(alpha, k))
    # renewal: E[steps] ≈ T / μ (+ under one step of overshoot)
    assert steps.mean() == pytest.approx(200 / mu, rel=0.03)
    assert steps.min() >= -(-200 // (k + 1)) and steps.max() <= 200
    assert steps.std() > 0  # drawn per sequence, not the mean for everyone
    # the same seed, the same draws
    assert np.array_equal(steps, speculative.steps_needed(tokens, alpha, k, seed=1))
    # α = 0: one token a step; no drafts: the tokens
    assert np.array_equal(speculative.steps_needed(tokens[:5], 0.0, k), tokens[:5])
    assert np.array_equal(speculative.steps_needed(tokens[:5], 0.5, 0), tokens[:5])


def test_steps_needed_renewal_branch_matches_the_draws(monkeypatch):
    tokens = np.full(3000, 400)
    exact = speculative.steps_needed(tokens, 0.6, 4, seed=3)
    monkeypatch.setattr(speculative, "EXACT_DRAWS", 0)
    approx = speculative.steps_needed(tokens, 0.6, 4, seed=3)
    assert approx.mean() == pytest.approx(exact.mean(), rel=0.02)
    assert approx.std() == pytest.approx(exact.std(), rel=0.15)


def test_serving_tpot_falls_at_light_load_and_tokens_stay_real(scenario):
    keys = dict(num_requests=40, request_rate=0.5, lengths="fixed", output_tokens=128)
    plain = serving.run(scenario(**keys))["figures"]
    s = scenario(**keys, speculative="eagle3", spec_acceptance=0.7, num_speculative_tokens=3)
    spec = serving.run(s)["figures"]
    # every request still returns its 128 tokens
    assert spec["total_output_tokens"] == plain["total_output_tokens"]
    ratio = plain["mean_tpot_ms"] / spec["mean_tpot_ms"]
    tau = float(speculative.accepted_tokens(0.7, 3))
    assert 1.5 < ratio < tau
    # ITL is the gap between the chunks a step streams: about one step, longer than TPOT
    assert spec["median_itl_ms"] > spec["mean_tpot_ms"]


def test_a_measured_acceptance_length_sets_alpha(scenario):
    s = scenario(speculative="eagle3", num_speculative_tokens=4, spec_acceptance_length=3.08)
    assert speculative.tokens_per_step(s) == pytest.approx(3.08, rel=1e-9)
    assert 0 < speculative.alpha_of(s) < 1


def test_eval_json_reports_the_expectation(scenario):
    d = evaluate(scenario(speculative="eagle3", num_speculative_tokens=3, spec_acceptance=0.8))
    dec = d["decode"]
    assert dec["accepted_tokens_per_step"] == pytest.approx(2.952)
    assert dec["t_step_ms"] == pytest.approx(dec["t_verify_ms"] + dec["t_draft_ms"])
    assert dec["t_token_ms"] == pytest.approx(dec["t_step_ms"] / 2.952)
    assert d["request"]["tpot_ms"] == pytest.approx(dec["t_token_ms"])
    assert dec["spec_speedup"] > 1
    none = evaluate(scenario())["decode"]
    assert none["accepted_tokens_per_step"] == 1.0
    assert none["spec_speedup"] is None and none["t_draft_ms"] == 0


@pytest.mark.parametrize(
    ("pairs", "key"),
    [
        ({"speculative": "eagle", "spec_acceptance": "1"}, "spec_acceptance"),
        ({"speculative": "eagle", "spec_acceptance": "-0.1"}, "spec_acceptance"),
        ({"speculative": "eagle", "num_speculative_tokens": "0"}, "num_speculative_tokens"),
        ({"speculative": "eagle", "num_speculative_tokens": "17"}, "num_speculative_tokens"),
        ({"speculative": "draft", "draft_model": "llama-3.1-405b"}, "draft_model"),
        ({"speculative": "draft", "draft_model": "qwen3-0.6b"}, "draft_model"),
        ({"speculative": "draft", "draft_model": "no-such-model"}, "draft_model"),
        ({"speculative": "mtp"}, "speculative"),
        ({"speculative": "eagle3", "spec_acceptance_length": "4"}, "spec_acceptance_length"),
        ({"speculative": "eagle3", "spec_acceptance_length": "0.9"}, "spec_acceptance_length"),
        (
            {"speculative": "eagle", "spec_acceptance": "0.5", "spec_acceptance_length": "2"},
            "spec_acceptance_length",
        ),
        ({"speculative": "medusa"}, "speculative"),
    ],
)
def test_bad_input_names_the_key(scenario, pairs, key):
    with pytest.raises(ScenarioError) as exc:
        scenario(**pairs)
    assert exc.value.key == key
    assert exc.value.message


def test_serving_page_shows_the_crossover(app_page):
    at = app_page(
        "pages/2_Serving.py",
        speculative="draft",
        num_requests="50",
        state={"t_serving": "Speculative decoding", "x_serving_spec": True},
    )
    notes = " ".join(c.value for c in at.caption) + " ".join(m.value for m in at.markdown)
    assert "tokens per sequence" in notes
    assert "stops paying above a batch of" in notes
    # the four keys' widgets, bound to the scenario
    assert at.session_state["w_speculative"] == "draft"
    assert at.session_state["w_draft_model"] == "auto"


def test_serving_page_warns_on_a_bad_key_and_keeps_working(app_page):
    at = app_page(
        "pages/2_Serving.py",
        scenario="llama-8b-1xh100",
        speculative="eagle",
        spec_acceptance="1.5",
        num_requests="50",
    )
    text = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "spec_acceptance" in text and "less than 1" in text
    assert at.metric  # the headline still drawn


def test_published_speedups_and_the_page_agree():
    # the in-sample rows (vLLM #20780) are a guard on the fit; the held-out rows are reported
    # in docs/speculative.md, not asserted
    from tools import published_speculative as ps

    records = ps.compare()
    summ = ps.summary(records)
    assert summ["in_sample"]["n"] >= 10 and summ["held_out"]["n"] >= 10
    assert summ["in_sample"]["median"] <= 0.05
    # the page's figures at their printed precision (0.1 %), not its text: a CPU's last digit
    # may differ
    import re

    text = ps.PAGE.read_text(encoding="utf-8")
    stale = "run: python -m tools.published_speculative --write"
    for split, name in (("in_sample", "in-sample (fitted on)"), ("held_out", "held out")):
        line = re.search(rf"\| {re.escape(name)} \| (\d+) \| ([\d.]+) % \|", text)
        assert line, stale
        assert int(line[1]) == summ[split]["n"], stale
        assert float(line[2]) == pytest.approx(100 * summ[split]["median"], abs=0.11), stale
    for r in records:
        assert f"| {r['id']} | {r['split'].replace('_', ' ')} |" in text, stale
    for row in ps.rows():
        assert row["source"].startswith("http") and row["quote"], row["id"]


def test_the_drafter_loads_with_the_model(scenario):
    from model.cold_start import cold_start, loaded_bytes

    plain = scenario(model="deepseek-r1", gpus=8, hardware="h200")
    mtp = scenario(model="deepseek-r1", gpus=8, hardware="h200", speculative="mtp")
    assert loaded_bytes(mtp) - loaded_bytes(plain) == pytest.approx(14e9 * mtp.bytes_per_param)
    assert cold_start(mtp)["weights_s"] > cold_start(plain)["weights_s"]
