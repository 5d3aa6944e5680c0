"""Worked examples of SPEC 4.1 (seed *The roofline flips*) through the core."""

from pathlib import Path

import numpy as np
from numpy.testing import assert_allclose

from model import roofline
from model.evaluate import evaluate, roofline_lens, seed_table, sweep
from model.overrides import resolve
from model.units import TERA
from tests.pages import page_test

ROOT = Path(__file__).resolve().parent.parent


def test_seed_3b_4090_table(scenario):
    # values from the seed's table "Configuration (3B, 4090, batch 1)"; the seed rounds
    # T_fixed with graphs to 0.5 ms where the core keeps the one replay launch (5 µs)
    rows = seed_table(scenario(scenario="seed-3b-4090"))
    assert_allclose([r["t_hbm_ms"] for r in rows], [6.0, 6.0, 1.5, 1.5], rtol=1e-3)
    assert_allclose([r["t_fixed_ms"] for r in rows], [2.0, 0.5, 2.0, 0.5], rtol=0.011)
    assert_allclose([r["t_step_ms"] for r in rows], [8.0, 6.5, 3.5, 2.0], rtol=0.003)
    assert_allclose([r["tokens_per_s"] for r in rows], [125, 154, 285, 500], rtol=0.005)
    assert_allclose([r["speedup"] for r in rows], [1.00, 1.23, 2.28, 4.00], rtol=0.005)


def test_seed_3b_4090_scenario_and_its_three_variants(scenario):
    # the same four rows, reached as the CLI does: the named scenario plus --set overrides
    cases = [
        ({}, 8.0, 125.0),
        ({"cuda_graphs": "full_decode_only"}, 6.505, 1 / 6.505e-3),
        ({"weights_dtype": "int4"}, 3.5, 1 / 3.5e-3),
        ({"weights_dtype": "int4", "cuda_graphs": "full_decode_only"}, 2.005, 1 / 2.005e-3),
    ]
    for overrides, t_step_ms, tps in cases:
        d = evaluate(scenario(scenario="seed-3b-4090", **overrides))["decode"]
        assert_allclose(d["t_step_ms"], t_step_ms, rtol=1e-9)
        assert_allclose(d["tokens_per_s"], tps, rtol=1e-9)
        assert d["bound"] == ("overhead" if overrides == {"weights_dtype": "int4"} else "memory")


def test_ridge_points_of_the_seed():
    # seed "The bare mechanism": H100 BF16 ≈ 295, FP8 ≈ 590, RTX 4090 FP16 ≈ 330 FLOP/byte
    assert_allclose(roofline.ridge_point(989e12, 3.35e12), 295.2, rtol=1e-3)
    assert_allclose(roofline.ridge_point(1979e12, 3.35e12), 590.7, rtol=1e-3)
    assert_allclose(roofline.ridge_point(330e12, 1.0e12), 330.0)


def test_ridge_reported_for_the_compute_dtype(scenario):
    fp8 = evaluate(scenario())["roofline"]  # default: FP8 weights on H100 SXM
    assert fp8["compute_dtype"] == "fp8"
    assert_allclose(fp8["ridge_flop_per_byte"], 1979 / 3.35, rtol=1e-12)
    bf16 = evaluate(scenario(weights_dtype="bf16"))["roofline"]
    assert_allclose(bf16["ridge_flop_per_byte"], 989 / 3.35, rtol=1e-12)
    int4 = evaluate(scenario(weights_dtype="int4"))["roofline"]
    assert int4["compute_dtype"] == "bf16"  # W4A16: multiplied in 16-bit


def test_70b_bf16_on_one_h100(scenario):
    # seed: ~140 GB / 3.35 TB/s ≈ 42 ms → ≈ 24 tok/s; T_fixed 2 ms ≈ 5 % of the step
    s = scenario(scenario="seed-70b-bf16-1xh100")
    out = evaluate(s)
    weights_gb = 70.55 * 2  # Llama 3.1 70B has 70.55 B parameters
    assert_allclose(out["memory"]["weights_gb"], weights_gb)
    # a step reads all but the untied input embedding (128,256 × 8,192 rows): 41.5 ms
    read_gb = (70.55 - 128256 * 8192 / 1e9) * 2
    assert_allclose(out["decode"]["t_memory_ms"], read_gb / 3.35, rtol=1e-9)
    assert_allclose(1e3 / out["decode"]["t_memory_ms"], 24, rtol=0.02)
    fixed = out["decode"]["t_launch_ms"] + out["decode"]["t_host_ms"]
    assert_allclose(fixed / out["decode"]["t_step_ms"], 0.05, atol=0.006)
    assert out["memory"]["weights_fit"] is False  # 141 GB on one 80 GB GPU
    seed3b = evaluate(scenario(scenario="seed-3b-4090"))["decode"]
    assert_allclose((seed3b["t_launch_ms"] + seed3b["t_host_ms"]) / seed3b["t_step_ms"], 0.25)


def test_amdahl_quantisation_speedup():
    # seed consequence (d): f = 0.6, s = 4 → 1 / (0.4 + 0.15) ≈ 1.8×
    assert_allclose(roofline.amdahl_speedup(0.6, 4), 1 / 0.55)
    assert_allclose(roofline.amdahl_speedup(0.6, 4), 1.8, atol=0.02)


def test_amdahl_panel_matches_the_table_for_the_seed(scenario):
    am = roofline_lens(scenario(scenario="seed-3b-4090"))["amdahl"]
    # T_HBM is 6 of 8 ms: f = 0.75 → 1 / (0.25 + 0.1875) = 2.2857; the INT4 row is 8 / 3.5
    assert_allclose(am["fraction"], 0.75)
    assert_allclose(am["estimate"], 1 / 0.4375)
    assert_allclose(am["table"], 8 / 3.5)


def test_arithmetic_intensity_by_dtype():
    # 1-byte weights: AI ≈ 2B (the seeds' figure); BF16 weights: AI ≈ B
    b = np.array([1, 8, 64])
    flops = roofline.step_flops(b, 7e9, 32, 32, 128, 0)
    assert_allclose(roofline.arithmetic_intensity(flops, 7e9 * 1.0), 2 * b)
    assert_allclose(roofline.arithmetic_intensity(flops, 7e9 * 2.0), b)


def test_kv_bytes_per_token_of_llama_70b():
    # 2 (K, V) × 80 layers × 8 KV heads × 128 × 2 bytes = 327,680 B per token
    assert roofline.kv_bytes_per_token(80, 8, 128, 2) == 327_680


def test_max_batch_of_the_default_scenario(scenario):
    # by hand, ideal engine: an "80 GB" H100 holds 80 GiB; 80 × 2^30 × 0.9 − 72.65/4 GB weights
    # (70.55 B at FP8's 1 B, plus 1 B more for each of the 2 × 128,256 × 8,192 embedding and
    # head parameters the FP8 checkpoint keeps in BF16) − 102 graphs × 4 MB = 58.7386 GB per
    # GPU; KV per sequence per GPU at 2048 tokens = 327,680 × 2048 / 4 shards = 167,772,160 B
    mem = evaluate(scenario(engine="ideal"))["memory"]
    budget = 80 * 2**30 * 0.9 / 1e9 - (70.55 + 2 * 128256 * 8192 / 1e9) / 4 - 0.408
    assert_allclose(mem["kv_budget_per_gpu_gb"], budget)
    assert mem["hbm_per_gpu_gib"] == 80
    assert mem["max_batch"] == int(budget * 1e9 // 167_772_160) == 350
    # vLLM keeps its sampler's profiling peak and non-torch memory beside the KV cache
    vllm = evaluate(scenario())["memory"]
    assert vllm["max_batch"] < mem["max_batch"]
    assert_allclose(
        vllm["kv_budget_per_gpu_gb"],
        budget - vllm["engine_reserve_gb"] - (vllm["graph_memory_gb"] - 0.408),
    )


def test_graph_memory_lowers_max_batch(scenario):
    eager = evaluate(scenario(cuda_graphs="none"))["memory"]
    graphs = evaluate(scenario(cuda_graphs="full_and_piecewise", graph_mb_per_graph=200))["memory"]
    assert graphs["max_batch"] < eager["max_batch"]
    assert eager["graph_memory_gb"] == 0


def test_allreduce_time_by_hand(scenario):
    # default: batch 1, hidden 8192, 80 layers, TP 4 over 450 GB/s:
    # 2 × 80 × (2 × 3/4 × 8192 × 2 B / 450e9 B/s) = 8.738 µs
    d = evaluate(scenario(engine="ideal"))["decode"]
    assert_allclose(d["t_comm_ms"], 160 * 1.5 * 16384 / 450e9 * 1e3)
    assert evaluate(scenario(gpus=1))["decode"]["t_comm_ms"] == 0
    # the vllm engine adds its measured latency per all-reduce (5 µs on NVLink)
    v = evaluate(scenario())["decode"]
    assert_allclose(v["t_comm_ms"], 160 * (1.5 * 16384 / 450e9 + 5e-6) * 1e3)


def test_moe_weights_read_grow_from_active_to_total():
    # Mixtral: 46.7 B total, 12.9 B active, 8 experts, 2 per token
    read = roofline.params_read(np.array([1, 2, 16, 4096]), 46.7e9, 12.9e9, 8, 2)
    assert_allclose(read[0], 12.9e9)
    assert_allclose(roofline.experts_touched(2, 8, 2), 8 * (1 - 0.75**2))  # 3.5 experts
    assert np.all(np.diff(read) > 0)
    assert_allclose(read[-1], 46.7e9, rtol=1e-9)


def test_sweep_over_4096_batches_is_one_call(scenario):
    s = scenario(scenario="llama-8b-1xh100")
    b = np.arange(1, 4097)
    sw = sweep(s, b)
    assert sw["t_step_s"].shape == (4096,)
    assert set(np.unique(sw["bound"])) <= {"memory", "compute", "overhead"}


def test_compute_bound_at_large_batch_for_a_small_model(scenario):
    s = scenario(
        scenario="llama-3b-fp8-1xh100",
        engine="ideal",
        context_tokens=0,
        batch=4096,
        cuda_graphs="none",
    )
    d = evaluate(s)["decode"]
    assert d["bound"] == "compute"
    # 2 × 3.21e9 × 4096 FLOP / 1979 TFLOPS
    assert_allclose(d["t_compute_ms"], 2 * 3.21e9 * 4096 / (1979 * TERA) * 1e3)


def test_pipelined_step_is_the_larger_of_gpu_and_launch(scenario):
    s = scenario(scenario="seed-3b-4090", launch_model="pipelined", weights_dtype="int4")
    d = evaluate(s)["decode"]
    assert_allclose(d["t_step_ms"], max(1.5, 1.5) + 0.5)  # GPU 1.5 ms, launches 1.5 ms


def test_efficiencies_scale_the_terms(scenario):
    s = scenario(scenario="seed-3b-4090", bw_efficiency=0.75)
    assert_allclose(evaluate(s)["decode"]["t_memory_ms"], 6.0 / 0.75)


def test_the_seed_table_calls_its_gpu_time_so():
    at = page_test("pages/1_Roofline.py", timeout=120)
    at.query_params["scenario"] = "seed-3b-4090"
    at.session_state["t_roofline"] = "BF16/INT4 × CUDA graphs"
    at.run()
    # the first table that is not the accuracy panel's (its index is the figure category)
    frame = next(df.value for df in at.dataframe if df.value.index.name != "figures")
    columns = list(frame.columns)
    assert "GPU time [ms]" in columns and "HBM reads [ms]" not in columns


def test_the_seed_table_has_the_scenarios_own_dtype():
    from model.evaluate import seed_table

    fp8 = [r["configuration"] for r in seed_table(resolve([("scenario", "default")])[0])]
    assert fp8[-2:] == ["FP8 (scenario's dtype), no graphs", "FP8 (scenario's dtype), CUDA graphs"]
    seed = [r["configuration"] for r in seed_table(resolve([("scenario", "seed-3b-4090")])[0])]
    assert seed == ["BF16, no graphs", "BF16, CUDA graphs", "INT4, no graphs", "INT4, CUDA graphs"]


# ------------------------------------------------------------------ per-kernel roofline (2026.12.8)


def test_gpu_time_whole_step_and_per_kernel_by_hand():
    # GEMMs compute-bound (10 ms of FLOPs over 4 ms of weights), attention memory-bound (6 ms
    # of KV over 0.5 ms of FLOPs): one roof 10.5 ms, two kernels 10 + 6 ms
    t_mem, t_cmp = 4e-3 + 6e-3, 10e-3 + 0.5e-3
    assert_allclose(roofline.gpu_time(t_mem, t_cmp), 10.5e-3)
    assert_allclose(roofline.gpu_time(t_mem, t_cmp, 6e-3, 0.5e-3, per_kernel=True), 16e-3)
    # every kernel memory-bound: the two agree (the small-batch regime)
    assert_allclose(roofline.gpu_time(10e-3, 3e-3, 6e-3, 1e-3, per_kernel=True), 10e-3)


def test_a_large_batch_pays_its_gemms_roof_and_then_its_kv_read(scenario):
    """Llama-3.1-8B BF16 on one H100, batch 512 at 512 tokens of context (vLLM profile, 0.80 of
    3.35 TB/s, 0.60 of 989 TFLOPS): the GEMMs are compute-bound and the KV read, 512 × 512 ×
    131,072 B (2 × 32 layers × 8 KV heads × 128 × 2 B), is 12.82 ms on its own; revision
    2026.12.7 hid it under the GEMMs' FLOPs."""
    pairs = dict(model="llama-3.1-8b", hardware="h100-sxm", gpus=1, batch=512, context_tokens=512)
    new = sweep(scenario(**pairs, engine="vllm"), [512])
    old = sweep(scenario(**pairs, engine="vllm@2026.12.7"), [512])
    kv = 512 * 512 * 131072 / (0.8 * 3.35e12)
    attn = 4 * 32 * 32 * 128 * 512 * 512 / (0.6 * 989e12)
    assert_allclose(kv, 12.82e-3, rtol=1e-3)
    gemm = new["t_compute_s"][0] - attn
    assert gemm > new["t_memory_s"][0] - kv  # the GEMMs are at their compute roof
    assert_allclose(new["t_gpu_s"][0], gemm + kv, rtol=1e-12)
    assert_allclose(old["t_gpu_s"][0], max(old["t_memory_s"][0], old["t_compute_s"][0]))
    assert new["t_gpu_s"][0] / old["t_gpu_s"][0] > 1.3
    # at batch 1 every kernel is memory-bound and the two revisions agree
    one = dict(pairs, batch=1)
    assert_allclose(
        sweep(scenario(**one, engine="vllm"), [1])["t_gpu_s"],
        sweep(scenario(**one, engine="vllm@2026.12.7"), [1])["t_gpu_s"],
        rtol=1e-12,
    )


def test_the_seeds_engine_keeps_one_roof(scenario):
    s = scenario(model="llama-3.1-8b", engine="ideal", context_tokens=512)
    sw = sweep(s, [1, 512, 4096])
    one_roof = np.maximum(sw["t_memory_s"], sw["t_compute_s"]) + sw["t_comm_s"]
    assert_allclose(sw["t_gpu_s"], one_roof, rtol=1e-12)


def test_the_step_split_says_when_the_kernels_add():
    at = page_test("pages/1_Roofline.py", timeout=120)
    for key, value in (("model", "qwen3-14b"), ("gpus", "1"), ("batch", "512")):
        at.query_params[key] = value
    at.query_params["context_tokens"] = "1024"
    at.run()
    split = [c.value for c in at.caption if c.value.startswith("Step split")]
    assert split and "the GEMMs' roof and then attention's" in split[0], split
    at.query_params["batch"] = "1"  # every kernel memory-bound: the plain split
    at.run()
    split = [c.value for c in at.caption if c.value.startswith("Step split")]
    assert split and split[0].startswith("Step split: memory"), split


# ------------------------------------------------------- prefill attention's own curve (2026.12.10)


def test_prefill_attention_runs_on_the_kernel_s_measured_curve_by_hand():
    """vLLM's profile times a prefill chunk's attention at 0.642 × kv / (kv + 1,200) of the
    BF16 peak (aiconfigurator's FA3 context-attention table), its GEMMs at prefill_efficiency
    0.75: the attended tokens are scaled by 0.75 / share. At kv = 1,200 the share is 0.321, so
    2.336; at 16,384 it is 0.598, so 1.254; the seeds' ideal engine keeps 1."""
    from model.decode import prefill_attention_scale

    pairs = [("model", "qwen3-14b"), ("hardware", "h100-sxm"), ("gpus", "1")]
    s = resolve([*pairs, ("engine", "vllm")], strict=True)[0]
    assert_allclose(
        prefill_attention_scale(s, [1200, 16384]), [0.75 / 0.321, 0.75 / 0.59818], rtol=1e-3
    )
    ideal = resolve([*pairs, ("engine", "ideal")], strict=True)[0]
    assert_allclose(prefill_attention_scale(ideal, [1200, 16384]), [1.0, 1.0])
    # the 2026.12.9 revision a link may name keeps attention at prefill_efficiency
    old = resolve([*pairs, ("engine", "vllm@2026.12.9")], strict=True)[0]
    assert_allclose(prefill_attention_scale(old, [1200]), [1.0])


def test_a_long_prompt_s_ttft_grows_by_its_attention_and_only_by_it():
    """A 32,000-token prompt's TTFT on the curve minus at prefill_efficiency is the attention's
    extra time alone: Σ over chunks of its attention FLOPs × (1 / (BF16 peak × share) − 1 /
    (peak × 0.75)); the reported prefill FLOPs do not change."""
    from model.request import chunk_sizes, request_figures

    pairs = [("model", "qwen3-14b"), ("hardware", "h100-sxm"), ("gpus", "1")]
    pairs += [("prompt_tokens", "32000"), ("output_tokens", "10")]
    new = resolve([*pairs, ("engine", "vllm")], strict=True)[0]
    old = resolve([*pairs, ("engine", "vllm@2026.12.9")], strict=True)[0]
    a, b = request_figures(new), request_figures(old)
    assert_allclose(a["prefill_flops"], b["prefill_flops"])
    sizes = chunk_sizes(32000, new.max_num_batched_tokens)
    starts = np.concatenate([[0.0], np.cumsum(sizes)[:-1]])
    attn = 4 * 40 * 40 * 128 * sizes * (starts + (sizes + 1) / 2)  # qwen3-14b: L 40, H 40, d 128
    kv = starts + sizes
    share = 0.642 * kv / (kv + 1200)
    extra = (attn / (989 * TERA * share) - attn / (989 * TERA * 0.75)).sum()
    # each chunk is compute-bound (GEMMs and attention alike), so the extra adds one for one
    assert_allclose((a["ttft_ms"] - b["ttft_ms"]) / 1e3, extra, rtol=0.02)
