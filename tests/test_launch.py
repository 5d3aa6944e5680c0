"""Launch counts, graph modes and capture buckets (SPEC 4.2)."""

import numpy as np
from numpy.testing import assert_allclose

from model import launch
from model.evaluate import evaluate
from model.scenario import VLLM_CAPTURE_SIZES


def test_70b_eager_launches(scenario):
    # seed "The chef who calls out every order": 80 layers × 10 kernels = 800 launches × 5 µs
    d = evaluate(scenario(scenario="seed-70b-eager-4xh100"))["decode"]
    assert d["launches"] == 800
    assert_allclose(d["t_launch_ms"], 4.0)
    assert_allclose(1 / (800 * 5e-6), 250)  # the launch ceiling, tok/s at batch 1


def test_vllm_capture_sizes():
    # SPEC 3: 1, 2, 4, 8…248 step 8, 256…512 step 16 = 51 sizes; full_and_piecewise ≈ 102 graphs
    assert len(VLLM_CAPTURE_SIZES) == 51
    assert VLLM_CAPTURE_SIZES[:5] == (1, 2, 4, 8, 16) and VLLM_CAPTURE_SIZES[-1] == 512
    assert launch.graphs_captured("full_and_piecewise", VLLM_CAPTURE_SIZES) == 102
    assert launch.graphs_captured("piecewise", VLLM_CAPTURE_SIZES) == 51
    assert launch.graphs_captured("none", VLLM_CAPTURE_SIZES) == 0


def test_padding_to_the_next_bucket_and_eager_above_the_largest():
    sizes = [1, 2, 4, 8, 16]
    assert_allclose(launch.padded_batch([1, 3, 5, 16, 17], sizes), [1, 4, 8, 16, 17])
    n = launch.launches_per_step(np.array([3, 17]), 800, 80, "full_decode_only", sizes)
    assert_allclose(n, [1, 800])
    assert_allclose(launch.launches_per_step(3, 800, 80, "piecewise", sizes), 161)
    assert_allclose(launch.launches_per_step(3, 800, 80, "none", sizes), 800)


def test_padded_batch_costs_compute_not_kv(scenario):
    s = scenario(scenario="llama-3b-fp8-1xh100", batch=3, capture_sizes="1,2,4,8")
    d = evaluate(s)["decode"]
    assert d["padded_batch"] == 4
    eager = evaluate(scenario(scenario="llama-3b-fp8-1xh100", batch=3, cuda_graphs="none"))
    assert_allclose(d["t_compute_ms"], eager["decode"]["t_compute_ms"] * 4 / 3)
    assert_allclose(d["t_memory_ms"], eager["decode"]["t_memory_ms"])
