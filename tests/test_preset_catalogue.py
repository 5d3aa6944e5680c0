"""The preset catalogue: the ids other work refers to exist, validate and say what they should."""

from __future__ import annotations

import pytest

from model.presets import hardware_presets, model_presets

HARDWARE_IDS = (
    "a10",
    "a10g",
    "l4",
    "l40s",
    "rtx-3090",
    "rtx-4090",
    "rtx-5090",
    "rtx-pro-6000",
    "a100-40gb",
    "a100-80gb",
    "h100-sxm",
    "h100-pcie",
    "h100-nvl",
    "h200",
    "b200",
    "gb200",
    "mi300x",
)
BLACKWELL = ("b200", "gb200", "rtx-5090", "rtx-pro-6000")
AMPERE = ("a10", "a10g", "rtx-3090", "a100-40gb", "a100-80gb")
HOPPER = ("h100-sxm", "h100-pcie", "h100-nvl", "h200")
ADA = ("l4", "l40s", "rtx-4090")

MODEL_IDS = (
    "llama-2-7b",
    "llama-2-13b",
    "llama-2-70b",
    "llama-3.2-1b",
    "llama-3.2-3b",
    "llama-3.1-8b",
    "llama-3.1-70b",
    "llama-3.1-405b",
    "llama-3.3-70b",
    "qwen3-0.6b",
    "qwen3-1.7b",
    "qwen3-4b",
    "qwen3-8b",
    "qwen3-14b",
    "qwen3-32b",
    "qwen3-30b-a3b",
    "qwen3-235b-a22b",
    "mixtral-8x7b",
    "deepseek-v3",
    "deepseek-r1",
    "gpt-oss-20b",
    "gpt-oss-120b",
    "gemma-3-4b",
    "gemma-3-12b",
    "gemma-3-27b",
)
TIED = (
    "llama-3.2-1b",
    "llama-3.2-3b",
    "qwen3-0.6b",
    "qwen3-1.7b",
    "qwen3-4b",
    "gemma-3-4b",
    "gemma-3-12b",
    "gemma-3-27b",
)
UNTIED = ("llama-2-7b", "llama-3.1-8b", "llama-3.1-70b", "qwen3-8b", "qwen3-32b", "deepseek-v3")
MOE = {  # id: (experts, experts_per_token)
    "mixtral-8x7b": (8, 2),
    "qwen3-30b-a3b": (128, 8),
    "qwen3-235b-a22b": (128, 8),
    "deepseek-v3": (256, 8),
    "deepseek-r1": (256, 8),
    "gpt-oss-20b": (32, 4),
    "gpt-oss-120b": (128, 4),
}
# 12·L·h² + (1 or 2)·V·h fits plain decoder blocks (attention ≈ 4h², gated MLP ≈ 8h²). Left out:
# MoE models (experts multiply the MLP); Gemma 3 (the checkpoint includes a vision tower and the
# query width heads × head_dim is not hidden); Qwen3-32B (query width 8192 ≠ hidden 5120, MLP 5h);
# Qwen2.5-7B (MLP 5.3h, 152k vocab: -29 %); seed-3b (a round seed figure, not a checkpoint).
DENSE_FORMULA = (
    "llama-2-7b",
    "llama-2-13b",
    "llama-2-70b",
    "llama-3.2-1b",
    "llama-3.2-3b",
    "llama-3.1-8b",
    "llama-3.1-70b",
    "llama-3.1-405b",
    "llama-3.3-70b",
    "qwen2.5-72b",
    "mistral-7b",
    "qwen3-0.6b",
    "qwen3-1.7b",
    "qwen3-4b",
    "qwen3-8b",
    "qwen3-14b",
)


def test_every_named_hardware_id_exists_and_validates():
    presets = hardware_presets()
    missing = [i for i in HARDWARE_IDS if i not in presets]
    assert not missing, missing
    for i in HARDWARE_IDS:
        hw = presets[i]
        assert hw.id == i and hw.memory_gb > 0 and hw.hbm_bandwidth_tb_s > 0
        assert "bf16" in hw.peak_tflops or "fp16" in hw.peak_tflops, i


def test_fp4_only_on_blackwell_and_no_fp8_on_ampere():
    presets = hardware_presets()
    for i in BLACKWELL:
        peaks = presets[i].peak_tflops
        assert "fp4" in peaks, i
        assert peaks["fp4"] == pytest.approx(2 * peaks["fp8"], rel=0.01), i  # dense FP4 = 2× FP8
    for i in AMPERE + HOPPER + ADA + ("mi300x",):
        assert "fp4" not in presets[i].peak_tflops, i
    for i in AMPERE:
        assert "fp8" not in presets[i].peak_tflops, i
    for i in HOPPER + ADA:
        assert "fp8" in presets[i].peak_tflops, i


def test_hardware_figures_hand_checked():
    hw = hardware_presets()
    assert hw["h100-sxm"].memory_gb == 80  # marketed decimal figure, not GiB
    assert hw["h100-nvl"].memory_gb == 94
    assert hw["rtx-pro-6000"].memory_gb == 96
    assert hw["a100-40gb"].hbm_bandwidth_tb_s == pytest.approx(1.555)
    assert hw["a100-40gb"].peak_tflops == hw["a100-80gb"].peak_tflops  # same die, same clocks
    assert hw["h200"].peak_tflops == hw["h100-sxm"].peak_tflops
    # dense bf16 is half the datasheet's sparse figure
    assert hw["h100-sxm"].peak_tflops["bf16"] == pytest.approx(1979 / 2, rel=0.01)
    assert hw["h100-nvl"].peak_tflops["bf16"] == pytest.approx(1671 / 2, rel=0.01)
    assert hw["b200"].peak_tflops["fp4"] == pytest.approx(9000)
    # NVLink per direction is half the bidirectional figure
    assert hw["gb200"].interconnect_gb_s == pytest.approx(1800 / 2)
    for i in HARDWARE_IDS:
        assert hw[i].gpu_hour_usd > 0, i


def test_every_named_model_id_exists_validates_and_has_a_context_length():
    presets = model_presets()
    missing = [i for i in MODEL_IDS if i not in presets]
    assert not missing, missing
    for i, m in presets.items():
        assert m.max_context_tokens, i
        assert m.sources.get("max_context_tokens"), i
        assert m.kv_heads <= m.heads and m.heads % m.kv_heads == 0, i


def test_tied_embeddings():
    presets = model_presets()
    for i in TIED:
        assert presets[i].tied_embeddings, i
        assert "tie" in presets[i].sources.get("tied_embeddings", ""), i
    for i in UNTIED:
        assert not presets[i].tied_embeddings, i


@pytest.mark.parametrize("model_id", sorted(MOE))
def test_moe_presets(model_id):
    m = model_presets()[model_id]
    assert (m.experts, m.experts_per_token) == MOE[model_id]
    assert m.active_params_b is not None and m.active_params_b < m.params_b
    assert m.active >= m.params_b * m.experts_per_token / m.experts


def test_moe_sizes_hand_checked():
    m = model_presets()
    assert m["deepseek-v3"].params_b == 671 and m["deepseek-v3"].active_params_b == 37
    assert m["gpt-oss-20b"].params_b == pytest.approx(21, rel=0.02)
    assert m["gpt-oss-20b"].active_params_b == pytest.approx(3.6, rel=0.02)
    assert m["gpt-oss-120b"].params_b == pytest.approx(117, rel=0.02)
    assert m["gpt-oss-120b"].active_params_b == pytest.approx(5.1, rel=0.02)
    assert m["qwen3-235b-a22b"].active_params_b == 22


def test_deepseek_uses_latent_attention_and_r1_matches_v3():
    presets = model_presets()
    v3, r1 = presets["deepseek-v3"], presets["deepseek-r1"]
    assert (v3.kv_lora_rank, v3.qk_rope_head_dim) == (512, 64)
    assert (v3.layers, v3.hidden, v3.heads, v3.vocab) == (61, 7168, 128, 129280)
    shape = ("params_b", "active_params_b", "layers", "hidden", "heads", "kv_heads", "head_dim")
    shape += ("vocab", "experts", "experts_per_token", "kv_lora_rank", "qk_rope_head_dim")
    assert all(getattr(v3, f) == getattr(r1, f) for f in shape)
    for i, m in presets.items():
        if i not in ("deepseek-v3", "deepseek-r1"):
            assert m.kv_lora_rank is None and m.qk_rope_head_dim is None, i


@pytest.mark.parametrize("model_id", DENSE_FORMULA)
def test_dense_parameter_count_is_about_12_l_h2_plus_embeddings(model_id):
    m = model_presets()[model_id]
    assert m.experts is None
    embeddings = (1 if m.tied_embeddings else 2) * m.vocab * m.hidden
    estimate = (12 * m.layers * m.hidden**2 + embeddings) / 1e9
    assert estimate == pytest.approx(m.params_b, rel=0.25)


def test_hand_checked_parameter_counts():
    m = model_presets()
    # Llama 2 7B by its parts: MHA 4h², MLP 3·h·11008, embeddings and head untied, norms.
    l2 = m["llama-2-7b"]
    exact = l2.layers * (4 * 4096**2 + 3 * 4096 * 11008 + 2 * 4096) + 2 * 32000 * 4096 + 4096
    assert exact / 1e9 == pytest.approx(l2.params_b, abs=0.01)
    # Llama 3.2 1B: GQA (q,o 2h², k,v 2·h·512), MLP 3·h·8192, one tied 128256 × 2048 table.
    l1 = m["llama-3.2-1b"]
    per_layer = 2 * 2048**2 + 2 * 2048 * 512 + 3 * 2048 * 8192 + 2 * 2048
    exact = l1.layers * per_layer + 128256 * 2048 + 2048
    assert exact / 1e9 == pytest.approx(l1.params_b, abs=0.01)
