"""The Serving lens (SPEC 4.6): the simulator's physics against the other lenses and queueing
theory, its invariants as properties, the capacity search, bad input, and the page."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model import decode, request, serving
from model.overrides import resolve
from tests.helpers import hang_guard
from tests.pages import open_page, page_test
from whatif.cli import main


def scen(*pairs):
    return resolve([(k, str(v)) for k, v in pairs], strict=True)[0]


def wl_fixed(n, rate, prompt, output, seed=0, conc=None):
    return serving.Workload(
        serving.arrivals(n, rate, 1.0, seed),
        np.full(n, prompt, dtype=np.int64),
        np.full(n, output, dtype=np.int64),
        conc,
    )


# ------------------------------------------------------------------ step physics is the core's


@pytest.mark.parametrize(
    "name", ["default", "llama-8b-1xh100", "mixtral-fp8-2xh100", "seed-3b-4090"]
)
@pytest.mark.parametrize("batch", [1, 3, 64, 600])
def test_a_decode_only_step_is_the_roofline_lens_step(name, batch):
    """The engine's step is the Roofline lens's; the API server's pace bounds it from below
    (a step's tokens stream no faster than batch × api_us_per_token)."""
    s = scen(("scenario", name), ("context_tokens", 1500))
    sm = serving.StepModel(s, 8192)
    got = sm.decode(batch, np.array([batch * 1500.0]))[0]
    want = decode.sweep(s, [batch])["t_step_s"][0]
    assert got == pytest.approx(max(want, batch * s.api_us_per_token * 1e-6), rel=1e-12)
    plain = serving.StepModel(
        scen(("scenario", name), ("context_tokens", 1500), ("api_us_per_token", 0)), 8192
    )
    assert plain.decode(batch, np.array([batch * 1500.0]))[0] == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("name", ["default", "llama-8b-1xh100", "seed-3b-4090"])
def test_a_prefill_only_step_is_the_request_lens_chunk(name):
    s = scen(("scenario", name), ("prompt_tokens", 700))
    sm = serving.StepModel(s, 8192)
    # the chunk's attention context as the scheduler takes it (on the engine's curve)
    got = sm.mixed(0, 0.0, 700, *sm.chunk_attended(700, 0))
    req = request.request_figures(s)
    host = s.host_ms / 1000
    assert got == pytest.approx((req["ttft_ms"] - req["frontend_ms"]) / 1000, rel=1e-9)
    assert got - host == pytest.approx(req["prefill_ms"] / 1000, rel=1e-9)


def test_the_affine_run_is_the_step_by_step_sum():
    s = scen(("scenario", "llama-8b-1xh100"))
    sm = serving.StepModel(s, 8192)
    n, c0, k = 40, 40 * 900.0, 300
    aff = sm.decode_affine(n, c0, n, k)
    assert aff is not None
    steps = sm.decode(n, c0 + n * np.arange(k))
    a, b = aff
    assert np.allclose(a + b * np.arange(k), steps, rtol=1e-12)


# ------------------------------------------------------------------ fidelity (SPEC 4.6)


@pytest.mark.parametrize("name", ["default", "llama-8b-1xh100", "seed-3b-4090"])
def test_light_load_reproduces_one_request_alone(name):
    """One request at a time: TTFT = the Request row's TTFT (front-end time included); TPOT =
    the decode step at batch 1 and the request's mean context (SPEC 4.0)."""
    s = scen(("scenario", name), ("prompt_tokens", 512), ("output_tokens", 128))
    f = serving.run(s, wl_fixed(20, 1e-4, 512, 128))["figures"]
    req = request.request_figures(s)
    assert f["mean_ttft_ms"] == pytest.approx(req["ttft_ms"], rel=1e-6)
    mean_ctx = 512 + 1 + (128 - 2) / 2  # decode steps read prompt + 1 … prompt + 127
    one = decode.sweep(s.model_copy(update={"context_tokens": mean_ctx}), [1])["t_step_s"][0]
    assert f["mean_tpot_ms"] == pytest.approx(one * 1000, rel=2e-3)
    assert f["max_batch"] == 1 and f["preemptions"] == 0 and not f["saturated"]


@pytest.mark.parametrize("rho", [0.2, 0.5, 0.7])
def test_one_sequence_at_a_time_waits_as_md1(rho):
    """max_num_seqs=1, fixed lengths, Poisson arrivals: a deterministic single server, whose
    mean wait is ρS / (2(1 − ρ)) (Pollaczek-Khinchine with zero service variance)."""
    s = scen(
        ("scenario", "llama-8b-1xh100"),
        ("max_num_seqs", 1),
        ("frontend_ms", 0),
        ("frontend_queued_ms", 0),
    )
    one = serving.run(s, wl_fixed(1, 1.0, 256, 64))["figures"]
    S = one["mean_e2el_ms"] / 1000
    n = 20000
    f = serving.run(s, wl_fixed(n, rho / S, 256, 64, seed=3))
    sim = f["sim"]
    wait = (sim["finish_s"] - sim["send_s"]) - S
    expected = rho * S / (2 * (1 - rho))
    assert wait.mean() == pytest.approx(expected, rel=0.08, abs=0.02 * S)


@pytest.mark.parametrize("rate", [1.0, 4.0, 8.0])
def test_below_saturation_the_server_serves_the_arrival_rate(rate):
    s = scen(("request_rate", rate), ("num_requests", 2000))
    f = serving.run(s)["figures"]
    offered = 2000 / float(serving.arrivals(2000, rate, 1.0, 0)[-1])
    assert not f["saturated"]
    # duration also holds the last request's own service time
    assert f["request_throughput"] == pytest.approx(offered, rel=0.05)


def test_arrivals_faster_than_the_server_saturate_it():
    s = scen(("request_rate", 60), ("num_requests", 1500))
    f = serving.run(s)["figures"]
    assert f["saturated"]
    assert f["request_throughput"] < 40


def test_arrivals_follow_vllm_bench_serve():
    a = serving.arrivals(200_000, 5.0, 1.0, 0)
    gaps = np.diff(a)
    assert a[0] == 0 and gaps.mean() == pytest.approx(0.2, rel=0.01)
    assert gaps.std() == pytest.approx(0.2, rel=0.02)  # exponential: sd = mean
    bursty = np.diff(serving.arrivals(200_000, 5.0, 0.25, 0))
    assert bursty.mean() == pytest.approx(0.2, rel=0.02)
    assert bursty.std() == pytest.approx(0.2 / 0.25**0.5, rel=0.03)  # gamma: sd = mean/√k
    assert not serving.arrivals(10, "inf").any()


# ------------------------------------------------------------------ invariants (properties)


@settings(max_examples=25, deadline=None)
@given(
    rate=st.sampled_from([0.5, 3.0, 20.0, "inf"]),
    prompt=st.integers(1, 3000),
    output=st.integers(1, 600),
    seqs=st.sampled_from([1, 4, 64, 1024]),
    conc=st.sampled_from([None, 1, 7, 300]),
    util=st.sampled_from([0.9, 0.3]),
)
def test_every_run_completes_within_its_cache_and_limits(rate, prompt, output, seqs, conc, util):
    s = scen(
        ("scenario", "llama-8b-1xh100"),
        ("max_num_seqs", seqs),
        ("gpu_memory_utilization", util),
    )
    wl = wl_fixed(150, rate, prompt, output, seed=1, conc=conc)
    try:
        r = serving.run(s, wl)
    except serving.DoesNotFit:
        return
    sim, f = r["sim"], r["figures"]
    assert f["completed"] == 150 and np.isfinite(sim["finish_s"]).all()
    assert (sim["step_kv_blocks"] <= sim["kv_blocks"]).all()  # never beyond the cache
    assert sim["step_batch"].max() <= min(seqs, s.max_num_batched_tokens)
    assert (sim["first_token_s"] >= sim["send_s"] + s.frontend_ms / 1000 - 1e-12).all()
    assert (sim["finish_s"] >= sim["first_token_s"]).all()
    if conc is not None:  # never more in flight than the clients allow
        starts, ends = sim["send_s"], sim["finish_s"]
        for t in starts:
            assert ((starts <= t) & (ends > t)).sum() <= conc
    for k in ("mean", "median", "p90", "p99"):
        assert f[f"{k}_ttft_ms"] > 0


def test_a_run_is_reproducible_and_the_seed_changes_it():
    s = scen(("request_rate", 8), ("lengths", "azure-conv-2023"))
    a, b = serving.run(s)["figures"], serving.run(s)["figures"]
    assert a == b
    c = serving.run(s.model_copy(update={"seed": 1}))["figures"]
    assert c["p99_ttft_ms"] != a["p99_ttft_ms"]


def test_a_full_cache_preempts_and_recomputes():
    s = scen(("scenario", "seed-3b-4090"), ("gpu_memory_utilization", 0.5))
    f = serving.run(s, wl_fixed(400, "inf", 2000, 1500))["figures"]
    assert f["preemptions"] > 0 and f["completed"] == 400
    assert f["peak_kv_cache_usage"] <= 1.0


def test_a_preempted_request_recomputes_only_what_was_evicted():
    """With prefix caching on, a preempted request's whole blocks stay cached (vLLM V1 frees
    it as a finished request: docs/design/prefix_caching.md), so its recompute skips what was
    not evicted meanwhile; with it off, everything is prefilled again."""
    base = (("scenario", "seed-3b-4090"), ("gpu_memory_utilization", 0.5))
    wl = wl_fixed(400, "inf", 2000, 1500)
    on = serving.run(scen(*base, ("prefix_caching", "true")), wl)
    off = serving.run(scen(*base, ("prefix_caching", "false")), wl)
    f_on, f_off = on["figures"], off["figures"]
    assert f_on["completed"] == f_off["completed"] == 400
    assert f_off["preemptions"] > 0 and off["sim"]["preempt_cached_tokens"] == 0
    cached = on["sim"]["preempt_cached_tokens"]
    assert cached > 0 and cached % 16 == 0  # whole blocks only
    # at most what the preempted requests held: prompt and generated tokens, less the last
    assert cached <= f_on["preemptions"] * (2000 + 1500 - 1)
    # a shorter recompute never makes the run slower
    assert f_on["duration"] <= f_off["duration"] * (1 + 1e-9)
    # the prefix cache's own hit rate counts shared prefixes only (none here)
    assert f_on["prefix_cache_hit_rate"] == 0.0


# ------------------------------------------------------------------ capacity


def test_capacity_is_the_largest_rate_within_the_slo():
    s = scen(("request_rate", 10))
    cap = serving.capacity(s)
    r = cap["max_request_rate"]
    assert 0 < r <= cap["saturation_request_rate"]
    runner = serving._Runner(s, cap["requests_per_run"])
    assert runner.at(r)["slo_met_share"] >= s.slo_attainment
    if r < cap["saturation_request_rate"]:  # else capped at what one replica completes
        above = runner.at(r * 1.1)
        assert above["slo_met_share"] < s.slo_attainment or above["saturated"]
    assert cap["replicas_needed"] == int(np.ceil(10 / r))
    assert cap["gpus_needed"] == cap["replicas_needed"] * s.gpus


def test_an_slo_that_one_request_alone_misses_gives_zero_capacity():
    s = scen(("ttft_slo_ms", 1), ("request_rate", 5))
    cap = serving.capacity(s)
    assert cap["max_request_rate"] == 0 and cap["replicas_needed"] is None


def test_more_bandwidth_never_lowers_capacity():
    lo = scen(("scenario", "llama-8b-1xh100"), ("hardware.hbm_bandwidth_tb_s", 2.0))
    hi = scen(("scenario", "llama-8b-1xh100"), ("hardware.hbm_bandwidth_tb_s", 4.0))
    assert serving.capacity(hi)["max_request_rate"] >= serving.capacity(lo)["max_request_rate"]


def test_the_pareto_front_is_not_dominated():
    pts = serving.pareto(scen(("scenario", "llama-8b-1xh100")))
    front = [p for p in pts if p["front"]]
    assert front and len(front) < len(pts)
    for p in front:
        for q in pts:
            assert not (
                q["tokens_per_s_per_gpu"] > p["tokens_per_s_per_gpu"]
                and q["tokens_per_s_per_user"] > p["tokens_per_s_per_user"]
            )


# ------------------------------------------------------------------ CLI and bad input


def test_the_cli_gives_serving_and_capacity_in_every_run(capsys):
    assert main(["eval", "--set", "request_rate=10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["serving"]["fits"] and out["capacity"]["fits"]
    for k in (
        "completed",
        "request_throughput",
        "p99_ttft_ms",
        "median_itl_ms",
        "goodput",
        "mean_batch",
        "peak_kv_cache_usage",
        "preemptions",
        "saturated",
    ):
        assert k in out["serving"]
    assert out["capacity"]["gpus_needed"] == out["capacity"]["replicas_needed"] * 4
    assert main(["eval", "--json"]) == 0  # issue 40, item 10: the same sections without one
    plain = json.loads(capsys.readouterr().out)
    assert plain["serving"]["fits"] and plain["capacity"]["max_request_rate"] > 0


@pytest.mark.parametrize(
    "pair, key",
    [
        ("request_rate=0", "request_rate"),
        ("request_rate=-2", "request_rate"),
        ("request_rate=nan", "request_rate"),
        ("request_rate=fast", "request_rate"),
        ("max_concurrency=0", "max_concurrency"),
        ("burstiness=0", "burstiness"),
        ("num_requests=1000001", "num_requests"),
        ("lengths=zipf", "lengths"),
        ("ttft_slo_ms=0", "ttft_slo_ms"),
        ("tpot_slo_ms=-1", "tpot_slo_ms"),
        ("slo_attainment=1.5", "slo_attainment"),
    ],
)
def test_bad_serving_input_is_one_line_naming_the_key(capsys, pair, key):
    assert main(["eval", "--set", pair, "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"whatif: error: {key}:") and "\n" not in err


def test_a_model_that_does_not_fit_says_so_instead_of_latencies(capsys):
    args = ["eval", "--set", "model=llama-3.1-405b", "--set", "gpus=1", "--set", "request_rate=2"]
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["serving"] == {"fits": False, "reason": out["serving"]["reason"]}
    assert "does not fit" in out["serving"]["reason"]


def test_the_cli_replays_a_trace_through_the_server(capsys, tmp_path):
    trace = tmp_path / "t.csv"
    rows = ["TIMESTAMP,ContextTokens,GeneratedTokens"] + [
        f"2023-11-16 18:00:{i // 10:02d}.{i % 10}000000,{300 + i},{50 + i}" for i in range(60)
    ]
    trace.write_text("\n".join(rows) + "\n")
    assert main(["eval", "--trace", str(trace), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["serving"]["source"] == "trace" and out["serving"]["completed"] == 60


# ------------------------------------------------------------------ the worker and the page


def test_the_worker_process_computes_what_the_core_computes():
    from ui import serving_worker

    s = scen(("scenario", "llama-8b-1xh100"), ("request_rate", 3), ("num_requests", 200))
    got = serving_worker.compute(s)
    want = serving.serving_lens(s)
    assert got["figures"] == want["figures"]


@pytest.mark.parametrize(
    "query",
    [
        {"request_rate": "10"},
        {"request_rate": "inf", "max_concurrency": "16", "lengths": "azure-conv-2023"},
        {"scenario": "seed-3b-4090", "request_rate": "2"},
        {"request_rate": "nan", "max_concurrency": "0", "burstiness": "-1"},
        {"model": "llama-3.1-405b", "gpus": "1"},
    ],
)
def test_the_serving_page_runs(query):

    at = open_page("pages/2_Serving.py", pairs=list(query.items()))
    if query.get("gpus") == "1":
        assert "cannot serve" in at.error[0].value and not at.metric
    elif "nan" in query.values():
        assert "request\\_rate" in at.warning[0].value
        assert len(at.metric) == 13  # 12 before Peak output tok/s joined the run's figures
    else:
        labels = [m.label for m in at.metric]
        assert labels[:6] == [
            "p99 TTFT",
            "p99 TPOT",
            "Output tok/s",
            "Max rate within SLO",
            "Replicas needed",
            "GPUs needed",
        ]


#: run in a fresh interpreter by the test below: the worker that takes the job is stopped
#: (SIGSTOP) as it is handed out, so the job cannot finish before another thread of this
#: process has run while the caller waits; the worker goes on when that thread is done
_NOT_HOLDING = """
import json, os, signal, sys, threading, time
from model.overrides import resolve
from ui import serving_worker as w

s = resolve([('request_rate', '7'), ('seed', '11')])[0]
w.compute(resolve([('seed', '12')])[0])  # start the worker


def inline(*args, **kwargs):
    raise AssertionError('the job was computed in the calling interpreter')


w._work = inline
take, handed = w._take, []


def stopped_take(lane='light'):
    proc = take(lane)
    os.kill(proc.pid, signal.SIGSTOP)
    handed.append(proc)
    return proc


w._take = stopped_take
caller = threading.get_ident()


def waiting_on_the_worker():
    frame = sys._current_frames().get(caller)
    while frame is not None:
        if frame.f_code.co_name == '_wait' and frame.f_code.co_filename == w.__file__:
            return True
        frame = frame.f_back
    return False


seen = []


def other_thread():
    try:
        guard = time.monotonic() + 60  # a hang guard only
        while not (handed and waiting_on_the_worker()) and time.monotonic() < guard:
            time.sleep(0.001)
        for _ in range(50):  # Python runs here while the caller waits on the stopped worker
            seen.append(waiting_on_the_worker())
            time.sleep(0.001)
    finally:
        for proc in handed:
            os.kill(proc.pid, signal.SIGCONT)


th = threading.Thread(target=other_thread)
th.start()
result = w.compute(s)
th.join()
print(json.dumps({'handed': len(handed), 'seen': seen, 'figures': len(result['figures'])}))
"""


def test_the_worker_does_not_hold_the_interpreter():
    """While the worker computes, this process's threads keep running (the GIL is free): the
    job runs in the worker process, not here, and another thread runs Python all the while
    the caller waits on the worker's pipe."""
    out = subprocess.run(
        [sys.executable, "-c", _NOT_HOLDING],
        capture_output=True,
        text=True,
        timeout=300,  # a hang guard only; the timing is in benchmarks/suite_timings.py
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["handed"] == 1  # one worker took the job, none computed it in this process
    assert len(got["seen"]) == 50 and all(got["seen"])  # the other thread ran 50 times meanwhile
    assert got["figures"] > 0  # and the job's result came back


# ------------------------------------------------------------------ economics uses it (item 5)


def test_scale_to_zero_sizes_a_replica_by_the_serving_capacity():
    from model.economics import economics, service_of

    s = scen(("request_rate", 10))
    svc = service_of(s)
    cap = serving.capacity(s)
    assert svc.capacity_basis == "slo"
    assert svc.capacity_per_s == cap["max_request_rate"]
    light = serving.max_rate(s)["light_load"]
    assert svc.ttft_s == pytest.approx(light["mean_ttft_ms"] / 1000)
    # the sidebar's decode batch (a Roofline knob) no longer moves the economics
    one, many = economics(s), economics(s.model_copy(update={"batch": 64}))
    assert one["replica_capacity_requests_per_s"] == many["replica_capacity_requests_per_s"]
    assert one["recommended"] == many["recommended"]
    assert one["warm"]["total_usd_per_day"] == many["warm"]["total_usd_per_day"]


def test_a_scenario_that_cannot_serve_falls_back_to_one_request():
    from model.economics import service_of

    s = scen(("model", "llama-3.1-405b"), ("gpus", 1))
    assert service_of(s).capacity_basis == "request"


def test_the_worker_searches_and_the_core_takes_it_so_economics_never_searches_in_the_session(
    monkeypatch,
):
    from model.economics import economics_lens
    from ui import serving_worker

    s = scen(("scenario", "llama-8b-1xh100"), ("seed", 321))
    found = serving_worker.search(s)
    assert found["max_request_rate"] > 0
    # a Scale to zero knob does not need a new search: the worker's is kept, by the caller
    other = s.model_copy(update={"idle_timeout_s": 60, "batch": 8})
    assert serving_worker.search(other) is found

    def no_search(*a, **k):
        raise AssertionError("the core searched again")

    monkeypatch.setattr(serving, "max_rate", no_search)
    eco = economics_lens(other, None, found)
    assert eco["figures"]["replica_capacity_requests_per_s"] == pytest.approx(
        found["max_request_rate"]
    )


# ------------------------------------------------------------------ measurements over it (item 6)


def test_imported_serving_benchmarks_land_on_the_load_chart():

    from model.readers import importers
    from ui import serving_charts
    from ui.chart_common import validated

    data = Path(__file__).parent / "data" / "bench"
    sets = []
    for name in ("serve_new.json", "serve_runs.jsonl", "serve_stdout_new.txt"):
        got = importers.import_file(name, (data / name).read_bytes())
        sets += got if isinstance(got, list) else [got]
    pts = serving.benchmark_points(sets)
    assert pts and all(p["request_rate"] > 0 and p["value"] > 0 for p in pts)
    new = [p for p in pts if p["label"].startswith("serve_new.json")]
    assert {p["figure"] for p in new} >= {"median_ttft_ms", "p99_ttft_ms"}
    assert all(p["request_rate"] == 20.0 for p in new)  # its offered rate
    s = scen(("request_rate", 5), ("num_requests", 200))
    r = serving.serving_lens(s)
    fig = serving_charts.load_figure(
        r["sweep"], r["figures"]["capacity"], r["figures"]["capacity"]["slo"]
    )
    over = serving_charts.with_runs(fig, pts)
    validated(over)
    assert len(over.spec["data"]) > len(fig.spec["data"])
    assert over.spec["layout"]["xaxis"]["range"][1] >= max(p["request_rate"] for p in pts)


def test_calibration_fits_the_front_end_time_from_ttft_at_several_prompts():
    from model.calibrate import calibrate
    from model.readers import importers
    from model.request import request_figures

    truth = scen(("scenario", "llama-8b-1xh100"), ("frontend_ms", 30), ("prefill_efficiency", 0.5))
    rows = ["concurrency,prompt_tokens,output_tokens,ttft_ms"]
    for p in (256, 1024, 4096, 8192):
        ttft = request_figures(truth.model_copy(update={"prompt_tokens": p}))["ttft_ms"]
        rows.append(f"1,{p},128,{ttft:.4f}")
    ds = importers.import_file("ttft.csv", ("\n".join(rows) + "\n").encode())
    start = scen(("scenario", "llama-8b-1xh100"))
    fit = calibrate(start, [ds]).to_json()["fit"]
    assert fit["frontend_ms"]["value"] == pytest.approx(30, rel=0.02)
    assert fit["prefill_efficiency"]["value"] == pytest.approx(0.5, rel=0.02)


def test_the_peak_hour_of_the_traffic_profile_is_sized_too():
    s = scen(("request_rate", 3), ("traffic", "business-hours"), ("rate_scale", 40))
    cap = serving.capacity(s)
    peak = cap["peak_hour"]
    assert peak["request_rate"] == pytest.approx(serving.peak_hour_rate(s))
    assert peak["replicas_needed"] == int(np.ceil(peak["request_rate"] / cap["max_request_rate"]))
    assert peak["gpus_needed"] == peak["replicas_needed"] * s.gpus


def test_a_long_run_does_not_hold_up_another_sessions_serving_page(monkeypatch):
    """One session's hundred-thousand-request run occupies one worker; another session's
    scenario is computed by the next worker meanwhile. The long run's worker is stopped
    (SIGSTOP) as it is handed out, so the long run cannot finish first however fast or busy
    the machine is; it goes on once the short one is back."""
    import os
    import signal
    import threading

    from ui import serving_worker

    long = scen(("request_rate", 10), ("num_requests", 100_000), ("seed", 77))
    short = scen(("scenario", "llama-8b-1xh100"), ("request_rate", 2), ("seed", 78))
    take, handed = serving_worker._take, []  # (the run it was handed to, the worker)
    long_has_its_worker = threading.Event()

    def spy_take(lane="light"):
        proc = take(lane)
        name = threading.current_thread().name
        if name == "long":
            os.kill(proc.pid, signal.SIGSTOP)
            long_has_its_worker.set()
        handed.append((name, proc))
        return proc

    monkeypatch.setattr(serving_worker, "_take", spy_take)
    done = {}
    th = threading.Thread(
        target=lambda: done.setdefault("long", serving_worker.compute(long)), name="long"
    )
    th.start()
    try:
        assert long_has_its_worker.wait(120)  # a hang guard only
        with hang_guard(150, "the short run"):  # ten times the 15 s limit this test asserted
            got = serving_worker.compute(short)
        still_running = "long" not in done
    finally:
        for name, proc in handed:
            if name == "long":
                os.kill(proc.pid, signal.SIGCONT)
    th.join(600)  # a hang guard only: the long run itself takes seconds
    assert still_running  # the short one finished first, while the long one ran
    assert got["figures"] and not th.is_alive() and done["long"]["figures"]
    workers = {name: proc.pid for name, proc in handed}
    assert len(handed) == 2 and workers["long"] != workers[threading.current_thread().name]


def test_a_session_that_moves_on_stops_its_worker_and_goes_to_its_next_run(monkeypatch):
    """Issue 22: a long Serving run in the worker is not waited for once the session asks for
    another run (its user changed something): the worker is stopped and Streamlit's rerun
    takes over; a bare call (no Streamlit run) never counts as moved on."""
    from ui import serving_worker as w

    assert w.session_moved_on() is False
    monkeypatch.delenv("WHATIF_SERVING_INLINE", raising=False)
    s = resolve([("scenario", "default"), ("num_requests", "200000"), ("request_rate", "5")])[0]
    flips = iter([False] * 3 + [True] * 10_000)
    monkeypatch.setattr(w, "session_moved_on", lambda: next(flips))

    class Rerun(Exception):
        pass

    def leave():
        raise Rerun

    monkeypatch.setattr(w, "_leave_for_the_next_run", leave)
    taken = []
    take = w._take
    monkeypatch.setattr(w, "_take", lambda lane="light": taken.append(take(lane)) or taken[-1])
    with pytest.raises(Rerun):
        w._ask(s.raw.model_dump(mode="json"))
    assert len(taken) == 1
    assert taken[0].wait(timeout=30) is not None  # the stale job's worker was stopped


def test_a_file_read_is_not_cancelled_by_a_rerun_request(monkeypatch):
    from model.errors import ScenarioError
    from ui import serving_worker as w

    monkeypatch.delenv("WHATIF_SERVING_INLINE", raising=False)
    monkeypatch.setattr(w, "session_moved_on", lambda: True)
    with pytest.raises(ScenarioError) as err:
        w.read_file("import", "junk.csv", b"when,what\n1,2\n")
    assert err.value.key == "junk.csv"


# ------------------------------------------------------------------ what a new user asked for


def _serving_page(**query):

    at = page_test("pages/2_Serving.py", timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    return at


def test_one_run_shows_the_percentiles_as_vllm_bench_serve_prints_them():
    at = _serving_page(scenario="llama-8b-1xh100")
    at.session_state["t_serving"] = "One run"
    at.run()
    assert not at.exception
    (table,) = [d.value for d in at.dataframe if "this run [ms]" in d.value.columns]
    assert table["this run [ms]"].tolist() == ["TTFT", "TPOT", "ITL", "E2EL"]
    assert list(table.columns[1:]) == ["mean", "p50", "p90", "p99"]
    row = table.set_index("this run [ms]").loc["TTFT"]
    assert row["p50"] <= row["p90"] <= row["p99"]


def test_a_rate_within_ten_percent_of_capacity_is_warned_about():
    s = scen(("scenario", "llama-8b-1xh100"))
    best = serving.max_rate(s)["max_request_rate"]
    near = _serving_page(scenario="llama-8b-1xh100", request_rate=f"{0.95 * best:.4g}")
    near.run()
    assert any("Near capacity" in w.value for w in near.warning)
    far = _serving_page(scenario="llama-8b-1xh100", request_rate=f"{0.5 * best:.4g}")
    far.run()
    assert not any("Near capacity" in w.value for w in far.warning)


@pytest.mark.parametrize(
    "pairs",
    [
        [("request_rate", "10")],
        [("request_rate", "10"), ("lengths", "random"), ("range_ratio", "0.45")],
        [("model", "qwen3-30b-a3b"), ("gpus", "1"), ("data_parallel", "2")],
        [("output_tokens", "1"), ("ttft_slo_ms", "120")],
    ],
)
def test_what_the_search_reads_of_a_run_equals_the_runs_figures(pairs):
    """The capacity search reads each run through ``slo_check`` (issue 39's speed budget): its
    values are the full figures', at a light, a busy and an overloaded rate and all at once."""
    s = scen(*pairs, ("num_requests", "300"))
    runner = serving._Runner(s, 300)
    hi = runner.at("inf")["request_throughput"]
    for rate in ("inf", 0.01 * hi, 0.5 * hi, 1.2 * hi):
        quick, full = runner.check(rate), runner.at(rate)
        assert set(quick) < set(full)
        for key, value in quick.items():
            assert value == full[key], (rate, key)


def test_a_sweep_kept_across_an_slo_change_equals_one_computed_cold():
    """The sweep's runs are kept without the SLOs (their rates are fractions of the saturation
    throughput); after an SLO change only goodput and the SLO share are counted again, and
    they equal a sweep computed from scratch."""
    s = scen(("request_rate", "6"), ("num_requests", "300"), ("seed", "17"))
    serving.capacity(s)
    stricter = s.model_copy(update={"ttft_slo_ms": 150.0, "tpot_slo_ms": 25.0})
    warm = serving.capacity(stricter)
    for cache in (serving._MAX_RATE, serving._SWEEPS):
        cache.clear()
    cold = serving.capacity(stricter)
    assert warm["max_request_rate"] == cold["max_request_rate"]
    for key, values in cold["sweep"].items():
        np.testing.assert_array_equal(warm["sweep"][key], values, err_msg=key)
    # and the SLO share did move: the stricter SLOs are met by fewer requests somewhere
    loose = serving.capacity(s)["sweep"]["slo_met_share"]
    assert (cold["sweep"]["slo_met_share"] <= loose).all()
    assert (cold["sweep"]["slo_met_share"] < loose).any()


# ------------------------------------------------------------------ asynchronous scheduling


@pytest.mark.parametrize("batch", [1, 64, 600])
def test_async_scheduling_overlaps_the_per_sequence_host_work(batch):
    """Synchronous: every step pays batch × host_us_per_seq after the GPU's work; asynchronous
    (vLLM PR 19970): that work overlaps the step, which takes the longer of the two (hand
    calculation from the same step's terms)."""
    pairs = [("scenario", "llama-8b-1xh100"), ("context_tokens", 1500), ("api_us_per_token", 0)]
    pairs.append(("host_us_per_seq", 40))
    sync = scen(*pairs, ("async_scheduling", "false"))
    over = scen(*pairs, ("async_scheduling", "true"))
    no_seq = decode.sweep(scen(*pairs[:-1], ("host_us_per_seq", 0)), [batch])["t_step_s"][0]
    seq = batch * 40e-6
    assert decode.sweep(sync, [batch])["t_step_s"][0] == pytest.approx(no_seq + seq, rel=1e-9)
    assert decode.sweep(over, [batch])["t_step_s"][0] == pytest.approx(max(no_seq, seq), rel=1e-9)
    for s in (sync, over):  # the Serving lens's decode step is the Roofline lens's
        got = serving.StepModel(s, 8192).decode(batch, np.array([batch * 1500.0]))[0]
        assert got == pytest.approx(decode.sweep(s, [batch])["t_step_s"][0], rel=1e-12)


def test_async_scheduling_follows_the_release():
    """auto is the release's default: off in vLLM 0.11-0.13 (band vllm@0.11), on from 0.14
    (vLLM PR 27614); SGLang's overlap scheduler is on; a frozen revision keeps its figures."""
    from model import engines

    assert engines.banded("vllm", "0.11.0") == "vllm@0.11"
    assert not scen(("engine", "vllm@0.11")).async_scheduling_on
    assert scen(("engine", engines.banded("vllm", "0.14.0"))).async_scheduling_on
    assert scen(("engine", "sglang")).async_scheduling_on
    assert not scen(("engine", "vllm@2026.12.5")).async_scheduling_on
    assert scen(("engine", "vllm@0.11"), ("async_scheduling", "on")).async_scheduling_on


def test_a_bad_async_scheduling_is_one_line_naming_the_key(capsys):
    assert main(["eval", "--set", "async_scheduling=maybe", "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("whatif: error: async_scheduling:") and "\n" not in err
    assert "auto" in err and "true" in err and "false" in err


# ------------------------------------------------------------------ the front end's own work


def test_a_lone_long_prompt_waits_for_the_front_end_s_own_work():
    """frontend_queued_ms + frontend_us_per_token × prompt longer than frontend_ms: a lone
    request's TTFT carries that work (0.5 + 0.02 × 4000 = 80.5 ms > 12 ms), in the Request row
    and in the Serving lens alike; a short prompt keeps frontend_ms."""
    long = scen(
        ("scenario", "llama-8b-1xh100"),
        ("prompt_tokens", 4000),
        ("output_tokens", 16),
        ("frontend_us_per_token", 20),
        ("frontend_queued_ms", 0.5),
        ("frontend_ms", 12),
    )
    req = request.request_figures(long)
    assert req["frontend_ms"] == pytest.approx(80.5, rel=1e-12)
    f = serving.run(long, wl_fixed(5, 1e-4, 4000, 16))["figures"]
    assert f["mean_ttft_ms"] == pytest.approx(req["ttft_ms"], rel=1e-6)
    short = long.model_copy(update={"prompt_tokens": 100})
    assert request.request_figures(short)["frontend_ms"] == pytest.approx(12.0, rel=1e-12)


def test_a_flood_queues_at_the_front_end_s_per_token_work():
    """A flood of n requests reaches the scheduler one front-end service after another: the
    last enters n × (queued + per token × prompt) after the first (here 50 × 10.5 ms)."""
    s = scen(
        ("scenario", "llama-8b-1xh100"),
        ("frontend_us_per_token", 20),
        ("frontend_queued_ms", 0.5),
        ("frontend_ms", 1),
    )
    wl = wl_fixed(50, float("inf"), 500, 4)
    sim = serving.run(s, wl)["sim"]
    first = np.sort(sim["first_token_s"])
    assert first[-1] - first[0] >= 49 * 10.5e-3 * (1 - 1e-9)


def test_a_mixed_step_is_never_shorter_than_one_roof():
    """Revision 2026.12.8 times a step's GEMMs and its one attention kernel (every decode's KV
    read and the chunks' attention) each at its own roof (model.roofline.gpu_time): a mixed
    step of 256 decodes and a 2,048-token chunk is at least the frozen 2026.12.7 step, and at
    most its memory and compute times added."""
    pairs = (("model", "qwen3-14b"), ("gpus", 1), ("api_us_per_token", 0), ("host_ms", 0))
    new = serving.StepModel(scen(*pairs, ("engine", "vllm")), 8192)
    old = serving.StepModel(scen(*pairs, ("engine", "vllm@2026.12.7")), 8192)
    args = (256, 256 * 1500.0, 2048, serving.chunk_attention(2048, 0), 2048.0)
    assert new.mixed(*args) >= old.mixed(*args)
    assert new.mixed(*args) / old.mixed(*args) < 2.0
    # decode-only steps of the two revisions agree while every kernel is memory-bound
    ctx = np.array([4 * 1500.0])
    assert new.decode(4, ctx)[0] == pytest.approx(old.decode(4, ctx)[0], rel=1e-12)


def test_peak_output_throughput_is_the_busiest_second_of_tokens():
    """vLLM's "Peak output token throughput": token arrivals binned by whole seconds from
    the first send. One request on the roofline seed's RTX 4090 streams a token every ~8.06 ms
    (the seed's 8 ms, plus the context's growth), so a second holds 1,000 / 8.06 = 124.1 gaps:
    124 or 125 tokens, never more."""
    s = resolve(
        [("scenario", "seed-3b-4090"), ("num_requests", "1"), ("output_tokens", "1000"),
         ("prompt_tokens", "16"), ("request_rate", "inf")]
    )[0]  # fmt: skip
    f = serving.run(s)["figures"]
    assert f["median_tpot_ms"] == pytest.approx(8.06, abs=0.01)
    assert 124 <= f["max_output_tokens_per_s"] <= 125
    # a flood streams far more at its peak than on average over the run
    flood = resolve([("request_rate", "inf"), ("num_requests", "400")])[0]
    g = serving.run(flood)["figures"]
    total = g["total_output_tokens"]
    assert g["output_throughput"] < g["max_output_tokens_per_s"] <= total
    assert g["max_output_tokens_per_s"] >= total / (math.ceil(g["duration"]) + 1)
