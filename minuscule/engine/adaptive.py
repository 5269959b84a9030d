"""Adaptive draft length: pick K in 0..Kmax per step to maximise expected tokens per second.

Expected tokens per sequence step with K drafts is 1 + sum_{j<=K} prod_{i<=j} c_i, with c_i the
running conditional acceptance of draft position i (a prior of one success in two tries). The cost
of a step is measured, not modelled: an exponential average of decode seconds per (batch-size
bucket, K), with unmeasured K interpolated linearly between measured ones. K=0 and Kmax are
measured first for each bucket; afterwards the best K is taken. Speculation loses when
batches are large (a verify pass of B*(K+1) tokens costs more than B) or acceptance is low, and
this is where K=0 wins. While K=0 is chosen, one probe step with drafts runs every `probe`
steps (doubling, up to 256, while probes keep losing) so that acceptance estimates stay current.
"""

from __future__ import annotations


def bucket(batch: int) -> int:
    return 1 << (batch - 1).bit_length()


class AdaptiveK:
    def __init__(self, kmax: int, ema: float = 0.3):
        self.kmax = kmax
        self.ema = ema
        self.tries = [2.0] * (kmax + 1)  # index j: position j (1-based), pseudo-counts of the prior
        self.hits = [1.0] * (kmax + 1)
        self.cost: dict[int, dict[int, float]] = {}  # bucket -> K -> seconds
        self.since_spec = 0
        self.probe = 16

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
        costs = self.cost.setdefault(bucket(batch), {})
        if 0 not in costs:
            return 0
        if self.kmax not in costs:
            return self.kmax
        best = max(range(self.kmax + 1), key=lambda k: self.expected_tokens(k) / self._cost(costs, k))
        if best == 0:
            self.since_spec += 1
            if self.since_spec >= self.probe:
                self.since_spec = 0
                self.probe = min(2 * self.probe, 256)
                return max(range(1, self.kmax + 1), key=lambda k: self.expected_tokens(k) / self._cost(costs, k))
        else:
            self.since_spec = 0
            self.probe = 16
        return best

    def update(self, batch: int, k: int, seconds_per_step: float, accepted: list[int]) -> None:
        """Record one step: its decode seconds and how many leading drafts each sequence accepted."""
        costs = self.cost.setdefault(bucket(batch), {})
        # Cost per sequence step keeps buckets comparable when the batch shrinks inside one.
        per_seq = seconds_per_step / max(1, batch)
        costs[k] = per_seq if k not in costs else (1 - self.ema) * costs[k] + self.ema * per_seq
        for a in accepted:
            for j in range(1, k + 1):
                self.tries[j] += 1
                if a >= j:
                    self.hits[j] += 1
                else:
                    break
