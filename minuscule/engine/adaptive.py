"""Adaptive draft length: pick K in 0..Kmax per step to maximise expected tokens per second.

Expected tokens per sequence step with K drafts is 1 + sum_{j<=K} prod_{i<=j} c_i, with c_i the
running conditional acceptance of draft position i (a prior of one success in two tries). The cost
of a step is measured, not modelled: the median of the last few decode times per sequence step
for each (batch-size bucket, K) (a median, because on a shared CPU single steps can take several
times their usual time), with unmeasured K interpolated linearly between measured ones. Drafting
must beat K=0 by a small margin, so measurement noise cannot tip a tie towards extra work. K=0 and Kmax are
measured first for each bucket; afterwards the best K is taken. Speculation loses when
batches are large (a verify pass of B*(K+1) tokens costs more than B) or acceptance is low, and
this is where K=0 wins. Every `probe` steps (16, doubling up to 256 while the decision holds)
one step runs another K, round robin, so that costs and acceptance stay current.
"""

from __future__ import annotations

import statistics
from collections import deque

WINDOW = 7  # recent samples per (bucket, K)
MARGIN = 1.05  # K > 0 must promise this much more throughput than K = 0


def bucket(batch: int) -> int:
    return 1 << (batch - 1).bit_length()


class AdaptiveK:
    def __init__(self, kmax: int):
        self.kmax = kmax
        self.tries = [2.0] * (kmax + 1)  # index j: position j (1-based), pseudo-counts of the prior
        self.hits = [1.0] * (kmax + 1)
        self.cost: dict[int, dict[int, float]] = {}  # bucket -> K -> median seconds per sequence step
        self._recent: dict[tuple[int, int], deque[float]] = {}
        self.samples: dict[int, dict[int, int]] = {}  # bucket -> K -> steps seen
        self.since_probe = 0
        self.probe = 16
        self.last_best = -1
        self.next_probe = 0

    def expected_tokens(self, k: int) -> float:
        total, p = 1.0, 1.0
        for j in range(1, k + 1):
            p *= self.hits[j] / self.tries[j]
            total += p
        return total

    def _cost(self, costs: dict[int, float], k: int) -> float:
        if k in costs:
            return costs[k]
        lo = max(j for j in costs if j < k)
        hi = min((j for j in costs if j > k), default=None)
        if hi is None:
            return costs[lo]
        return costs[lo] + (costs[hi] - costs[lo]) * (k - lo) / (hi - lo)

    def choose(self, batch: int) -> int:
        if self.kmax == 0:
            return 0
        b = bucket(batch)
        costs = self.cost.setdefault(b, {})
        seen = self.samples.setdefault(b, {})
        # The first step of each K in a bucket is discarded (warm-up), so each endpoint runs twice.
        for k in (0, self.kmax):
            if seen.get(k, 0) < 2:
                return k

        def score(k: int) -> float:
            return self.expected_tokens(k) / self._cost(costs, k)

        best = max(range(self.kmax + 1), key=score)
        if best and score(best) < MARGIN * score(0):
            best = 0
        if best != self.last_best:
            self.probe, self.since_probe = 16, 0  # the decision moved: look again soon
        self.last_best = best
        self.since_probe += 1
        if self.since_probe >= self.probe:
            # Probe another K, round robin, so that no cost (and, while K=0 wins, no acceptance
            # estimate) goes stale; probes come less often while the decision holds.
            self.since_probe = 0
            self.probe = min(2 * self.probe, 256)
            self.next_probe = (self.next_probe + 1) % (self.kmax + 1)
            if self.next_probe == best:
                self.next_probe = (self.next_probe + 1) % (self.kmax + 1)
            return self.next_probe
        return best

    def update(self, batch: int, k: int, seconds_per_step: float, accepted: list[int]) -> None:
        """Record one step: its decode seconds and how many leading drafts each sequence accepted."""
        b = bucket(batch)
        costs = self.cost.setdefault(b, {})
        seen = self.samples.setdefault(b, {})
        seen[k] = seen.get(k, 0) + 1
        # Cost per sequence step keeps buckets comparable when the batch shrinks inside one.
        per_seq = seconds_per_step / max(1, batch)
        if seen[k] > 1:
            recent = self._recent.setdefault((b, k), deque(maxlen=WINDOW))
            recent.append(per_seq)
            costs[k] = statistics.median(recent)
        for a in accepted:
            for j in range(1, k + 1):
                self.tries[j] += 1
                if a >= j:
                    self.hits[j] += 1
                else:
                    break
