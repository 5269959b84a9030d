"""Replay proposer (benchmarks only): the target's own greedy continuation, each draft token right with probability q.

It measures the engine's speed/acceptance curve without a trained head: with K drafts per step the
expected tokens per step are 1 + q + ... + q^K (2.73 at q=0.75, K=3). The right/wrong draws are
quasi-random: step n of a sequence uses point n of a Kronecker (generalised golden ratio) sequence
in [0,1)^Kmax with a per-request random offset, so every coordinate is uniform and the points fill
the cube evenly; the measured acceptance then matches q to within a few steps instead of the
1/sqrt(steps) noise of independent draws.
"""

from __future__ import annotations

import random

from minuscule.engine.request import Sequence


def kronecker_alpha(dim: int) -> list[float]:
    """(1/phi_d, 1/phi_d^2, ...) with phi_d the positive root of x^(d+1) = x + 1 (Roberts' R_d sequence)."""
    phi = 2.0
    for _ in range(64):  # fixed-point iteration converges fast for this root
        phi = (1 + phi) ** (1.0 / (dim + 1))
    return [(1.0 / phi ** (i + 1)) % 1.0 for i in range(dim)]


class ReplayProposer:
    """Proposes reference[g : g+k] after g generated tokens, each replaced by a wrong id with probability 1-q."""

    needs_hidden = False

    def __init__(self, references: dict[str, list[int]], q: float, kmax: int, vocab_size: int, seed: int = 0):
        self.references = references
        self.q = q
        self.vocab = vocab_size
        self.alpha = kronecker_alpha(max(1, kmax))
        self.seed = seed
        self._state: dict[str, list] = {}  # request id -> [step count, offset vector]

    def _point(self, rid: str) -> list[float]:
        st = self._state.get(rid)
        if st is None:
            rng = random.Random(f"{self.seed}:{rid}")
            st = self._state[rid] = [0, [rng.random() for _ in self.alpha]]
        st[0] += 1
        return [(o + st[0] * a) % 1.0 for o, a in zip(st[1], self.alpha)]

    def propose(self, seqs: list[Sequence], k: int) -> list[list[int]]:
        out = []
        for seq in seqs:
            ref = self.references.get(seq.request_id, [])
            g = len(seq.generated)
            u = self._point(seq.request_id)
            drafts = []
            for j in range(k):
                right = ref[g + j] if g + j < len(ref) else None
                if right is not None and u[j] < self.q:
                    drafts.append(right)
                else:  # a wrong token: anything but the right one
                    drafts.append(((right if right is not None else 0) + 1) % self.vocab)
            out.append(drafts)
        return out

    def release(self, request_id: str) -> None:
        self._state.pop(request_id, None)
