"""The server of the serving simulator (SPEC 4.6): one continuous-batching replica as vLLM V1's
scheduler runs it, one engine step at a time (:func:`simulate`), on :mod:`model.stepmodel`'s step
times and :mod:`model.workload`'s clients; :mod:`model.runfigures` summarises a run.

- every step carries one decode token of every running sequence that has finished its prefill,
  then prefill chunks (of running sequences still prefilling, then of waiting ones, first come
  first served) up to ``max_num_batched_tokens`` tokens in all and ``max_num_seqs`` sequences;
- the KV cache is paged in blocks of :data:`BLOCK_TOKENS` tokens, its size the KV capacity of
  SPEC 4.1 (:func:`model.memory.memory_figures`' ``kv_cache_tokens``); a waiting request is
  admitted only when the blocks for its chunk are free; when a running sequence needs a block
  and none is free, the newest running sequence is preempted: its blocks are freed and it goes
  back to the front of the queue, to be recomputed (prompt and generated tokens prefilled
  again) when there is room, as vLLM's recompute preemption does; with prefix caching on, its
  whole blocks stay cached (unreferenced, last in the LRU queue, its last block evicted first),
  so the recompute skips what was not evicted meanwhile;
- a step's time is the core's step physics for that mix (:class:`model.stepmodel.StepModel`:
  weights read once, KV read for every sequence's context, the FLOPs of decode and prefill
  tokens at their efficiencies, the all-reduces, launches and host work), so every knob of the
  other lenses moves it;
- each request pays the engine's front-end time (``frontend_ms``: HTTP, chat template,
  tokenisation, first schedule) before it reaches the scheduler; it counts in TTFT.

Between events (an arrival the scheduler could admit, a sequence finishing, the cache filling)
a batch of decode steps repeats with every context one token longer, so those steps are
evaluated in one vectorised call (closed form over the step index) instead of one by one.

References
----------
.. [1] Kwon et al., "Efficient Memory Management for Large Language Model Serving with
   PagedAttention", SOSP 2023: paged KV blocks (16 tokens), iteration-level scheduling,
   recompute preemption of the newest request.
.. [2] vLLM V1 scheduler (``vllm/v1/core/sched/scheduler.py``): running requests first, one
   token budget per step (``max_num_batched_tokens``), chunked prefill, FCFS waiting queue.
.. [3] Yu et al., "Orca: A Distributed Serving System for Transformer-Based Generative Models",
   OSDI 2022: iteration-level (continuous) batching.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections import OrderedDict, deque
from dataclasses import dataclass

import numpy as np

from model import memory, speculative
from model.scenario import Scenario
from model.steplog import StepLog
from model.stepmodel import StepModel, frontend_service_s, lone_frontend_s
from model.workload import Workload, rank_share

BLOCK_TOKENS = 16  # vLLM's default KV block size [tokens]


# ------------------------------------------------------------------------------- the server


@dataclass(slots=True, eq=False)  # compared by identity (each request is one object)
class _Req:
    i: int
    prompt: int
    output: int
    computed: int = 0  # tokens whose KV is in the cache (at clock g0 while decoding)
    target: int = 0  # tokens to prefill before the next token is sampled
    generated: int = 0  # tokens sent to the client (at clock g0 while decoding)
    blocks: int = 0  # KV layer-blocks held (while prefilling; derived while decoding)
    reserve: int = 0  # layer-blocks booked for speculative drafts' KV (model.speculative)
    shared: int = 0  # prefix-cache blocks it references but does not own
    capped: bool = False  # its window layers hold all they keep (decoding, sliding window)
    g0: int = -1  # decode clock when it joined the decode set; -1 when not decoding
    order: int = 0  # admission order (preemption takes the newest)
    version: int = 0  # bumped at each preemption (stale heap entries are skipped)
    last_token_s: float = 0.0


def _blocks(tokens: int) -> int:
    return -(-int(tokens) // BLOCK_TOKENS)


@dataclass(frozen=True)
class _KvWeights:
    """How a sequence's KV blocks count against the cache, in layer-blocks (a block of one
    layer): ``full`` layers hold a block per 16 tokens of the context, ``window`` layers at most
    ``cap_blocks`` (vLLM's hybrid manager frees the blocks that leave a sliding window;
    :func:`model.memory.window_held_tokens`). A model without a window counts whole blocks
    (``full`` 1, ``window`` 0), as the cache is sized."""

    full: int
    window: int
    cap_blocks: int  # window layers' blocks per sequence at most (0: no window)

    @property
    def layers(self) -> int:
        return self.full + self.window

    def cost(self, tokens: int) -> int:
        """Layer-blocks a sequence of ``tokens`` holds."""
        b = _blocks(tokens)
        return self.full * b + (self.window * min(b, self.cap_blocks) if self.window else 0)


def _kv_weights(s: Scenario) -> _KvWeights:
    m = s.model
    held = memory.window_held_tokens(s)
    if held is None:
        return _KvWeights(1, 0, 0)
    return _KvWeights(
        m.layers - m.sliding_window_layers, m.sliding_window_layers, _blocks(held) + 1
    )


def frontend_fifo(send: np.ndarray, service: np.ndarray) -> np.ndarray:
    """When each request leaves a single-server FIFO that serves it ``service`` seconds after
    it is free and the request has arrived at ``send`` (sorted) [s]: Lindley's recursion
    ``d_k = max(send_k, d_{k−1}) + service_k`` in closed form, ``d_k = S_k + max_{j≤k}
    (send_j − S_{j−1})`` with ``S`` the cumulative service, one vectorised pass.

    References
    ----------
    .. [1] D. V. Lindley, "The theory of queues with a single server", Proc. Cambridge Phil.
       Soc. 48 (1952): the waiting-time recursion.
    .. [2] vLLM ``vllm/entrypoints/openai/serving_engine.py``: one API-server process renders
       the chat template and tokenises each request before it is sent to the engine core.
    """
    send = np.asarray(send, dtype=float)
    service = np.asarray(service, dtype=float)
    if not len(send) or not service.any():
        return send.copy()
    S = np.cumsum(service)
    return S + np.maximum.accumulate(send - (S - service))


def prefix_plan(
    s: Scenario, prompts: np.ndarray, kw: _KvWeights | None = None, wl: Workload | None = None
) -> dict:
    """Which shared prefix each request starts with and how many whole KV blocks of it a
    cache hit can reuse (``on`` False: no prefix caching in this run).

    Every prompt starts with ``shared_prefix_tokens`` of one of ``prefix_groups`` prefixes,
    drawn uniformly with the run's seed (``vllm bench serve``'s ``--random-prefix-len`` is one
    group); a replayed trace with prefix block ids (``wl.prefix_tokens``, the Mooncake format:
    :mod:`model.readers.mooncake`) brings its own groups and shared lengths. Only whole blocks are hashed and reused, and at least the prompt's last token is
    computed, so a hit covers at most ``min(shared, prompt − 1) // 16`` blocks.

    References
    ----------
    .. [1] vLLM design doc "Automatic Prefix Caching" (docs/design/prefix_caching.md): blocks
       hashed with their prefix, full blocks only, shared by reference count, unreferenced
       blocks kept in an LRU free queue and evicted when a block is needed.
    .. [2] vLLM ``vllm/v1/core/kv_cache_manager.py`` ``get_computed_blocks``: when the whole
       prompt hits, the last block is recomputed to produce logits.
    """
    n = len(prompts)
    traced = wl is not None and wl.prefix_tokens is not None
    shared = wl.prefix_tokens if traced else s.shared_prefix_tokens
    on = bool(s.prefix_caching_on) and bool(np.any(np.asarray(shared) >= BLOCK_TOKENS))
    kw = kw or _kv_weights(s)
    if kw.window:  # vLLM's hybrid allocator caches sliding-window layers differently
        on = False
    if not on:
        return {"on": False, "group": np.zeros(n, dtype=np.int64), "blocks": np.zeros(n, np.int64)}
    if traced:  # the trace's own groups; a request without a shared prefix is its own group
        groups = np.where(wl.prefix_group >= 0, wl.prefix_group, -1 - np.arange(n))
        blocks = np.minimum(wl.prefix_tokens, np.asarray(prompts) - 1) // BLOCK_TOKENS
        return {"on": True, "group": groups, "blocks": np.maximum(blocks, 0).astype(np.int64)}
    groups = (
        np.random.default_rng([s.seed, 2]).integers(0, s.prefix_groups, size=n)
        if s.prefix_groups > 1
        else np.zeros(n, dtype=np.int64)
    )
    blocks = np.minimum(s.shared_prefix_tokens, np.asarray(prompts) - 1) // BLOCK_TOKENS
    return {"on": True, "group": groups, "blocks": np.maximum(blocks, 0).astype(np.int64)}


def simulate(s: Scenario, wl: Workload, sm: StepModel | None = None) -> dict:
    """Serve the workload ``wl`` on one replica of ``s``; per-request times and the engine's
    per-step record (the module docstring gives the rules).

    Returns a :class:`Sim`: arrays per request (``send_s``, ``entry_s``, ``first_token_s``,
    ``finish_s``, ``prompt_tokens``, ``output_tokens``, ``preempted``), the engine's steps as
    runs (``steps``, a :class:`model.steplog.StepLog`; per step on first access: ``step_end_s``,
    ``step_s``, ``step_batch``: sequences in the step, ``step_itl_tokens``: its tokens that are
    not a request's first, ``step_kv_blocks``: blocks in use after it), ``itl_extra_s`` (the gaps
    across preemptions), ``kv_blocks`` (the cache) and ``max_num_seqs``.

    The decode set is kept as totals on a decode clock ``g`` (steps run): a sequence that
    joined at ``g0`` with ``c`` tokens computed has ``c + g − g0`` at ``g`` and needs a new block
    at the steps where that is a multiple of :data:`BLOCK_TOKENS`, so sequences are counted by
    ``(g0 − c) mod BLOCK_TOKENS`` and a run of decode steps books its blocks without visiting
    each sequence.
    """
    # data-parallel ranks: each serves its share of the requests with its own scheduler and KV
    # cache, in steps whose MoE layers carry every rank's tokens (model.decode.moe_ranks); one
    # rank is simulated and figures() scales its throughput to the replica
    wl = rank_share(wl, s.data_parallel)
    N = len(wl.arrival_s)
    prompts = np.asarray(wl.prompt_tokens, dtype=np.int64)
    outputs = np.maximum(np.asarray(wl.output_tokens, dtype=np.int64), 1)
    budget = int(s.max_num_batched_tokens)
    kw = _kv_weights(s)
    L = kw.layers  # block counts below are layer-blocks (a block of one layer)
    cap = kv_blocks(s) * L
    # speculative decoding: a decode takes k + 1 tokens of the step's budget (vLLM's scheduler
    # counts the drafts), and needs fewer steps than tokens (model.speculative.steps_needed)
    k_spec = speculative.k_of(s)
    q = k_spec + 1
    max_seqs = int(max(min(s.max_num_seqs, budget // q), 1))
    sm = sm or StepModel(s, budget)
    B = BLOCK_TOKENS
    if k_spec:
        # the first token comes from the prefill, the rest from verify steps of 1 + a tokens,
        # a drawn per sequence and step; a request's decode clock counts those steps
        steps = speculative.steps_needed(outputs - 1, speculative.alpha_of(s), k_spec, s.seed)
        units = 1 + steps
        # the KV of the accepted drafts beyond one token a step, and the k lookahead slots,
        # booked when the request is admitted (layer-blocks)
        reserve = L * ((outputs - units + k_spec + B - 1) // B)
    else:
        units, reserve = outputs, None
    # the API server turns requests into engine requests one after another (chat template,
    # tokenisation): a FIFO of ``frontend_us_per_token`` × prompt per request
    # (one rank's requests share the API servers with the other data-parallel ranks': each
    # takes d times its own service time of the servers' capacity)
    fe_svc = frontend_service_s(s, prompts)
    # the rest of a lone request's front-end time is latency that overlaps other requests'
    # (HTTP, hops)
    fe_lat = lone_frontend_s(s, prompts) - fe_svc

    # prefix caching: each request's group and the whole blocks of its prefix it can reuse
    pc = prefix_plan(s, prompts, kw, wl)
    ready = wl.kv_ready_tokens  # KV already computed elsewhere (a disaggregated decode)
    groups, pre_blocks = pc["group"], pc["blocks"]
    g_blocks: dict[int, int] = {}  # group → its prefix blocks in the cache
    g_ref: dict[int, int] = {}  # group → running requests that reference them
    # unreferenced cached groups and preempted requests' blocks (``("r", i)``), oldest first
    lru: OrderedDict[int | tuple, None] = OrderedDict()
    pcs = {"evictable": 0, "hit": 0, "queried": 0, "kept_hit": 0}
    # a preempted request's own whole blocks, kept cached after it is freed (vLLM V1 frees a
    # preempted request as a finished one; SGLang's radix tree keeps what it inserted): in
    # ``lru`` as ``("r", i)``, evicted from its last block first, each until taken back
    keep = bool(s.prefix_caching_on) and not kw.window and ready is None
    decoded = bool(s.engine_figures.cache_keeps_decoded)  # its generated tokens' too
    kept: dict[int, int] = {}  # request → its blocks still cached
    kept_base: dict[int, int] = {}  # request → the shared prefix blocks its own follow
    hit_tokens = np.zeros(N, dtype=np.int64)

    send = np.full(N, np.nan)
    entry = np.full(N, np.nan)
    first = np.full(N, np.nan)
    finish = np.full(N, np.nan)
    preempted = np.zeros(N, dtype=np.int64)
    conc = wl.max_concurrency
    st = {"sent": 0, "flight": 0, "preempts": 0}
    if conc is None:
        send[:] = wl.arrival_s
        st["sent"] = N
        entry[:] = frontend_fifo(send, fe_svc) + fe_lat
    fe = {"free": 0.0}

    def release(now: float) -> None:
        while conc is not None and st["sent"] < N and st["flight"] < conc:
            k = st["sent"]
            send[k] = max(wl.arrival_s[k], now)
            fe["free"] = max(send[k], fe["free"]) + fe_svc[k]
            entry[k] = fe["free"] + fe_lat[k]
            entry_l[k] = float(entry[k])
            st["sent"] += 1
            st["flight"] += 1

    entry_l = entry.tolist()  # read on the hot path as Python floats (the same doubles)
    release(0.0)
    n_entered = 0
    # each request's lengths as Python ints, read once per request as it enters
    prompt_of, units_of = prompts.tolist(), np.asarray(units).tolist()
    waiting: deque[_Req] = deque()
    prefilling: list[_Req] = []
    decoding: dict[int, _Req] = {}
    finish_heap: list[tuple[int, int, int, int]] = []  # (clock at finish, order, id, version)
    order_heap: list[tuple[int, int, int]] = []  # (−order, version, id): newest first
    order_seq = 0
    g = 0
    ctx_sum = 0  # Σ computed tokens of the decode set at clock g
    used = 0  # layer-blocks in use
    # the decode set by (g0 − computed) mod B: a sequence gains L layer-blocks at each new
    # block, or only its full layers' once its window layers hold all they keep ("capped")
    residue = [0] * B
    residue_c = [0] * B
    in_set = 0  # Σ residue
    in_set_c = 0  # Σ residue_c
    cap_tokens = kw.cap_blocks * B  # from this context on, the window layers gain no block
    cap_heap: list[tuple[int, int, int]] = []  # (clock it caps, id, g0)

    if kw.window:
        cost = kw.cost

        def grow_at(clock: int) -> int:
            """Layer-blocks the decode set gains in the step at ``clock``."""
            return L * residue[clock % B] + kw.full * residue_c[clock % B]
    else:  # whole blocks, as before windows were counted (the hot path stays as lean)
        cost = _blocks

        def grow_at(clock: int) -> int:
            return residue[clock % B]

    t = 0.0
    done = 0
    live: dict[int, _Req] = {}
    # an engine that runs prefill alone (SGLang without mixed chunks) stalls its decodes: the
    # gap a decode then sees runs from its last token (or its first) to the next decode step
    mixed = bool(s.engine_figures.mixed_prefill)
    stall_since: float | None = None  # when the decodes began waiting on prefill steps
    joins: list[float] = []  # first-token times of the sequences that joined during a stall
    itl_more_v: list[float] = []  # those gaps [s], with their token counts
    itl_more_w: list[int] = []

    # runs of decode steps (arrays) and single steps (numbers), merged by time at the end; kept
    # in typed arrays (8 bytes a number, not a 32-byte Python float in a list: issue 40, R2)
    rec_end, rec_dt = [], []
    rec_aff, rec_n, rec_batch = array("d"), array("q"), array("q")
    rec_b0, rec_b1 = array("q"), array("q")
    one_end, one_dt = array("d"), array("d")
    one_batch, one_itl, one_blocks = array("q"), array("q"), array("q")
    itl_extra: list[float] = []

    def join(r: _Req) -> None:
        nonlocal ctx_sum, in_set, in_set_c
        r.g0 = g
        decoding[r.i] = r
        ctx_sum += r.computed
        r.capped = bool(kw.window) and r.computed >= cap_tokens
        if r.capped:
            in_set_c += 1
            residue_c[(g - r.computed) % B] += 1
        else:
            in_set += 1
            residue[(g - r.computed) % B] += 1
            if kw.window:
                heapq.heappush(cap_heap, (g + cap_tokens - r.computed, r.i, g))
        heapq.heappush(finish_heap, (g + r.output - r.generated, r.order, r.i, r.version))

    def cap_due() -> None:
        """Move the sequences whose window layers hold all they keep to ``residue_c``."""
        nonlocal in_set, in_set_c
        while cap_heap and cap_heap[0][0] <= g:
            _, i, g0 = heapq.heappop(cap_heap)
            r = decoding.get(i)
            if r is None or r.g0 != g0 or r.capped:
                continue
            idx = (r.g0 - r.computed) % B
            residue[idx] -= 1
            in_set -= 1
            residue_c[idx] += 1
            in_set_c += 1
            r.capped = True

    def leave(r: _Req) -> None:
        nonlocal ctx_sum, in_set, in_set_c
        steps = g - r.g0
        if r.capped:
            in_set_c -= 1
            residue_c[(r.g0 - r.computed) % B] -= 1
        else:
            in_set -= 1
            residue[(r.g0 - r.computed) % B] -= 1
        ctx_sum -= r.computed + steps
        r.computed += steps
        r.generated += steps
        r.blocks = cost(r.computed) - r.shared
        del decoding[r.i]
        r.g0 = -1

    def unshare(r: _Req) -> None:
        """Drop ``r``'s reference to its group's cached prefix; unreferenced, the prefix's
        blocks stay cached but evictable (least recently used first)."""
        nonlocal used
        if not r.shared:
            return
        grp = int(groups[r.i])
        g_ref[grp] -= 1
        if g_ref[grp] == 0:
            used -= g_blocks[grp]
            pcs["evictable"] += g_blocks[grp]
            lru[grp] = None
        r.shared = 0

    def evict() -> None:
        """Free the least recently used unreferenced blocks while the cache is over: a shared
        prefix whole, a preempted request's from its last block."""
        while lru and used + pcs["evictable"] > cap:
            key = next(iter(lru))
            if type(key) is tuple:
                i = key[1]
                drop = min(kept[i], used + pcs["evictable"] - cap)
                kept[i] -= drop
                pcs["evictable"] -= drop
                if kept[i]:
                    continue
                del kept[i], lru[key]
                continue
            lru.popitem(last=False)
            pcs["evictable"] -= g_blocks.pop(key)

    def kept_hit(r: _Req, hb: int) -> int:
        """Blocks of its own a preempted request finds still cached, behind ``hb`` blocks of
        its group's prefix (a hit stops at the first block missing), leaving at least its last
        token to compute."""
        k = kept.get(r.i, 0)
        if not k or hb != kept_base[r.i]:
            return 0
        return max(min(k, (r.target - 1) // B - hb), 0)

    def take_kept(r: _Req, k: int) -> None:
        nonlocal used
        left = kept.pop(r.i)
        del kept_base[r.i]
        lru.pop(("r", r.i))
        pcs["evictable"] -= left
        used += k
        r.blocks += k
        pcs["kept_hit"] += k * B

    def hit_of(r: _Req) -> int:
        """Whole prefix blocks a request being admitted finds in the cache."""
        if not pc["on"] or r.computed:
            return 0
        return min(g_blocks.get(int(groups[r.i]), 0), int(pre_blocks[r.i]))

    def take_hit(r: _Req, hb: int) -> None:
        nonlocal used
        grp = int(groups[r.i])
        if g_ref.get(grp, 0) == 0:
            lru.pop(grp, None)
            pcs["evictable"] -= g_blocks[grp]
            used += g_blocks[grp]
        g_ref[grp] = g_ref.get(grp, 0) + 1
        r.shared = hb
        r.computed = hb * B
        if not r.generated:
            hit_tokens[r.i] = hb * B
        pcs["hit"] += hb * B

    def publish(r: _Req) -> None:
        """A request that computed its own prefix makes it the group's cached prefix."""
        grp = int(groups[r.i])
        pb = int(pre_blocks[r.i])
        if r.shared or pb <= 0 or r.computed < pb * B or g_blocks.get(grp, 0):
            return
        g_blocks[grp] = pb
        g_ref[grp] = 1
        r.blocks -= pb
        r.shared = pb

    def retire(r: _Req, now: float) -> None:
        nonlocal used, done
        finish[r.i] = now
        used -= r.blocks + r.reserve
        r.blocks = r.reserve = 0
        unshare(r)
        done += 1
        st["flight"] -= 1
        live.pop(r.i, None)

    def preempt(now: float) -> _Req | None:
        nonlocal used
        while order_heap:
            _, version, i = heapq.heappop(order_heap)
            r = live.get(i)
            if r is None or r.version != version:
                continue
            if r.g0 >= 0:
                leave(r)
                r.last_token_s = now
            elif r in prefilling:
                prefilling.remove(r)
            else:
                continue
            used -= r.blocks + r.reserve
            own = (r.computed if decoded else min(r.computed, r.prompt)) // B - r.shared
            own = own if keep else 0
            if own > 0:
                kept[r.i] = own
                kept_base[r.i] = r.shared
                lru[("r", r.i)] = None
                pcs["evictable"] += own
            r.blocks = r.reserve = 0
            unshare(r)
            r.computed = 0
            r.target = r.prompt + r.generated  # recompute prompt and generated tokens
            r.version += 1
            preempted[r.i] += 1
            st["preempts"] += 1
            waiting.appendleft(r)
            return r
        return None

    pending_first: list[_Req] = []  # joined with their KV ready: first token at the next step

    def admit_ready() -> None:
        """Admit the requests at the head of the queue whose prompt's KV arrived with them (a
        disaggregated decode instance, :mod:`model.disagg`) straight into the decode set: the
        last prompt token is computed in the next decode step, whose end streams the first
        token (as a one-token chunk beside the decodes would; its time is a decode token's)."""
        nonlocal used, order_seq
        while waiting:
            r = waiting[0]
            if r.computed or r.generated or preempted[r.i]:
                return
            n_now = len(decoding)
            if n_now + len(prefilling) >= max_seqs or (n_now + 1) * q > budget:
                return
            need = cost(int(ready[r.i]))
            spec = int(reserve[r.i]) if reserve is not None else 0
            # the blocks it holds, and the one its first step may open
            if need + spec + L > cap - used - (grow_at(g) if n_now else 0):
                return
            waiting.popleft()
            used += need + spec
            r.blocks, r.reserve = need, spec
            r.computed = int(ready[r.i])
            r.order = order_seq
            order_seq += 1
            heapq.heappush(order_heap, (-r.order, r.version, r.i))
            join(r)
            pending_first.append(r)

    def first_tokens(end: float) -> None:
        for r in pending_first:
            if r.g0 >= 0 and np.isnan(first[r.i]):  # not preempted before the step
                first[r.i] = end
        pending_first.clear()

    def finish_due(now: float) -> None:
        while finish_heap and finish_heap[0][0] <= g:
            _, _, i, version = heapq.heappop(finish_heap)
            r = live.get(i)
            if r is None or r.version != version or r.g0 < 0:
                continue
            leave(r)
            retire(r, now)

    while done < N:
        while n_entered < st["sent"] and entry_l[n_entered] <= t:
            i = n_entered
            r = _Req(i, prompt_of[i], units_of[i])
            r.target = r.prompt
            live[i] = r
            waiting.append(r)
            n_entered += 1
        if not decoding and not prefilling and not waiting:
            t = max(t, entry_l[n_entered])  # idle until the next request arrives
            continue
        if ready is not None and waiting:
            admit_ready()
        if cap_heap:
            cap_due()
        n = len(decoding)
        grow = grow_at(g) if n else 0

        # ---- a run of decode-only steps, all alike, up to the next event
        if n and not prefilling and stall_since is None:
            blocked = not waiting or (
                n >= max_seqs
                or n * q >= budget
                or cost(waiting[0].computed + min(waiting[0].target, budget - n * q))
                - hit_of(waiting[0])
                - (kept_hit(waiting[0], hit_of(waiting[0])) if kept else 0)
                > cap - used - grow
            )
            horizon = finish_heap[0][0] - g
            if cap_heap:
                horizon = min(horizon, cap_heap[0][0] - g)  # stale entries only end runs early
            gains = (
                [L * u + kw.full * c for u, c in zip(residue, residue_c, strict=True)]
                if kw.window
                else residue
            )
            k_fit = _steps_that_fit(
                gains, L * in_set + kw.full * in_set_c, g, used, cap, max(horizon, 1)
            )
            if blocked and k_fit > 0:
                k = k_fit
                nxt = (
                    entry_l[n_entered]
                    if not waiting and n < max_seqs and n_entered < st["sent"]
                    else None
                )
                aff = sm.decode_affine(n, ctx_sum + n, n, k)  # each reads its new token too
                if aff is not None:
                    A, Bs = aff
                    if nxt is not None and nxt < t + k * A + Bs * k * (k - 1) / 2:
                        k = _steps_to_reach(A, Bs, nxt - t, k)
                    rec_aff.extend((t, A, Bs))
                    t_end = t + k * A + Bs * k * (k - 1) / 2
                else:
                    ctx = ctx_sum + n * np.arange(1, k + 1, dtype=float)
                    dt = sm.decode(n, ctx)
                    end = t + np.cumsum(dt)
                    if nxt is not None and nxt < end[-1]:
                        k = int(np.searchsorted(end, nxt, side="left")) + 1
                        dt, end = dt[:k], end[:k]
                    rec_aff.extend((np.nan, 0.0, 0.0))
                    rec_end.append(end)
                    rec_dt.append(dt)
                    t_end = float(end[-1])
                if pending_first:
                    first_tokens(t + A if aff is not None else float(end[0]))
                cycles, part = divmod(k, B)
                gained = cycles * (L * in_set + kw.full * in_set_c)
                if part:  # the residues of the next ``part`` clocks (a slice, wrapping once)
                    g0 = g % B
                    gained += sum(gains[g0 : g0 + part])
                    if g0 + part > B:
                        gained += sum(gains[: g0 + part - B])
                rec_n.append(k)
                rec_batch.append(n)
                rec_b0.append(used)
                rec_b1.append(used + gained)
                used += gained
                ctx_sum += n * k
                g += k
                t = t_end
                if finish_heap and finish_heap[0][0] <= g:
                    finish_due(t)
                release(t)
                if lru:
                    evict()
                continue

        # ---- one step: decodes (preempting the newest while the cache is short), then chunks
        # (a step that preempted admits no waiting request: vLLM V1 ``Scheduler.schedule``
        # schedules the waiting queue only ``if not preempted_reqs``)
        n_pre = st["preempts"]
        while n and grow > cap - used:
            if preempt(t) is None:
                break
            n = len(decoding)
            grow = grow_at(g) if n else 0
        left = budget - n * q if mixed else budget
        sched: list[tuple[_Req, int, int]] = []  # (request, start, tokens)
        for r in list(prefilling):
            if left <= 0:
                break
            c = min(r.target - r.computed, left)
            extra = cost(r.computed + c) - r.shared - r.blocks
            while extra > cap - used - grow and r in prefilling:
                if preempt(t) in (None, r):
                    break
                n = len(decoding)
                grow = grow_at(g) if n else 0
                left = budget - n * q - sum(x[2] for x in sched)
            if r not in prefilling:
                continue
            extra = cost(r.computed + c) - r.shared - r.blocks  # a preemption may unshare
            if extra > cap - used - grow:
                continue
            used += extra
            r.blocks += extra
            sched.append((r, r.computed, c))
            left -= c
        while waiting and left > 0 and n + len(prefilling) < max_seqs and st["preempts"] == n_pre:
            r = waiting[0]
            hb = hit_of(r)
            kb = kept_hit(r, hb) if kept and r.i in kept else 0
            start = r.computed + (hb + kb) * B
            if ready is not None and not r.computed and not preempted[r.i]:
                # its prompt's KV came from a prefill instance: blocks are allocated for it
                # and only the rest (the last prompt token, for the logits) is computed
                start = max(start, int(ready[r.i]))
            c = min(r.target - start, left)
            # a hit's blocks are already in the cache: only the rest is allocated (an
            # unreferenced cached prefix is counted free until it is referenced again)
            extra = cost(start + c) - r.blocks - hb - kb
            held = 0 if not hb or g_ref.get(int(groups[r.i]), 0) else g_blocks[int(groups[r.i])]
            held += kb
            spec = int(reserve[r.i]) if reserve is not None else 0
            if extra + held + spec > cap - used - grow:
                break
            waiting.popleft()
            if pc["on"] and not r.computed:
                pcs["queried"] += r.target
            if hb:
                take_hit(r, hb)
            if kb:
                take_kept(r, kb)
            elif kept and r.i in kept:  # its cached blocks no longer line up: all recomputed
                drop = kept.pop(r.i)
                del kept_base[r.i], lru[("r", r.i)]
                pcs["evictable"] -= drop
            r.computed = start
            used += extra + spec
            r.blocks += extra
            r.reserve = spec
            r.order = order_seq
            order_seq += 1
            heapq.heappush(order_heap, (-r.order, r.version, r.i))
            prefilling.append(r)
            sched.append((r, r.computed, c))
            left -= c
        if not sched and not n:  # nothing fits now: wait for the next arrival
            if n_entered < st["sent"]:
                t = max(t, entry_l[n_entered])
                continue
            raise ValueError("a request does not fit the KV cache")  # check_fits rules it out
        p_tok = 0
        for _, _, c in sched:
            p_tok += c
        ctx_dec = ctx_sum + n
        alone = bool(p_tok) and not mixed  # a prefill step the decodes sit out
        if p_tok:
            p_attn = p_kv = 0  # summed in order, as sum() does
            for _, a, c in sched:
                x, y = sm.chunk_attended(c, a)
                p_attn += x
                p_kv += y
            dt = sm.mixed(0 if alone else n, 0.0 if alone else ctx_dec, p_tok, p_attn, p_kv)
        else:
            dt = float(sm.decode(n, np.array([ctx_dec], dtype=float))[0])
        t += dt
        itl_n = n
        if alone:
            if stall_since is None:
                stall_since = t - dt
            itl_n = 0
        else:
            used += grow
            ctx_sum += n
            g += 1
            if pending_first:
                first_tokens(t)
            if stall_since is not None:  # the first decode step after a stall: each gap
                fresh = joins[-n:] if n else []
                if n > len(fresh):
                    itl_more_v.append(t - stall_since)
                    itl_more_w.append(n - len(fresh))
                itl_more_v.extend(t - j for j in fresh)
                itl_more_w.extend([1] * len(fresh))
                joins.clear()
                stall_since = None
                itl_n = 0
        one_end.append(t)
        one_dt.append(dt)
        one_batch.append((0 if alone else n) + len(sched))
        one_itl.append(itl_n)
        one_blocks.append(used)
        finish_due(t)
        for r, _, c in sched:
            r.computed += c
            if pc["on"] and not r.shared:
                publish(r)
            if r.computed < r.target:
                continue
            prefilling.remove(r)
            if r.generated == 0:
                first[r.i] = t
            else:
                itl_extra.append(t - r.last_token_s)
            r.generated += 1
            if r.generated >= r.output:
                retire(r, t)
            else:
                join(r)
                if alone:
                    joins.append(t)
        release(t)
        if lru:
            evict()

    aff = np.asarray(rec_aff, dtype=float).reshape(-1, 3)
    log = StepLog.of(
        t0=aff[:, 0].copy(),
        a=aff[:, 1].copy(),
        bs=aff[:, 2].copy(),
        n=np.asarray(rec_n, dtype=np.int64),
        batch=np.asarray(rec_batch, dtype=np.int64),
        b0=np.asarray(rec_b0, dtype=np.int64),
        b1=np.asarray(rec_b1, dtype=np.int64),
        exp_end=np.concatenate(rec_end) if rec_end else np.zeros(0),
        exp_dt=np.concatenate(rec_dt) if rec_dt else np.zeros(0),
        one_end=np.asarray(one_end, dtype=float),
        one_dt=np.asarray(one_dt, dtype=float),
        one_batch=np.asarray(one_batch, dtype=np.int64),
        one_itl=np.asarray(one_itl, dtype=np.int64),
        one_blocks=np.asarray(one_blocks, dtype=np.int64),
        layers=L,
    )
    return Sim(
        {
            "send_s": send,
            "entry_s": entry,
            "prefix_hit_tokens": hit_tokens,
            "prefix_cache_queried_tokens": int(pcs["queried"]),
            "prefix_cache_hit_tokens": int(pcs["hit"]),
            # prompt and generated tokens a preempted request found still cached on its return
            "preempt_cached_tokens": int(pcs["kept_hit"]),
            "prefix_caching": bool(pc["on"]),
            "first_token_s": first,
            "finish_s": finish,
            "prompt_tokens": prompts,
            "output_tokens": outputs,
            "preempted": preempted,
            "steps": log,
            "itl_extra_s": np.array(itl_extra, dtype=float),
            "itl_stall_s": np.array(itl_more_v, dtype=float),
            "itl_stall_tokens": np.array(itl_more_w, dtype=np.int64),
            "kv_blocks": cap // L,
            "max_num_seqs": max_seqs,
            "open_loop": wl.open_loop,
        }
    )


class Sim(dict):
    """A run's record (:func:`simulate`): its per-step arrays (``step_end_s``, ``step_s``,
    ``step_batch``, ``step_itl_tokens``, ``step_kv_blocks``) are expanded from the compact
    :class:`model.steplog.StepLog` under ``steps`` only when first asked for."""

    STEP_KEYS = ("step_end_s", "step_s", "step_batch", "step_itl_tokens", "step_kv_blocks")

    def __missing__(self, key):
        if key not in self.STEP_KEYS:
            raise KeyError(key)
        self.update(self["steps"].expanded())
        return self[key]


def _steps_to_reach(A: float, Bs: float, D: float, k: int) -> int:
    """The fewest steps m ≤ k with m·A + Bs·m(m − 1)/2 ≥ D (the step in progress at D ends)."""

    def f(m: int) -> float:
        return m * A + Bs * m * (m - 1) / 2

    if Bs <= 1e-18 * max(A, 1e-30):
        m = math.ceil(D / A)
    else:
        h = A - Bs / 2
        m = math.ceil((-h + math.sqrt(h * h + 2 * Bs * D)) / Bs)
    m = min(max(m, 1), k)
    while m > 1 and f(m - 1) >= D:
        m -= 1
    while m < k and f(m) < D:
        m += 1
    return m


def kv_blocks(s: Scenario) -> int:
    """KV-cache blocks of one replica: SPEC 4.1's KV capacity in :data:`BLOCK_TOKENS` blocks."""
    return int(memory.memory_figures(s)["kv_cache_tokens"] // BLOCK_TOKENS)


def _steps_that_fit(residue: list, in_set: int, g: int, used: int, cap: int, k: int) -> int:
    """How many of the next ``k`` decode steps find their blocks free (0: not the next)."""
    if used + in_set * -(-k // BLOCK_TOKENS) <= cap:
        return k  # each sequence gains at most ⌈k / B⌉ blocks
    res = np.asarray(residue, dtype=np.int64)
    total = used + np.cumsum(res[(g + np.arange(k)) % BLOCK_TOKENS])
    if total[-1] <= cap:
        return k
    return int(np.searchsorted(total, cap, side="right"))


# ------------------------------------------------------------------------------- entry points


class DoesNotFit(ValueError):
    """The scenario cannot serve: its weights do not fit, or a request does not fit the cache."""


def check_fits(s: Scenario, longest_tokens: int | None = None) -> None:
    """Raise :class:`DoesNotFit` with the reason when ``s`` cannot serve its requests."""
    mem = memory.memory_figures(s)
    if not mem["weights_fit"] or mem["kv_cache_tokens"] < BLOCK_TOKENS:
        raise DoesNotFit(
            f"{s.model.name} does not fit {s.gpus}× {s.hardware.name} in "
            f"{s.weights_dtype}: weights {mem['weights_per_gpu_gb']:.1f} GB per GPU leave "
            f"{max(mem['kv_budget_per_gpu_gb'], 0):.1f} GB for the KV cache"
        )
    need = longest_tokens or (s.prompt_tokens + s.output_tokens)
    kw = _kv_weights(s)
    if kw.cost(need) > (mem["kv_cache_tokens"] // BLOCK_TOKENS) * kw.layers:
        raise DoesNotFit(
            f"a request of {need:,} tokens needs more KV cache than the "
            f"{mem['kv_cache_tokens']:,} tokens one replica holds; shorten it, add GPUs or "
            "lower the KV dtype"
        )
