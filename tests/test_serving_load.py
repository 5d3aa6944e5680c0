"""What a server pays under load (issue 39): the API server's pace, the front end's queue,
prefix caching and the spread of lengths. Expected values are hand calculations from the rules
in model/serving.py's docstrings; the properties hold for any draw."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model import lengths, serving
from model.overrides import resolve
from tests.test_serving import scen, wl_fixed

B = serving.BLOCK_TOKENS


# ------------------------------------------------------------------ the API server's pace


def test_a_large_batch_streams_at_the_api_servers_pace():
    """400 sequences of a small model: the engine's step is shorter than 400 tokens × 300 µs,
    so the step the clients see is the API server's 120 ms; a second API server halves it."""
    s = scen(("scenario", "llama-8b-1xh100"), ("api_us_per_token", 300), ("context_tokens", 500))
    sm = serving.StepModel(s, 8192)
    assert sm.decode(400, np.array([400 * 500.0]))[0] == pytest.approx(0.120, rel=1e-9)
    two = scen(
        ("scenario", "llama-8b-1xh100"),
        ("api_us_per_token", 300),
        ("api_server_count", 2),
        ("context_tokens", 500),
    )
    assert serving.StepModel(two, 8192).decode(400, np.array([400 * 500.0]))[0] == pytest.approx(
        0.060, rel=1e-9
    )
    # one sequence: the engine's step, far above 300 µs
    assert sm.decode(1, np.array([500.0]))[0] > 0.0003


@pytest.mark.parametrize("api", [0.0, 30.0, 300.0])
def test_the_affine_run_under_the_api_bound_is_the_step_by_step_sum(api):
    s = scen(("scenario", "llama-8b-1xh100"), ("api_us_per_token", api))
    sm = serving.StepModel(s, 8192)
    for n in (1, 40, 256):
        k = 600
        ctx0 = n * 300.0
        aff = sm.decode_affine(n, ctx0, n, k)
        steps = sm.decode(n, ctx0 + n * np.arange(k, dtype=float))
        if aff is None:
            continue  # the bound changes within the run: each step is evaluated
        a, b = aff
        assert a + b * np.arange(k) == pytest.approx(steps, rel=1e-9)


# ------------------------------------------------------------------ the front end's queue


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0, 100), min_size=1, max_size=60),
    st.lists(st.floats(0, 2), min_size=60, max_size=60),
)
def test_the_front_end_fifo_is_lindleys_recursion(gaps, service):
    send = np.cumsum(gaps)
    svc = np.asarray(service[: len(send)])
    got = serving.frontend_fifo(send, svc)
    free, want = 0.0, []
    for t, x in zip(send, svc, strict=True):
        free = max(t, free) + x
        want.append(free)
    assert got == pytest.approx(np.array(want), rel=1e-9, abs=1e-9)


def test_a_flood_queues_at_the_front_end():
    """1,000 requests at once, 12 ms each in the API server: the last reaches the engine after
    12 s, the first after 12 ms; a lone request's TTFT is as before (the queued part is inside
    frontend_ms)."""
    s = scen(
        ("scenario", "llama-8b-1xh100"),
        ("frontend_ms", 12),
        ("frontend_queued_ms", 12),
        ("frontend_us_per_token", 0),
    )
    sim = serving.run(s, wl_fixed(1000, "inf", 128, 16))["sim"]
    assert sim["entry_s"][0] == pytest.approx(0.012)
    assert sim["entry_s"][-1] == pytest.approx(12.0)
    lone = serving.run(s, wl_fixed(1, 1.0, 128, 16))["figures"]
    no_queue = scen(("scenario", "llama-8b-1xh100"), ("frontend_ms", 12), ("frontend_queued_ms", 0))
    alone = serving.run(no_queue, wl_fixed(1, 1.0, 128, 16))["figures"]
    assert lone["mean_ttft_ms"] == pytest.approx(alone["mean_ttft_ms"], rel=1e-9)


def test_more_api_servers_shorten_the_flood_queue():
    base = [("scenario", "llama-8b-1xh100"), ("frontend_queued_ms", 12)]
    one = serving.run(scen(*base), wl_fixed(400, "inf", 128, 16))["figures"]
    four = serving.run(scen(*base, ("api_server_count", 4)), wl_fixed(400, "inf", 128, 16))
    assert four["figures"]["mean_ttft_ms"] < 0.5 * one["mean_ttft_ms"]


# ------------------------------------------------------------------ prefix caching


def _prefix(*extra):
    return scen(
        ("scenario", "llama-8b-1xh100"),
        ("prompt_tokens", 2000),
        ("output_tokens", 50),
        ("shared_prefix_tokens", 1800),
        *extra,
    )


def test_one_request_at_a_time_hits_every_prefix_but_the_first():
    """Requests one after another, one group: every request but the first reuses the prefix's
    whole blocks, ⌊1800 / 16⌋ = 112 blocks = 1,792 tokens."""
    s = _prefix(("prefix_caching", "true"))
    f = serving.run(s, wl_fixed(20, 0.2, 2000, 50))["figures"]
    assert f["prefix_cached_tokens"] == 19 * 1792
    assert f["prefix_cache_hit_rate"] == pytest.approx(19 * 1792 / (20 * 2000))


def test_a_hit_skips_the_prefill_of_its_tokens():
    on = serving.run(_prefix(("prefix_caching", "true")), wl_fixed(20, 0.2, 2000, 50))
    off = serving.run(_prefix(("prefix_caching", "false")), wl_fixed(20, 0.2, 2000, 50))
    ttft_on = on["figures"]["median_ttft_ms"]
    ttft_off = off["figures"]["median_ttft_ms"]
    assert ttft_on < 0.5 * ttft_off
    assert off["figures"]["prefix_cached_tokens"] == 0


def test_shared_blocks_are_counted_once_in_the_cache():
    """64 requests in flight over one 1,792-token prefix hold its 112 blocks once: the peak
    is far below 64 private copies."""
    wl = wl_fixed(64, "inf", 2000, 200)
    on = serving.run(_prefix(("prefix_caching", "true")), wl)["sim"]
    off = serving.run(_prefix(("prefix_caching", "false")), wl)["sim"]
    assert on["step_kv_blocks"].max() < 0.3 * off["step_kv_blocks"].max()
    # the first request has no hit; the ones admitted once its prefix is computed do
    assert on["prefix_hit_tokens"][0] == 0
    assert (on["prefix_hit_tokens"] % B == 0).all()


def test_a_whole_prompt_prefix_still_computes_its_last_token():
    s = scen(
        ("scenario", "llama-8b-1xh100"),
        ("prompt_tokens", 1024),
        ("shared_prefix_tokens", 1024),
        ("prefix_caching", "true"),
    )
    sim = serving.run(s, wl_fixed(5, 0.1, 1024, 20))["sim"]
    # 1023 tokens can hit at most: 63 whole blocks = 1,008 tokens
    assert sim["prefix_hit_tokens"][1:].tolist() == [1008] * 4


def test_many_prefixes_in_a_small_cache_are_evicted_least_recently_used_first():
    """4,000 distinct 1,792-token prefixes do not fit the cache: most requests miss; 4 fit and
    almost all hit."""
    base = [
        ("scenario", "llama-8b-1xh100"),
        ("prompt_tokens", 2000),
        ("output_tokens", 20),
        ("shared_prefix_tokens", 1800),
        ("prefix_caching", "true"),
        ("num_requests", 600),
        ("request_rate", 5),
    ]
    few = serving.run(scen(*base, ("prefix_groups", 4)))["figures"]
    many = serving.run(scen(*base, ("prefix_groups", 100_000)))["figures"]
    assert few["prefix_cache_hit_rate"] > 0.85
    assert many["prefix_cache_hit_rate"] < 0.05


def test_the_engine_default_decides_auto():
    assert scen(("shared_prefix_tokens", 512)).prefix_caching_on  # vLLM V1: on
    assert not scen(("engine", "vllm-v0"), ("shared_prefix_tokens", 512)).prefix_caching_on
    old = scen(("engine", "vllm@2026.12.3"), ("shared_prefix_tokens", 512))
    assert not old.prefix_caching_on  # a link to an older revision keeps its figures
    assert scen(("engine", "vllm-v0"), ("prefix_caching", "on")).prefix_caching_on


def test_no_shared_prefix_leaves_the_run_as_it_was():
    a = serving.run(scen(("request_rate", 4), ("num_requests", 200)))["figures"]
    b = serving.run(scen(("request_rate", 4), ("num_requests", 200), ("prefix_caching", "false")))
    assert a["mean_ttft_ms"] == pytest.approx(b["figures"]["mean_ttft_ms"], rel=1e-12)
    assert a["prefix_cache_hit_rate"] == 0.0


@settings(max_examples=25, deadline=None)
@given(
    st.integers(16, 1900),
    st.integers(1, 50),
    st.sampled_from([1.0, 20.0, "inf"]),
    st.integers(0, 5),
)
def test_the_cache_never_holds_more_than_it_has(shared, groups, rate, seed):
    s = scen(
        ("scenario", "seed-3b-4090"),
        ("prompt_tokens", 2000),
        ("output_tokens", 64),
        ("shared_prefix_tokens", shared),
        ("prefix_groups", groups),
        ("request_rate", rate),
        ("num_requests", 150),
        ("seed", seed),
    )
    sim = serving.run(s)["sim"]
    assert sim["step_kv_blocks"].max() <= sim["kv_blocks"]
    assert np.isfinite(sim["finish_s"]).all()
    assert (sim["prefix_hit_tokens"] <= np.minimum(shared, 1999)).all()


# ------------------------------------------------------------------ the spread of lengths


def test_random_lengths_fill_vllms_range():
    s = scen(
        ("lengths", "random"),
        ("prompt_tokens", 1000),
        ("output_tokens", 200),
        ("range_ratio", 0.5),
        ("num_requests", 5000),
    )
    p, o = lengths.draw(s, 5000)
    assert p.min() >= 500 and p.max() <= 1500
    assert o.min() >= 100 and o.max() <= 300
    assert p.mean() == pytest.approx(1000, rel=0.02)
    assert o.mean() == pytest.approx(200, rel=0.02)


def test_sharegpt_lengths_keep_the_scenarios_means_and_the_samples_spread():
    """The ShareGPT shape (presets/lengths.yaml: the pairs vLLM's sampler takes, Llama-3 tokens)
    is rescaled so its means are the sidebar's tokens: 200 replies on average, the median reply
    at 130 / 202.1 of the mean and the 90th percentile at 487 / 202.1 (± the draw's noise over
    20,000 requests), the longest at 1,857 / 202.1."""
    s = scen(("lengths", "sharegpt"), ("prompt_tokens", 215), ("output_tokens", 200))
    p, o = lengths.draw(s, 20_000)
    assert o.mean() == pytest.approx(200, rel=0.02)
    assert p.mean() == pytest.approx(215, rel=0.04)
    assert np.median(o) == pytest.approx(200 * 130 / 202.1, rel=0.04)
    assert np.percentile(o, 90) == pytest.approx(200 * 487 / 202.1, rel=0.03)
    assert o.max() <= round(200 * 1857 / 202.1) and o.min() >= 1


def test_sharegpt_replies_are_the_samples_not_a_flat_trace():
    """Half the replies sit below 0.65 of the mean, as the sampled pairs do (median 130, mean
    198.9 in tools/sharegpt_lengths.py's count) and as SGLang issue 1268's runs at one request
    in flight imply (median / mean 0.59); the earlier first-turn trace put the median at the
    mean."""
    d = lengths.length_sets()["sharegpt"]
    median = float(np.interp(0.5, np.asarray(d.percentiles) / 100, d.output_tokens))
    assert 0.55 <= median / d.mean_output_tokens <= 0.70


def test_random_lengths_at_ratio_zero_are_fixed():
    s = scen(("lengths", "random"), ("prompt_tokens", 700), ("output_tokens", 90))
    p, o = lengths.draw(s, 100)
    assert set(p.tolist()) == {700} and set(o.tolist()) == {90}


def test_spread_lengths_fall_out_of_step():
    """Fixed lengths that start together finish together; spread ones do not (the last step
    holds fewer sequences)."""
    base = [("request_rate", "inf"), ("num_requests", 64), ("max_concurrency", 64)]
    fixed = serving.run(scen(*base))["figures"]
    spread = serving.run(scen(*base, ("lengths", "random"), ("range_ratio", 0.9)))["figures"]
    assert spread["p99_e2el_ms"] > 1.2 * spread["median_e2el_ms"]
    assert fixed["p99_e2el_ms"] == pytest.approx(fixed["median_e2el_ms"], rel=0.05)


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("shared_prefix_tokens", "5000", "0 to 1,024"),
        ("shared_prefix_tokens", "-1", "greater than or equal to 0"),
        ("shared_prefix_tokens", "nan", "integer"),
        ("prefix_groups", "0", "greater than or equal to 1"),
        ("range_ratio", "1", "less than 1"),
        ("range_ratio", "-0.2", "greater than or equal to 0"),
        ("range_ratio", "nan", "finite"),
        ("lengths", "gaussian", "fixed, random"),
        ("prefix_caching", "maybe", "auto"),
        ("api_us_per_token", "-5", "greater than or equal to 0"),
        ("host_us_per_seq", "-1", "greater than or equal to 0"),
        ("frontend_queued_ms", "-1", "greater than or equal to 0"),
        ("api_server_count", "0", "greater than or equal to 1"),
    ],
)
def test_bad_serving_input_names_the_key_and_what_is_accepted(key, value, says):
    _, errors = resolve([(key, value)], strict=False)
    assert errors and str(errors[0]).startswith(key), errors
    assert says in str(errors[0])
    cli = subprocess.run(
        [sys.executable, "-m", "whatif", "eval", "--set", f"{key}={value}", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode == 2
    assert key in cli.stderr and cli.stdout == ""


# ------------------------------------------------------------------ MoE at large batch


def _moe_scen(*extra):
    return scen(
        ("model", "gpt-oss-20b"),
        ("hardware", "h100-sxm"),
        ("gpus", 1),
        ("engine", "vllm"),
        *extra,
    )


def test_the_experts_compute_curve_is_the_fitted_share_once_every_expert_is_touched():
    """gpt-oss-20b (32 experts, top 4) on an H100, MXFP4 experts multiplied in BF16: at 8,192
    tokens every expert is touched and the time is 2 × routed × t / (989 T × share), share =
    0.60 × x / (x + 48) × n / (n + 256) with x = 1,024 tokens per expert and n the expert width
    (hand calculation from the profile's figures)."""
    from model import decode, engines

    s = _moe_scen()
    m = s.model
    routed = decode.routed_params(s)
    per_expert = (m.params_b - m.active) * 1e9 / (m.experts - m.experts_per_token)
    assert routed == pytest.approx(m.experts_per_token * per_expert)
    e, xh, nh = engines.moe_flops_values(s.engine_figures, s.weights_dtype)
    assert (e, xh, nh) == (0.60, 48, 256)
    width = per_expert / (3 * m.hidden * m.layers)
    x = 8192 * m.experts_per_token / m.experts
    share = 0.60 * x / (x + 48) * width / (width + 256)
    want = 2 * routed * 8192 / (989e12 * share)
    assert decode.moe_flops_s(s, 8192) == pytest.approx(want, rel=1e-6)
    assert 0.5 < share < 0.6


def test_a_small_batch_stays_bound_by_the_experts_bytes():
    """At 4 tokens the curve's overhead rows do not make the experts compute-bound: the decode
    step is the memory term, as before the curve (the Roofline lens's batch-1 figures hold)."""
    from model import decode

    s = _moe_scen()
    row = decode.sweep(s, np.array([1.0, 4.0]))
    assert (row["t_memory_s"] > row["t_compute_s"]).all()


def test_the_curve_is_off_for_dense_models_and_for_a_set_efficiency():
    from model import decode

    assert decode.moe_flops_s(scen(("model", "llama-3.1-8b")), 4096) is None
    assert decode.moe_flops_s(_moe_scen(("prefill_efficiency", 0.5)), 4096) is None
    assert decode.moe_flops_s(_moe_scen(("engine", "vllm@2026.12.4")), 4096) is None


def test_a_moe_prefill_is_slower_on_the_curve_than_at_the_dense_efficiency():
    """A full 8,192-token chunk of gpt-oss-20b: the experts at ~0.55 of peak instead of the
    dense 0.75 take the step from the dense estimate to at least 1.2× it."""
    from model.request import prefill_steps

    sizes = np.array([8192.0])
    now = prefill_steps(_moe_scen(), sizes, sizes * 4096.0, sizes)["t_step"][0]
    dense = prefill_steps(_moe_scen(("prefill_efficiency", 0.75)), sizes, sizes * 4096.0, sizes)[
        "t_step"
    ][0]
    assert now > 1.2 * dense


# ------------------------------------------------------------------ prefill alone (SGLang)


def _itl_total(sim) -> float:
    """Σ over every inter-token gap the run records [s] (steps weighted by their tokens, the
    gaps across preemptions, and the gaps across a stall)."""
    return float(
        (sim["step_s"] * sim["step_itl_tokens"]).sum()
        + sim["itl_extra_s"].sum()
        + (sim["itl_stall_s"] * sim["itl_stall_tokens"]).sum()
    )


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@pytest.mark.parametrize("rate", ["inf", "20"])
def test_every_gap_between_tokens_is_counted_once(engine, rate):
    """Each request's gaps sum to its last token minus its first, whatever the schedule: so
    the ITL samples, weighted by their tokens, sum to Σ (finish − first token) and count
    Σ (output − 1) tokens, with prefill mixed into the decodes (vLLM) or run alone (SGLang)."""
    s = scen(
        ("scenario", "llama-8b-1xh100"),
        ("engine", engine),
        ("lengths", "random"),
        ("range_ratio", 0.8),
        ("prompt_tokens", 3000),
        ("output_tokens", 60),
        ("request_rate", rate),
        ("num_requests", 120),
    )
    sim = serving.simulate(s, serving.workload(s))
    out = sim["output_tokens"]
    want = float((sim["finish_s"] - sim["first_token_s"]).sum())
    assert _itl_total(sim) == pytest.approx(want, rel=1e-9)
    tokens = sim["step_itl_tokens"].sum() + len(sim["itl_extra_s"]) + sim["itl_stall_tokens"].sum()
    assert tokens == (out - 1).sum()


def test_sglang_runs_a_prefill_alone_and_the_decodes_wait():
    """One request decoding, a second arriving: under SGLang's profile the second's prefill is
    a step of its own (no decode token in it), and the first request's next gap spans it."""
    s = scen(("scenario", "llama-8b-1xh100"), ("engine", "sglang"))
    assert not s.engine_figures.mixed_prefill
    wl = serving.Workload(np.array([0.0, 0.2]), np.array([100, 6000]), np.array([400, 3]), None)
    sim = serving.simulate(s, wl)
    alone = (sim["step_itl_tokens"] == 0) & (sim["step_batch"] == 1)
    assert alone.sum() >= 1  # the 6,000-token prompt: one 8,192-token chunk, run alone
    longest_step = float(sim["step_s"].max())
    assert sim["itl_stall_s"].max() > longest_step  # the prefill plus the decode after it
    vllm = serving.simulate(scen(("scenario", "llama-8b-1xh100"), ("engine", "vllm")), wl)
    assert len(vllm["itl_stall_s"]) == 0
