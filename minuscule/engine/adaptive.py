"""Adaptive draft length: pick K in 0..Kmax per step to maximise expected tokens per second.

Expected tokens per sequence step with K drafts is 1 + sum_{j<=K} prod_{i<=j} c_i, with c_i the
running conditional acceptance of draft position i (a prior of one success in two tries). The cost
of a step is measured, not modelled: the least of the last few decode times per sequence step
for each (batch-size bucket, K) (load from other processes on a shared CPU only ever adds time,
often several times a step's usual time, and the least recovers first when a burst of load ends),
with unmeasured K interpolated linearly between measured ones.

K=0 and Kmax are measured first in each bucket (twice: the first step of each is discarded as
warm-up); afterwards the best K is taken, and drafting must beat K=0 by a small margin so that
measurement noise cannot tip a tie towards extra work. Speculation loses when batches are large
(a verify pass of B*(K+1) tokens costs more than B) or acceptance is low; that is where K=0 wins.
Every `probe` steps (16, doubling up to 1024 while the decision holds) one step runs another K,
round robin, so that costs and acceptance stay current; a probe whose measured cost is high waits
until that extra time is at most 0.5% of the decode time since the last probe. The decision itself
is recomputed every few steps only: on a tiny model a decode step takes well under a millisecond.

A change of decision is confirmed before it is taken: the candidate runs one step, and the switch
happens only if it still wins with that fresh cost against the current K's recent ones. Costs of a
K that is not running are old, and a burst of load from other processes that inflates the running
K's recent steps would otherwise make an old, quiet measurement of another K look cheap. After a
trial that fails, the next recomputation waits twice as long (up to MAX_HOLD steps).
"""

from __future__ import annotations

import math
from collections import deque

WINDOW = 7  # recent samples per (bucket, K)
MARGIN = 1.05  # K > 0 must promise this much more throughput than K = 0
REDECIDE = 8  # steps between recomputations of the best K
MAX_PROBE = 1024  # longest interval between probes of another K
PROBE_BUDGET = 0.005  # a probe's measured extra time, spread over its interval, stays under this share
MAX_HOLD = 128  # longest wait before recomputing the decision after failed trials of a switch


def bucket(batch: int) -> int:
    return 1 << (batch - 1).bit_length()


class _Bucket:
    """What AdaptiveK keeps per batch-size bucket (attributes, not dict keys: this runs every step)."""

    __slots__ = ("recent", "seen", "last", "best", "age", "hold", "confirm")

    def __init__(self, kmax: int):
        self.recent = [deque(maxlen=WINDOW) for _ in range(kmax + 1)]  # K -> seconds per sequence step
        self.seen = [0] * (kmax + 1)  # K -> steps run
        self.last: list[float | None] = [None] * (kmax + 1)  # K -> latest seconds per sequence step
        self.best: int | None = None  # cached decision
        self.age = 0  # steps since the decision was computed
        self.hold = REDECIDE  # steps between recomputations (grows after failed trials)
        self.confirm: int | None = None  # candidate K whose one-step trial is under way


class AdaptiveK:
    def __init__(self, kmax: int):
        self.kmax = kmax
        self.tries = [2.0] * (kmax + 1)  # index j: draft position j (1-based); prior pseudo-counts
        self.hits = [1.0] * (kmax + 1)
        self.buckets: dict[int, _Bucket] = {}  # by batch size (several sizes share one bucket's state)
        self.since_probe = 0
        self.probe = 16
        self.next_probe = 0

    def _bucket(self, batch: int) -> _Bucket:
        st = self.buckets.get(batch)
        if st is None:
            b = bucket(batch)
            st = next((v for n, v in self.buckets.items() if bucket(n) == b), None) or _Bucket(self.kmax)
            self.buckets[batch] = st
        return st

    def expected_tokens(self, k: int) -> float:
        total, p = 1.0, 1.0
        for j in range(1, k + 1):
            p *= self.hits[j] / self.tries[j]
            total += p
        return total

    def costs(self, batch: int) -> dict[int, float]:
        """Least recent seconds per sequence step of each K run in this batch's bucket."""
        return {k: min(d) for k, d in enumerate(self._bucket(batch).recent) if d}

    @staticmethod
    def _cost(costs: dict[int, float], k: int) -> float:
        """Measured cost of K, or interpolated between the nearest measured K (0 and Kmax always are)."""
        if k in costs:
            return costs[k]
        lo = max(j for j in costs if j < k)
        hi = min(j for j in costs if j > k)
        return costs[lo] + (costs[hi] - costs[lo]) * (k - lo) / (hi - lo)

    def _decide(self, batch: int, fresh: dict[int, float] | None = None) -> int:
        costs = self.costs(batch)
        costs.update(fresh or {})
        scores = [self.expected_tokens(k) / self._cost(costs, k) for k in range(self.kmax + 1)]
        best = max(range(self.kmax + 1), key=scores.__getitem__)
        return best if best and scores[best] >= MARGIN * scores[0] else 0

    def choose(self, batch: int) -> int:
        if self.kmax == 0:
            return 0
        st = self._bucket(batch)
        if st.best is None:
            for k in (0, self.kmax):
                if st.seen[k] < 2:
                    return k
        if st.confirm is not None:
            # The candidate ran one step: switch only if it wins with that step's cost.
            cand, st.confirm = st.confirm, None
            fresh = st.last[cand]
            if self._decide(batch, {cand: fresh} if fresh is not None else None) == cand:
                st.best = cand
                st.hold = REDECIDE
                self.probe, self.since_probe = 16, 0  # the decision moved: look again soon
            else:
                st.hold = min(2 * st.hold, MAX_HOLD)
            st.age = 0
        if st.best is None or st.age >= st.hold:
            best = self._decide(batch)
            st.age = 0
            if st.best is None:
                st.best = best
            elif best != st.best:
                st.confirm = best
                return best
            else:
                st.hold = REDECIDE
        st.age += 1
        best = st.best
        self.since_probe += 1
        if self.since_probe >= self.probe:
            nxt = (self.next_probe + 1) % (self.kmax + 1)
            if nxt == best:
                nxt = (nxt + 1) % (self.kmax + 1)
            # An expensive probe (say, rebuilding a draft cache left behind by many K=0 steps)
            # waits until its extra time is a small share of the decoding done since the last.
            costs = self.costs(batch)
            extra = self._cost(costs, nxt) - self._cost(costs, best)
            if extra > 0 and self.since_probe * PROBE_BUDGET * self._cost(costs, best) < extra:
                self.probe = math.ceil(extra / (PROBE_BUDGET * self._cost(costs, best)))  # check again then
                return best
            self.since_probe = 0
            self.probe = min(2 * self.probe, MAX_PROBE)
            self.next_probe = nxt
            return nxt
        return best

    def update(self, batch: int, k: int, seconds_per_step: float, accepted: list[int]) -> None:
        """Record one step: its decode seconds and how many leading drafts each sequence accepted."""
        st = self._bucket(batch)
        st.seen[k] += 1
        # Per sequence step, so that buckets stay comparable when the batch shrinks inside one.
        last = st.last[k] = seconds_per_step / max(1, batch)
        if st.seen[k] > 1:
            st.recent[k].append(last)
        for a in accepted if k else ():
            for j in range(1, k + 1):
                self.tries[j] += 1
                if a >= j:
                    self.hits[j] += 1
                else:
                    break
