"""Speculative decoding: a cheap drafter proposes ``k`` tokens, one target step verifies them
(issue 42, section 1).

Per step each sequence of the batch sends ``k + 1`` tokens through the target (its ``k`` drafts
and the token before them): the target's weights are read once for all of them, its FLOPs,
attention and all-reduces grow ``k + 1``-fold, its KV is read once per sequence. Before that
the drafter has run ``k`` times at the batch (its own weights, KV and launches); the n-gram
proposer only costs host time. With a per-token acceptance rate α the step emits
``(1 − α^(k+1)) / (1 − α)`` tokens per sequence on average, the bonus token included.

The methods' defaults (``k``, α, the drafter's shape) are in ``presets/speculative.yaml``, every
number with its source. Nothing here imports the scenario's consumers: :mod:`model.decode` and
:mod:`model.serving` call in.

References
----------
.. [1] Leviathan, Kalman, Matias, "Fast Inference from Transformers via Speculative
   Decoding", ICML 2023, eq. (1): E[tokens per step] = (1 − α^(γ+1)) / (1 − α).
.. [2] Chen et al., "Accelerating Large Language Model Decoding with Speculative Sampling"
   (DeepMind, 2023): the target scores the k drafts in one forward pass.
"""

from __future__ import annotations

import numpy as np

from model.scenario import ModelSpec, draft_spec
from model.spec_methods import MethodPreset, methods
from model.units import BYTES_PER_PARAM


def method(s) -> MethodPreset | None:
    """The scenario's method preset, or None without speculation."""
    return None if s.speculative == "none" else methods()[s.speculative]


def k_of(s) -> int:
    """Draft tokens per step: the scenario's ``num_speculative_tokens`` or the method's; 0
    without speculation."""
    m = method(s)
    if m is None:
        return 0
    return int(s.num_speculative_tokens or m.num_speculative_tokens)


def alpha_of(s) -> float:
    """The per-token acceptance rate α: the scenario's ``spec_acceptance``, or the α whose
    expected tokens per step at k are its ``spec_acceptance_length`` (:func:`accepted_tokens`
    solved for α), or the method's published default; 0 without speculation."""
    m = method(s)
    if m is None:
        return 0.0
    if s.spec_acceptance is not None:
        return float(s.spec_acceptance)
    if s.spec_acceptance_length is not None:  # a measured mean acceptance length τ
        return float(acceptance_from_length(s.spec_acceptance_length, k_of(s)))
    return float(m.acceptance)


def accepted_tokens(alpha, k):
    """Expected tokens one verify step emits per sequence, the bonus token included:
    ``(1 − α^(k+1)) / (1 − α)`` (``k + 1`` at α → 1; 1 at k = 0).

    References
    ----------
    .. [1] Leviathan et al., ICML 2023, eq. (1) (γ = k draft tokens, i.i.d. acceptance α).
    """
    a = np.asarray(alpha, dtype=float)
    k = np.asarray(k, dtype=float)
    near = np.abs(1.0 - a) < 1e-12
    safe = np.where(near, 0.5, a)
    out = (1.0 - safe ** (k + 1.0)) / (1.0 - safe)
    return np.where(near, k + 1.0, out)


def acceptance_from_length(length, k):
    """The α whose :func:`accepted_tokens` at ``k`` is the mean acceptance length ``length``
    (tokens per step, bonus included; 1 < length < k + 1), by bisection (vectorised)."""
    target = np.asarray(length, dtype=float)
    lo = np.zeros_like(target)
    hi = np.full_like(target, 1.0 - 1e-9)
    for _ in range(60):
        mid = (lo + hi) / 2
        below = accepted_tokens(mid, k) < target
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return (lo + hi) / 2


def tokens_per_step(s) -> float:
    """:func:`accepted_tokens` of the scenario (1.0 without speculation)."""
    k = k_of(s)
    return 1.0 if not k else float(accepted_tokens(alpha_of(s), k))


def verify_tokens(s) -> int:
    """Tokens each sequence sends through the target per step: ``k + 1`` (1 without)."""
    return k_of(s) + 1


# ------------------------------------------------------------------------------- the drafter


def _layer_params(m) -> tuple[float, float]:
    """One decoder layer's parameters of the target, total and active per token [count]:
    the model's parameters less its embedding tables and vision encoder, over its layers."""
    rest = (m.vision_params_b or 0.0) * 1e9 + m.embedding_params
    return (
        max(m.params_b * 1e9 - rest, 0.0) / m.layers,
        max(m.active * 1e9 - rest, 0.0) / m.layers,
    )


def drafter_spec(s):
    """The drafter as a model spec, or None (no speculation, or the n-gram proposer).

    - ``draft``: the draft model's preset as it is;
    - ``eagle``, ``eagle3``, ``mtp``: one decoder layer of the target's shape (MTP's keeps the
      target's experts; EAGLE's is dense, the size of the target's active layer), plus the
      output head it reads every draft step (the target's vocabulary, or EAGLE-3's reduced
      draft vocabulary), plus EAGLE-3's fusion of three hidden states; the head is the one
      table (``tied_embeddings``), as the input embedding is the target's and not read.

    References
    ----------
    .. [1] Li et al., "EAGLE: Speculative Sampling Requires Rethinking Feature Uncertainty",
       ICML 2024: the draft head is one decoder layer on the target's features and shares its
       embedding and LM head.
    .. [2] Li et al., "EAGLE-3: Scaling up Inference Acceleration of Large Language Models via
       Training-Time Test", 2025: three fused feature levels (an FC of 3k → k) and a draft
       vocabulary of its own.
    .. [3] DeepSeek-AI, "DeepSeek-V3 Technical Report" (2024), section 2.2: each MTP module is
       one Transformer block and a projection of 2 × hidden → hidden, sharing the embedding and
       the output head with the main model.
    """
    mp = method(s)
    if mp is None or mp.drafter == "none":
        return None
    m = s.model
    if mp.drafter == "model":
        return draft_spec(s)
    total, active = _layer_params(m)
    vocab = min(mp.draft_vocab or m.vocab, m.vocab)
    head = float(vocab) * m.hidden
    fuse = (mp.fuse_hidden_states - 1) * float(m.hidden) * m.hidden
    moe = s.speculative == "mtp" and m.experts
    if s.speculative == "mtp":
        fuse = 2.0 * m.hidden * m.hidden  # the projection of [embedding; hidden state]
        total_l, active_l = total + fuse + head, active + fuse + head
    else:
        total_l = active_l = active + fuse + head
    return ModelSpec(
        id="custom",
        name=f"{mp.name} drafter",
        params_b=max(total_l, 1e6) / 1e9,
        active_params_b=max(active_l, 1e6) / 1e9 if moe else None,
        layers=1,
        hidden=m.hidden,
        heads=m.heads,
        kv_heads=m.kv_heads,
        head_dim=m.head_dim,
        vocab=vocab,
        experts=m.experts if moe else None,
        experts_per_token=m.experts_per_token if moe else None,
        tied_embeddings=True,
        kv_lora_rank=m.kv_lora_rank if s.speculative == "mtp" else None,
        qk_rope_head_dim=m.qk_rope_head_dim if s.speculative == "mtp" else None,
        quantised="all",
    )


def drafter_scenario(s):
    """The scenario the drafter runs as (same GPUs, engine, graphs and context; no host work of
    its own), or None without a drafter."""
    spec = drafter_spec(s)
    if spec is None:
        return None
    mp = method(s)
    dtype = "bf16" if mp.drafter_dtype == "bf16" else s.weights_dtype
    update = {
        "model": spec,
        "speculative": "none",
        "num_speculative_tokens": None,
        "spec_acceptance": None,
        "spec_acceptance_length": None,
        "draft_model": None,
        "weights_dtype": dtype,
        "weights_gb": None,
        "kernels": None,
        # the engine's per-step host work is the target step's; the drafter adds GPU work and
        # its own launches only
        "host_ms": 0.0,
        "host_us_per_seq": 0.0,
    }
    return s.model_copy(update=update)


def verify_host_s(s) -> float:
    """Host work a speculative step adds to the verify forward (``verify_us``) [s]; 0
    without speculation."""
    m = method(s)
    return 0.0 if m is None else m.verify_us * 1e-6


def proposer_host_s(s, batch) -> np.ndarray:
    """The proposer's host work per step for ``batch`` sequences [s]: the n-gram matcher's per
    sequence (``host_us_per_seq``) and each draft step's preparation (``draft_step_us``);
    zeros without speculation. The drafter's forwards are :func:`model.decode.draft_s`'s."""
    b = np.asarray(batch, dtype=float)
    mp = method(s)
    if mp is None:
        return np.zeros_like(b)
    return (b * mp.host_us_per_seq + k_of(s) * mp.draft_step_us) * 1e-6 * (b > 0)


def drafter_weights_bytes(s) -> float:
    """HBM the drafter's weights take, all GPUs together [B] (0 without a drafter).

    An MTP module is loaded as the checkpoint ships it (``model.mtp_params_b``: DeepSeek-V3's is
    14 B, its own embedding and head copies included); a draft model as its preset; an EAGLE
    head as :func:`drafter_spec` counts it."""
    d = drafter_scenario(s)
    if d is None:
        return 0.0
    if s.speculative == "mtp" and s.model.mtp_params_b:
        return s.model.mtp_params_b * 1e9 * BYTES_PER_PARAM[d.weights_dtype]
    return float(d.weights_bytes)


# ------------------------------------------------------------------------------- serving


#: requests whose expected steps sum above this are drawn by the renewal approximation
EXACT_DRAWS = 2_000_000


def steps_needed(tokens, alpha: float, k: int, seed: int = 0) -> np.ndarray:
    """Verify steps each request needs to emit ``tokens`` tokens when every step emits
    ``1 + a`` with ``a`` the leading accepted drafts of ``k`` (each accepted with probability
    α, independently per sequence and step: ``a = min(G − 1, k)``, G geometric) [count].

    Drawn step by step, 64 steps a round over the requests still short, while the expected
    draws stay below :data:`EXACT_DRAWS`; beyond, by the renewal theorem (steps to cover T ≈
    normal with mean T/μ and variance T·σ²/μ³, μ and σ² of one step's tokens), clipped to the
    possible range ``[⌈T/(k+1)⌉, T]``.

    References
    ----------
    .. [1] Leviathan et al., ICML 2023, section 3.3: the number of accepted tokens per step is
       a capped geometric variable.
    .. [2] W. Feller, "An Introduction to Probability Theory and Its Applications", vol. 2,
       XI.5: the central limit theorem for renewal processes.
    """
    t = np.maximum(np.asarray(tokens, dtype=np.int64), 0)
    out = np.zeros(len(t), dtype=np.int64)
    if not k or not len(t):
        return t.copy()
    rng = np.random.default_rng([int(seed), 42])
    mu = float(accepted_tokens(alpha, k))
    j = np.arange(k + 1, dtype=float)
    p = np.where(j < k, alpha**j * (1 - alpha), alpha**k)  # P(1 + a = j + 1)
    var = float((p * (j + 1) ** 2).sum() - mu**2)
    if t.sum() / mu <= EXACT_DRAWS:
        left = t.copy()
        active = np.nonzero(left > 0)[0]
        while len(active):
            g = rng.geometric(1.0 - alpha, size=(len(active), 64)) if alpha > 0 else None
            emit = (np.minimum(g - 1, k) + 1) if g is not None else np.ones((len(active), 64))
            cum = np.cumsum(emit, axis=1)
            need = left[active][:, None]
            reached = cum >= need
            done = reached.any(axis=1)
            first = np.argmax(reached, axis=1)
            out[active[done]] += first[done] + 1
            out[active[~done]] += 64
            left[active[~done]] -= cum[~done, -1].astype(np.int64)
            left[active[done]] = 0
            active = active[~done]
        return out
    mean = t / mu
    sd = np.sqrt(t * max(var, 0.0) / mu**3)
    draw = np.rint(rng.normal(mean, sd)).astype(np.int64)
    return np.clip(draw, -(-t // (k + 1)), t)


def crossover_batch(speedup: np.ndarray, batch: np.ndarray) -> float | None:
    """The batch above which speculation stops paying: where ``speedup`` (speculative over
    plain tokens per second, over an increasing ``batch`` grid) first falls to 1, linearly
    interpolated; None where it pays at every batch of the grid, and the grid's first batch
    where it never pays."""
    sp = np.asarray(speedup, dtype=float)
    b = np.asarray(batch, dtype=float)
    below = np.nonzero(sp < 1.0)[0]
    if not len(below):
        return None
    i = int(below[0])
    if i == 0:
        return float(b[0])
    x0, x1, y0, y1 = b[i - 1], b[i], sp[i - 1], sp[i]
    return float(x0 + (1.0 - y0) * (x1 - x0) / (y1 - y0))
