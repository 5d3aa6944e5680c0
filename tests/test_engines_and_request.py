"""Engine profiles, prefill and request latency, and the corrections of issue 9, checked by hand
and against the published measurements table (tests/data/published_measurements.csv)."""

from __future__ import annotations

import pytest
from numpy.testing import assert_allclose

from model import codecs, decode, engines
from model.evaluate import evaluate
from model.overrides import named_scenario
from tools import published


def test_the_defaults_match_published_measurements():
    # the in-sample figures the README reports (python -m tools.published): a guard on the rows
    # the profiles were fitted or chosen on; the held-out rows are reported, not asserted
    records = [r for r in published.compare() if r["split"] != "held_out"]
    assert len(records) >= 60
    assert published.median_error(records) <= 0.25
    assert published.median_error(records, "t_step_ms") <= 0.15
    assert len({r["quantity"] for r in records}) >= 8


def test_every_measurement_names_its_source():
    for row in published.rows():
        assert row["source"].startswith("http"), row["id"]
        assert float(row["value"]) > 0


def test_ideal_is_the_seeds_physics_and_vllm_is_the_default(scenario):
    ideal = engines.engine_profiles()["ideal"]
    assert (ideal.bw_efficiency, ideal.flops_efficiency, ideal.launch_us, ideal.host_ms) == (
        1.0,
        1.0,
        5.0,
        0.5,
    )
    assert ideal.allreduce_latency_us == 0
    s = scenario()
    assert s.engine == f"vllm@{engines.engine_profiles()['vllm'].version}"
    eff = s
    assert eff.bw_efficiency < 1 and eff.host_ms > 0.5 and eff.allreduce_latency_us > 0
    # every named seed scenario pins the ideal engine
    for name in ("seed-3b-4090", "seed-70b-eager-4xh100", "seed-70b-fp8-cold-start"):
        assert named_scenario(name).engine_id == "ideal"


def test_a_set_key_overrides_the_engine_and_auto_gives_it_back(scenario):
    s = scenario(launch_us="7", host_ms="0.25")
    eff = s
    assert (eff.launch_us, eff.host_ms) == (7.0, 0.25)
    assert "launch_us" not in s.from_engine() and "bw_efficiency" in s.from_engine()
    back = scenario(launch_us="7", host_ms="auto")
    assert back.host_ms == engines.engine_profiles()["vllm"].host_ms
    # the link carries the set keys and the engine, not the engine's numbers
    query = codecs.to_query(s)
    assert "launch_us=7" in query and "bw_efficiency" not in query
    assert codecs.from_url(query) == s


def test_a_link_names_the_engine_version_and_an_old_version_keeps_its_numbers(
    tmp_path, monkeypatch
):
    import yaml

    from model import datafiles

    raw = yaml.safe_load((datafiles.PRESETS_DIR / "engines.yaml").read_text())
    old = dict(raw["vllm"])
    old.pop("name"), old.pop("description", None)
    older, bands = old.pop("previous", []), old.pop("bands", [])
    new = dict(raw["vllm"], version="2099.1", host_ms=9.0, previous=[old, *older], bands=bands)
    raw["vllm"] = new
    folder = tmp_path / "presets"
    folder.mkdir()
    for item in datafiles.PRESETS_DIR.iterdir():
        if item.name != "engines.yaml":
            (folder / item.name).symlink_to(item)
    (folder / "engines.yaml").write_text(yaml.safe_dump(raw))
    monkeypatch.setattr(engines, "PRESETS_DIR", folder)
    engines.engine_profiles.cache_clear()
    try:
        pinned = codecs.from_url(f"engine=vllm@{old['version']}")
        assert pinned.host_ms == old["host_ms"]
        latest = codecs.from_url("engine=vllm")
        assert latest.engine == "vllm@2099.1" and latest.host_ms == 9.0
    finally:
        engines.engine_profiles.cache_clear()


def test_weights_read_skip_the_input_embedding_by_hand(scenario):
    # Llama 3.1 8B BF16 on one H100, ideal: (8.03e9 − 128,256 × 4,096) × 2 B / 3.35 TB/s
    d = evaluate(
        scenario(
            engine="ideal", model="llama-3.1-8b", gpus=1, weights_dtype="bf16", context_tokens=0
        )
    )["decode"]
    assert_allclose(d["t_memory_ms"], (8.03e9 - 128256 * 4096) * 2 / 3.35e12 * 1e3)
    # tied embeddings (Llama 3.2 1B): the one table is read once, as the output head
    t = evaluate(
        scenario(
            engine="ideal", model="llama-3.2-1b", gpus=1, weights_dtype="bf16", context_tokens=0
        )
    )["decode"]
    assert_allclose(t["t_memory_ms"], 1.24e9 * 2 / 3.35e12 * 1e3)


def test_flops_leave_out_the_untied_input_embedding(scenario):
    # issue 20: Llama-3.1-8B (untied) at batch 128 in BF16 reads AI 128, not 137
    s = scenario(
        engine="ideal",
        model="llama-3.1-8b",
        gpus=1,
        weights_dtype="bf16",
        batch=128,
        context_tokens=0,
    )
    f = evaluate(s)
    matmul = 8.03e9 - 128256 * 4096
    assert_allclose(f["roofline"]["arithmetic_intensity"], 2 * matmul * 128 / (2 * matmul))
    assert_allclose(f["decode"]["t_compute_ms"], 2 * matmul * 128 / 989e12 * 1e3)
    # a tied table is the output head: it multiplies
    t = evaluate(
        scenario(
            engine="ideal",
            model="llama-3.2-1b",
            gpus=1,
            weights_dtype="bf16",
            batch=64,
            context_tokens=0,
        )
    )
    assert_allclose(t["decode"]["t_compute_ms"], 2 * 1.24e9 * 64 / 989e12 * 1e3)


def _ideal_8b(scenario, prompt_tokens: str, output_tokens: str):
    """Ideal physics, one H100, BF16 Llama 3.1 8B: the by-hand prefill cases."""
    return scenario(
        engine="ideal",
        model="llama-3.1-8b",
        gpus=1,
        weights_dtype="bf16",
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
    )


def test_prefill_of_a_dense_model_by_hand(scenario):
    # ideal, one H100, BF16 Llama 3.1 8B, 2,000 prompt tokens (one chunk): compute-bound
    s = _ideal_8b(scenario, "2000", "100")
    r = evaluate(s)["request"]
    # the untied input table (128,256 × 4,096) is a lookup: only layers and head multiply
    flops = 2 * (8.03e9 - 128256 * 4096) * 2000 + 4 * 32 * 32 * 128 * 2000 * (2001 / 2)
    assert_allclose(r["prefill_flops"], flops)
    assert_allclose(r["prefill_ms"], flops / 989e12 * 1e3)
    assert r["prefill_bound"] == "compute"
    assert_allclose(r["ttft_ms"], r["prefill_ms"] + 0.5)  # + one host step
    d = evaluate(s)["decode"]
    assert_allclose(r["tpot_ms"], d["t_step_ms"])
    assert_allclose(r["e2e_s"], (r["ttft_ms"] + 99 * r["tpot_ms"]) / 1e3)


def test_a_batch_arriving_together_prefills_its_prompts_by_hand(scenario):
    # ideal, one H100, BF16 Llama 3.1 8B: 16 prompts of 1,000 tokens arrive together (vLLM's
    # offline latency benchmark). 16,000 tokens in 8,192-token steps: two steps, compute-bound;
    # each prompt attends to itself only (not to one 16,000-token prompt)
    from model.request import batch_e2e_s, batch_prefill_s

    s = _ideal_8b(scenario, "1000", "50")
    per_prompt = 2 * (8.03e9 - 128256 * 4096) * 1000 + 4 * 32 * 32 * 128 * 1000 * (1001 / 2)
    t, steps = batch_prefill_s(s, 16)
    assert steps == 2
    assert_allclose(t, 16 * per_prompt / 989e12 + 2 * 0.5e-3)  # + one host step per step
    # one prompt alone is the request lens's own prefill
    r = evaluate(s)["request"]
    assert_allclose(batch_prefill_s(s, 1)[0], r["prefill_ms"] / 1e3 + 0.5e-3)
    # end to end: front end, the batch's prefill, then 49 decode steps at batch 16
    step16 = decode.at_batch(s, 16)["t_step_s"]
    assert_allclose(batch_e2e_s(s, 16), s.frontend_ms / 1e3 + t + 49 * step16)
    # the work does not grow with the batch: 65,536 prompts of 10 million tokens in one call
    big = s.model_copy(update={"prompt_tokens": 10_000_000})
    t_big, n_big = batch_prefill_s(big, 65536)
    assert n_big == -(-65536 * 10_000_000 // 8192) and t_big > 0


def test_chunked_prefill_reads_the_weights_once_per_chunk(scenario):
    s = scenario(model="llama-3.1-8b", gpus=1, weights_dtype="bf16", prompt_tokens="20000")
    r = evaluate(s)["request"]
    assert r["prefill_chunks"] == 3 and r["prefill_chunk_tokens"] == 8192


def test_mla_kv_cache_is_the_latent(scenario):
    # DeepSeek-V3: 61 layers × (512 + 64) × 2 B (bf16 cache) per token, not heads × head_dim
    m = evaluate(scenario(model="deepseek-v3", gpus=8, weights_dtype="fp8", hardware="h200"))
    assert_allclose(m["memory"]["kv_bytes_per_token"], 61 * 576 * 2)


def test_gpu_memory_is_what_the_device_reports(scenario):
    mem = evaluate(scenario(engine="ideal"))["memory"]
    assert mem["hbm_per_gpu_gib"] == 80
    assert_allclose(mem["hbm_per_gpu_gb"], 80 * 2**30 / 1e9)


def test_the_bound_names_communication_over_pcie(scenario):
    d = evaluate(
        scenario(
            hardware="rtx-4090",
            model="llama-3.1-8b",
            gpus=8,
            weights_dtype="bf16",
            batch=147,
            context_tokens=0,
        )
    )["decode"]
    assert d["t_comm_ms"] > max(d["t_memory_ms"], d["t_compute_ms"])
    assert d["bound"] == "communication"


def test_enforce_eager_start_has_no_compile_and_no_capture(scenario):
    c = evaluate(scenario(cuda_graphs="none"))["cold_start"]
    assert c["sublines"]["graphs_jit_s"]["compile_s"] == 0
    assert c["sublines"]["graphs_jit_s"]["capture_s"] == 0
    assert "enforce-eager" in c["item5_note"]


def test_wake_is_a_fixed_part_plus_the_copy(scenario):
    # level 1 copies the weights back at half the pinned rate (issue 20: the cumem allocator's
    # tensor-by-tensor copies reach 10-13 GB/s on an A100 whose pinned H2D is 25 GB/s)
    c = evaluate(scenario(sleep_level="1"))["cold_start"]
    p = engines.engine_profiles()["vllm"]
    assert p.wake_h2d_share == 0.5
    assert_allclose(c["wake_s"], p.wake_fixed_s + c["weights_h2d_s"] / 0.5)
    # level 2 rereads the checkpoint from the page cache, plus the loader's own fixed time
    c2 = evaluate(scenario(sleep_level="2"))["cold_start"]
    assert c2["wake_s"] < c2["weights_s"]
    assert c2["wake_s"] > p.wake_fixed_s + p.wake2_extra_s


@pytest.mark.parametrize(
    ("pairs", "named"),
    [
        ({"engine": "tgi"}, "engine"),
        ({"prompt_tokens": "0"}, "prompt_tokens"),
        ({"output_tokens": "200000"}, "output_tokens"),
    ],
)
def test_bad_engine_and_request_input_is_named(scenario, pairs, named):
    from model.errors import ScenarioError

    with pytest.raises(ScenarioError) as err:
        scenario(**pairs)
    assert named in str(err.value)


V100_LIKE = """hardware:
  name: V100-like
  memory_gb: 32
  hbm_bandwidth_tb_s: 0.9
  peak_tflops: {fp16: 125, fp32: 15.7}
  h2d_gb_s: 12
  interconnect_gb_s: 150
weights_dtype: fp4
"""


def test_fp4_weights_need_at_least_bf16_tensor_cores():
    """vLLM runs MXFP4 weights weight-only on Ampere (a 0.10.1.1 log on an A100 80GB: "Weight-only
    FP4 compression will be used leveraging the Marlin kernel"), in 16-bit math; a part without
    FP4, FP8 or BF16 tensor cores is refused, by name."""
    from model.errors import ScenarioError

    a100 = codecs.from_yaml("hardware: a100-80gb\nweights_dtype: fp4\nmodel: gpt-oss-20b\n")
    assert a100.weights_dtype == "fp4" and decode.peaks(a100)[0] == "bf16"
    with pytest.raises(ScenarioError, match="weights_dtype.*cannot run fp4"):
        codecs.from_yaml(V100_LIKE)


def test_an_engine_profile_out_of_range_is_refused():
    import pydantic

    good = engines.engine_profiles()["vllm"].model_dump()
    with pytest.raises(pydantic.ValidationError, match="bw_efficiency"):
        engines.EngineProfile.model_validate({**good, "bw_efficiency": 1.5})
