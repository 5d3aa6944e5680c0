"""The step model of the serving simulator (SPEC 4.6): what one engine step of a given mix of
decode tokens and prefill chunks takes on the scenario's GPUs, with what a server pays beyond the
GPU (engine-core host work per sequence, the API server's streaming), so every knob of the other
lenses moves a served step. :mod:`model.scheduler` runs a replica on it. The sources are
:class:`StepModel`'s.
"""

from __future__ import annotations

import numpy as np

from model import launch, memory, roofline, speculative
from model.decode import (
    comm_s,
    dense_matmul_params,
    draft_s,
    expert_bytes_per_gpu,
    launch_s,
    mla_overhead_s,
    moe_bw_efficiency,
    moe_flops_s,
    moe_overhead_s,
    peaks,
    prefill_attention_scale,
    weights_bytes_per_gpu,
)
from model.scenario import Scenario
from model.units import MS, US

MAX_TABLE_TOKENS = 65536  # step tables are precomputed up to this many tokens a step


class StepModel:
    """One engine step's time for any mix of decode sequences and prefill chunks [s].

    Built once per scenario from the same functions as the Roofline lens's decode step
    (:func:`model.decode.sweep`) and the prefill of one request
    (:func:`model.request.request_figures`); every term that depends only on the tokens of a
    step (weights read, all-reduces, launches, host work) is tabulated over the token count in
    one vectorised call, and the terms linear in context (KV read, attention FLOPs) are
    multiplied in per step.

    - a **decode-only** step of ``n`` sequences whose contexts sum to ``ctx`` is exactly
      :func:`model.decode.sweep`'s ``t_step_s`` at batch ``n`` and context ``ctx / n``
      (graph padding, MoE expert reads, launch model and host work included);
    - a step **with prefill** is a prefill chunk as :func:`model.request.request_figures` runs
      one (launches overlapped by the GPU work, ``host_ms`` once), over all its tokens: decode
      tokens' FLOPs at ``flops_efficiency``, prefill tokens' at ``prefill_efficiency``, the
      weights read once for all of them, every sequence's KV read.

    References
    ----------
    .. [1] SPEC 4.1 (the decode step) and 4.0 (prefill); SPEC 4.6 ("a step's time is the core's
       own step physics for that mix").
    .. [2] Agrawal et al., "Taming Throughput-Latency Tradeoff in LLM Inference with
       Sarathi-Serve", OSDI 2024: decode tokens piggyback on prefill chunks in one step.
    """

    def __init__(self, s: Scenario, max_tokens: int):
        self.s = s
        m = s.model
        _, peak, bw = peaks(s)
        self.kv_tok = memory.kv_bytes_per_token(s)
        shards = memory.kv_shards_of(s)
        self.kv_s_per_tok = self.kv_tok / shards / (bw * s.bw_efficiency)
        attn = 4.0 * m.layers * m.heads * m.head_dim
        self.dec_attn_s = attn / s.gpus / (peak * s.flops_efficiency)
        self.pre_attn_s = attn / s.gpus / (peak * s.prefill_efficiency)
        # a prefill chunk's attention on the engine's own curve over the kv it attends to:
        # model.decode.prefill_attention_scale is C × (kv + kv½) / kv, C its limit, computed
        # here once so the scheduler's hot path (chunk_attended) stays plain arithmetic
        self._att_curve = bool(s.engine_figures.prefill_attn_efficiency)
        self._att_c = float(prefill_attention_scale(s, 1e18)) if self._att_curve else 1.0
        self._att_half = float(s.engine_figures.prefill_attn_kv_half)
        # the routed experts' FLOPs, where the engine times them on its grouped-GEMM curve,
        # are a term of the step's token count (model.decode.moe_flops_s) and not in these
        dense = dense_matmul_params(s)
        self.dec_lin_s = 2.0 * dense / s.gpus / (peak * s.flops_efficiency)
        self.pre_lin_s = 2.0 * dense / s.gpus / (peak * s.prefill_efficiency)
        # GEMMs and attention each at their own roof, or the whole step at one (roofline.gpu_time)
        self.per_kernel = bool(s.engine_figures.per_kernel_roofline)
        # a speculative step's bookkeeping beyond its forwards (model.speculative)
        self.host_s = s.host_ms * MS + speculative.verify_host_s(s)
        self.host_seq_s = s.host_us_per_seq * US
        self.q = speculative.verify_tokens(s)
        # the API server streams each step's tokens: a step's n tokens take it n × this [s]
        # (with data-parallel ranks the API servers stream every rank's tokens: d × this)
        self.api_s = s.data_parallel * s.api_us_per_token * US / api_servers(s)
        if s.async_scheduling_on and self.host_seq_s:
            # asynchronous scheduling: the engine core prepares the next step while the GPU
            # runs this one, so its per-sequence work bounds the step rate (n × this) instead
            # of adding to each step, as the API server's streaming does (vLLM PR 19970)
            self.api_s = max(self.api_s, self.host_seq_s)
            self.host_seq_s = 0.0
        # sliding-window layers: a sequence reads (1 − f) × ctx + f × min(ctx, w) tokens of KV
        self.window = float(m.sliding_window or 0) if m.sliding_window_layers else 0.0
        self.window_frac = (m.sliding_window_layers or 0) / m.layers if self.window else 0.0
        self.size = int(min(max(max_tokens, 1), MAX_TABLE_TOKENS)) + 1
        t = np.arange(self.size, dtype=float)
        self._dec = self._decode_parts(t)
        self._mix = self._mixed_parts(t)
        self._dec_rows: dict[int, dict] = {}
        self._aff_rows: dict[int, tuple] = {}  # decode_affine's terms by batch
        self._mix_terms: dict[int, tuple] = {}  # mixed()'s terms by token count
        self._plain_launch = s.launch_model != "pipelined"
        self._mix_rows: dict[int, dict] = {}

    # decode-only steps: the terms of model.decode.sweep for every batch n
    def _decode_parts(self, b: np.ndarray) -> dict:
        s = self.s
        _, peak, bw = peaks(s)
        # speculative decoding: every sequence verifies q = k + 1 tokens (model.decode.sweep)
        q = self.q
        tok = b * q
        graph = launch.in_graph(tok, s.capture_sizes, s.cuda_graphs)
        padded = np.where(graph, launch.padded_batch(np.maximum(tok, 1), s.capture_sizes), tok)
        # per GPU, data-parallel ranks' experts spread as model.decode.weights_bytes_per_gpu
        w = weights_bytes_per_gpu(s, np.maximum(tok, 1))
        moe_eff = moe_bw_efficiency(s)
        if moe_eff is not None:
            expert = expert_bytes_per_gpu(s, np.maximum(tok, 1))
            w_s = roofline.memory_time(w - expert, bw, s.bw_efficiency) + roofline.memory_time(
                expert, bw, moe_eff
            )
        else:
            w_s = roofline.memory_time(w, bw, s.bw_efficiency)
        _, t_launch = launch_s(s, tok)
        fixed = moe_overhead_s(s, np.maximum(tok, 1)) + mla_overhead_s(s, np.maximum(tok, 1))
        return {
            "w_s": w_s,
            # attention FLOPs run on the padded tokens (model.decode.sweep): ctx × padded / n
            "attn_scale": np.where(b > 0, padded / np.maximum(b, 1), 1.0),
            "lin_s": padded * self.dec_lin_s + _moe(s, padded),
            "comm_s": comm_s(s, padded),
            "launch_s": t_launch,
            # the drafter's k steps run before the verify (model.decode.draft_s)
            "host_s": self.host_s + b * self.host_seq_s + fixed * (b > 0) + draft_s(s, b),
        }

    # steps with prefill: the terms of model.request.request_figures for every token count
    def _mixed_parts(self, t: np.ndarray) -> dict:
        s = self.s
        _, peak, bw = peaks(s)
        w = weights_bytes_per_gpu(s, np.maximum(t, 1))
        _, t_launch = launch_s(s, t)
        return {
            "w_s": roofline.memory_time(w, bw, s.bw_efficiency),
            "moe_s": _moe(s, t),
            "comm_s": comm_s(s, t),
            "launch_s": t_launch,
        }

    def _dec_row(self, n: int) -> dict:
        """The decode terms of batch ``n``, looked up once per batch."""
        p = self._dec_rows.get(n)
        if p is None:
            p = self._dec_rows[n] = self._row(self._decode_parts, self._dec, n)
        return p

    def _mix_row(self, tokens: int) -> dict:
        """The mixed-step terms of ``tokens`` tokens, looked up once per count."""
        p = self._mix_rows.get(tokens)
        if p is None:
            p = self._mix_rows[tokens] = self._row(self._mixed_parts, self._mix, tokens)
        return p

    def _row(self, parts_fn, table: dict, n: int) -> dict:
        # Python floats (the same doubles): the scheduler's per-step arithmetic on them is
        # several times faster than on NumPy scalars
        if n < self.size:
            return {k: float(v[n]) for k, v in table.items()}
        return {k: float(v[0]) for k, v in parts_fn(np.array([float(n)])).items()}

    def attended(self, n: int, ctx):
        """KV tokens ``n`` sequences whose contexts sum to ``ctx`` read in one step, as
        :func:`model.decode.sweep` reads them at context ``ctx / n``
        (:func:`model.memory.attended_tokens`): ``ctx`` without a sliding window."""
        ctx = np.asarray(ctx, dtype=float)
        if not self.window or n <= 0:
            return ctx
        return n * memory.attended_tokens(self.s, ctx / n)

    def chunk_attended(self, tokens: int, start: int) -> tuple[float, float]:
        """A prefill chunk's attention context (Σ over its tokens of the tokens each attends
        to) and the KV tokens it reads and writes, with the sliding window applied
        (:func:`model.memory.causal_attended`, :func:`model.memory.chunk_kv_tokens`); plain
        arithmetic without a window (the scheduler's hot path)."""
        if not self.window:
            att, kv = chunk_attention(tokens, start), float(start + tokens)
        else:
            att = float(memory.causal_attended(self.s, tokens, start))
            kv = float(memory.chunk_kv_tokens(self.s, tokens, start))
        if self._att_curve:
            whole = start + tokens
            att *= self._att_c * (whole + self._att_half) / whole
        return att, kv

    def decode(self, n: int, ctx) -> np.ndarray:
        """Decode-only steps of ``n`` sequences whose contexts sum to ``ctx`` (an array over
        steps) [s]."""
        p = self._dec_row(n)
        ctx = self.attended(n, ctx)
        kv, att = ctx * self.kv_s_per_tok, ctx * p["attn_scale"] * self.dec_attn_s
        t_gpu = (
            roofline.gpu_time(p["w_s"] + kv, p["lin_s"] + att, kv, att, self.per_kernel)
            + p["comm_s"]
        )
        t = roofline.step_time(t_gpu, p["launch_s"], p["host_s"], self.s.launch_model)
        return np.maximum(t, n * self.api_s) if self.api_s else t

    def decode_affine(self, n: int, ctx0: float, slope: float, k: int):
        """``(A, B)`` with step j's time ``A + B × j`` for ``k`` decode steps of ``n``
        sequences whose contexts sum to ``ctx0 + slope × j``, or None when a bound changes
        within them (each step is then evaluated by :meth:`decode`). Exact: each term is affine
        in the context, and one term of a max stays the larger over an interval when it is at
        both ends."""
        row = self._aff_rows.get(n)
        if row is None:  # the terms of batch n as a tuple, looked up once (the hot path)
            p = self._dec_row(n)
            row = self._aff_rows[n] = (
                p["w_s"],
                p["lin_s"],
                p["attn_scale"] * self.dec_attn_s,
                p["comm_s"],
                p["launch_s"],
                p["host_s"],
            )
        w, lin, att, comm, launch, host = row
        last = ctx0 + slope * (k - 1)
        if self.window and n > 0:
            kink = n * self.window  # below it every layer reads the whole context
            if ctx0 < kink < last:
                return None
            slope = slope * (1.0 if last <= kink else 1.0 - self.window_frac)
            ctx0 = float(self.attended(n, ctx0))
            last = ctx0 + slope * (k - 1)
        kv = self.kv_s_per_tok
        if self.per_kernel:  # the GEMMs' roof, then attention's: affine in the context
            per_tok = max(kv, att)
            a, b = max(w, lin) + ctx0 * per_tok, per_tok * slope
        else:
            m0, m1 = w + ctx0 * kv, w + last * kv
            c0, c1 = lin + ctx0 * att, lin + last * att
            if (m0 >= c0) != (m1 >= c1):
                return None
            a, b = (m0, kv * slope) if m0 >= c0 else (c0, att * slope)
        a = a + comm
        if not self._plain_launch:  # pipelined launches: the step is the longer of the two
            if (a >= launch) != (a + b * (k - 1) >= launch):
                return None
            if a < launch:
                a, b = launch, 0.0
            return self._api_bound(n, float(a + host), float(b), k)
        return self._api_bound(n, float(a + launch + host), float(b), k)

    def _api_bound(self, n: int, a: float, b: float, k: int):
        """``(a, b)`` of :meth:`decode_affine` under the API server's pace: steps that stream
        faster than ``n`` tokens × :attr:`api_s` wait for it; None when the bound changes
        within the ``k`` steps."""
        c = n * self.api_s
        if c <= 0:
            return a, b
        last = a + b * (k - 1)
        if c <= min(a, last):
            return a, b
        if c >= max(a, last):
            return float(c), 0.0
        return None

    def mixed(self, n_dec: int, ctx_dec: float, p_tok: int, p_attn: float, p_kv: float) -> float:
        """One step with ``p_tok`` prefill tokens beside ``n_dec`` decodes [s].

        ``p_attn``: Σ over chunks of t × (start + (t + 1) / 2), the causal attention context of
        the chunks' tokens (:func:`model.request.prefill_flops`); ``p_kv``: Σ of start + t, the
        KV they read and write (both with the sliding window applied: :meth:`chunk_attended`).
        ``ctx_dec`` is the decodes' contexts summed; the window is applied here.
        """
        q = self.q  # a decode verifies its k drafts and one more token (speculative)
        tokens = n_dec * q + p_tok
        row = self._mix_terms.get(tokens)
        if row is None:
            p = self._mix_row(tokens)
            row = self._mix_terms[tokens] = (p["w_s"], p["moe_s"], p["comm_s"], p["launch_s"])
        w, moe, comm, launch = row
        if self.window:
            ctx_dec = float(self.attended(n_dec, ctx_dec))
        kv_s = (ctx_dec + p_kv) * self.kv_s_per_tok
        lin_s = n_dec * q * self.dec_lin_s + p_tok * self.pre_lin_s + moe
        attn_s = ctx_dec * q * self.dec_attn_s + p_attn * self.pre_attn_s
        # per kernel: the GEMMs, then one attention kernel over the decodes and the chunks
        t_gpu = roofline.gpu_time(w + kv_s, lin_s + attn_s, kv_s, attn_s, self.per_kernel) + comm
        # host work, per-sequence work and the MoE layers' overhead as the decode row of n_dec
        host = self._dec_row(n_dec)["host_s"] if n_dec else self.host_s
        return float(max(max(t_gpu, launch) + host, n_dec * self.api_s))


def _moe(s: Scenario, tokens) -> np.ndarray:
    """:func:`model.decode.moe_flops_s`, zeros where the experts run as dense [s]."""
    out = moe_flops_s(s, tokens)
    return np.zeros_like(np.asarray(tokens, dtype=float)) if out is None else out


def chunk_attention(tokens, start) -> float:
    """t × (start + (t + 1) / 2): the causal attention context of a chunk of ``tokens`` after
    ``start`` (the attention term of :func:`model.request.prefill_flops` over 4·L·H·d)."""
    return tokens * (start + (tokens + 1) / 2.0)


def frontend_own_s(s: Scenario, prompts):
    """The API server's own work on a request of ``prompts`` tokens, done one request after
    another: ``frontend_queued_ms`` + ``frontend_us_per_token`` × prompt [s] (vectorised).

    References
    ----------
    .. [1] vLLM PR 10635: the OpenAI server tokenises each request in its own process, a time
       that grows with the prompt (a few hundred ms at 256K tokens) and blocks the event loop.
    .. [2] vLLM PR 17546: one API-server process limits throughput and TTFT at high request
       rates (hence ``--api-server-count``).
    """
    return s.frontend_queued_ms * MS + np.asarray(prompts, dtype=float) * (
        s.frontend_us_per_token * US
    )


def frontend_service_s(s: Scenario, prompts):
    """The front-end FIFO's service time per request [s]: :func:`frontend_own_s` of the API
    servers' capacity (one rank's requests share the API servers with the other
    data-parallel ranks', so each takes d times its own time)."""
    return s.data_parallel * frontend_own_s(s, prompts) / api_servers(s)


def lone_frontend_s(s: Scenario, prompts):
    """A lone request's front-end time [s]: ``frontend_ms``, or the API server's own work on
    its prompt where that is longer (:func:`frontend_own_s`, :func:`frontend_service_s`):
    what :func:`model.scheduler.simulate` gives one request at a time, and the Request row's
    TTFT adds (issue 39: the front end grows with the prompt). Vectorised."""
    own = frontend_own_s(s, prompts)
    return np.maximum(np.maximum(s.frontend_ms * MS, own), frontend_service_s(s, prompts))


def api_servers(s: Scenario) -> int:
    """API-server processes in effect: ``api_server_count``, and at least one per
    data-parallel rank where the engine starts them so (vLLM V1; the profile's
    ``api_servers_per_dp_rank``); SGLang's one front end streams every rank's tokens.

    References
    ----------
    .. [1] vLLM ``entrypoints/cli/serve.py``: with internal load balancing and
       ``--api-server-count`` unset, ``args.api_server_count = args.data_parallel_size``.
    .. [2] SGLang ``srt/entrypoints/engine.py``: one TokenizerManager and one
       DetokenizerManager beside the data-parallel controller's schedulers.
    """
    per_rank = s.data_parallel if s.engine_figures.api_servers_per_dp_rank else 1
    return max(s.api_server_count, per_rank, 1)
