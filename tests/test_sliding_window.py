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
    return resolve([(k, str(v)) for k, v in pairs], strict=True)[0].effective()


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


def test_capacity_still_counts_every_layer():
    """vLLM states its KV cache size over every layer's KV (45.32 GiB → 2,640,144 tokens for
    gpt-oss-120b TP4, tests/data/published_measurements.csv row 207): the window changes what a
    step reads, not the capacity figures (which stay conservative: presets/engines-EVIDENCE.md)."""
    s = scen(("model", "gpt-oss-120b"), ("hardware", "a100-80gb"), ("gpus", 4))
    assert memory.memory_figures(s) == memory.memory_figures(without_window(s))


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
