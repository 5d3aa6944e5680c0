"""The engine profiles' numbers against their published evidence (the arithmetic is in
presets/engines-EVIDENCE.md): FP8 efficiencies, capture by release band, V0's profiling peak,
graph memory, MoE and latent attention at small batch, the ranges beside the start-up figures,
quantised checkpoints, and each GPU's bandwidth share. Cold reads, sleep wake and compile
times are in tests/test_cold_start.py."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from numpy.testing import assert_allclose

from model import decode, engines, memory, roofline
from model.calibrate import calibrate
from model.cold_start import cold_start
from model.evaluate import evaluate
from model.readers.vllm_log import parse_log
from tests.helpers import assert_close, scenarios
from tests.pages import page_test

GIB = 2**30


# ----------------------------------------------------------------------------- 1. FP8 runs slower


def test_fp8_weights_take_the_fp8_efficiencies(scenario):
    # aiconfigurator's vLLM 0.14.0 H100 table: FP8 scaled-mm GEMMs 0.48-0.63 of bandwidth at m=1
    s8 = scenario(model="llama-3.1-8b", gpus=1, weights_dtype="fp8")
    s16 = scenario(model="llama-3.1-8b", gpus=1, weights_dtype="bf16")
    assert (s8.bw_efficiency, s8.flops_efficiency, s8.prefill_efficiency) == (0.55, 0.30, 0.42)
    assert (s16.bw_efficiency, s16.prefill_efficiency) == (0.80, 0.75)
    # 70B FP8 at TP2, a 5,000-token prompt: prefill attains ~0.42 of the FP8 peak (not 0.75)
    r = evaluate(scenario(model="llama-3.3-70b", gpus=2, weights_dtype="fp8", prompt_tokens=5000))[
        "request"
    ]
    assert r["prefill_bound"] == "compute"
    assert 0.35 <= r["prefill_attained_tflops"] / 1979 <= 0.42
    # a scenario's own efficiency still wins
    own = scenario(model="llama-3.1-8b", weights_dtype="fp8", bw_efficiency="0.9")
    assert own.bw_efficiency == 0.9


# ------------------------------------------------------------------- 2. capture by release band


def test_capture_per_graph_by_release_band(scenario):
    # V1 0.8-0.10 (vllm@0.9): 67 piecewise graphs at ~0.40 s (logs: 0.25, 0.43, 0.49 s)
    old = evaluate(scenario(engine="vllm@0.9", model="llama-3.1-8b", gpus=1))
    assert old["launch"]["graphs_captured"] == 67
    assert_allclose(old["cold_start"]["capture_s"], 67 * 0.40)
    # 0.11+: 0.0045 s per layer beyond 15; a 22-layer model 0.03 s per graph (PR 29335)
    small = scenario(model="llama-3.2-1b", model__layers=22, gpus=1)
    assert_allclose(small.capture_s_per_graph, 0.0045 * 7)
    s48 = scenario(model="qwen3-30b-a3b", gpus=1)
    assert_allclose(s48.capture_s_per_graph * 102, 15.1, rtol=0.05)  # issue 47456: 15 s
    # a link to the band keeps its numbers; the current version is unchanged by it
    assert engines.normalise("vllm@0.9") == "vllm@0.9"
    assert engines.normalise("vllm").endswith("@2026.12.10")


@pytest.mark.parametrize(
    ("release", "kind", "engine"),
    [
        ("0.8.5", None, "vllm@0.9"),
        ("v0.10.1.1", "V1", "vllm@0.9"),
        ("0.11.2", None, "vllm@0.11"),
        ("0.24.0", "V1", "vllm@2026.12.10"),
        ("0.6.4.dev26+g92d86da2", None, "vllm-v0@2026.12.4"),
        ("0.9.2", "V0", "vllm-v0@2026.12.4"),
        (None, "V0", "vllm-v0@2026.12.4"),
        ("0.2.7", "V0", "vllm-v0@0.4"),
        ("0.4.1", None, "vllm-v0@0.4"),
        ("0.5.3.post1", None, "vllm-v0@2026.12.4"),
        ("0.7.3", None, "vllm-v0@0.7"),
        ("v0.7.4.dev181+gf35f8e22", "V0", "vllm-v0@0.7"),
        (None, None, None),
    ],
)
def test_a_log_release_chooses_the_band(release, kind, engine):
    assert engines.engine_for_log(release, kind) == engine


@pytest.mark.parametrize(
    ("engine", "release", "band", "per_layer_us"),
    [("sglang", "0.4.3.post2", "0.4", 580), ("vllm-v0", "0.7.4", "0.7", 460)],
)
def test_early_2025_releases_run_deepseek_slower_and_nothing_else(
    scenario, engine, release, band, per_layer_us
):
    profile = engines.engine_profiles()[engine]
    assert profile.band_for(release) == band
    assert profile.band_for("0.5.7" if engine == "sglang" else "0.6.5") == profile.version
    old, new = profile.figures(band), profile.figures()
    assert old.mla_us_per_layer == per_layer_us
    # the band states only its latent-attention figure; the rest is the profile's
    own = {"version", "releases", "mla_us_per_layer", "sources"}
    mine = old.model_dump(exclude=own)
    assert mine == {k: v for k, v in new.model_dump().items() if k in mine}
    r1_old = evaluate(scenario(model="deepseek-r1", gpus=8, engine=f"{engine}@{band}"))
    r1_new = evaluate(scenario(model="deepseek-r1", gpus=8, engine=engine))
    extra = r1_old["decode"]["t_step_ms"] - r1_new["decode"]["t_step_ms"]
    assert extra == pytest.approx(61 * (per_layer_us - new.mla_us_per_layer) * 1e-3)
    dense_old = evaluate(scenario(model="llama-3.1-70b", gpus=4, engine=f"{engine}@{band}"))
    dense_new = evaluate(scenario(model="llama-3.1-70b", gpus=4, engine=engine))
    assert dense_old["decode"] == dense_new["decode"]


@pytest.mark.parametrize(
    ("engine", "batch", "measured_ms"),
    # dstack's DeepSeek-R1 runs on 8x MI300X (held out: the bands were fitted on the H200 rows
    # of the same benchmark, tests/data/published_measurements.csv rows 212-226)
    [("sglang@0.4", 32, 59.43), ("sglang@0.4", 16, 47.36), ("vllm-v0@0.7", 32, 60.82)],
)
def test_the_early_2025_bands_hold_the_mi300x_runs_they_were_not_fitted_on(
    scenario, engine, batch, measured_ms
):
    s = scenario(
        model="deepseek-r1", gpus=8, hardware="mi300x", weights_dtype="fp8", engine=engine,
        batch=batch, context_tokens=3600,
    )  # fmt: skip
    assert evaluate(s)["decode"]["t_step_ms"] == pytest.approx(measured_ms, rel=0.2)


def test_v0_0_2_to_0_4_captures_its_35_graphs_in_about_5_s(scenario):
    # logs: Llama-2-13B on 0.2.7 in 5 s, a Mixtral-shaped model at TP2 on ~0.4.0 in 5-6 s
    # (published_measurements.csv, split fit); 0.6.x logs 0.29-0.46 s per graph
    old = evaluate(scenario(engine="vllm-v0@0.4", model="llama-2-13b", gpus=1))
    assert old["launch"]["graphs_captured"] == 35
    assert_allclose(old["launch"]["capture_s"], 35 * 0.16)
    lo, hi = old["launch"]["capture_s_range"]
    assert lo <= 5 and 6 <= hi and hi / lo <= 4
    now = evaluate(scenario(engine="vllm-v0", model="llama-2-13b", gpus=1))
    assert_allclose(now["launch"]["capture_s"], 35 * 0.40)


def test_the_release_select_offers_the_v0_band_and_writes_it_to_the_link():

    at = page_test("pages/4_Cold_start.py", timeout=60)
    at.query_params["engine"] = "vllm-v0"
    at.run()
    box = at.selectbox(key="w_engine_release")
    assert box.options == ["vLLM 0.6–0.10", "vLLM 0.7.x", "vLLM 0.2–0.4"]
    box.set_value("0.4").run()
    assert not at.exception
    assert at.query_params["engine"] in ("vllm-v0@0.4", ["vllm-v0@0.4"])


def test_an_sglang_page_names_sglang_releases_and_moves_deepseek_with_them():

    at = page_test("pages/4_Cold_start.py", timeout=60)
    at.query_params["engine"] = "sglang"
    at.query_params["model"] = "deepseek-r1"
    at.query_params["gpus"] = "8"
    at.session_state["x_cold_why"] = True  # the ranges' explanation, folded by default
    at.run()
    box = at.selectbox(key="w_engine_release")
    assert box.label == "SGLang release"
    assert box.options == ["SGLang 0.5 and later", "SGLang 0.4.x"]
    text = " ".join(m.value for m in at.markdown)
    assert "*SGLang release*" in text and "*vLLM release*" not in text
    box.set_value("0.4").run()
    assert not at.exception
    assert at.query_params["engine"] in ("sglang@0.4", ["sglang@0.4"])


def test_importing_a_0_8_log_compares_it_with_the_0_9_band(scenario):
    log = (
        "INFO 06-20 10:00:00 [api_server.py:1043] vLLM API server version 0.8.5\n"
        "INFO 06-20 10:00:40 [gpu_model_runner.py:1608] Graph capturing finished in 17 secs, "
        "took 0.48 GiB\n"
        "INFO 06-20 10:00:41 [core.py:162] init engine (profile, create kv cache, warmup model) "
        "took 34.11 seconds\n"
    )
    ds = parse_log(log, "v085.log")
    cal = calibrate(scenario(model="llama-3.2-3b", gpus=1), [ds])
    assert cal.engine == "vllm@0.9"
    assert any("vLLM 0.8.5" in n and "vllm@0.9" in n for n in cal.notes)
    # the capture it fits is per graph of that release's 67 graphs
    assert_allclose(cal.keys["capture_s_per_graph"], 17 / 67, rtol=1e-3)
    assert cal.to_json()["engine"] == "vllm@0.9"


# --------------------------------------------------------------------- 6. V0's profiling peak


def test_v0_keeps_its_profiling_peak_out_of_the_kv_cache(scenario):
    # vllm issue 10517 (V0 0.6.4, Llama-3.1-8B on an RTX 3090, util 0.90): kv_cache_size
    # 3.81 GiB at max_model_len 20000 (profiled tokens 20000), 2.89 GiB at 29000
    for tokens, measured in ((20000, 3.81), (29000, 2.89)):
        m = evaluate(
            scenario(
                engine="vllm-v0",
                hardware="rtx-3090",
                model="llama-3.1-8b",
                gpus=1,
                weights_dtype="bf16",
                max_num_batched_tokens=str(tokens),
            )
        )["memory"]
        assert m["kv_cache_gib_per_gpu"] == pytest.approx(measured, rel=0.06)


# --------------------------------------------------------------------------- 7. graph memory


def test_graph_memory_does_not_shrink_with_tp_and_grows_with_the_largest_size(scenario):
    one = scenario(model="llama-3.1-8b", gpus=1)
    four = scenario(model="llama-3.1-8b", gpus=4)
    assert one.graph_mb_per_graph == four.graph_mb_per_graph
    assert_close(one.graph_mb_per_graph, 1.55 * 4.096)
    bounded = scenario(model="llama-3.1-8b", gpus=1, capture_sizes="1,2,4,8,16,32,64")
    assert_close(bounded.graph_mb_per_graph, 1.55 * 4.096 * 64 / 512)
    moe = scenario(model="gpt-oss-20b", gpus=1)
    assert_close(moe.graph_mb_per_graph, 1.55 * 2.88 * 1.5)
    # the llm-d table (V1 ~0.11, H100): Qwen3-0.6B 0.1 GiB, gpt-oss-20b 0.39, gpt-oss-120b 1.03
    for model, measured in (("qwen3-0.6b", 0.1), ("gpt-oss-20b", 0.39), ("gpt-oss-120b", 1.03)):
        got = evaluate(scenario(model=model, gpus=1, weights_dtype="bf16"))["memory"]
        assert measured / 2 <= got["graph_memory_gib"] <= measured * 2


# ---------------------------------------------------------------------------- 8. MoE small batch


@pytest.mark.parametrize(
    ("model", "gpus", "dtype", "tokens", "measured_us"),
    [
        # aiconfigurator vLLM 0.14.0 H100 moe_perf (balanced routing), one MoE layer
        ("mixtral-8x7b", 2, "bf16", 8, 490),
        ("mixtral-8x7b", 2, "bf16", 1, 162),
        ("deepseek-v3", 8, "fp8", 8, 161),
        ("deepseek-v3", 8, "fp8", 64, 631),
    ],
)
def test_one_moe_layer_against_the_measured_kernel_table(
    scenario, model, gpus, dtype, tokens, measured_us
):
    s = scenario(model=model, gpus=gpus, weights_dtype=dtype, hardware="h100-sxm")
    m = s.model
    from model import roofline

    expert_bytes = roofline.weights_bytes(
        roofline.expert_params_read(
            tokens, m.params_b * 1e9, m.active * 1e9, m.experts, m.experts_per_token
        ),
        s.bytes_per_param,
    )
    touched = roofline.experts_touched(tokens, m.experts, m.experts_per_token)
    # only the touched experts' bytes (the active expert share beyond one token's k)
    per_expert = (m.params_b - m.active) * 1e9 / (m.experts - m.experts_per_token)
    read = touched * per_expert * s.bytes_per_param / gpus / m.layers
    assert expert_bytes > 0
    t = read / (3.35e12 * decode.moe_bw_efficiency(s)) + decode.moe_overhead_s(s, tokens) / m.layers
    assert t * 1e6 == pytest.approx(measured_us, rel=0.3)


@pytest.mark.parametrize(
    ("tp", "tokens", "measured_us"),
    # aiconfigurator vLLM 0.24.0 H100 moe_perf, int4_wo (WNA16 Marlin MoE), balanced routing:
    # a 7168 x 2048 layer, top-8 of 384 experts
    [(8, 8, 122.4), (8, 64, 520.5), (4, 8, 190.3), (1, 64, 3242.4), (2, 1, 73.4)],
)
def test_4_bit_weight_only_experts_take_the_marlin_moe_kernel_figures(tp, tokens, measured_us):
    _, fig = engines.split("vllm")
    bw, per_layer, per_expert = engines.moe_values(fig, "int4")
    assert (bw, per_layer, per_expert) == (0.60, 29, 0.43)
    touched = float(roofline.experts_touched(tokens, 384, 8))
    expert_bytes = 3 * 7168 * 2048 * 0.5 / tp
    t_us = per_layer + per_expert * touched + touched * expert_bytes / (bw * 3.35e12) * 1e6
    assert t_us == pytest.approx(measured_us, rel=0.3)


def test_an_awq_moe_step_pays_the_marlin_figures_per_layer(scenario):
    s = scenario(model="deepseek-r1", gpus=8, weights_dtype="int4")
    m = s.model
    touched = float(roofline.experts_touched(1, m.experts, m.experts_per_token))
    assert float(decode.moe_overhead_s(s, [1])[0]) == pytest.approx(
        m.layers * (29 + 0.43 * touched) * 1e-6
    )


@pytest.mark.parametrize(
    ("engine", "per_layer_us"), [("vllm", 97), ("sglang", 38), ("vllm-v0", 97), ("ideal", 0)]
)
def test_a_latent_attention_layer_pays_its_small_kernels(scenario, engine, per_layer_us):
    # aiconfigurator's MLA module tables (vLLM 0.24 on H100/H200, SGLang 0.5.10 on H200), less
    # the weights and latent KV the roofline already counts: 97 and 38 µs per layer
    # (presets/engines-EVIDENCE.md, python -m tools.fit_mla)
    s = scenario(model="deepseek-r1", hardware="h200", gpus=8, engine=engine, batch=4)
    e = s
    assert e.engine_figures.mla_us_per_layer == per_layer_us
    extra = decode.mla_overhead_s(s, [1, 4, 64])
    assert_allclose(extra, [61 * per_layer_us * 1e-6] * 3)
    row = decode.at_batch(s, 4)
    host = (
        e.host_ms * 1e-3
        # the engine core's work per running sequence, unless asynchronous scheduling
        # overlaps it with the GPU's step (vLLM's default from 0.14, SGLang's overlap scheduler)
        + (0 if e.async_scheduling_on else 4 * e.host_us_per_seq * 1e-6)
        + float(decode.moe_overhead_s(s, [4])[0])
        + 61 * per_layer_us * 1e-6
    )
    assert row["t_host_s"] == pytest.approx(host)
    # a model without a latent KV pays none, on any engine
    dense = scenario(model="llama-3.1-70b", hardware="h200", gpus=8, engine=engine)
    assert decode.mla_overhead_s(dense, [1, 64]).tolist() == [0.0, 0.0]


def test_deepseek_r1_on_sglang_against_its_published_sweep(scenario):
    # InferenceX issue 870: DeepSeek-R1-0528 FP8, SGLang 0.5.7, TP8 on H200, 1k/1k, mean TPOT
    # 12.8 / 17.2 / 25.6 / 34.6 ms at concurrency 8 / 16 / 32 / 64 (10.4-31.9 ms without the
    # MLA layers' 2.3 ms)
    for batch, tpot_ms in ((8, 12.8), (16, 17.2), (32, 25.6), (64, 34.6)):
        s = scenario(
            model="deepseek-r1", hardware="h200", gpus=8, engine="sglang", weights_dtype="fp8",
            batch=batch, context_tokens=1536,
        )  # fmt: skip
        assert decode.at_batch(s, batch)["t_step_s"] * 1e3 == pytest.approx(tpot_ms, rel=0.1)


def test_mixtral_at_batch_8_is_no_longer_45_percent_slow(scenario):
    # vllm PR 3240: Mixtral-8x7B on 2 A100s, benchmark_latency 1000 in / 50 out, batch 8:
    # 2.035 s end to end (40.7 ms per output token including the prefill)
    r = evaluate(
        scenario(
            model="mixtral-8x7b",
            hardware="a100-80gb",
            gpus=2,
            weights_dtype="bf16",
            batch=8,
            prompt_tokens=1000,
            output_tokens=50,
            context_tokens=1025,
        )
    )["request"]
    assert r["e2e_s"] == pytest.approx(2.035, rel=0.3)


# ---------------------------------------------------------------------------------- 9. ranges


RANGED = ("capture_s", "compile_s", "weights_s", "graphs_jit_s", "allocator_s", "total_s")


def test_the_json_carries_ranges_beside_the_points(scenario):
    f = evaluate(scenario())
    c, launch = f["cold_start"], f["launch"]
    for key in RANGED:
        lo, hi = c[f"{key}_range"]
        assert lo <= c[key] <= hi, key
    assert launch["capture_s_range"] == c["capture_s_range"]
    lo, hi = launch["graph_memory_gb_range"]
    assert lo < launch["graph_memory_gb"] < hi
    # a range of a sum is the sum of the ranges
    parts = ("process_init_s", "cuda_context_s", "allocator_s", "weights_s", "graphs_jit_s")
    for i in (0, 1):
        total = sum(c[f"{p}_range"][i] if f"{p}_range" in c else c[p] for p in parts)
        assert_close(c["total_s_range"][i], total)
    # each ranged figure names the fact that would narrow it and the key that sets it
    named = c["ranges_narrowed_by"]
    assert named["capture_s"]["control"] == "engine"
    assert named["weights_s"]["control"] == "stream_gb_s"
    assert named["compile_s"]["control"] == "compile_s"
    # low to high stays within a factor of 4 for every ranged start-up figure
    for key in ("capture_s", "compile_s", "weights_s"):
        lo, hi = c[f"{key}_range"]
        assert hi / lo <= 4.0 + 1e-9, key


def test_a_figure_the_scenario_states_is_a_point(scenario):
    c = evaluate(scenario(capture_s_per_graph="0.2", compile_s="30", stream_gb_s="2", gpus=1))[
        "cold_start"
    ]
    for key in ("capture_s", "compile_s", "weights_s"):
        lo, hi = c[f"{key}_range"]
        assert lo == hi == pytest.approx(c[key]), key
        assert key not in c["ranges_narrowed_by"]


def test_ideal_physics_states_points():
    from model.overrides import resolve

    s = resolve([("scenario", "seed-70b-fp8-cold-start")], strict=True)[0]
    c = evaluate(s)["cold_start"]
    assert c["total_s_range"] == [pytest.approx(c["total_s"])] * 2


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=scenarios())
def test_every_range_holds_its_point(s):
    c = cold_start(s)
    for key, value in c.items():
        if key.endswith("_range") and key[: -len("_range")] in c:
            lo, hi = value
            point = c[key[: -len("_range")]]
            assert 0 <= lo <= point * (1 + 1e-9) + 1e-12
            assert point <= hi * (1 + 1e-9) + 1e-12


def test_no_profile_range_is_too_wide_to_be_useful():
    # issue 20: a range wider than a factor of 3-4 from low to high is a defect too
    for ident, profile in engines.engine_profiles().items():
        for fig in (profile, *profile.bands):
            for key, (lo, hi) in fig.ranges.items():
                assert hi / lo <= 4.0 + 1e-9, (ident, fig.version, key)
                assert f"ranges.{key}" in fig.sources, (ident, key)


# ------------------------------------------- quantised checkpoints keep embeddings and head in BF16


def test_an_fp8_checkpoint_keeps_its_embedding_and_head_in_bf16(scenario):
    # RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic: 70.55 B at 1 B, and the 2 × 128,256 × 8,192
    # embedding and head parameters (ignore: ["lm_head"]; the lookup is never quantised) at 2 B
    s = scenario(model="llama-3.3-70b", gpus=1, weights_dtype="fp8")
    table = 128256 * 8192
    assert_allclose(s.weights_bytes, 70.55e9 * 1 + 2 * table * 1)
    mem = evaluate(s)["memory"]
    # published: "Model loading took 67.72 GiB" (tests/data/published_measurements.csv row 123)
    assert abs(mem["weights_per_gpu_gib"] - 67.72) / 67.72 < 0.01
    assert_allclose(mem["weights_dtype_gb"], mem["weights_gb"])
    # a decode step reads the head at 2 B and skips the input table
    read = decode.weights_read_bytes(s, 1)
    assert_allclose(read, (70.55e9 - 2 * table) * 1 + table * 2)  # the layers at 1 B, the head at 2


def test_gpt_oss_quantises_only_its_experts(scenario):
    # config.json modules_to_not_convert: self_attn, router, embed_tokens, lm_head
    s = scenario(model="gpt-oss-20b", gpus=1, weights_dtype="fp4")
    m = s.model
    assert m.quantised == "experts"
    attention = 24 * 2880 * 64 * 2 * (64 + 8)  # q, k, v, o of 24 layers
    kept = 2 * 201088 * 2880 + attention
    assert_allclose(m.unquantised_params, kept)
    assert_allclose(s.weights_bytes, 20.91e9 * 0.5 + kept * 1.5)
    # published: 13.47 GiB on an H100 (row 104; MXFP4's block scales are not modelled)
    got = evaluate(s)["memory"]["weights_per_gpu_gib"]
    assert 12.0 < got < 13.47


def test_the_seeds_count_every_parameter_at_the_dtype(scenario):
    # the roofline post's 3B at INT4: 3 B × 0.5 = 1.5 GB (SPEC 4.1 worked example)
    s = scenario(scenario="seed-3b-4090", weights_dtype="int4")
    assert s.model.quantised == "all"
    assert_allclose(s.weights_bytes, 1.5e9)
    # the cold-start post's 70B FP8 is 70 GB
    assert_allclose(scenario(scenario="seed-70b-fp8-cold-start").weights_bytes, 70e9)
    # a 16-bit checkpoint keeps nothing wider, and a pinned size is the size
    assert_allclose(scenario(model="llama-3.3-70b", weights_dtype="bf16").weights_bytes, 141.1e9)
    assert_allclose(
        scenario(model="llama-3.3-70b", weights_dtype="fp8", weights_gb="70").weights_bytes, 70e9
    )


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(s=scenarios())
def test_kept_bf16_parts_never_make_a_quantised_checkpoint_heavier_than_bf16(s):
    if s.weights_gb is not None:
        return
    bf16 = s.with_dtype("bf16").weights_bytes
    assert s.model.unquantised_params <= s.model.params_b * 1e9
    for dtype in ("fp8", "int4"):
        assert s.with_dtype(dtype).weights_bytes <= bf16 * (1 + 1e-12)
    assert s.with_dtype("int4").weights_bytes <= s.with_dtype("fp8").weights_bytes * (1 + 1e-12)


def test_the_step_split_names_the_fixed_work_per_layer_apart_from_the_host(scenario):
    from ui.lenses.roofline import _host

    r1 = evaluate(scenario(model="deepseek-r1", hardware="h200", gpus=8, batch=8))["decode"]
    moe = float(decode.moe_overhead_s(scenario(model="deepseek-r1", gpus=8), [8])[0])
    assert r1["t_layer_fixed_ms"] == pytest.approx((moe + 61 * 97e-6) * 1e3)
    # vLLM's host work: 1 ms a step; its 18 µs per running sequence (revision 2026.12.7)
    # overlaps the GPU's step under asynchronous scheduling, vLLM's default from 0.14
    assert r1["t_host_ms"] - r1["t_layer_fixed_ms"] == pytest.approx(1.0)
    sync = evaluate(scenario(model="deepseek-r1", hardware="h200", gpus=8, batch=8,
                             async_scheduling="false"))["decode"]  # fmt: skip
    assert sync["t_host_ms"] - sync["t_layer_fixed_ms"] == pytest.approx(1.0 + 8 * 0.018)
    assert "fixed work per layer (MoE routing, MLA kernels, GEMM floors)" in _host(r1)
    dense = evaluate(scenario(model="llama-3.1-8b", gpus=1))["decode"]
    assert dense["t_layer_fixed_ms"] == 0 and _host(dense) == f"host {dense['t_host_ms']:.3f} ms"


def test_the_step_timeline_ends_where_the_step_does_with_fixed_work_per_layer(scenario):
    # DeepSeek-R1: the latent-attention and MoE layers' fixed work sits on the GPU lane, so the
    # timeline's graph step and eager step end at the metrics' step times
    from model.evaluate import launch_lens

    lens = launch_lens(scenario(model="deepseek-r1", gpus=8, hardware="h200"))
    lf = evaluate(scenario(model="deepseek-r1", gpus=8, hardware="h200"))["launch"]
    fixed = evaluate(scenario(model="deepseek-r1", gpus=8, hardware="h200"))["decode"]
    assert fixed["t_layer_fixed_ms"] > 5
    assert lens["timeline"]["graph"]["end"] * 1e3 == pytest.approx(lf["t_step_graph_ms"], rel=1e-3)
    assert lens["timeline"]["eager"]["end"] * 1e3 == pytest.approx(lf["t_step_eager_ms"], rel=1e-3)


def test_the_roofline_offers_the_release_where_it_moves_deepseek_decode():

    at = page_test("pages/1_Roofline.py", timeout=60)
    at.query_params["engine"] = "sglang"
    at.query_params["model"] = "deepseek-r1"
    at.query_params["gpus"] = "8"
    at.query_params["hardware"] = "h200"
    at.run()
    step = next(m for m in at.metric if m.label == "Step time").value
    at.selectbox(key="w_engine_release").set_value("0.4").run()
    assert not at.exception
    assert next(m for m in at.metric if m.label == "Step time").value != step
    dense = page_test("pages/1_Roofline.py", timeout=60)
    dense.query_params["engine"] = "sglang"
    dense.run()
    assert not any(b.key == "w_engine_release" for b in dense.selectbox)


# ------------------------------------------------------- bandwidth share per GPU (2026.12.1)


def test_each_gpu_takes_its_measured_bandwidth_share(scenario):
    # tools/fit_gpu_bw.py on aiconfigurator's vLLM 0.24 GEMM tables: BF16 at m = 1 reaches 0.852
    # of datasheet on the H100 SXM and 0.807 on the H200 (0.95 of the H100's), 0.776 on the B200
    # (0.91); the profile's 0.80 was derived on the H100
    def eff(**kw):
        kw = {"weights_dtype": "bf16", **kw}
        return scenario(model="llama-3.1-8b", gpus=1, **kw).bw_efficiency

    assert eff(hardware="h100-sxm") == 0.80
    assert_allclose(eff(hardware="h200"), 0.80 * 0.95)
    assert_allclose(eff(hardware="b200"), 0.80 * 0.91)
    assert_allclose(eff(hardware="a100-80gb"), 0.80 * 0.87)
    assert eff(hardware="rtx-4090") == 0.80  # no table for it: the H100's share
    # MI300X: BabelStream on one harness, 0.772 of 5.3 TB/s against the H100's 0.891 of 3.35
    assert_allclose(eff(hardware="mi300x"), 0.80 * 0.87)
    assert_allclose(eff(hardware="mi300x", engine="sglang"), 0.80 * 0.87)
    assert_allclose(eff(hardware="h200", weights_dtype="fp8"), 0.55 * 0.95)  # FP8's, scaled
    assert_allclose(eff(hardware="h200", engine="sglang"), 0.80 * 0.98)  # SGLang's own tables
    assert eff(hardware="h200", bw_efficiency="0.7") == 0.7  # a scenario's own share is absolute
    # the experts' share scales the same way
    moe = scenario(model="mixtral-8x7b", gpus=2, hardware="a100-80gb", weights_dtype="bf16")
    base, _, _ = engines.moe_values(moe.engine_figures, "bf16")
    assert_allclose(decode.moe_bw_efficiency(moe), base * 0.87)
    # an H200 step is slower than the datasheet ratio says: 8B at batch 1, 3.35 -> 4.8 TB/s
    kw = {"model": "llama-3.1-8b", "gpus": 1, "weights_dtype": "bf16"}
    h100 = evaluate(scenario(hardware="h100-sxm", **kw))["decode"]
    h200 = evaluate(scenario(hardware="h200", **kw))["decode"]
    assert h100["t_step_ms"] / h200["t_step_ms"] < 4.8 / 3.35


def test_a_link_pinned_to_an_earlier_revision_keeps_its_numbers(scenario):
    # links name their profile's version; 2026.12 had no per-GPU share (engines-previous.yaml)
    kw = {"model": "llama-3.1-8b", "gpus": 1, "hardware": "h200", "weights_dtype": "bf16"}
    old = scenario(engine="vllm@2026.12", **kw)
    assert old.bw_efficiency == 0.80
    now = scenario(engine="vllm", **kw)
    assert evaluate(old)["decode"]["t_step_ms"] < evaluate(now)["decode"]["t_step_ms"]
    for profile in engines.engine_profiles().values():
        assert len(set(profile.versions)) == len(profile.versions)
    for ident in ("vllm", "vllm-v0", "sglang"):
        versions = engines.engine_profiles()[ident].versions
        assert {"2026.12.4", "2026.12.3", "2026.12.2", "2026.12.1", "2026.12", "2026.11"} <= set(
            versions
        )
    # 2026.12.1 (engines-previous-2026.12.1.yaml) gave the MI300X the H100's share
    mi = {"model": "llama-3.1-8b", "gpus": 1, "hardware": "mi300x", "weights_dtype": "bf16"}
    assert scenario(engine="vllm@2026.12.1", **mi).bw_efficiency == 0.80
    assert scenario(engine="sglang@2026.12.1", **mi).bw_efficiency == 0.80
    pinned = scenario(engine="vllm@2026.12.1", **{**mi, "hardware": "h200"})
    assert_allclose(pinned.bw_efficiency, 0.80 * 0.95)  # its own share kept


def test_an_mi300x_gemm_pays_its_fixed_time(scenario):
    """An MI300X's one-token GEMM takes ~10.7 µs where its bytes at the profile's rate take 4.1
    (ROCm/aiter PR 1092: Llama-70B TP8's QKV GEMM, FP8, 10.5 MB): 6.6 µs more per GEMM than the
    H100 floor the profile's efficiencies hold. Four GEMMs a dense layer, two a MoE layer."""
    kw = {"model": "llama-3.1-70b", "gpus": 8, "weights_dtype": "fp8", "batch": 1}
    mi = scenario(hardware="mi300x", **kw)
    # by hand: 80 layers x 4 GEMMs x 6.6 µs = 2.112 ms a step, whatever the batch
    assert_allclose(decode.gemm_floor_s(mi, [1, 64]), [2.112e-3, 2.112e-3])
    one = evaluate(mi)["decode"]
    assert_allclose(one["t_layer_fixed_ms"], 2.112)
    # 10.5 MB at 0.55 x 0.87 x 5.3 TB/s is the 4.1 µs the floor is counted beyond
    assert_allclose(10.49e6 / (0.55 * 0.87 * 5.3e12) * 1e6, 4.1, atol=0.05)
    # a MoE layer's feed-forward is the experts' kernel: its attention's two GEMMs pay it
    moe = scenario(hardware="mi300x", model="gpt-oss-120b", gpus=1, weights_dtype="fp4")
    assert_allclose(decode.gemm_floor_s(moe, 1), 36 * 2 * 6.6e-6)
    # the GPUs the efficiencies were derived on, and a GPU without a measurement, pay nothing
    for hw in ("h100-sxm", "h200", "rtx-4090"):
        assert decode.gemm_floor_s(scenario(hardware=hw, **kw), 1) == 0
    # the lens's assumption line says so, and only where it applies
    from ui.assumptions import assumptions

    assert "6.6 µs more per GEMM than an H100" in assumptions(mi)
    assert "per GEMM" not in assumptions(scenario(hardware="h100-sxm", **kw))
    # a link pinned to 2026.12.2 (engines-previous-2026.12.2.yaml) keeps the step it had
    old = scenario(engine="vllm@2026.12.2", hardware="mi300x", **kw)
    assert decode.gemm_floor_s(old, 1) == 0
    # + the GEMM floors; the one sequence's engine-core work (4 µs in 2026.12.4, 18 µs in
    # 2026.12.7) now overlaps the step under asynchronous scheduling, vLLM's default from 0.14
    assert_allclose(evaluate(old)["decode"]["t_step_ms"] + 2.112, one["t_step_ms"], rtol=1e-9)


def test_the_a100_takes_vllms_small_batch_defaults(scenario):
    """vLLM's large batch defaults need >= 70 GiB and a name without "a100" (get_batch_defaults;
    a 0.10.1.1 log on A100 80GB: "max_num_batched_tokens=2048"), so the A100 80GB gets 2048
    tokens and 256 sequences, and its profiling peak holds 256 sequences' logits."""
    a100 = scenario(hardware="a100-80gb", gpus=1)
    h100 = scenario(hardware="h100-sxm", gpus=1)
    assert (a100.max_num_batched_tokens, a100.max_num_seqs) == (2048, 256)
    assert (h100.max_num_batched_tokens, h100.max_num_seqs) == (8192, 1024)
    vocab = a100.model.vocab
    reserve = memory.engine_reserve_bytes(a100)
    assert reserve == pytest.approx(0.13 * 2**30 + 256 * vocab * 40)
    # a link pinned to 2026.12.1 keeps the defaults it had
    pinned = scenario(hardware="a100-80gb", gpus=1, engine="vllm@2026.12.1")
    assert (pinned.max_num_batched_tokens, pinned.max_num_seqs) == (8192, 1024)


@pytest.mark.parametrize(
    "hardware, chunk",
    [("rtx-4090", 2048), ("h100-sxm", 8192), ("h200", 8192), ("b200", 16384), ("mi300x", 16384)],
)
def test_sglang_chunks_prefill_by_the_gpus_memory_as_its_server_args_do(hardware, chunk):
    """SGLang 0.5's _handle_chunked_prefill_size: 2048 under 35 GiB, 8192 under 160 GiB,
    16384 from 160 GiB (revision 2026.12.6; a link naming sglang@2026.12.5 keeps 8192)."""
    from model.overrides import resolve

    s = resolve([("engine", "sglang"), ("hardware", hardware), ("model", "llama-3.1-8b"),
                 ("gpus", "1")])[0]  # fmt: skip
    assert s.max_num_batched_tokens == chunk
    old = resolve([("engine", "sglang@2026.12.5"), ("hardware", hardware),
                   ("model", "llama-3.1-8b"), ("gpus", "1")])[0]  # fmt: skip
    assert old.max_num_batched_tokens == min(chunk, 8192)
