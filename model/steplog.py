"""The engine steps of one simulated run, kept compact (issue 40, R2: memory per simulated
request bounded, statistics streamed rather than every step kept).

The simulator (:func:`model.serving.simulate`) records the decode steps between two events as
one *run*: ``k`` steps of ``n`` sequences whose step time grows affinely, ``A + Bs·j`` for the
``j``-th step (or, where the step model is not affine, the run's own step times), and the
steps that admit or finish requests one by one. At the default rate a request costs ~80 steps
but ~2 runs: kept as runs, a run of 20,000 requests holds ~3 MB of step records where the
expanded per-step arrays held ~65 MB (and ~220 MB at their peak).

:class:`StepLog` answers what the figures need straight from the runs (the ITL distribution
weighted by tokens, the mean and largest batch, the KV cache's peak, the first step without a
prefill, the timeline's samples) and expands to per-step arrays only on request
(:meth:`StepLog.expanded`, what tests and small runs use). :data:`EXPAND_STEPS` decides which
path :func:`model.serving.figures` takes; both give the same figures (the streamed percentiles
find the same sample values, see :meth:`StepLog.itl_percentiles`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: runs of at most this many steps are expanded (exactly the per-step arrays); longer ones are
#: summarised from their runs (~150 bytes a step at the expansion's peak: 75 MB here)
EXPAND_STEPS = 500_000


@dataclass(eq=False)
class StepLog:
    """The steps of one run (see the module docstring). Per run: ``t0``, ``a``, ``bs`` (NaN
    ``t0``: an explicit run, its steps' ends and times in ``exp_end``/``exp_dt``), ``n``
    steps, ``batch`` sequences, KV blocks ``b0`` before and ``b1`` after (layer-blocks);
    per single step: ``one_end``, ``one_dt``, ``one_batch``, ``one_itl``, ``one_blocks``;
    ``layers`` (layer-blocks per block)."""

    t0: np.ndarray
    a: np.ndarray
    bs: np.ndarray
    n: np.ndarray
    batch: np.ndarray
    b0: np.ndarray
    b1: np.ndarray
    exp_end: np.ndarray
    exp_dt: np.ndarray
    one_end: np.ndarray
    one_dt: np.ndarray
    one_batch: np.ndarray
    one_itl: np.ndarray
    one_blocks: np.ndarray
    layers: int

    @classmethod
    def of(cls, **parts) -> StepLog:
        """A log whose explicit runs (a bound changed within them: each step's time was
        evaluated) are kept as single steps, so every run left is affine."""
        log = cls(**parts)
        explicit = np.isnan(log.t0)
        if not explicit.any():
            return log
        n = log.n[explicit]
        j = np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n)
        frac = (j + 1) / np.repeat(n, n)
        b0, b1 = np.repeat(log.b0[explicit], n), np.repeat(log.b1[explicit], n)
        batch = np.repeat(log.batch[explicit], n)
        keep = ~explicit
        return cls(
            t0=log.t0[keep], a=log.a[keep], bs=log.bs[keep], n=log.n[keep],
            batch=log.batch[keep], b0=log.b0[keep], b1=log.b1[keep],
            exp_end=np.zeros(0), exp_dt=np.zeros(0),
            one_end=np.concatenate([log.exp_end, log.one_end]),
            one_dt=np.concatenate([log.exp_dt, log.one_dt]),
            one_batch=np.concatenate([batch, log.one_batch]),
            one_itl=np.concatenate([batch, log.one_itl]),
            one_blocks=np.concatenate([b0 + np.floor((b1 - b0) * frac), log.one_blocks]).astype(
                np.int64
            ),
            layers=log.layers,
        )  # fmt: skip

    @classmethod
    def concat(cls, logs: list[StepLog]) -> StepLog:
        """The steps of several engines in one log (a disaggregated replica's decode
        instances, :mod:`model.disagg`): what the figures read from it (the ITL distribution,
        the batch's mean and largest, the KV's peak per engine) is over all their steps; its
        time order interleaves the engines, so a timeline takes one engine's log."""
        if not logs:
            z, zi = np.zeros(0), np.zeros(0, dtype=np.int64)
            return cls(z, z, z, zi, zi, zi, zi, z, z, z, z, zi, zi, zi, layers=1)
        names = [f for f in cls.__dataclass_fields__ if f != "layers"]
        return cls(
            **{f: np.concatenate([getattr(x, f) for x in logs]) for f in names},
            layers=logs[0].layers,
        )

    @property
    def steps(self) -> int:
        return int(self.n.sum()) + len(self.one_end)

    def nbytes(self) -> int:
        return sum(getattr(self, f).nbytes for f in self.__dataclass_fields__ if f != "layers")

    # -- the per-step arrays ------------------------------------------------------------------
    def expanded(self) -> dict:
        """``step_end_s``, ``step_s``, ``step_batch``, ``step_itl_tokens`` and
        ``step_kv_blocks``, one entry per step in time order."""
        runs_n, L = self.n, self.layers
        run_batch = np.repeat(self.batch, runs_n)
        if len(runs_n):
            starts = np.repeat(np.cumsum(runs_n) - runs_n, runs_n)
            j = np.arange(runs_n.sum()) - starts
            frac = (j + 1) / np.repeat(runs_n, runs_n)
            run_blocks = np.repeat(self.b0, runs_n) + np.floor(
                np.repeat(self.b1 - self.b0, runs_n) * frac
            )
            run_blocks = np.floor(run_blocks / L)  # layer-blocks → blocks of every layer
            t0, A, Bs = (np.repeat(x, runs_n) for x in (self.t0, self.a, self.bs))
            dt_runs = A + Bs * j
            end_runs = t0 + (j + 1) * A + Bs * j * (j + 1) / 2
            explicit = np.isnan(t0)
            if explicit.any():
                dt_runs[explicit] = self.exp_dt
                end_runs[explicit] = self.exp_end
        else:
            run_blocks = dt_runs = end_runs = np.zeros(0)
        end_all = np.concatenate([end_runs, np.asarray(self.one_end, dtype=float)])
        order = np.argsort(end_all, kind="stable")

        def merged(runs, ones, dtype):
            return np.concatenate([runs, np.asarray(ones, dtype=float)])[order].astype(dtype)

        return {
            "step_end_s": end_all[order],
            "step_s": merged(dt_runs, self.one_dt, float),
            "step_batch": merged(run_batch, self.one_batch, np.int64),
            "step_itl_tokens": merged(run_batch, self.one_itl, np.int64),
            "step_kv_blocks": merged(
                run_blocks, np.floor(np.asarray(self.one_blocks, float) / L), np.int64
            ),
        }

    # -- figures straight from the runs -------------------------------------------------------
    @property
    def streamable(self) -> bool:
        """Every run affine with steps that do not shrink (the summaries below assume it;
        :meth:`of` keeps explicit runs as single steps; a run whose steps shrink, which the
        step model does not make, would be expanded instead)."""
        return not np.isnan(self.t0).any() and bool((self.bs >= 0).all())

    def batch_stats(self) -> tuple[float, int]:
        """Mean and largest sequences per step."""
        total = self.steps
        if not total:
            return 0.0, 0
        s = float((self.batch * self.n).sum()) + float(self.one_batch.sum())
        top = max(int(self.batch.max()) if len(self.batch) else 0,
                  int(self.one_batch.max()) if len(self.one_batch) else 0)  # fmt: skip
        return s / total, top

    def peak_blocks(self) -> int:
        """The most KV blocks in use after any step (blocks of every layer)."""
        L, peaks = self.layers, [0]
        if len(self.n):
            first = self.b0 + np.floor((self.b1 - self.b0) / self.n)
            peaks.append(int(np.floor(np.maximum(first, self.b1) / L).max()))
        if len(self.one_blocks):
            peaks.append(int(np.floor(self.one_blocks.max() / L)))
        return max(peaks)

    def first_alone_end(self) -> float:
        """End of the first step that ran no prefill chunk (every sequence in it decoding): a
        run's first step, or a single step whose sequences all decoded."""
        cands = [math.inf]
        if len(self.n):
            cands.append(float((self.t0 + self.a).min()))
        alone = self.one_batch == self.one_itl
        if alone.any():
            cands.append(float(self.one_end[alone].min()))
        return min(cands)

    def tokens_by_second(self, origin: float) -> np.ndarray:
        """Tokens the steps stream (a sequence's tokens that are not its first) per second
        since ``origin``: bucket ``k`` holds the steps that end in ``[origin + k, origin + k +
        1)``, as ``vllm bench serve`` buckets token arrivals for its peak output throughput.
        Exact from the runs: a run's step ``j`` ends at ``t0 + (j + 1)·a + bs·j(j + 1)/2``, so
        the steps ending before a second's boundary are counted in closed form (only the runs
        that cross a boundary are split; the engine runs them one after another, so there are
        at most as many splits as seconds)."""
        parts_k, parts_w = [], []
        if len(self.one_end):
            parts_k.append(np.floor(np.asarray(self.one_end, float) - origin))
            parts_w.append(np.asarray(self.one_itl, float))
        live = (self.n > 0) & (self.batch > 0)  # every run affine (:attr:`streamable`)
        if live.any():
            t0, a, bs = self.t0[live], self.a[live], self.bs[live]
            n, w = self.n[live].astype(float), self.batch[live].astype(float)
            k_lo = np.floor(t0 + a - origin)
            k_hi = np.floor(t0 + n * a + bs * (n - 1) * n / 2 - origin)
            one = k_lo == k_hi  # the whole run ends its steps within one second
            parts_k.append(k_lo[one])
            parts_w.append((w * n)[one])
            split = np.flatnonzero(~one)
            if len(split):
                cuts = (k_hi - k_lo)[split].astype(np.int64)  # boundaries inside each run
                r = np.repeat(split, cuts)
                i = np.arange(cuts.sum()) - np.repeat(np.cumsum(cuts) - cuts, cuts)
                k = k_lo[r] + 1 + i  # the bucket that starts at the boundary
                # steps ending before origin + k: the largest x ≤ n with
                # x·a + bs·x(x − 1)/2 < D, D = origin + k − t0
                d = origin + k - t0[r]
                ar, br = a[r], bs[r]
                h = ar - br / 2  # the root in its stable form (no cancellation as bs → 0)
                root = 2 * d / (h + np.sqrt(h * h + 2 * br * d))
                x = np.clip(np.ceil(root) - 1, 0, n[r])

                def ends(x):
                    return x * ar + br * x * (x - 1) / 2

                x = np.where((x > 0) & (ends(x) >= d), x - 1, x)  # float rounding
                x = np.where((x < n[r]) & (ends(x + 1) < d), x + 1, x)
                # per split run: the steps between its boundaries, from its start to the first
                # and after the last
                starts = np.cumsum(cuts) - cuts
                counts = np.diff(x, prepend=0.0)
                counts[starts] = x[starts]
                tail = n[split] - x[starts + cuts - 1]
                parts_k += [k - 1, k_hi[split]]
                parts_w += [w[r] * counts, w[split] * tail]
        if not parts_k:
            return np.zeros(0)
        k, wt = np.concatenate(parts_k), np.concatenate(parts_w)
        keep = k >= 0
        return np.bincount(k[keep].astype(np.int64), weights=wt[keep])

    def itl_mean(self, extra_v: np.ndarray, extra_w: np.ndarray, scale: float) -> float | None:
        """The token-weighted mean inter-token gap (× ``scale``): each step's time counted once
        per sequence that got a token in it that was not its first, and ``extra_*`` (already
        scaled)."""
        n, a, bs, w = self.n, self.a, self.bs, self.batch
        total = float((w * n).sum()) + float(self.one_itl.sum()) + float(extra_w.sum())
        if total <= 0:
            return None
        weighted = float((w * (n * a + bs * n * (n - 1) / 2.0)).sum())
        weighted += float((self.one_itl * self.one_dt).sum())
        return (weighted * scale + float((extra_w * extra_v).sum())) / total

    def itl_percentiles(self, qs, extra_v: np.ndarray, extra_w: np.ndarray, scale: float):
        """Percentiles ``qs`` of the inter-token gaps (step times × ``scale``; ``extra_*``
        already scaled), numpy's linear method on the sample with each step's time repeated
        once per token, as :func:`model.serving._weighted_percentiles` on the expanded arrays:
        the sample value at a rank is found by bisection on the value, counting the samples
        below it in closed form for every run, then taken as the largest sample at or below
        the bisection's end."""
        keep = self.batch > 0
        ra, rb, rn = self.a[keep] * scale, self.bs[keep] * scale, self.n[keep]
        rw = self.batch[keep].astype(float)
        ev = np.concatenate([self.one_dt * scale, extra_v])
        ew = np.concatenate([self.one_itl.astype(float), extra_w.astype(float)])
        pos_w = ew > 0
        ev, ew = ev[pos_w], ew[pos_w]
        order = np.argsort(ev, kind="stable")
        ev, ecum = ev[order], np.cumsum(ew[order])
        total = float(rw @ rn.astype(float)) + (float(ecum[-1]) if len(ecum) else 0.0)
        if total <= 0:
            return np.full(len(qs), np.nan)
        last = (rn - 1).astype(float)

        def at_most(x: float) -> np.ndarray:
            """Per run, how many of its steps take at most ``x``."""
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                j = np.where(rb > 0, np.floor((x - ra) / rb), np.where(ra <= x, last, -1.0))
            j = np.clip(j, -1.0, last)
            # float rounding: the run's own values, as computed, decide
            j = np.where((j >= 0) & (ra + rb * np.maximum(j, 0) > x), j - 1, j)
            nxt = np.minimum(j + 1, last)
            j = np.where((j < last) & (ra + rb * nxt <= x), j + 1, j)
            return j + 1

        def count(x: float) -> float:
            c = float(rw @ at_most(x)) if len(ra) else 0.0
            k = int(np.searchsorted(ev, x, side="right")) if len(ev) else 0
            return c + (float(ecum[k - 1]) if k else 0.0)

        def largest_at_most(x: float) -> float:
            best = -math.inf
            if len(ra):
                j = at_most(x) - 1
                ok = j >= 0
                if ok.any():
                    best = float((ra[ok] + rb[ok] * j[ok]).max())
            k = int(np.searchsorted(ev, x, side="right")) if len(ev) else 0
            return max(best, float(ev[k - 1])) if k else best

        lows = ([float(ra.min())] if len(ra) else []) + ([float(ev[0])] if len(ev) else [])
        highs = ([float((ra + rb * last).max())] if len(ra) else []) + (
            [float(ev[-1])] if len(ev) else []
        )
        vmin, vmax = min(lows), max(highs)

        def kth(k: int) -> float:
            """The k-th smallest sample (0-based)."""
            if count(vmin) >= k + 1:
                return vmin
            lo, hi = vmin, vmax
            for _ in range(200):
                mid = 0.5 * (lo + hi)
                if not lo < mid < hi:
                    break
                if count(mid) >= k + 1:
                    hi = mid
                else:
                    lo = mid
            return largest_at_most(hi)

        out = []
        for q in qs:
            pos = q / 100.0 * (total - 1)
            lo_v, hi_v = kth(int(math.floor(pos))), kth(int(math.ceil(pos)))
            out.append(lo_v + (hi_v - lo_v) * (pos - math.floor(pos)))
        return np.array(out)

    def sample(self, idx: np.ndarray) -> dict:
        """``end``, ``batch`` and ``blocks`` of the steps at time-order positions ``idx``
        without expanding the runs: runs and single steps do not overlap in time, so each
        one's steps are contiguous in time order."""
        L, runs = self.layers, len(self.t0)
        seg_first = np.concatenate([self.t0 + self.a, self.one_end])
        sizes = np.concatenate([self.n, np.ones(len(self.one_end), dtype=np.int64)])
        order = np.argsort(seg_first, kind="stable")
        cum = np.cumsum(sizes[order])
        where = np.searchsorted(cum, idx, side="right")  # each index's segment, in time order
        seg = order[where]
        j = idx - (cum[where] - sizes[order][where])
        is_run = seg < runs
        end = np.empty(len(idx))
        batch = np.empty(len(idx), dtype=np.int64)
        blocks = np.empty(len(idx), dtype=np.int64)
        r, jr = seg[is_run], j[is_run]
        end[is_run] = self.t0[r] + (jr + 1) * self.a[r] + self.bs[r] * jr * (jr + 1) / 2
        batch[is_run] = self.batch[r]
        frac = (jr + 1) / self.n[r]
        blocks[is_run] = np.floor(
            (self.b0[r] + np.floor((self.b1[r] - self.b0[r]) * frac)) / L
        ).astype(np.int64)
        o = seg[~is_run] - runs
        end[~is_run] = self.one_end[o]
        batch[~is_run] = self.one_batch[o]
        blocks[~is_run] = np.floor(self.one_blocks[o] / L).astype(np.int64)
        return {"end": end, "batch": batch, "blocks": blocks}
