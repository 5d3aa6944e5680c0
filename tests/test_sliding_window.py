"""Sliding-window attention (issue 20): layers with a local window read at most the window's KV.

Expected values are hand calculations from the models' config.json (gpt-oss: 128-token window
on 12 of 24 layers; Gemma 3: 1024 tokens on 5 of every 6 layers)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from model import decode, memory, request, roofline, serving
from model.overrides import resolve
from model.presets import model_presets
from model.scenario import ModelSpec


def scen(*pairs):
    # the engine's step alone: no API-server pace (tests/test_serving_load.py checks that)
    pairs = (("api_us_per_token", 0), *pairs)
    return resolve([(k, str(v)) for k, v in pairs], strict=True)[0]


def without_window(s):
    m = s.model.model_copy(update={"sliding_window": None, "sliding_window_layers": None})
    return s.model_copy(update={"model": m})


def test_presets_carry_the_configs_windows():
    m = model_presets()
    assert (m["gpt-oss-20b"].sliding_window, m["gpt-oss-20b"].sliding_window_layers) == (128, 12)
    assert (m["gpt-oss-120b"].sliding_window, m["gpt-oss-120b"].sliding_window_layers) == (128, 18)
    # Gemma 3: every 6th layer is global (sliding_window_pattern 6)
    for i, layers in (("gemma-3-4b", 34), ("gemma-3-12b", 48), ("gemma-3-27b", 62)):
        assert m[i].layers == layers and m[i].sliding_window == 1024
        assert m[i].sliding_window_layers == layers - layers // 6
    assert m["llama-3.1-8b"].sliding_window is None and m["mistral-7b"].sliding_window is None


def test_attended_tokens_by_hand():
    # gpt-oss-20b at 20 000 tokens: half the layers see 20 000, half 128
    assert roofline.attended_tokens(20000, 128, 12, 24) == pytest.approx(10064)
    assert roofline.attended_tokens(100, 128, 12, 24) == pytest.approx(100)  # inside the window
    assert roofline.attended_tokens(20000, None, None, 24) == 20000
    got = roofline.attended_tokens(np.array([50.0, 1024.0, 4096.0]), 1024, 29, 34)
    assert np.allclose(got, [50.0, 1024.0, 4096.0 * 5 / 34 + 1024.0 * 29 / 34])


def test_causal_attended_by_hand():
    # a 4-token chunk from the start, window 2 on every layer: tokens see 1, 2, 2, 2
    assert roofline.causal_attended(4, 0, 2, 1, 1) == pytest.approx(7)
    assert roofline.causal_attended(4, 0, None, None, 1) == pytest.approx(1 + 2 + 3 + 4)
    assert roofline.causal_attended(4, 0, 2, 1, 2) == pytest.approx((7 + 10) / 2)
    # after 3 earlier tokens, 2 more: each sees 2
    assert roofline.causal_attended(2, 3, 2, 1, 1) == pytest.approx(4)


@settings(max_examples=200, deadline=None)
@given(
    t=st.integers(1, 300),
    start=st.integers(0, 600),
    w=st.integers(1, 400),
    layers=st.integers(1, 8),
    data=st.data(),
)
def test_causal_attended_is_the_sum_over_tokens(t, start, w, layers, data):
    slide = data.draw(st.integers(1, layers))
    pos = np.arange(start + 1, start + t + 1, dtype=float)
    brute = ((layers - slide) * pos.sum() + slide * np.minimum(pos, w).sum()) / layers
    assert roofline.causal_attended(t, start, w, slide, layers) == pytest.approx(brute, rel=1e-12)


def test_decode_reads_the_window_not_the_context():
    s = scen(
        ("model", "gpt-oss-20b"), ("hardware", "h100-sxm"), ("gpus", 1), ("context_tokens", 21000)
    )
    full = without_window(s)
    kv_tok = memory.kv_bytes_per_token(s)
    got, ref = decode.sweep(s, [8]), decode.sweep(full, [8])
    saved = 8 * (21000 - 10564) * kv_tok  # 8 sequences × (21 000 − (10 500 + 64)) tokens
    assert ref["bytes_per_gpu"][0] - got["bytes_per_gpu"][0] == pytest.approx(saved, rel=1e-9)
    assert got["t_step_s"][0] < ref["t_step_s"][0]
    # within the window nothing changes
    short = scen(("model", "gpt-oss-20b"), ("hardware", "h100-sxm"), ("context_tokens", 100))
    assert (
        decode.sweep(short, [8])["t_step_s"][0]
        == decode.sweep(without_window(short), [8])["t_step_s"][0]
    )


def test_capacity_counts_what_the_window_layers_keep():
    """vLLM's hybrid KV manager frees a window layer's blocks beyond window − 1 + the prefill
    chunk. Row 207's log (gpt-oss-120b, TP4 on A100 80GB, 2048-token chunks): "GPU KV cache
    size: 2,640,144 tokens" and "Maximum concurrency for 16,384 tokens per request: 284.25x" =
    2 × 2,640,144 / (16,384 + 2,192 in blocks); every layer's whole context would give 161×."""
    s = scen(
        ("model", "gpt-oss-120b"),
        ("hardware", "a100-80gb"),
        ("gpus", 4),
        ("gpu_memory_utilization", 0.8),
        ("context_tokens", 16384),
    )
    assert s.max_num_batched_tokens == 2048
    assert memory.window_held_tokens(s) == 128 - 1 + 2048
    held = float(memory.held_tokens(s, 16384))
    assert held == pytest.approx((16384 + 2175) / 2)
    assert 2_640_144 / held == pytest.approx(284.25, rel=2e-3)
    got, ref = memory.memory_figures(s), memory.memory_figures(without_window(s))
    assert got["kv_cache_tokens"] == ref["kv_cache_tokens"]  # the cache's size, every layer
    ratio = 16384 / held
    assert ref["max_batch"] * ratio - 1 <= got["max_batch"] <= (ref["max_batch"] + 1) * ratio
    # a context inside the window holds what it reads
    short = scen(("model", "gpt-oss-120b"), ("context_tokens", 2000))
    assert (
        memory.memory_figures(short)["max_batch"]
        == memory.memory_figures(without_window(short))["max_batch"]
    )


def _four_long_requests():
    return serving.Workload(np.zeros(4), np.full(4, 12000), np.full(4, 200), 4)


def test_the_serving_cache_frees_what_leaves_the_window():
    """Four 12,000-token prompts on gpt-oss-20b: each ends holding 763 blocks on its 12 full
    layers and 521 (⌈(127 + 8192) / 16⌉ + 1) on its 12 window layers."""
    s = scen(("model", "gpt-oss-20b"), ("hardware", "h100-sxm"), ("gpus", 1))
    got = serving.simulate(s, _four_long_requests())
    ref = serving.simulate(without_window(s), _four_long_requests())
    assert ref["step_kv_blocks"].max() == 4 * 763
    assert got["step_kv_blocks"].max() == 4 * (12 * 763 + 12 * 521) // 24
    assert got["kv_blocks"] == ref["kv_blocks"]


def test_a_cache_that_thrashes_without_the_window_does_not_with_it():
    s = scen(
        ("model", "gpt-oss-20b"),
        ("weights_dtype", "fp8"),  # the cache below was sized with FP8 weights
        ("hardware", "h100-sxm"),
        ("gpus", 1),
        ("gpu_memory_utilization", 0.396),
    )
    cap = serving.kv_blocks(s)
    assert 4 * (12 * 763 + 12 * 521) // 24 < cap < 4 * 763  # fits only with the window
    got = serving.simulate(s, _four_long_requests())
    ref = serving.simulate(without_window(s), _four_long_requests())
    assert got["preempted"].sum() == 0 and ref["preempted"].sum() > 0
    assert got["finish_s"].max() < ref["finish_s"].max()
    # and a request that fits only with the window is accepted
    serving.check_fits(s, longest_tokens=cap * 16 + 1000)
    with pytest.raises(serving.DoesNotFit):
        serving.check_fits(without_window(s), longest_tokens=cap * 16 + 1000)


@settings(max_examples=20, deadline=None)
@given(
    rate=st.sampled_from([2.0, 30.0, "inf"]),
    prompt=st.integers(1, 9000),
    output=st.integers(1, 400),
    seqs=st.sampled_from([1, 8, 256]),
    util=st.sampled_from([0.9, 0.4]),
)
def test_every_window_run_completes_within_its_cache(rate, prompt, output, seqs, util):
    s = scen(
        ("model", "gpt-oss-20b"),
        ("hardware", "h100-sxm"),
        ("gpus", 1),
        ("max_num_seqs", seqs),
        ("gpu_memory_utilization", util),
    )
    n = 40
    wl = serving.Workload(
        serving.arrivals(n, rate, 1.0, 3),
        np.full(n, prompt, dtype=np.int64),
        np.full(n, output, dtype=np.int64),
        None,
    )
    try:
        serving.check_fits(s, prompt + output)
    except serving.DoesNotFit:
        return
    sim = serving.simulate(s, wl)
    assert np.isfinite(sim["finish_s"]).all()
    assert (sim["step_kv_blocks"] <= sim["kv_blocks"]).all()
    assert (sim["step_kv_blocks"] >= 0).all()


def test_prefill_attention_and_reads_use_the_window():
    s = scen(("model", "gemma-3-4b"), ("hardware", "a100-80gb"), ("prompt_tokens", 8000))
    got, ref = request.request_figures(s), request.request_figures(without_window(s))
    assert got["prefill_flops"] < ref["prefill_flops"]
    m = s.model
    attn = 4.0 * m.layers * m.heads * m.head_dim
    sizes = request.chunk_sizes(8000, s.max_num_batched_tokens)
    starts = np.concatenate([[0.0], np.cumsum(sizes)[:-1]])
    skipped = sum(
        roofline.causal_attended(t, a, None, None, m.layers)
        - roofline.causal_attended(t, a, 1024, 29, m.layers)
        for t, a in zip(sizes, starts, strict=True)
    )
    assert ref["prefill_flops"] - got["prefill_flops"] == pytest.approx(attn * skipped, rel=1e-9)


def test_a_prefill_chunk_writes_all_its_kv_and_reads_the_window_before_it():
    # full layer: 3000 earlier + 2048 written; window layer (128): 127 before + 2048 written
    assert roofline.chunk_kv_tokens(2048, 3000, 128, 1, 2) == pytest.approx(
        ((3000 + 2048) + (127 + 2048)) / 2
    )
    assert roofline.chunk_kv_tokens(2048, 50, 128, 1, 1) == pytest.approx(50 + 2048)
    assert roofline.chunk_kv_tokens(2048, 3000, None, None, 2) == 5048


def test_a_prefill_only_step_is_the_request_lens_chunk_with_a_window():
    s = scen(("model", "gemma-3-4b"), ("hardware", "a100-80gb"), ("prompt_tokens", 1500))
    sm = serving.StepModel(s, 8192)
    attn, kv = sm.chunk_attended(1500, 0)
    got = sm.mixed(0, 0.0, 1500, attn, kv)
    req = request.request_figures(s)
    assert got - s.host_ms / 1000 == pytest.approx(req["prefill_ms"] / 1000, rel=1e-9)


@pytest.mark.parametrize("batch", [1, 8, 64])
@pytest.mark.parametrize("ctx", [60, 128, 4000])
def test_serving_decode_is_the_roofline_step_with_a_window(batch, ctx):
    s = scen(("model", "gpt-oss-20b"), ("hardware", "h100-sxm"), ("context_tokens", ctx))
    sm = serving.StepModel(s, 8192)
    got = sm.decode(batch, np.array([batch * float(ctx)]))[0]
    assert got == pytest.approx(decode.sweep(s, [batch])["t_step_s"][0], rel=1e-12)


@pytest.mark.parametrize("c0", [40 * 50.0, 40 * 100.0, 40 * 200.0])
def test_the_affine_run_with_a_window_is_the_step_by_step_sum_or_declines(c0):
    s = scen(("model", "gpt-oss-20b"), ("hardware", "h100-sxm"))
    sm = serving.StepModel(s, 8192)
    n, k = 40, 120
    aff = sm.decode_affine(n, c0, n, k)
    steps = sm.decode(n, c0 + n * np.arange(k))
    if c0 / n < 128 < c0 / n + k - 1:  # the window's edge falls inside the run
        assert aff is None
    else:
        a, b = aff
        assert np.allclose(a + b * np.arange(k), steps, rtol=1e-12)


def test_window_fields_are_validated():
    base = model_presets()["llama-3.1-8b"].model_dump()
    with pytest.raises(ValidationError, match="go together"):
        ModelSpec.model_validate({**base, "sliding_window": 4096})
    with pytest.raises(ValidationError, match="cannot exceed"):
        ModelSpec.model_validate({**base, "sliding_window": 4096, "sliding_window_layers": 33})
    ok = ModelSpec.model_validate({**base, "sliding_window": 4096, "sliding_window_layers": 32})
    assert ok.sliding_window == 4096


def test_a_link_can_set_a_window_and_a_bad_one_is_named():
    s, errors = resolve(
        [
            ("model", "llama-3.1-8b"),
            ("model.sliding_window", "4096"),
            ("model.sliding_window_layers", "16"),
        ],
        strict=False,
    )
    assert not errors and s.model.sliding_window == 4096
    _, errors = resolve(
        [
            ("model", "llama-3.1-8b"),
            ("model.sliding_window", "-5"),
            ("model.sliding_window_layers", "16"),
        ],
        strict=False,
    )
    assert errors and "sliding" in str(errors[0]).lower()


def test_a_vision_encoder_is_loaded_but_not_read_by_text_decode():
    """Gemma 3's checkpoints carry a SigLIP vision encoder (~0.43 B of the 4.3 B): the weights
    hold it, a text decode step neither reads nor multiplies it."""
    s = scen(
        ("model", "gemma-3-4b"), ("hardware", "a100-80gb"), ("gpus", 1), ("weights_dtype", "bf16")
    )
    m = s.model.model_copy(update={"vision_params_b": None})
    plain = s.model_copy(update={"model": m})
    assert s.weights_bytes == plain.weights_bytes
    assert decode.weights_read_bytes(plain, [1])[0] - decode.weights_read_bytes(s, [1])[
        0
    ] == pytest.approx(0.43e9 * 2)
    assert decode.matmul_params(plain) - decode.matmul_params(s) == pytest.approx(0.43e9)
    base = model_presets()["gemma-3-4b"].model_dump()
    with pytest.raises(ValidationError, match="vision_params_b"):
        ModelSpec.model_validate({**base, "vision_params_b": 4.3})
