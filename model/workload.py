"""The clients of the serving simulator (SPEC 4.6): ``vllm bench serve``'s requests, their
arrival times and lengths, and a data-parallel rank's share of them.

``num_requests`` requests, inter-arrival times drawn from a gamma distribution of shape
``burstiness`` (1 = Poisson) at ``request_rate`` (``inf``: all at t = 0), at most
``max_concurrency`` in flight (a request then waits on the client until one finishes; that wait
is not part of its TTFT).

References
----------
.. [1] vLLM ``benchmarks/serve.py`` / ``vllm bench serve``: gamma arrivals with shape
   ``burstiness`` and scale 1 / (rate × burstiness), ``--max-concurrency`` semaphore.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from model.scenario import Scenario

# ------------------------------------------------------------------------------- the clients


@dataclass(frozen=True)
class Workload:
    """What the clients send: arrival times [s] and each request's prompt and output tokens."""

    arrival_s: np.ndarray
    prompt_tokens: np.ndarray
    output_tokens: np.ndarray
    max_concurrency: int | None = None
    #: a replayed trace's own prefixes (the Mooncake format's block ids): each request's group
    #: (-1: none) and shared prompt tokens; None: the scenario's shared_prefix_tokens
    prefix_group: np.ndarray | None = None
    prefix_tokens: np.ndarray | None = None
    #: a disaggregated decode instance's requests (:mod:`model.disagg`): the prompt tokens
    #: whose KV arrives with the request from a prefill instance (None: none)
    kv_ready_tokens: np.ndarray | None = None

    @property
    def open_loop(self) -> bool:
        """Arrivals do not wait on the server (no concurrency limit)."""
        return self.max_concurrency is None


def arrivals(n: int, rate, burstiness: float = 1.0, seed: int = 0) -> np.ndarray:
    """Send times of ``n`` requests as ``vllm bench serve`` schedules them [s].

    Inter-arrival times are gamma-distributed with shape ``burstiness`` and scale
    1 / (rate × burstiness) (mean 1 / rate; shape 1 is Poisson); the first request goes at 0;
    ``rate`` ``inf`` sends all at once. The draws depend on the seed only, so runs at two rates
    with one seed see the same arrival pattern on a scaled time axis.

    References
    ----------
    .. [1] vLLM ``benchmarks/serve.py``, ``get_request``: ``theta = 1 / (request_rate *
       burstiness)``, ``np.random.gamma(shape=burstiness, scale=theta)``.
    """
    if rate == "inf" or (isinstance(rate, float) and math.isinf(rate)):
        return np.zeros(n)
    rng = np.random.default_rng(seed)
    unit = rng.gamma(shape=burstiness, scale=1.0 / burstiness, size=max(n - 1, 0))
    return np.concatenate([[0.0], np.cumsum(unit)]) / float(rate)


def workload(s: Scenario, rate=None, num_requests=None, max_concurrency="scenario") -> Workload:
    """The scenario's clients: its rate, burstiness, lengths and concurrency (SPEC 4.6)."""
    from model.lengths import draw  # presets: read on first use

    n = int(num_requests or s.num_requests)
    rate = s.request_rate if rate is None else rate
    conc = s.max_concurrency if max_concurrency == "scenario" else max_concurrency
    prompt, output = draw(s, n)
    return Workload(arrivals(n, rate, s.burstiness, s.seed), prompt, output, conc)


def rank_share(wl: Workload, ranks: int) -> Workload:
    """The requests one of ``ranks`` data-parallel ranks serves: every ``ranks``-th in arrival
    order (a round-robin front end), the clients' concurrency split alike; ``wl`` itself for
    one rank.

    References
    ----------
    .. [1] vLLM docs, "Data Parallel Deployment": each rank has its own scheduler and KV cache,
       and the API server balances requests over the ranks.
    """
    if ranks <= 1:
        return wl

    def part(a):
        return None if a is None else np.asarray(a)[::ranks]

    conc = None if wl.max_concurrency is None else max(-(-wl.max_concurrency // ranks), 1)
    return Workload(
        part(wl.arrival_s),
        part(wl.prompt_tokens),
        part(wl.output_tokens),
        conc,
        part(wl.prefix_group),
        part(wl.prefix_tokens),
        part(wl.kv_ready_tokens),
    )


# ------------------------------------------------------------------ the capacity search's runs

CAPACITY_REQUESTS = 1000  # requests per run of the capacity search and the sweep (at most)

#: keys the capacity search does not read (the sidebar's decode batch and context, the traffic,
#: the start-up and the prices): a change to one of them finds the search already done
_NOT_READ = frozenset(
    {
        "batch",
        "context_tokens",
        "request_rate",
        "max_concurrency",
        "traffic",
        "rate_scale",
        "idle_timeout_s",
        "warm_replicas",
        "prewarm_hours",
        "sla_s",
        "sla_penalty_usd",
        "shared_while_asleep",
        "gpu_hour_usd",
        "loader",
        "storage",
        "concurrency",
        "storage_gb_s",
        "stream_gb_s",
        "compile_s",
        "compile_cached_s",
        "process_init_s",
        "cuda_context_s",
        "allocator_s",
        "compile_cache",
        "sleep_level",
        "capture_s_per_graph",
        "scenario",
    }
)


def search_key(s: Scenario) -> str:
    """What the capacity search of ``s`` depends on, as one text (a cache key)."""
    return s.raw.model_dump_json(exclude=set(_NOT_READ))
