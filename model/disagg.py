"""Prefill/decode disaggregation (issue 42 §2): a replica as a pool of prefill instances and a
pool of decode instances (xPyD).

A request's prompt is prefilled on a prefill instance (``prefill_gpus`` GPUs each,
``prefill_instances`` of them), its KV cache moves to a decode instance (``decode_gpus``,
``decode_instances``) over the link between them, and it decodes there without prefill chunks
in its steps. Each pool is the serving simulator's engine (:func:`model.serving.simulate`) with
its own queue, token budget and KV cache, run on the pool's own scenario (:func:`pool`):

- the clients send to a proxy that hands each request to the prefill instances in turn (round
  robin), as a request for one token; the prefill instance pays the front end, queues,
  prefills (chunked, with prefix caching where the engine has it) and samples that token;
- the prompt's KV then moves to a decode instance over the link, one transfer after another
  per prefill instance (a FIFO of bytes / rate; :func:`transfer_rate_b_s`);
- the proxy hands the request to the decode instances in turn, in the order the prefills end;
  the decode instance pays its own front end (it tokenises the request again), admits it when
  the blocks for its prompt are free, counts the transferred tokens as computed, computes the
  last prompt token for the logits (that step streams the first token the client sees), then
  decodes it with the others, speculative decoding included;
- TTFT = front end + prefill queue + prefill + KV transfer + the decode instance's front end,
  queue and first step; TPOT has no prefill interference.

With the clients' arrivals fixed (an open-loop run: a rate, no concurrency limit) the pools are
a tandem and run one after the other exactly. With a concurrency limit the clients' sends
depend on when requests finish: the run is repeated, each time sending as the limit allows
with the running mean of the latencies of the runs before, until they settle
(:data:`CLOSED_LOOP_ROUNDS` at most; ``disagg.rounds`` says how many it took): throughput and
TPOT settle within a few per cent in a few rounds, TTFT (which depends on each request finding
its slot free when it is sent) more slowly.

What is simplified: the prefill instance frees a request's KV when it samples the token (the
transfer holds it a few ms more); the decode pool does not share prefixes; a preempted decode
recomputes on the decode instance, as vLLM's does.

References
----------
.. [1] Zhong et al., "DistServe: Disaggregating Prefill and Decoding for Goodput-optimized LLM
   Serving", OSDI 2024: separate prefill and decode instances, each sized and parallelised for
   its phase; TTFT = prefill queue + prefill + KV transfer, TPOT free of prefill interference.
.. [2] Patel et al., "Splitwise: Efficient Generative LLM Inference Using Phase Splitting",
   ISCA 2024: prompt and token machine pools, the KV cache transferred layer by layer over
   InfiniBand.
.. [3] vLLM disaggregated prefilling (docs/features/disagg_prefill.md) and its proxy
   (examples/online_serving/disaggregated_serving/toy_proxy_server.py): each request goes to a
   prefill instance with max_tokens 1, then to a decode instance, each picked round robin; the
   decode instance's KV connector (NixlConnector) loads the prompt's KV, which its scheduler
   counts as computed tokens.
"""

from __future__ import annotations

import heapq
import math
from collections import OrderedDict
from functools import lru_cache

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from model import memory
from model.datafiles import PRESETS_DIR, load_file
from model.runfigures import figures, saturated
from model.scenario import Scenario
from model.scheduler import DoesNotFit, Sim, check_fits, frontend_fifo
from model.scheduler import simulate as simulate_engine
from model.steplog import StepLog
from model.stepmodel import StepModel, frontend_service_s, lone_frontend_s
from model.units import GB, MS
from model.workload import CAPACITY_REQUESTS, Workload, search_key, workload

#: the most runs a closed-loop (concurrency-limited) disaggregated run repeats
CLOSED_LOOP_ROUNDS = 6
#: the sends have settled when the run's mean latency moves less than this share
CLOSED_LOOP_TOLERANCE = 0.01


class LinkPreset(BaseModel):
    """How a prompt's KV cache moves between the pools (``presets/disaggregation.yaml``)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    node_gpus: int = Field(ge=1, le=1024)
    rdma_gb_s_per_gpu: float = Field(gt=0, le=100000)
    transfer_efficiency: float = Field(gt=0, le=1)
    latency_ms: float = Field(ge=0, le=10000)
    sources: dict[str, str]


@lru_cache(maxsize=1)
def link_preset() -> LinkPreset:
    """The shipped link figures (``presets/disaggregation.yaml``)."""
    return LinkPreset.model_validate(load_file(PRESETS_DIR / "disaggregation.yaml"))


def prefill_gpus(s: Scenario) -> int:
    """GPUs per prefill instance: ``prefill_gpus``, ``auto`` = ``gpus``."""
    return int(s.prefill_gpus or s.gpus)


def decode_gpus(s: Scenario) -> int:
    """GPUs per decode instance: ``decode_gpus``, ``auto`` = ``gpus``."""
    return int(s.decode_gpus or s.gpus)


_ONE_ENGINE = {
    "disaggregated": False,
    "data_parallel": 1,
    "expert_parallel": False,
    "prefill_gpus": None,
    "decode_gpus": None,
    "prefill_instances": 1,
    "decode_instances": 1,
    "kv_transfer_gb_s": None,
}
#: a disaggregated variant of a data-parallel scenario: the pools are one engine each
_ONE_LAYOUT = {"data_parallel": 1, "expert_parallel": False}
_NO_SPECULATION = {
    "speculative": "none",
    "num_speculative_tokens": None,
    "spec_acceptance": None,
    "spec_acceptance_length": None,
    "draft_model": None,
}


def pool(s: Scenario, role: str) -> Scenario:
    """The scenario of one ``prefill`` or ``decode`` instance of ``s``: its GPUs as the
    tensor-parallel degree, one engine. A prefill instance samples one token and does not
    speculate; a decode instance keeps the speculative decoding set and does not share
    prefixes (its prompts' KV arrives from the prefill pool)."""
    if role == "prefill":
        update = {**_ONE_ENGINE, **_NO_SPECULATION, "gpus": prefill_gpus(s)}
    elif role == "decode":
        update = {**_ONE_ENGINE, "gpus": decode_gpus(s), "prefix_caching": "false"}
    else:
        raise ValueError(f"role is prefill or decode, not {role!r}")
    return s.model_copy(update=update)


def aggregated(s: Scenario) -> Scenario:
    """``s`` served as one engine per replica (``disaggregated`` off), on ``gpus`` GPUs."""
    return s.model_copy(update={"disaggregated": False})


def transfer_rate_b_s(s: Scenario) -> float:
    """The rate a prompt's KV cache moves from a prefill to a decode instance [B/s].

    ``kv_transfer_gb_s`` when set; ``auto``: the ranks holding the KV's shards send at once
    (min(prefill GPUs, decode GPUs, KV shards); an MLA latent is one shard), each over the
    GPU's interconnect (``interconnect_gb_s``, per direction) when the replica fits one node
    of ``node_gpus`` GPUs, else over its RDMA NIC, times the connector's efficiency
    (``presets/disaggregation.yaml``).

    References
    ----------
    .. [1] Patel et al., Splitwise (ISCA 2024), section 4.3: the KV cache moves between the
       machines' GPUs over InfiniBand, each GPU its own shard.
    .. [2] NVIDIA DGX H100 datasheet: one 400 Gb/s ConnectX-7 NIC per GPU; NVLink 4 900 GB/s
       bidirectional per GPU (the hardware presets' ``interconnect_gb_s``).
    """
    if s.kv_transfer_gb_s is not None:
        return float(s.kv_transfer_gb_s) * GB
    lp = link_preset()
    pg, dg = prefill_gpus(s), decode_gpus(s)
    shards = 1 if s.model.kv_lora_rank else memory.kv_shards(min(pg, dg), s.model.kv_heads)
    lanes = max(1, min(pg, dg, shards))
    link = s.hardware.interconnect_gb_s
    per_lane = link if s.replica_gpus <= lp.node_gpus else min(lp.rdma_gb_s_per_gpu, link)
    return lanes * per_lane * GB * lp.transfer_efficiency


def transfer_bytes(s: Scenario, prompt_tokens) -> np.ndarray:
    """Bytes of KV cache a prompt of ``prompt_tokens`` moves (what the prefill instance holds
    for it: :func:`model.memory.held_tokens` × :func:`model.memory.kv_bytes_per_token`) [B]."""
    p = pool(s, "prefill")
    tokens = np.asarray(prompt_tokens, dtype=float)
    return memory.held_tokens(p, tokens) * memory.kv_bytes_per_token(p)


def transfer_s(s: Scenario, prompt_tokens) -> np.ndarray:
    """Seconds one prompt's KV takes to move, queueing aside: bytes / rate + the latency [s]."""
    return transfer_bytes(s, prompt_tokens) / transfer_rate_b_s(s) + link_preset().latency_ms * MS


def step_models(s: Scenario) -> dict[str, StepModel]:
    """The step physics of a prefill and of a decode instance (built once per scenario)."""
    out = {}
    for role in ("prefill", "decode"):
        p = pool(s, role)
        out[role] = StepModel(p, int(p.max_num_batched_tokens))
    return out


def fits(s: Scenario, longest_tokens: int | None = None) -> None:
    """Raise :class:`model.serving.DoesNotFit` with the reason when a prefill or a decode
    instance of ``s`` cannot hold the model and its longest request."""
    for role in ("prefill", "decode"):
        try:
            check_fits(pool(s, role), longest_tokens)
        except ValueError as err:
            raise type(err)(f"a {role} instance: {err}") from None


def simulate(s: Scenario, wl: Workload, sms: dict | None = None) -> Sim:
    """Serve ``wl`` on one disaggregated replica of ``s`` (the module docstring gives the
    rules): a :class:`model.serving.Sim` that :func:`model.serving.figures` reads as any run's,
    the decode instances' steps as its steps, plus ``disagg`` (per request: ``prefill_done_s``,
    ``kv_ready_s``, ``transfer_s``; the pools' sizes; ``rounds`` of a closed-loop run)."""
    sms = sms or step_models(s)
    if wl.open_loop:
        return _stages(s, wl, np.asarray(wl.arrival_s, dtype=float), sms, rounds=1)
    return _closed_loop(s, wl, sms)


def _semaphore(arrival: np.ndarray, latency: np.ndarray, conc: int) -> np.ndarray:
    """Send times of requests that arrive at ``arrival`` (sorted) when at most ``conc`` are in
    flight and request k stays ``latency[k]`` [s]: ``vllm bench serve``'s semaphore, acquired
    in order."""
    n = len(arrival)
    send = np.empty(n)
    flight: list[float] = []
    last = -np.inf
    for k in range(n):
        t = max(float(arrival[k]), last)
        if len(flight) >= conc:
            t = max(t, heapq.heappop(flight))
        send[k] = last = t
        heapq.heappush(flight, t + float(latency[k]))
    return send


def _first_guess(s: Scenario, wl: Workload, sms: dict) -> float:
    """A request's latency with ``max_concurrency`` in flight, before any run [s]: its
    prefill alone, the transfer, and its output tokens at a decode batch of the concurrency
    spread over the decode instances."""
    prompt = float(np.mean(wl.prompt_tokens))
    output = float(np.mean(wl.output_tokens))
    p_tok = max(int(round(prompt)), 1)
    attn, kv = sms["prefill"].chunk_attended(p_tok, 0)
    pre = sms["prefill"].mixed(0, 0.0, p_tok, attn, kv)
    b = max(1, -(-int(wl.max_concurrency) // int(s.decode_instances)))
    b = min(b, int(pool(s, "decode").max_num_seqs))
    step = float(sms["decode"].decode(b, np.array([b * (prompt + output / 2)]))[0])
    return pre + float(transfer_s(s, p_tok)) + output * step


def _closed_loop(s: Scenario, wl: Workload, sms: dict) -> Sim:
    arrival = np.asarray(wl.arrival_s, dtype=float)
    conc = int(wl.max_concurrency)
    lat = np.full(len(arrival), _first_guess(s, wl, sms))
    sim = None
    for rounds in range(1, CLOSED_LOOP_ROUNDS + 1):
        sim = _stages(s, wl, _semaphore(arrival, lat, conc), sms, rounds)
        got = sim["finish_s"] - sim["send_s"]
        moved = abs(float(got.mean()) - float(lat.mean())) / max(float(got.mean()), 1e-12)
        if moved < CLOSED_LOOP_TOLERANCE:
            break
        # the running mean of the rounds' latencies (a stochastic-approximation step: each
        # request's latency depends on the others' sends, and a full step oscillates)
        lat = lat + (got - lat) / (rounds + 1)
    return sim


class _Binds(Exception):
    """The KV cache binds in a prefill-only run: :func:`prefill_run` hands it to the general
    simulator."""


def prefill_run(ps: Scenario, wl: Workload, sm: StepModel) -> Sim:
    """A prefill instance's run of ``wl`` (every request for one token, arrivals open-loop):
    :func:`model.serving.simulate`'s rules for a step without decodes, in a lean loop (each
    step: the chunks of prompts being prefilled, then of waiting ones first come first served,
    within ``max_num_batched_tokens`` and ``max_num_seqs``; a prompt done samples its token
    and leaves). It gives the general simulator's result; where prefix caching could hit or
    the KV cache could bind (preemption), the general simulator runs instead."""
    from model.scheduler import _kv_weights, kv_blocks, prefix_plan

    prompts = np.asarray(wl.prompt_tokens, dtype=np.int64)
    kw = _kv_weights(ps)
    general = not wl.open_loop or prefix_plan(ps, prompts, kw, wl)["on"]
    if not general:
        try:
            return _prefill_lean(ps, wl, sm, prompts, kw, kv_blocks(ps) * kw.layers)
        except _Binds:
            pass
    return simulate_engine(ps, wl, sm)


def _prefill_lean(ps, wl, sm, prompts, kw, cap) -> Sim:
    from collections import deque

    n = len(prompts)
    budget = int(ps.max_num_batched_tokens)
    max_seqs = int(max(min(ps.max_num_seqs, budget), 1))
    cost = kw.cost if kw.window else (lambda tokens: -(-int(tokens) // 16))
    send = np.asarray(wl.arrival_s, dtype=float)
    # the front end as model.scheduler.simulate has it (model.stepmodel)
    fe_svc = frontend_service_s(ps, prompts)
    fe_lat = lone_frontend_s(ps, prompts) - fe_svc
    entry_a = frontend_fifo(send, fe_svc) + fe_lat
    entry = entry_a.tolist()  # Python numbers: the loop indexes them one by one
    plen = [int(x) for x in prompts]
    first = [math.nan] * n
    one_end, one_dt, one_batch, one_blocks = [], [], [], []
    waiting: deque[int] = deque()
    prefilling: list[list[int]] = []  # [request, computed, blocks]
    t, used, done, nxt = 0.0, 0, 0, 0
    chunk = sm.chunk_attended
    mixed = sm.mixed
    while done < n:
        while nxt < n and entry[nxt] <= t:
            waiting.append(nxt)
            nxt += 1
        if not prefilling and not waiting:
            t = max(t, entry[nxt])
            continue
        left = budget
        sched = []
        for item in prefilling:
            if left <= 0:
                break
            i, comp, held = item
            c = min(plen[i] - comp, left)
            extra = cost(comp + c) - held
            if extra > cap - used:
                raise _Binds
            used += extra
            item[2] += extra
            sched.append((item, comp, c))
            left -= c
        while waiting and left > 0 and len(prefilling) < max_seqs:
            i = waiting[0]
            c = min(plen[i], left)
            extra = cost(c)
            if extra > cap - used:
                raise _Binds
            waiting.popleft()
            used += extra
            item = [i, 0, extra]
            prefilling.append(item)
            sched.append((item, 0, c))
            left -= c
        p_tok = p_attn = p_kv = 0
        for _, a, c in sched:
            x, y = chunk(c, a)
            p_tok += c
            p_attn += x
            p_kv += y
        dt = mixed(0, 0.0, p_tok, p_attn, p_kv)
        t += dt
        one_end.append(t)
        one_dt.append(dt)
        one_batch.append(len(sched))
        one_blocks.append(used)
        for item, _, c in sched:
            item[1] += c
            if item[1] < plen[item[0]]:
                continue
            prefilling.remove(item)
            first[item[0]] = t
            used -= item[2]
            done += 1
    z, zi = np.zeros(0), np.zeros(0, dtype=np.int64)
    log = StepLog(
        t0=z, a=z, bs=z, n=zi, batch=zi, b0=zi, b1=zi, exp_end=z, exp_dt=z,
        one_end=np.asarray(one_end, dtype=float), one_dt=np.asarray(one_dt, dtype=float),
        one_batch=np.asarray(one_batch, dtype=np.int64),
        one_itl=np.zeros(len(one_end), dtype=np.int64),
        one_blocks=np.asarray(one_blocks, dtype=np.int64), layers=kw.layers,
    )  # fmt: skip
    return Sim(
        {
            "send_s": send,
            "entry_s": entry_a,
            "prefix_hit_tokens": np.zeros(n, dtype=np.int64),
            "prefix_cache_queried_tokens": 0,
            "prefix_cache_hit_tokens": 0,
            "prefix_caching": False,
            "first_token_s": np.asarray(first, dtype=float),
            "finish_s": np.asarray(first, dtype=float),
            "prompt_tokens": prompts,
            "output_tokens": np.ones(n, dtype=np.int64),
            "preempted": np.zeros(n, dtype=np.int64),
            "steps": log,
            "itl_extra_s": z,
            "itl_stall_s": z,
            "itl_stall_tokens": zi,
            "kv_blocks": cap // kw.layers,
            "max_num_seqs": max_seqs,
            "open_loop": True,
        }
    )


def _stages(s: Scenario, wl: Workload, send: np.ndarray, sms: dict, rounds: int) -> Sim:
    n = len(send)
    P, D = int(s.prefill_instances), int(s.decode_instances)
    ps, ds = pool(s, "prefill"), pool(s, "decode")
    prompts = np.asarray(wl.prompt_tokens, dtype=np.int64)
    outputs = np.maximum(np.asarray(wl.output_tokens, dtype=np.int64), 1)
    move_s = transfer_bytes(s, prompts) / transfer_rate_b_s(s)
    latency = link_preset().latency_ms * MS
    idx = np.arange(n)

    entry = np.full(n, np.nan)
    done = np.full(n, np.nan)
    ready = np.full(n, np.nan)
    hit = np.zeros(n, dtype=np.int64)
    preempted = np.zeros(n, dtype=np.int64)
    p_sims = []
    for j in range(P):  # the proxy's round robin over the prefill instances
        sel = idx[j::P]
        if not len(sel):
            continue
        w = Workload(
            send[sel],
            prompts[sel],
            np.ones(len(sel), dtype=np.int64),
            None,
            prefix_group=None if wl.prefix_group is None else wl.prefix_group[sel],
            prefix_tokens=None if wl.prefix_tokens is None else wl.prefix_tokens[sel],
        )
        sim = prefill_run(ps, w, sms["prefill"])
        p_sims.append(sim)
        entry[sel] = sim["entry_s"]
        done[sel] = sim["first_token_s"]
        hit[sel] = sim["prefix_hit_tokens"]
        preempted[sel] += sim["preempted"]
        # the prefill instance's link sends one prompt's KV after another
        order = np.argsort(done[sel], kind="stable")
        ready[sel[order]] = frontend_fifo(done[sel][order], move_s[sel][order]) + latency

    first = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    d_sims = []
    by_ready = np.argsort(ready, kind="stable")  # the proxy hands on as prefills end
    for j in range(D):
        sel = by_ready[j::D]
        if not len(sel):
            continue
        w = Workload(ready[sel], prompts[sel], outputs[sel], None, kv_ready_tokens=prompts[sel] - 1)
        sim = simulate_engine(ds, w, sms["decode"])
        d_sims.append(sim)
        first[sel] = sim["first_token_s"]
        finish[sel] = sim["finish_s"]
        preempted[sel] += sim["preempted"]

    def cat(key: str, dtype=float) -> np.ndarray:
        parts = [x[key] for x in d_sims if key in x]
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)

    queried = sum(int(x.get("prefix_cache_queried_tokens", 0)) for x in p_sims)
    return Sim(
        {
            "send_s": send,
            "entry_s": entry,
            "prefix_hit_tokens": hit,
            "prefix_cache_queried_tokens": queried,
            "prefix_cache_hit_tokens": sum(int(x["prefix_cache_hit_tokens"]) for x in p_sims),
            "prefix_caching": any(bool(x["prefix_caching"]) for x in p_sims),
            "first_token_s": first,
            "finish_s": finish,
            "prompt_tokens": prompts,
            "output_tokens": outputs,
            "preempted": preempted,
            "steps": StepLog.concat([x["steps"] for x in d_sims]),
            "itl_extra_s": cat("itl_extra_s"),
            "itl_stall_s": cat("itl_stall_s"),
            "itl_stall_tokens": cat("itl_stall_tokens", np.int64),
            "kv_blocks": d_sims[0]["kv_blocks"] if d_sims else 0,
            "max_num_seqs": d_sims[0]["max_num_seqs"] if d_sims else 0,
            "open_loop": wl.open_loop,
            "saturated": bool(wl.open_loop) and any(saturated(x) for x in (*p_sims, *d_sims)),
            "timeline_of": d_sims[0] if d_sims else None,
            "disagg": {
                "prefill_done_s": done,
                "kv_ready_s": ready,
                "transfer_s": move_s + latency,
                "prefill_instances": P,
                "decode_instances": D,
                "prefill_gpus": prefill_gpus(s),
                "decode_gpus": decode_gpus(s),
                "prefill_kv_blocks": p_sims[0]["kv_blocks"] if p_sims else 0,
                "rounds": rounds,
            },
        }
    )


# ------------------------------------------------------------------------------- capacity


def _bisect(meets, hi: float) -> float:
    """The largest rate in (0, hi] that ``meets`` (2⁻⁹ of ``hi``), as :func:`max_rate`'s
    search does it; 0 when even 1 % of ``hi`` does not."""
    lo = 0.01 * hi
    if not meets(lo):
        return 0.0
    if meets(hi):
        return hi
    a, b = lo, hi
    for _ in range(9):
        mid = 0.5 * (a + b)
        if meets(mid):
            a = mid
        else:
            b = mid
    return a


def _tpot(first: np.ndarray, finish: np.ndarray, outputs: np.ndarray) -> np.ndarray:
    return np.where(outputs > 1, (finish - first) / np.maximum(outputs - 1, 1), 0.0)


def pool_capacity(s: Scenario) -> dict:
    """Each pool's capacity per instance within the SLO, the pools sized apart: the largest
    Poisson rate one prefill instance takes (``prefill_rate_per_instance``) and one decode
    instance takes (``decode_rate_per_instance``) while ``slo_attainment`` of the requests
    meet both objectives, the other pool's share of each request's TTFT taken at light load,
    and neither saturates. ``prefill_saturation_rate`` is a prefill instance's throughput
    with every request at once.

    A request's TTFT is its prefill-instance part (front end, queue, prefill), the transfer,
    and its decode-instance part (front end, admission, first step); its TPOT is the decode
    instance's. Runs of :data:`model.serving.CAPACITY_REQUESTS` requests with the scenario's
    lengths, burstiness and seed, common to every rate.

    References
    ----------
    .. [1] Zhong et al., DistServe (OSDI 2024), section 4: each phase's instance is sized for
       its own SLO attainment at a rate, and the pools are scaled apart to the rate.
    .. [2] NVIDIA AIConfigurator (``aiconfigurator`` on PyPI): prefill and decode workers
       estimated apart and matched in rate (its xPyD search).
    """
    key = search_key(s)
    hit = _POOLS.get(key)
    if hit is not None:
        _POOLS.move_to_end(key)
        return hit
    n = int(min(s.num_requests, CAPACITY_REQUESTS))
    base = workload(s, rate=1.0, num_requests=n, max_concurrency=None)
    unit = base.arrival_s
    prompts = np.asarray(base.prompt_tokens, dtype=np.int64)
    outputs = np.maximum(np.asarray(base.output_tokens, dtype=np.int64), 1)
    ps, ds = pool(s, "prefill"), pool(s, "decode")
    fits(s, int((prompts + outputs).max()))
    sms = step_models(s)
    move = transfer_s(s, prompts)

    def prefill_at(rate):
        arr = np.zeros(n) if rate == "inf" else unit / float(rate)
        sim = prefill_run(ps, Workload(arr, prompts, np.ones(n, np.int64)), sms["prefill"])
        return sim, sim["first_token_s"] - sim["send_s"]

    def decode_at(rate):
        arr = unit / float(rate)
        w = Workload(arr, prompts, outputs, kv_ready_tokens=prompts - 1)
        sim = simulate_engine(ds, w, sms["decode"])
        return (
            sim,
            sim["first_token_s"] - arr,
            _tpot(sim["first_token_s"], sim["finish_s"], outputs),
        )

    p_sat, _ = prefill_at("inf")
    p_hi = float(figures(p_sat, ps)["request_throughput"])
    _, p_light = prefill_at(0.01 * p_hi)
    # the decode pool's light load: well under one prefill instance's throughput
    d_probe_rate = 0.01 * p_hi
    _, d_light, tpot_light = decode_at(d_probe_rate)
    ttft_slo, tpot_slo = s.ttft_slo_ms * MS, s.tpot_slo_ms * MS

    def share(ttft, tpot) -> float:
        ok = (ttft <= ttft_slo) & ((outputs <= 1) | (tpot <= tpot_slo))
        return float(ok.mean())

    def prefill_meets(rate) -> bool:
        sim, part = prefill_at(rate)
        return share(part + move + d_light, tpot_light) >= s.slo_attainment and not saturated(sim)

    def decode_meets(rate) -> bool:
        sim, part, tpot = decode_at(rate)
        return share(p_light + move + part, tpot) >= s.slo_attainment and not saturated(sim)

    p_rate = _bisect(prefill_meets, p_hi)
    # a decode instance's saturation: its throughput with requests arriving faster than any
    # decode step drains them (all at once, their KV ready)
    d_sat = simulate_engine(
        ds, Workload(np.zeros(n), prompts, outputs, kv_ready_tokens=prompts - 1), sms["decode"]
    )
    d_hi = float(figures(d_sat, ds)["request_throughput"])
    d_rate = _bisect(decode_meets, d_hi)
    out = {
        "prefill_rate_per_instance": p_rate,
        "decode_rate_per_instance": d_rate,
        "prefill_saturation_rate": p_hi,
        "decode_saturation_rate": d_hi,
        "prefill_gpus": prefill_gpus(s),
        "decode_gpus": decode_gpus(s),
        "mean_transfer_ms": float(move.mean()) / MS,
        "requests": n,
    }
    _POOLS[key] = out
    while len(_POOLS) > 256:
        _POOLS.popitem(last=False)
    return out


_POOLS: OrderedDict[str, dict] = OrderedDict()


#: the most instances of a pool the best-split search tries
MAX_SPLIT_INSTANCES = 8


def best_split(pc: dict, max_instances: int = MAX_SPLIT_INSTANCES) -> dict | None:
    """The xPyD split (x prefill, y decode instances, each at most ``max_instances``) that holds
    the most requests per second per GPU within the SLO, from :func:`pool_capacity`'s rates
    per instance: a replica of x and y holds min(x · prefill rate, y · decode rate); of equal
    rates per GPU the smaller replica. None when a pool meets the SLO at no rate."""
    rp, rd = pc["prefill_rate_per_instance"], pc["decode_rate_per_instance"]
    pg, dg = pc["prefill_gpus"], pc["decode_gpus"]
    if rp <= 0 or rd <= 0:
        return None
    x = np.arange(1, max_instances + 1)[:, None]
    y = np.arange(1, max_instances + 1)[None, :]
    rate = np.minimum(x * rp, y * rd)
    gpus = x * pg + y * dg
    per_gpu = rate / gpus
    best = per_gpu.max()
    # of the splits within 0.1 % of the best, the fewest GPUs
    near = np.argwhere(per_gpu >= best * (1 - 1e-3))
    i, j = min(near, key=lambda ij: (gpus[ij[0], ij[1]], -rate[ij[0], ij[1]]))
    return {
        "prefill_instances": int(i + 1),
        "decode_instances": int(j + 1),
        "prefill_gpus": int(pg),
        "decode_gpus": int(dg),
        "gpus": int(gpus[i, j]),
        "max_request_rate": float(rate[i, j]),
        "request_rate_per_gpu": float(per_gpu[i, j]),
    }


def _needed(rate: np.ndarray, per: float, gpus: int) -> np.ndarray:
    """GPUs for ``rate`` with ⌈rate / per⌉ units of ``gpus`` (NaN where ``per`` is 0)."""
    if per <= 0:
        return np.full(len(rate), np.nan)
    return np.maximum(np.ceil(rate / per - 1e-9), 1) * gpus


def comparison(s: Scenario, max_rate) -> dict:
    """Aggregated against disaggregated serving of ``s`` (the Serving page's Disaggregation
    view, AIConfigurator's headline comparison): the GPUs each needs against the request rate
    within the SLO, and the best xPyD split.

    - ``aggregated``: replicas of one engine on ``gpus`` GPUs, each holding
      :func:`model.serving.max_rate`'s rate;
    - ``as_set``: replicas of the xPyD as set, each holding its simulated max rate (with
      ``disaggregated`` off, a preview of 1P1D on ``gpus`` GPUs each);
    - ``pools``: the prefill and decode pools scaled apart, ⌈rate / prefill rate⌉ prefill and
      ⌈rate / decode rate⌉ decode instances (:func:`pool_capacity`);
    - ``best_split``: :func:`best_split`.

    ``max_rate``: the capacity search of a replica (:func:`model.serving.max_rate`, which
    builds on this module), run on the aggregated scenario and on the xPyD."""
    preview = not s.disaggregated
    d = s.model_copy(update={**_ONE_LAYOUT, "disaggregated": True}) if preview else s
    agg = aggregated(s)
    agg_rate = float(max_rate(agg)["max_request_rate"])
    set_rate = float(max_rate(d)["max_request_rate"])
    pc = pool_capacity(d)
    best = best_split(pc)
    rp, rd = pc["prefill_rate_per_instance"], pc["decode_rate_per_instance"]
    tops = [agg_rate, set_rate, best["max_request_rate"] if best else 0.0]
    if s.request_rate != "inf":
        tops.append(float(s.request_rate))
    top = 4 * max(max(tops), 1e-3)
    rates = np.linspace(top / 200, top, 200)
    pools = (
        _needed(rates, rp, pc["prefill_gpus"]) + _needed(rates, rd, pc["decode_gpus"])
        if rp > 0 and rd > 0
        else np.full(len(rates), np.nan)
    )
    out = {
        "preview": preview,
        "aggregated_gpus_per_replica": int(agg.gpus),
        "aggregated_rate_per_replica": agg_rate,
        "as_set_gpus_per_replica": int(d.replica_gpus),
        "as_set_rate_per_replica": set_rate,
        "as_set": {
            "prefill_instances": int(d.prefill_instances),
            "decode_instances": int(d.decode_instances),
            "prefill_gpus": prefill_gpus(d),
            "decode_gpus": decode_gpus(d),
        },
        "pools": pc,
        "best_split": best,
        "kv_transfer_gb_s": transfer_rate_b_s(d) / GB,
        "curve": {
            "request_rate": rates,
            "aggregated_gpus": _needed(rates, agg_rate, agg.gpus),
            "as_set_gpus": _needed(rates, set_rate, d.replica_gpus),
            "pools_gpus": pools,
        },
    }
    if s.request_rate != "inf":
        r = np.array([float(s.request_rate)])
        out["at_rate"] = {
            "request_rate": float(r[0]),
            "aggregated_gpus": float(_needed(r, agg_rate, agg.gpus)[0]),
            "as_set_gpus": float(_needed(r, set_rate, d.replica_gpus)[0]),
            "pools_gpus": float(
                (_needed(r, rp, pc["prefill_gpus"]) + _needed(r, rd, pc["decode_gpus"]))[0]
            )
            if rp > 0 and rd > 0
            else float("nan"),
        }
    return out


def pareto_points(s: Scenario, tps=(1, 2, 4, 8), seqs_list=(8, 32, 128, 512)) -> list[dict]:
    """Disaggregated points of the Pareto front (:func:`model.serving.pareto`), in the
    scenario's weights dtype: a decode instance of each tensor-parallel degree in ``tps`` kept
    at a concurrency of each ``max_num_seqs`` in ``seqs_list`` (every slot busy, prompts' KV
    ready), and the prefill GPUs its request rate needs at a prefill instance's saturation
    throughput (``prefill_gpus`` each; the pools matched in rate, as many prefill GPUs per
    decode instance as the rate asks, a fraction included). Per GPU = the decode instance's
    output tok/s over its GPUs and its share of the prefill pool's; per user = 1000 / TPOT.

    References
    ----------
    .. [1] NVIDIA AIConfigurator: disaggregated points on the tok/s/GPU against tok/s/user
       plane, prefill and decode workers matched in rate.
    """
    d = s.model_copy(update={**_ONE_LAYOUT, "disaggregated": True})
    ps = pool(d, "prefill")
    pg = prefill_gpus(d)
    try:
        check_fits(ps)
    except DoesNotFit:
        return []
    n_sat = int(min(s.num_requests, 600))
    base = workload(d, rate=1.0, num_requests=n_sat, max_concurrency=None)
    p_sm = StepModel(ps, int(ps.max_num_batched_tokens))
    p_sim = prefill_run(
        ps,
        Workload(np.zeros(n_sat), base.prompt_tokens, np.ones(n_sat, dtype=np.int64)),
        p_sm,
    )
    p_hi = float(figures(p_sim, ps)["request_throughput"])
    points = []
    for tp in tps:
        for seqs in seqs_list:
            v = d.model_copy(update={"decode_gpus": tp, "max_num_seqs": seqs})
            ds = pool(v, "decode")
            n = int(min(max(3 * seqs, 48), 600))
            w = workload(v, rate=1.0, num_requests=n, max_concurrency=None)
            prompts = np.asarray(w.prompt_tokens, dtype=np.int64)
            try:
                check_fits(ds, int((prompts + w.output_tokens).max()))
            except DoesNotFit:
                continue
            sim = simulate_engine(
                ds,
                Workload(np.zeros(n), prompts, w.output_tokens, seqs, kv_ready_tokens=prompts - 1),
                StepModel(ds, int(ds.max_num_batched_tokens)),
            )
            f = figures(sim, ds)
            if not f["mean_tpot_ms"]:
                continue
            prefill_share = f["request_throughput"] / p_hi * pg
            gpus = tp + prefill_share
            points.append(
                {
                    "gpus": gpus,
                    "weights_dtype": s.weights_dtype,
                    "max_num_seqs": seqs,
                    "disaggregated": True,
                    "decode_gpus": tp,
                    "prefill_gpus": pg,
                    "prefill_gpus_per_decode_instance": prefill_share,
                    "tokens_per_s_per_gpu": f["output_throughput"] / gpus,
                    "tokens_per_s_per_user": 1000.0 / f["mean_tpot_ms"],
                    "mean_ttft_ms": None,
                    "mean_tpot_ms": f["mean_tpot_ms"],
                    "request_throughput": f["request_throughput"],
                }
            )
    return points
