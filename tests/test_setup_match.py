"""What a measurement file states about its set-up (``model.readers.setup``): a stated model or
GPU is matched to its preset, and a file of another model and GPU says what to set."""

from __future__ import annotations

from pathlib import Path

import pytest

from model.overrides import resolve
from model.readers.setup import match_gpu, match_model, setup_mismatch, stated_setup

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "tests" / "data" / "bench"


@pytest.mark.parametrize(
    "name, preset",
    [
        ("meta-llama/Llama-3.2-3B-Instruct", "llama-3.2-3b"),
        ("meta-llama/Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b"),
        ("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", "llama-3.3-70b"),
        ("Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"),
        ("Qwen/Qwen3-8B", "qwen3-8b"),
        ("openai/gpt-oss-120b", "gpt-oss-120b"),
        ("deepseek-ai/DeepSeek-R1", "deepseek-r1"),
        ("google/gemma-3-27b-it", "gemma-3-27b"),
        ("facebook/opt-125m", None),
        ("", None),
    ],
)
def test_a_stated_model_is_matched_to_its_preset(name, preset):
    assert match_model(name) == preset


@pytest.mark.parametrize(
    "label, preset, count",
    [
        ("8xNVIDIA_H200", "h200", 8),
        ("NVIDIA H100 80GB HBM3", "h100-sxm", None),
        ("NVIDIA H100 PCIe", "h100-pcie", None),
        ("NVIDIA L40S", "l40s", None),
        ("NVIDIA L4", "l4", None),
        ("NVIDIA A100-SXM4-40GB", "a100-40gb", None),
        ("AMD Instinct MI300X", "mi300x", None),
        ("2x NVIDIA GeForce RTX 4090", "rtx-4090", 2),
        ("a toaster", None, None),
    ],
)
def test_a_stated_gpu_is_matched_to_its_preset(label, preset, count):
    assert match_gpu(label) == (preset, count)


def test_a_file_of_another_model_and_gpu_says_what_to_set():
    s = resolve([])[0]  # the default: Llama 3.1 70B on 4 H100s
    cond = {"model": "meta-llama/Llama-3.2-3B-Instruct", "gpu": "1xNVIDIA_L40S"}
    why, keys = setup_mismatch(s, cond)
    assert keys == [("model", "llama-3.2-3b"), ("hardware", "l40s"), ("gpus", "1")]
    assert len(why) == 3 and "Llama-3.2-3B" in why[0] and "L40S" in why[1]
    same = resolve([(k, v) for k, v in keys])[0]
    assert setup_mismatch(same, cond) == ([], [])
    assert stated_setup({"tensor_parallel_size": 2})["gpus"] == 2
    unknown, none = setup_mismatch(s, {"model": "facebook/opt-125m"})
    assert "matches no model preset" in unknown[0] and none == []
