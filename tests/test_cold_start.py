"""Cold start (SPEC 4.3): the seed's worked examples, hand-calculated cases, presets and
properties. Seed: "Speeding up model cold start: from minutes to seconds"."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from model import cold_start as cs
from model.cold_start import cold_start
from model.engines import engine_profiles
from model.evaluate import evaluate
from model.presets import cold_start_presets
from model.scenario import Scenario
from tests.helpers import assert_close, scenarios
from ui import cold_charts
from ui.chart_common import validated


def test_70gb_from_nvme_series_and_overlapped(scenario):
    # seed: 70 GB from NVMe at 14 GB/s and PCIe at 50 GB/s: read 5.0, H2D 1.4, 6.4 vs 5.0 s
    c = evaluate(scenario(scenario="seed-70gb-nvme-1xh100"))["cold_start"]
    assert_allclose(
        (c["weights_read_s"], c["weights_h2d_s"], c["weights_s"]), (5.0, 1.4, 6.4), rtol=1e-12
    )
    c = evaluate(scenario(scenario="seed-70gb-nvme-1xh100", loader="runai_streamer"))
    assert_allclose(c["cold_start"]["weights_s"], 5.0)


def test_70gb_from_5gb_s_network_storage(scenario):
    # seed: from network storage at 5 GB/s: read 14 s, series 15.4 s vs overlapped 14 s
    c = evaluate(scenario(scenario="seed-70gb-network-5gbs"))["cold_start"]
    assert_allclose((c["weights_read_s"], c["weights_s"]), (14.0, 15.4))
    c = evaluate(scenario(scenario="seed-70gb-network-5gbs", loader="tensorizer"))
    assert_allclose(c["cold_start"]["weights_s"], 14.0)
    # the same through overrides on the NVMe twin: a 5 GB/s tier
    c = evaluate(scenario(scenario="seed-70gb-nvme-1xh100", storage_gb_s="5"))["cold_start"]
    assert_allclose(c["weights_s"], 15.4)


SEED_TABLE = {
    # item: (default, optimised) from the seed's "An example cold start, item by item"
    "process_init_s": (4, 3),
    "cuda_context_s": (6, 6),
    "allocator_s": (4, 4),
    "weights_s": (25, 5),
    "graphs_jit_s": (54, 10),
    "total_s": (93, 28),
}


def test_the_seeds_70b_fp8_table_within_10_percent(scenario):
    default = evaluate(scenario(scenario="seed-70b-fp8-cold-start"))["cold_start"]
    optimised = evaluate(scenario(scenario="seed-70b-fp8-cold-start-optimised"))["cold_start"]
    for item, (want_default, want_optimised) in SEED_TABLE.items():
        assert_allclose(default[item], want_default, rtol=0.10, err_msg=item)
        assert_allclose(optimised[item], want_optimised, rtol=0.10, err_msg=item)
    # the floor no loader crosses: items 2 + 3 (+ 1) ≈ 10–14 s
    assert default["floor_s"] == 14.0


def test_only_weights_and_only_item_5(scenario):
    # seed: optimising only item 4 → ~73 s; only item 5 → ~49 s; both → ~28 s
    lens = cs.cold_start_lens(scenario(scenario="seed-70b-fp8-cold-start"))
    cols = {k: v["total_s"] for k, v in lens["columns"].items()}
    assert_allclose(cols["only weights optimised"], 73, rtol=0.10)
    assert_allclose(cols["only item 5 optimised"], 49, rtol=0.10)
    assert_allclose(cols["optimised"], 28, rtol=0.10)


def test_optimised_counterpart_is_the_named_optimised_scenario(scenario):
    mine = cs.optimised(scenario(scenario="seed-70b-fp8-cold-start"))
    named = scenario(scenario="seed-70b-fp8-cold-start-optimised")
    assert cs.cold_start(mine) == cs.cold_start(named)
    # idempotent
    assert cs.optimised(named).raw == named.model_copy(update={"concurrency": None}).raw


def test_hand_calculated_8b_bf16_from_nfs_on_an_a100(scenario):
    s = scenario(
        engine="ideal", hardware="a100-80gb", model="llama-3.1-8b", gpus=1, weights_dtype="bf16"
    )
    s = s.model_copy(update={"storage": "nfs"})
    c = cs.cold_start(s)
    w = s.model.params_b * 1e9 * 2
    read = w / 1e9  # one stream of 1 GB/s (the tier's 2 GB/s needs two)
    h2d = w / 25e9  # PCIe Gen4 ~25 GB/s
    assert_allclose((c["weights_read_s"], c["weights_h2d_s"]), (read, h2d))
    assert_allclose(c["weights_s"], read + h2d)
    assert_allclose(c["graphs_jit_s"], 24 + 102 * 0.3)
    assert_allclose(c["total_s"], 14 + read + h2d + 54.6)
    more = cs.cold_start(s.model_copy(update={"concurrency": 4}))
    assert_allclose(more["weights_read_s"], w / 2e9)  # capped by the tier's 2 GB/s


def test_tensor_parallel_shares_the_read_and_splits_the_copy(scenario):
    one = cs.cold_start(scenario(scenario="seed-70gb-nvme-1xh100"))
    four = cs.cold_start(scenario(scenario="seed-70gb-nvme-1xh100", gpus="4"))
    assert four["weights_read_s"] == one["weights_read_s"]
    assert_allclose(four["weights_h2d_s"], one["weights_h2d_s"] / 4)


def test_pickle_adds_a_host_pass_and_eager_skips_item_5(scenario):
    base = scenario(scenario="seed-70gb-nvme-1xh100")
    p = cs.cold_start(base.model_copy(update={"loader": "pickle"}))
    assert_allclose(p["weights_host_s"], 70 / 10)
    assert_allclose(p["weights_s"], 5.0 + 1.4 + 7.0)
    eager = cs.cold_start(base.model_copy(update={"cuda_graphs": "none"}))
    assert eager["graphs_jit_s"] == 0 and eager["compile_s"] == 0 and eager["capture_s"] == 0


def test_compile_cache_and_capture(scenario):
    s = scenario(scenario="seed-70b-fp8-cold-start")
    assert_allclose(cs.cold_start(s)["graphs_jit_s"], 24 + 51 * 2 * 0.3)
    warm = cs.cold_start(s.model_copy(update={"compile_cache": True}))
    assert_allclose(warm["graphs_jit_s"], 5 + 51 * 2 * 0.3)
    fdo = cs.cold_start(s.model_copy(update={"cuda_graphs": "full_decode_only"}))
    assert_allclose(fdo["capture_s"], 51 * 0.3)
    mine = cs.cold_start(scenario(scenario="seed-70b-fp8-cold-start", compile_s="40"))
    assert_allclose(mine["graphs_jit_s"], 40 + 30.6)


def test_sleep_mode_wake_times(scenario):
    s = scenario(scenario="seed-70b-fp8-cold-start", sleep_level="1")
    c = cs.cold_start(s)
    assert_allclose(c["wake_s"], 70 / 4 / 50)  # the shard back from host RAM over PCIe
    assert_allclose(c["wake_speedup"], c["total_s"] / c["wake_s"])
    c2 = cs.cold_start(s.model_copy(update={"sleep_level": 2}))
    assert_allclose(c2["wake_s"], c2["weights_s"])  # item 4 only
    assert cs.cold_start(s.model_copy(update={"sleep_level": 0}))["wake_s"] is None
    assert c["warm_replica_s"] == 0


def test_presets_match_the_scenario_literals_and_cite_sources():
    p = cold_start_presets()
    fields = Scenario.model_fields
    assert set(p.storage) == set(fields["storage"].annotation.__args__)
    assert set(p.loaders) == set(fields["loader"].annotation.__args__)
    # the ideal engine's capture and compile are the seed's (SPEC 4.3)
    ideal = engine_profiles()["ideal"]
    assert p.startup.capture_s_per_graph == ideal.capture_s_per_graph
    assert (p.startup.compile_s, p.startup.compile_cached_s) == (
        ideal.compile_s,
        ideal.compile_cached_s,
    )
    for tier in p.storage.values():
        assert tier.sources["aggregate_gb_s"] and tier.sources["per_stream_gb_s"]
    with pytest.raises(ValueError, match="sources is missing"):
        type(p.storage["nvme"]).model_validate(
            {"name": "x", "aggregate_gb_s": 1, "per_stream_gb_s": 1, "sources": {}}
        )


def test_tier_sweep_is_one_call_per_tier(scenario):
    lens = cs.cold_start_lens(scenario(scenario="seed-70b-fp8-cold-start"))
    assert set(lens["tiers"]) == set(cold_start_presets().storage)
    nvme = lens["tiers"]["nvme"]["read_s"]
    assert nvme.shape == cs.CONCURRENCY_GRID.shape
    assert_allclose(nvme[0], 70 / 3) and assert_allclose(nvme[-1], 70 / 14)


@pytest.mark.parametrize(
    ("t_read", "t_h2d", "t_host"),
    [(5.0, 1.4, 0.0), (1.0, 1.4, 0.0), (23.3, 0.35, 7.0), (0.2, 1.4, 0.5)],
)
def test_weights_timeline_ends_at_the_formula(t_read, t_h2d, t_host):
    # seed: 6.4 s in series, 5.0 s overlapped; the drawing ends where the formula does
    for overlap in (False, True):
        tl = cs.weights_timeline(t_read, t_h2d, overlap=overlap, t_host=t_host)
        assert_allclose(tl["end"], cs.load_time(t_read, t_h2d, overlap, t_host), rtol=1e-12)
        assert_allclose(max(tl["h2d_end"][-1], tl["host_end"][-1]), tl["end"], rtol=1e-12)
        assert_allclose(np.sum(tl["read_end"] - tl["read_start"]), t_read, rtol=1e-12)
        assert_allclose(np.sum(tl["host_end"] - tl["host_start"]), t_host, rtol=1e-12)
        assert_allclose(np.sum(tl["h2d_end"] - tl["h2d_start"]), t_h2d, rtol=1e-12)
        eps = 1e-9
        # one copy at a time; a chunk is copied neither before its read starts nor (overlapped,
        # streaming) finished before its reading side is
        assert np.all(tl["h2d_start"][1:] >= tl["h2d_end"][:-1] - eps)
        assert np.all(tl["h2d_start"] >= tl["read_start"] - eps)
        assert np.all(tl["h2d_end"] >= tl["host_end"] - eps)
        if not overlap:
            assert np.all(tl["h2d_start"] >= tl["host_end"] - eps)
            assert np.all(tl["host_start"] >= tl["read_end"] - eps)
    assert_allclose(cs.weights_timeline(5.0, 1.4, overlap=False)["end"], 6.4)
    assert_allclose(cs.weights_timeline(5.0, 1.4, overlap=True)["end"], 5.0)


@pytest.mark.parametrize("loader", ["safetensors", "runai_streamer", "tensorizer", "pickle"])
@pytest.mark.parametrize("storage", ["nvme", "nvme_raid0", "object_store", "nfs", "page_cache"])
def test_the_loading_timeline_ends_at_item_4(scenario, loader, storage):
    # the loader's own lanes end at item 4 (pickle's host pass included); the other pair at
    # the figure the caption quotes for it
    for base in ("seed-70b-fp8-cold-start", "seed-70gb-nvme-1xh100"):
        lens = cs.cold_start_lens(scenario(scenario=base, loader=loader, storage=storage))
        c = lens["figures"]
        mine = "overlapped" if c["overlap"] else "series"
        assert_allclose(lens["timeline"][mine]["end"], c["weights_s"], rtol=1e-12)
        assert_allclose(lens["timeline"]["series"]["end"], c["weights_series_s"], rtol=1e-12)
        assert_allclose(
            lens["timeline"]["overlapped"]["end"], c["weights_overlapped_s"], rtol=1e-12
        )
        fig = validated(cold_charts.weights_timeline_figure(lens["timeline"], c["overlap"]))
        # the lanes drawn end there too (series, the longer pair, ends the chart)
        drawn = max(np.nanmax(np.asarray(d.x, dtype=float)) for d in fig.data)
        assert_allclose(drawn, c["weights_series_s"], rtol=1e-12)
        lanes = list(fig.layout.yaxis.ticktext)
        assert ("series · host pass" in lanes) == (loader == "pickle")


# --- properties -----------------------------------------------------------------------------


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.integers(1, 1024), st.integers(1, 1024))
def test_cold_start_monotonicity(s, c1, c2):
    lo, hi = sorted((c1, c2))
    a = cs.cold_start(s.model_copy(update={"concurrency": lo}))
    b = cs.cold_start(s.model_copy(update={"concurrency": hi}))
    assert b["weights_s"] <= a["weights_s"] * (1 + 1e-12)  # more streams never slower
    assert a["weights_overlapped_s"] <= a["weights_series_s"]  # overlap never slower
    cold = cs.cold_start(s.model_copy(update={"compile_cache": False}))
    warm = cs.cold_start(s.model_copy(update={"compile_cache": True}))
    assert warm["total_s"] <= cold["total_s"]  # a warm cache never slower
    more = cs.cold_start(s.model_copy(update={"gpus": min(s.gpus * 2, 64)}))
    assert more["weights_h2d_s"] <= a["weights_h2d_s"] * (1 + 1e-12)  # more GPUs never slower
    # the optimised counterpart never starts slower than the scenario itself
    assert cs.cold_start(cs.optimised(s))["total_s"] <= cs.cold_start(s)["total_s"] * (1 + 1e-12)


def test_each_optimisation_alone_adds_up_to_the_optimised_column(scenario):
    # the items are independent, so the four savings add up to default − optimised
    lens = cs.cold_start_lens(scenario(scenario="seed-70b-fp8-cold-start"))
    saved = {r["optimisation"]: r["saves_s"] for r in lens["savings"]}
    assert_allclose(saved["warm torch.compile cache"], 24 - 5)
    assert_allclose(saved["bounded capture sizes"], (102 - 16) * 0.3)
    assert_allclose(
        sum(saved.values()),
        lens["columns"]["this scenario"]["total_s"] - lens["columns"]["optimised"]["total_s"],
    )


def test_the_tier_sweep_passes_through_the_scenario(scenario):
    for s in (
        scenario(scenario="seed-70gb-nvme-1xh100"),
        scenario(scenario="seed-70gb-nvme-1xh100", storage_gb_s="5", stream_gb_s="0.5"),
        scenario(scenario="seed-70b-fp8-cold-start", loader="pickle", storage="nfs"),
    ):
        lens = cs.cold_start_lens(s)
        c = lens["figures"]
        i = int(np.searchsorted(lens["concurrency"], c["concurrency"]))
        assert_allclose(lens["tiers"][s.storage]["weights_s"][i], c["weights_s"])


def test_a_dtype_what_if_scales_the_seeds_70gb(scenario):
    # the seed's 70 GB is 70 B params × 1 byte (FP8): in BF16 it is 140 GB and item 4 doubles,
    # while item 5 stays; the named scenarios size the weights from params × bytes
    for name in (
        "seed-70b-fp8-cold-start",
        "seed-70b-fp8-cold-start-optimised",
        "seed-70gb-nvme-1xh100",
        "seed-70gb-network-5gbs",
    ):
        fp8 = scenario(scenario=name)
        assert fp8.weights_gb is None and fp8.model.params_b == 70
        a = evaluate(fp8)["cold_start"]
        b = evaluate(scenario(scenario=name, weights_dtype="bf16"))["cold_start"]
        assert_allclose((a["weights_gb"], b["weights_gb"]), (70, 140))
        for key in ("weights_read_s", "weights_h2d_s", "weights_series_s"):
            assert_allclose(b[key], 2 * a[key], err_msg=key)
        assert b["graphs_jit_s"] == a["graphs_jit_s"]
    a = evaluate(scenario(scenario="seed-70b-fp8-cold-start"))["cold_start"]
    b = evaluate(scenario(scenario="seed-70b-fp8-cold-start", weights_dtype="bf16"))
    assert_allclose(b["cold_start"]["weights_s"], 2 * a["weights_s"])
    assert_allclose(b["memory"]["weights_gb"], 140)


@pytest.mark.parametrize(
    ("name", "dtype", "wide", "narrow"),
    [
        ("seed-70b-fp8-cold-start", None, "bf16", "fp8"),
        ("seed-70b-fp8-cold-start", "bf16", "bf16", "fp8"),
        ("seed-70b-fp8-cold-start", "fp32", "fp32", "fp8"),
        ("seed-qa-awq-5.5gib", None, "bf16", "int4"),
        ("seed-qa-bf16-14.2gib", None, "bf16", "fp8"),
    ],
)
def test_the_fp8_trap_compares_this_scenario_with_its_other_dtype(
    scenario, name, dtype, wide, narrow
):
    s = scenario(scenario=name, **({"weights_dtype": dtype} if dtype else {}))
    lens = cs.cold_start_lens(s)
    d = lens["dtypes"]
    assert (d["wide"], d["narrow"], d["this"]) == (wide, narrow, s.weights_dtype)
    assert lens["dtypes"]["figures"][s.weights_dtype] == lens["figures"]  # the page's own
    other = narrow if s.weights_dtype == wide else wide
    assert lens["dtypes"]["figures"][other] == cs.cold_start(s.with_dtype(other))


def test_cold_safetensors_reads_are_capped_per_process_and_per_host(scenario):
    # one process: ~1.1 GB/s whatever the NVMe's 14 GB/s (mmap page faults)
    one = cold_start(scenario(model="llama-3.1-8b", gpus=1, weights_dtype="bf16"))
    assert one["read_mmap_capped"]
    assert_close(one["read_gb_s"], 1.1)
    # four ranks: 4 x 1.1 capped at ~3 GB/s for the host
    four = cold_start(scenario(model="llama-3.1-70b", gpus=4, weights_dtype="fp8"))
    assert_close(four["read_gb_s"], 3.0)
    # the streamer is not an mmap path: the disk's rates apply
    streamer = cold_start(scenario(model="llama-3.1-8b", gpus=1, loader="runai_streamer"))
    assert not streamer["read_mmap_capped"] and streamer["read_gb_s"] > 3
    # a measured per-stream rate is the user's fact: no cap
    measured = cold_start(scenario(model="llama-3.1-8b", gpus=1, stream_gb_s="2.5"))
    assert not measured["read_mmap_capped"]
    assert_close(measured["read_gb_s"], 2.5)
    # the ideal physics keeps the seed's reading (3 GB/s per stream)
    ideal = cold_start(scenario(engine="ideal", model="llama-3.1-8b", gpus=1))
    assert_close(ideal["read_gb_s"], 3.0)
    assert not ideal["read_mmap_capped"]


def test_a_warm_page_cache_reads_at_5_gb_s_per_process(scenario):
    c = cold_start(scenario(model="llama-3.1-8b", gpus=1, storage="page_cache"))
    assert_close(c["read_gb_s"], 5.0)
    assert c["weights_s_range"][0] == c["weights_s_range"][1]  # a page-cache read is a point


def test_level_1_wake_copies_at_half_the_pinned_rate(scenario):
    # vLLM 0.11.0 on an A100 (25 GB/s pinned): Qwen3-235B-FP8 TP4 wakes in 5.27-5.66 s
    c = cold_start(
        scenario(hardware="a100-80gb", model="qwen3-235b-a22b", gpus=4, weights_dtype="fp8")
    )
    assert 4.5 <= c["wake_level1_s"] <= 5.7
    # level 2 rereads the checkpoint from the page cache: Qwen3-0.6B in 0.85 s
    c2 = cold_start(scenario(hardware="a100-80gb", model="qwen3-0.6b", gpus=1))
    assert 0.7 <= c2["wake_level2_s"] <= 1.0


def test_a_cached_compile_grows_with_depth(scenario):
    # cache-hit totals 7.51 s at 28 layers, 9.22 s at 32, 14.95 s at 64 (vLLM issue 20264,
    # PRs 16848 and 32191): least squares 2.5 + 0.2 s per layer
    s = scenario(model="llama-3.1-8b", gpus=1, compile_cache="true")
    assert s.compile_cached_s == pytest.approx(2.5 + 0.2 * 32)  # 8.9 s
    c = cold_start(s)
    assert c["compile_s"] == pytest.approx(8.9)
    assert c["compile_s_range"] == [c["compile_s"]] * 2  # a cached compile's spread is narrow
    deep = scenario(model="llama-3.3-70b", gpus=4, compile_cache="true")
    assert deep.compile_cached_s == pytest.approx(2.5 + 0.2 * 80)  # 18.5 s
    # never above the cold compile (5 + 0.7 s per layer), and the 0.8-0.10 band stays flat
    assert deep.compile_cached_s < 5 + 0.7 * 80
    old = scenario(model="llama-3.3-70b", gpus=4, compile_cache="true", engine="vllm@0.9")
    assert old.compile_cached_s == 7.5


def test_an_eager_start_pays_about_a_second_for_profiling_warm_up_and_kv(scenario):
    graphs = cold_start(scenario(model="llama-3.1-8b", gpus=1))
    eager = cold_start(scenario(model="llama-3.1-8b", gpus=1, cuda_graphs="none"))
    sub = eager["sublines"]
    spent = (
        sub["allocator_s"]["memory_profiling_s"]
        + sub["allocator_s"]["kv_cache_init_s"]
        + sub["graphs_jit_s"]["warmup_s"]
    )
    assert_close(spent, 1.0)
    g = graphs["sublines"]
    assert g["allocator_s"]["memory_profiling_s"] + g["graphs_jit_s"]["warmup_s"] == 8
    assert eager["graphs_jit_s"] == pytest.approx(0.2)  # warm-up alone: no compile, no capture
