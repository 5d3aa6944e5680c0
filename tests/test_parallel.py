"""Attention data parallelism and expert parallelism (issue 42, section 3): the replica's GPUs,
the weights and KV per GPU of a data-parallel rank (hand calculations from the model's
parameters), the experts every rank's tokens touch, the simulator's rank share and scaling, the
API servers per engine, the Pareto layouts, the keys' bad input and the page."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from model import decode, memory, roofline, serving
from model.errors import ScenarioError


def test_replica_gpus_are_tp_times_dp(scenario):
    assert scenario(model="deepseek-r1", hardware="h200", gpus=2, data_parallel=4).replica_gpus == 8
    assert scenario(gpus=4).replica_gpus == 4


def test_weights_per_gpu_by_hand(scenario):
    # DeepSeek-R1: 671 B parameters, 37 B active; the routed experts' share is spread over all
    # 8 GPUs, the rest (attention, shared experts, embeddings) is each rank's, on its 1 GPU
    s = scenario(model="deepseek-r1", hardware="h200", gpus=1, data_parallel=8)
    m = s.model
    routed = float(
        roofline.expert_params_read(
            float("inf"), m.params_b * 1e9, m.active * 1e9, m.experts, m.experts_per_token
        )
    )
    w = s.weights_bytes
    share = routed / (m.params_b * 1e9)
    assert memory.weights_on_gpu(s, w) == pytest.approx(w * (1 - share) + w * share / 8)
    tp8 = scenario(model="deepseek-r1", hardware="h200", gpus=8)
    assert memory.weights_on_gpu(tp8, w) == pytest.approx(w / 8)
    # a rank replicates the shared part: more weights per GPU than TP8, so less KV room per GPU,
    # but each rank's KV is its own (the MLA latent is not split by TP): far more sequences
    m_dp, m_tp = memory.memory_figures(s), memory.memory_figures(tp8)
    assert m_dp["weights_per_gpu_gb"] > m_tp["weights_per_gpu_gb"]
    assert m_dp["max_batch"] * 8 > 3 * m_tp["max_batch"]


def test_a_dense_model_ranks_are_replicas(scenario):
    # no experts: a rank's step is the one-GPU step, throughput d times one rank's
    one = scenario(gpus=1, model="llama-3.1-8b", batch=16)
    dp = scenario(gpus=1, model="llama-3.1-8b", batch=16, data_parallel=4)
    a, b = decode.sweep(one, [16]), decode.sweep(dp, [16])
    assert_allclose(b["t_step_s"], a["t_step_s"], rtol=1e-12)
    assert_allclose(b["tokens_per_s"], 4 * a["tokens_per_s"], rtol=1e-12)
    assert decode.moe_ranks(dp) == (1, 1)


def test_every_rank_s_tokens_meet_in_the_moe_layers(scenario):
    # DP8 with a batch of 16 per rank reads the experts 128 tokens touch, over 8 GPUs
    s = scenario(model="deepseek-r1", hardware="h200", gpus=1, data_parallel=8)
    m = s.model
    touched = roofline.expert_params_read(
        128.0, m.params_b * 1e9, m.active * 1e9, m.experts, m.experts_per_token
    )
    want = roofline.weights_bytes(touched, s.bytes_per_param) / 8
    assert_allclose(decode.expert_bytes_per_gpu(s, 16.0), want, rtol=1e-12)
    assert decode.moe_ranks(s) == (8, 8)
    # the exchange: all ranks' tokens, more than TP8's all-reduce of one rank's batch alone
    tp8 = scenario(model="deepseek-r1", hardware="h200", gpus=8)
    assert decode.comm_s(s, 16.0) > decode.allreduce_s(tp8, 16.0) / 2


def test_the_simulator_serves_one_rank_and_scales(scenario):
    s = scenario(model="deepseek-r1", hardware="h200", gpus=1, data_parallel=8, num_requests=400)
    wl = serving.workload(s)
    from model.workload import rank_share

    part = rank_share(wl, 8)
    assert len(part.arrival_s) == 50
    assert_allclose(part.arrival_s, wl.arrival_s[::8])
    f = serving.run(s)["figures"]
    assert f["completed"] == 400
    assert f["total_output_tokens"] == int(np.sum(wl.output_tokens[::8])) * 8
    cap = serving.capacity(s)
    assert cap["gpus_per_replica"] == 8


def test_api_servers_follow_the_engine(scenario):
    from model.stepmodel import api_servers

    vllm = scenario(model="deepseek-r1", hardware="h200", gpus=1, data_parallel=8, engine="vllm")
    sglang = scenario(
        model="deepseek-r1", hardware="h200", gpus=1, data_parallel=8, engine="sglang"
    )
    assert api_servers(vllm) == 8  # vLLM: one per rank by default
    assert api_servers(sglang) == 1  # SGLang: one front end for every rank
    assert api_servers(scenario(engine="vllm", api_server_count=3)) == 3


def test_pareto_has_dp_ep_layouts_for_moe_only(scenario):
    moe = serving.pareto(scenario(model="qwen3-30b-a3b", gpus=1, num_requests=50))
    layouts = {p.get("layout") for p in moe if not p.get("disaggregated")}
    assert {"TP 1", "TP 8", "DP 2 · EP", "DP 8 · EP"} <= layouts
    for p in moe:
        if p.get("data_parallel", 1) > 1:
            assert p["gpus"] == p["tp"] * p["data_parallel"] and p["expert_parallel"]
    dense = serving.pareto(scenario(model="llama-3.1-8b", gpus=1, num_requests=50))
    assert all(p.get("data_parallel", 1) == 1 for p in dense)


@pytest.mark.parametrize(
    ("pairs", "key"),
    [
        ({"data_parallel": "0"}, "data_parallel"),
        ({"gpus": "8", "data_parallel": "16"}, "data_parallel"),
        ({"expert_parallel": "true"}, "expert_parallel"),  # the default model is dense
        ({"model": "mixtral-8x7b", "gpus": "4", "data_parallel": "4", "expert_parallel": "true"},
         "expert_parallel"),  # 16 GPUs for 8 experts
        ({"data_parallel": "2", "disaggregated": "true"}, "disaggregated"),
    ],
)  # fmt: skip
def test_bad_input_names_the_key(scenario, pairs, key):
    with pytest.raises(ScenarioError) as exc:
        scenario(**pairs)
    assert exc.value.key == key and exc.value.message


def test_serving_page_shows_the_layouts(app_page):
    at = app_page(
        "pages/2_Serving.py",
        model="deepseek-r1",
        hardware="h200",
        gpus="1",
        data_parallel="8",
        expert_parallel="true",
        num_requests="80",
        state={"t_serving": "Parallelism", "x_serving_dp": True},
    )
    assert not at.exception
    notes = " ".join(c.value for c in at.caption) + " ".join(m.value for m in at.markdown)
    assert "DP 8 · EP" in notes and "TP 8" in notes
    assert at.session_state["w_data_parallel"] == 8
    assert at.session_state["w_expert_parallel"] is True


def test_serving_page_warns_on_expert_parallel_for_a_dense_model(app_page):
    at = app_page("pages/2_Serving.py", expert_parallel="true", num_requests="50")
    text = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "expert_parallel" in text and "dense" in text
    assert at.metric


def test_published_pairs_and_the_page_agree():
    import re

    from tools import published_parallel as pp

    figures, levers = pp.compare()
    summ = pp.summary(figures, levers)
    assert summ["held_out"]["lever"]["n"] >= 5 and summ["seen"]["lever"]["n"] >= 5
    text = pp.PAGE.read_text(encoding="utf-8")
    stale = "run: python -m tools.published_parallel --write"
    line = re.search(r"\| held out: lever, DP or EP ÷ TP \| (\d+) \| ([\d.]+) % \|", text)
    assert line, stale
    assert int(line[1]) == summ["held_out"]["lever"]["n"], stale
    assert float(line[2]) == pytest.approx(100 * summ["held_out"]["lever"]["median"], abs=0.11)
    for row in pp.rows():
        assert row["source"].startswith("http") and row["quote"], row["id"]


@pytest.mark.parametrize("page", ["pages/1_Roofline.py", "pages/3_Launch_overhead.py"])
def test_roofline_and_launch_say_whose_step_it_is(app_page, page):
    at = app_page(
        page, model="deepseek-r1", hardware="h200", gpus="1", data_parallel="8",
        expert_parallel="true",
    )  # fmt: skip
    assert not at.exception
    notes = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "one rank's" in notes and "all 8 ranks'" in notes


def test_max_batch_counts_every_rank(scenario):
    s = scenario(model="deepseek-r1", hardware="h200", gpus=1, data_parallel=8)
    m = memory.memory_figures(s)
    assert m["max_batch_replica"] == 8 * m["max_batch"]
    assert (
        memory.memory_figures(scenario())["max_batch_replica"]
        == (memory.memory_figures(scenario())["max_batch"])
    )
