"""Issue 40, R2: a run's engine steps are kept as runs, and the figures of a long run are
computed from them without expanding them, the same as from the expanded arrays."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from model import serving, steplog
from model.overrides import resolve
from model.steplog import StepLog

CASES = [
    [("num_requests", "3000"), ("seed", "9")],
    [("request_rate", "inf"), ("num_requests", "3000")],
    [("scenario", "llama-8b-1xh100"), ("request_rate", "20"), ("num_requests", "3000")],
    [("max_num_batched_tokens", "64"), ("num_requests", "300")],
    [("engine", "sglang"), ("request_rate", "8"), ("num_requests", "2000")],
    [("shared_prefix_tokens", "512"), ("request_rate", "5"), ("num_requests", "2000")],
    [("model", "gemma-3-27b"), ("gpus", "1"), ("hardware", "h200"), ("request_rate", "4"),
     ("num_requests", "1500"), ("prompt_tokens", "1500")],
]  # fmt: skip


@pytest.mark.parametrize("pairs", CASES, ids=lambda p: "&".join(f"{k}={v}" for k, v in p))
def test_streamed_figures_equal_the_expanded_ones(pairs, monkeypatch):
    s = resolve(pairs)[0]
    wl = serving.workload(s)
    monkeypatch.setattr(steplog, "EXPAND_STEPS", 10**12)
    sim = serving.simulate(s, wl)
    expanded, tl_e = serving.figures(sim, s), serving.timeline(sim)
    monkeypatch.setattr(steplog, "EXPAND_STEPS", 0)
    sim2 = serving.simulate(s, wl)
    assert serving._streamed(sim2)
    streamed, tl_s = serving.figures(sim2, s), serving.timeline(sim2)
    assert "step_s" not in sim2  # never expanded
    for k, v in expanded.items():
        if isinstance(v, float):
            assert streamed[k] == pytest.approx(v, rel=1e-9, abs=1e-12), k
        else:
            assert streamed[k] == v, k
    for k in tl_e:
        np.testing.assert_allclose(tl_s[k], tl_e[k], rtol=1e-12, atol=0)


def test_a_long_runs_steps_take_a_few_bytes_a_request():
    s = resolve([("num_requests", "3000"), ("seed", "4")])[0]
    sim = serving.simulate(s, serving.workload(s))
    log = sim["steps"]
    assert log.steps > 50 * 3000  # ~80 decode steps a request at the default rate
    assert log.nbytes() / 3000 < 300  # kept as runs: not 40 bytes a step


@settings(max_examples=60, deadline=None)
@given(
    runs=st.lists(
        st.tuples(st.floats(1e-4, 0.05), st.floats(0, 1e-5), st.integers(1, 40), st.integers(0, 9)),
        min_size=1,
        max_size=12,
    ),
    ones=st.lists(st.tuples(st.floats(1e-4, 0.2), st.integers(0, 5)), max_size=10),
    qs=st.lists(st.floats(0, 100), min_size=1, max_size=4),
)
def test_streamed_percentiles_match_numpys_on_the_expanded_sample(runs, ones, qs):
    a = np.array([r[0] for r in runs])
    bs = np.array([r[1] for r in runs])
    n = np.array([r[2] for r in runs], dtype=np.int64)
    w = np.array([r[3] for r in runs], dtype=np.int64)
    t0 = np.cumsum(np.concatenate([[0.0], (n * a + bs * n * n)[:-1]])) + 1.0
    z = np.zeros(len(runs), dtype=np.int64)
    log = StepLog(t0=t0, a=a, bs=bs, n=n, batch=w, b0=z, b1=z, exp_end=np.zeros(0),
                  exp_dt=np.zeros(0), one_end=np.arange(len(ones)) + 1e6,
                  one_dt=np.array([o[0] for o in ones]),
                  one_batch=np.array([o[1] for o in ones], dtype=np.int64),
                  one_itl=np.array([o[1] for o in ones], dtype=np.int64),
                  one_blocks=np.zeros(len(ones), dtype=np.int64), layers=1)  # fmt: skip
    values = np.concatenate([a[i] + bs[i] * np.arange(n[i]) for i in range(len(runs))]
                            + [log.one_dt])  # fmt: skip
    weights = np.concatenate([np.full(n[i], w[i]) for i in range(len(runs))] + [log.one_itl])
    if weights.sum() == 0:
        return
    sample = np.repeat(values, weights)
    got = log.itl_percentiles(qs, np.zeros(0), np.zeros(0), 1.0)
    want = np.percentile(sample, qs)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-15)


def _log(t0, a, bs, n, w, one_end=(), one_itl=()) -> StepLog:
    z = np.zeros(len(n), dtype=np.int64)
    k = len(one_end)
    return StepLog(t0=np.asarray(t0, float), a=np.asarray(a, float), bs=np.asarray(bs, float),
                   n=np.asarray(n, dtype=np.int64), batch=np.asarray(w, dtype=np.int64), b0=z,
                   b1=z, exp_end=np.zeros(0), exp_dt=np.zeros(0),
                   one_end=np.asarray(one_end, float), one_dt=np.full(k, 0.01),
                   one_batch=np.asarray(one_itl, dtype=np.int64),
                   one_itl=np.asarray(one_itl, dtype=np.int64),
                   one_blocks=np.zeros(k, dtype=np.int64), layers=1)  # fmt: skip


def test_tokens_by_second_counts_a_runs_steps_by_hand():
    # one run from 0 s: steps of 0.3 + 0.1 j s end at 0.3, 0.7, 1.2, 1.8, 2.5 s with 2 tokens
    # each, and one single step at 2.2 s with 3 tokens: [0, 1) 4, [1, 2) 4, [2, 3) 2 + 3
    log = _log([0.0], [0.3], [0.1], [5], [2], one_end=[2.2], one_itl=[3])
    np.testing.assert_allclose(log.tokens_by_second(0.0), [4.0, 4.0, 5.0])
    # the buckets start at the origin (vLLM's first send), not at zero; steps before it are
    # not counted: [0.5, 1.5) 0.7 and 1.2 s, [1.5, 2.5) 1.8 and the single step, [2.5, 3.5)
    np.testing.assert_allclose(log.tokens_by_second(0.5), [4.0, 5.0, 2.0])


@settings(max_examples=80, deadline=None)
@given(
    runs=st.lists(
        st.tuples(st.floats(1e-3, 0.9), st.floats(0, 0.05), st.integers(1, 60), st.integers(0, 9)),
        min_size=1,
        max_size=10,
    ),
    origin=st.floats(0, 3),
)
def test_tokens_by_second_equals_the_expanded_steps_binned(runs, origin):
    a = np.array([r[0] for r in runs])
    bs = np.array([r[1] for r in runs])
    n = np.array([r[2] for r in runs], dtype=np.int64)
    w = np.array([r[3] for r in runs], dtype=np.int64)
    t0 = np.cumsum(np.concatenate([[0.0], (n * a + bs * n * n)[:-1]])) + 0.25
    log = _log(t0, a, bs, n, w, one_end=[0.1, 7.3], one_itl=[1, 4])
    ex = log.expanded()
    # a step that ends on a bucket's edge, to the last bits, lands on either side of it as the
    # closed form and the expanded sum round (runs=[(0.05, 0, 37, 1)], origin 0.05: the 16th
    # step ends at 1.0 s past the origin): equal buckets are asked of the other ends
    since = ex["step_end_s"] - origin
    assume(np.all(np.abs(since - np.round(since)) > 1e-9))
    k = np.floor(since)
    ok = k >= 0
    want = np.bincount(k[ok].astype(np.int64), weights=ex["step_itl_tokens"][ok].astype(float))
    got = log.tokens_by_second(origin)
    size = max(len(got), len(want))
    np.testing.assert_allclose(np.pad(got, (0, size - len(got))),
                               np.pad(want, (0, size - len(want))))  # fmt: skip
