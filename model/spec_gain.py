"""What speculative decoding buys over none, against the batch, and where it stops paying
(issue 42, section 1): the curve of the Serving page's "Speculative decoding" tab and the
``spec_*`` figures of ``whatif eval``'s decode section."""

from __future__ import annotations

import numpy as np

from model.decode import sweep
from model.memory import memory_figures
from model.request import request_figures
from model.speculative import crossover_batch


def speedup_sweep(s, batch) -> dict[str, np.ndarray | float | None]:
    """Speculative decoding against none over a batch grid, and where it stops paying.

    ``tokens_per_s`` with the scenario's method and ``plain_tokens_per_s`` with
    ``speculative=none`` (both :func:`model.decode.sweep`, one vectorised call each),
    ``speedup`` their ratio, ``crossover_batch`` the batch where it falls to 1
    (:func:`crossover_batch`), and ``crossover_request_rate`` the request rate that keeps that
    many sequences decoding by Little's law: batch × tokens per second per sequence / output
    tokens, with each request's prefill added to its time in the system (the load at which, in
    a steady run, the decode batch reaches the crossover) [req/s].

    References
    ----------
    .. [1] J. D. C. Little, "A Proof for the Queuing Formula L = λW", Operations Research 9(3),
       1961: sequences in flight = arrival rate × time each spends.
    .. [2] vLLM blog, "How Speculative Decoding Boosts vLLM Performance by up to 2.8x"
       (2024-10-17): the speed-up falls with the request rate and turns to a slow-down at high
       load.
    """
    b = np.asarray(batch, dtype=float)
    spec = sweep(s, b)
    plain_s = s.model_copy(update={"speculative": "none"})
    plain = sweep(plain_s, b)
    speedup = spec["tokens_per_s"] / plain["tokens_per_s"]
    cross = crossover_batch(speedup, b) if s.speculative != "none" else None
    rate = None
    if cross is not None:
        at = sweep(s, np.array([cross]))
        per_seq = float(at["accepted_tokens_per_step"][0] / at["t_step_s"][0])  # tok/s
        ttft_s = float(request_figures(s)["ttft_ms"]) / 1e3
        rate = cross / (ttft_s + max(s.output_tokens - 1, 0) / per_seq)
    return {
        "batch": b,
        "tokens_per_s": spec["tokens_per_s"],
        "plain_tokens_per_s": plain["tokens_per_s"],
        "t_token_s": spec["t_token_s"],
        "plain_t_token_s": plain["t_token_s"],
        "speedup": speedup,
        "crossover_batch": cross,
        "crossover_request_rate": rate,
    }


def speedup_curve(s, reach: float = 1.0, points: int = 96) -> dict:
    """:func:`speedup_sweep` over 1 to ``reach`` × the largest batch whose KV fits (at least
    the scenario's batch), log-spaced, the scenario's batch included; with ``max_batch`` (that
    largest batch) and ``speedup_at_batch`` (the ratio at the scenario's batch)."""
    fit = int(memory_figures(s)["max_batch"])
    top = max(fit, int(s.batch), 2)
    grid = np.unique(np.concatenate([np.rint(np.geomspace(1, reach * top, points)), [s.batch]]))
    sw = speedup_sweep(s, grid)
    sw["max_batch"] = fit
    sw["speedup_at_batch"] = float(np.interp(s.batch, grid, sw["speedup"]))
    return sw


def crossover_figures(s) -> dict:
    """The speed-up at the scenario's batch and where it stops paying, for ``whatif eval``'s
    decode section: :func:`speedup_curve` over 1 to the largest batch whose KV fits; the
    crossover is None where speculation pays at every batch that fits, and every figure None
    without speculation."""
    if s.speculative == "none":
        return {"spec_speedup": None, "spec_crossover_batch": None, "spec_crossover_rate": None}
    sw = speedup_curve(s)
    return {
        "spec_speedup": sw["speedup_at_batch"],
        "spec_crossover_batch": sw["crossover_batch"],
        "spec_crossover_rate": sw["crossover_request_rate"],
    }
