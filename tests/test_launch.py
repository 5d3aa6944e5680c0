"""Launch counts, graph modes and capture buckets (SPEC 4.2)."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from model import launch
from model.evaluate import evaluate, launch_lens, sweep
from model.knobs import knobs
from model.overrides import resolve
from model.scenario import CUDA_GRAPHS_MODES, VLLM_CAPTURE_SIZES
from tests.helpers import scenarios


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


# --- SPEC 4.2 worked examples through the launch section -----------------------------------


def test_70b_launch_section(scenario):
    # seed "The chef who calls out every order": 800 launches × 5 µs = 4.0 ms, ceiling 250 tok/s
    lf = evaluate(scenario(scenario="seed-70b-eager-4xh100"))["launch"]
    assert lf["kernels"] == 800
    assert_allclose(lf["t_launch_eager_ms"], 4.0)
    assert_allclose(lf["launch_ceiling_tokens_per_s"], 250.0)
    assert lf["graphs_captured"] == 0 and lf["capture_s"] == 0  # enforce-eager captures none
    assert lf["graph_mode"] == "full_and_piecewise"
    # the eager step is T_gpu + 4.0 ms + host; one replay instead of 800 launches
    assert_allclose(lf["t_step_eager_ms"] - lf["t_step_graph_ms"], 4.0 - 0.005)


def qa_step_ms(weight_gib, n_kernels=430, tau_us=5.0, bw=1e12):
    """The seed's own code (CUDA graphs Q&A, 'Code'), copied verbatim."""
    compute = weight_gib * 1024**3 / bw * 1e3
    eager = compute + n_kernels * tau_us / 1e3
    graph = compute + tau_us / 1e3
    return compute, eager, graph, eager / graph


@pytest.mark.parametrize(
    ("name", "gib", "printed", "tax"),
    [
        # the seed prints: compute 5.9ms eager 8.1ms graph 5.9ms speedup 1.36x; tax ~36 %
        ("seed-qa-awq-5.5gib", 5.5, (5.9, 8.1, 5.9, 1.36), 0.36),
        # compute 15.2ms eager 17.4ms graph 15.3ms speedup 1.14x; tax ~14 %
        ("seed-qa-bf16-14.2gib", 14.2, (15.2, 17.4, 15.3, 1.14), 0.14),
    ],
)
def test_qa_rows(scenario, name, gib, printed, tax):
    lf = evaluate(scenario(scenario=name))["launch"]
    ours = (lf["t_gpu_eager_ms"], lf["t_step_eager_ms"], lf["t_step_graph_ms"], lf["graph_speedup"])
    # to the seed's printed precision
    assert [round(v, 1) for v in ours[:3]] == list(printed[:3])
    assert round(ours[3], 2) == printed[3]
    # and to the seed's own formula (batch-1 compute is far under the memory time here)
    assert_allclose(ours, qa_step_ms(gib), rtol=1e-9)
    assert round(lf["launch_tax_of_gpu_time"], 2) == tax


def test_qa_row_by_overrides_on_the_default_scenario(scenario):
    # the same row with --set overrides only, as a user would type them
    s = scenario(
        **{
            "engine": "ideal",
            "hardware__hbm_bandwidth_tb_s": "1.0",
            "gpus": "1",
            "weights_dtype": "bf16",
            "weights_gb": str(14.2 * 2**30 / 1e9),
            "context_tokens": "0",
            "kernels": "430",
            "launch_us": "5",
            "host_ms": "0",
            "cuda_graphs": "full_decode_only",
        }
    )
    lf = evaluate(s)["launch"]
    assert_allclose(
        (lf["t_gpu_eager_ms"], lf["t_step_eager_ms"], lf["t_step_graph_ms"], lf["graph_speedup"]),
        qa_step_ms(14.2),
        rtol=1e-9,
    )


def test_weights_gb_sets_the_bytes_and_a_dtype_variant_drops_it(scenario):
    s = scenario(scenario="seed-qa-awq-5.5gib")
    assert_allclose(evaluate(s)["memory"]["weights_gb"], 5.5 * 2**30 / 1e9)
    assert s.with_dtype("bf16").weights_gb is None
    assert s.with_dtype("int4").weights_gb == s.weights_gb
    assert_allclose(evaluate(s.with_dtype("bf16"))["memory"]["weights_gb"], 7.62 * 2)


def test_hand_calculated_piecewise_on_a_4090(scenario):
    # 8B: 32 layers × 10 = 320 kernels; piecewise replays 2·32 + 1 = 65 pieces at τ = 7 µs.
    s = scenario(
        engine="ideal",
        hardware="rtx-4090",
        model="llama-3.1-8b",
        gpus=1,
        weights_dtype="int4",
        context_tokens=0,
        launch_us=7,
        host_ms=0.2,
        cuda_graphs="piecewise",
    )
    lf = evaluate(s)["launch"]
    table = 128256 * 4096  # the untied input embedding (not read) and the output head
    read = s.model.params_b * 1e9 - table  # all but the input embedding, at INT4's 0.5 B ...
    # ... and the output head, which the INT4 checkpoint keeps in BF16: 1.5 B more each
    t_gpu = (read * 0.5 + table * 1.5) / (s.hardware.hbm_bandwidth_tb_s * 1e12) * 1e3
    assert lf["kernels"] == 320 and lf["launches_graph"] == 65
    assert_allclose(lf["t_step_eager_ms"], t_gpu + 320 * 0.007 + 0.2)
    assert_allclose(lf["t_step_graph_ms"], t_gpu + 65 * 0.007 + 0.2)
    assert_allclose(lf["launch_ceiling_tokens_per_s"], 1 / (320 * 7e-6))
    assert lf["graphs_captured"] == 51
    assert_allclose(lf["capture_s"], 51 * 0.3)


def test_seed_padding_example():
    # seed: "Padding a batch of 33 up to the bucket of 64 computes 31 phantom sequences"
    assert_allclose(launch.padded_batch(33, [1, 2, 4, 8, 16, 32, 64]), 64)
    assert_allclose(launch.padding_waste(33, 64), 31 / 64)
    bw = launch.bucket_waste([1, 2, 4, 8, 16, 32, 64])
    assert bw["worst_batch"] == 33
    assert_allclose(bw["worst_waste"], 31 / 64)


def test_padding_and_eager_fallback_in_the_section(scenario):
    lf = evaluate(scenario(batch=33, capture_sizes="1,2,4,8,16,32,64"))["launch"]
    assert lf["padded_batch"] == 64
    assert_allclose(lf["padding_waste"], 31 / 64)
    lf = evaluate(scenario(batch=100, capture_sizes="1,2,4,8,16,32,64"))["launch"]
    assert lf["eager_fallback"] and not lf["in_graph"]
    assert lf["padded_batch"] == 100 and lf["padding_waste"] == 0
    assert lf["launches_graph"] == lf["kernels"]  # above the largest bucket: eager anyway
    assert_allclose(lf["graph_speedup"], 1.0)


def test_capture_costs_seconds_and_kv_memory(scenario):
    lf = evaluate(scenario(engine="ideal"))["launch"]
    assert lf["graphs_captured"] == 102
    assert_allclose(lf["capture_s"], 102 * 0.3)  # SPEC 4.3: ≈ 31 s
    assert_allclose(lf["graph_memory_gb"], 102 * 4e6 / 1e9)
    assert evaluate(scenario())["memory"]["max_batch"] < lf["max_batch_without_graphs"]
    bounded = evaluate(scenario(engine="ideal", capture_sizes="1,2,4,8,16,24,32,64"))["launch"]
    assert_allclose(bounded["capture_s"], 16 * 0.3)  # SPEC 4.3: the bounded set ≈ 5 s


def test_timeline_matches_the_step_formulas():
    tau, t_gpu, host = 5e-6, 4e-3, 5e-4
    additive = launch.step_timeline(800, tau, t_gpu, host, "additive")
    assert_allclose(additive["end"], t_gpu + 800 * tau + host)
    graph = launch.step_timeline(1, tau, t_gpu, host, "additive")
    assert_allclose(graph["end"], t_gpu + tau + host)
    piped = launch.step_timeline(800, tau, t_gpu, host, "pipelined")
    # the exact queue ends one un-hidden kernel or launch (min(τ, d)) after max(T_gpu, Nτ)
    assert_allclose(piped["end"], max(t_gpu, 800 * tau) + host + min(tau, t_gpu / 800))
    # kernels never start before their launch ends, nor overlap each other
    assert np.all(piped["gpu_start"] >= piped["cpu_end"] - 1e-15)
    assert np.all(piped["gpu_start"][1:] >= piped["gpu_end"][:-1] - 1e-15)


def test_quantised_models_gain_more(scenario):
    # the Q&A's deep dive: same N·τ, smaller compute → larger speed-up
    gain = launch.graph_gain(np.array([2e-3, 6e-3, 15e-3]), 430, 1, 5e-6, 0.0)
    assert np.all(np.diff(gain["speedup"]) < 0) and np.all(np.diff(gain["tax"]) < 0)
    lens = launch_lens(scenario(scenario="seed-qa-awq-5.5gib"))
    by = {d["weights_dtype"].split()[0]: d for d in lens["dtypes"]}
    assert by["int4"]["graph_speedup"] > by["fp8"]["graph_speedup"] > by["bf16"]["graph_speedup"]


def test_launch_lens_sweeps_each_mode_in_one_call(scenario):
    lens = launch_lens(scenario(batch=40))
    assert set(lens["modes"]) == set(CUDA_GRAPHS_MODES)
    grid = lens["grid"]
    assert np.all(np.diff(grid) > 0) and 40 in grid and 4096 in grid
    assert len(lens["mode_table"]) == 4
    eager = lens["modes"]["none"]
    assert np.all(eager["launches"] == 800) and np.all(eager["padded_batch"] == grid)


def test_knobs_follow_the_scenario(scenario):
    rows = knobs(scenario(scenario="seed-70b-eager-4xh100"))
    assert [r["number"] for r in rows] == list(range(1, 11))
    assert rows[1]["applies"] is True and "1.69×" in rows[1]["here"]
    assert rows[9]["applies"] is False  # eager captures nothing
    rows = knobs(scenario(engine="ideal"))
    assert rows[1]["applies"] is False and rows[9]["applies"] is True
    assert "30.6 s" in rows[9]["here"]
    rows = knobs(scenario(batch=600))  # above vLLM's largest size, 512
    assert rows[1]["applies"] is True and "runs eager" in rows[1]["here"]
    assert rows[6]["applies"] is None and rows[7]["applies"] is None


# --- properties ---------------------------------------------------------------------------


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.integers(1, 4096))
def test_graphs_never_slow_an_unpadded_additive_step(s, batch):
    s = s.model_copy(update={"launch_model": "additive"})
    for mode in CUDA_GRAPHS_MODES[1:]:
        g = sweep(s.model_copy(update={"cuda_graphs": mode}), [batch])
        e = sweep(s.model_copy(update={"cuda_graphs": "none"}), [batch])
        if g["padded_batch"][0] == batch:
            assert g["t_step_s"][0] <= e["t_step_s"][0] * (1 + 1e-12)
        else:
            # padding can cost more compute than the launches save (seed: "it grows if the
            # buckets are badly chosen"), but never more than the padded compute itself
            extra = (g["t_gpu_s"][0] - e["t_gpu_s"][0]) * (1 + 1e-9)
            assert g["t_step_s"][0] <= e["t_step_s"][0] + max(extra, 0) + 1e-15


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.lists(st.integers(1, 65536), min_size=1, max_size=20))
def test_pipelined_never_exceeds_additive_and_waste_is_a_fraction(s, batches):
    add = sweep(s.model_copy(update={"launch_model": "additive"}), batches)
    pip = sweep(s.model_copy(update={"launch_model": "pipelined"}), batches)
    assert np.all(pip["t_step_s"] <= add["t_step_s"] * (1 + 1e-12))
    waste = launch.padding_waste(batches, launch.padded_batch(batches, s.capture_sizes))
    assert np.all((waste >= 0) & (waste < 1))
    assert np.all(launch.padded_batch(batches, s.capture_sizes) >= batches)


def test_timeline_of_a_huge_step_keeps_only_the_first_launches():
    full = launch.step_timeline(800, 5e-6, 4e-3, 5e-4, "pipelined")
    cut = launch.step_timeline(800, 5e-6, 4e-3, 5e-4, "pipelined", limit=10)
    assert cut["end"] == full["end"] and cut["cpu_start"].size == 10
    assert_allclose(cut["gpu_start"], full["gpu_start"][:10])
    huge = launch.step_timeline(1_000_000, 5e-6, 4e-3, 0.0, "additive", limit=2000)
    assert huge["cpu_start"].size == 2000
    assert_allclose(huge["end"], 4e-3 + 1_000_000 * 5e-6)


def test_a_figure_that_does_not_move_is_said_to_stay():
    from model.knobs import _moves, knobs

    assert _moves(8.3601e-3, 8.3649e-3) == "stay at 8.36 ms"
    assert _moves(8.36e-3, 5.1e-3) == "go from 8.36 ms to 5.1 ms"
    from model.presets import scenario_names

    for name in scenario_names():
        for row in knobs(resolve([("scenario", name)])[0]):
            text = row["here"]
            for a, b in re.findall(r"from ([\d.]+ ms) to ([\d.]+ ms)", text):
                assert a != b, text
