"""Test drafters: oracle, random, adversarial (right for exactly j tokens) and recording wrappers."""

from __future__ import annotations

import random


class OracleProposer:
    """Proposes the true greedy continuation (every draft accepted)."""

    needs_hidden = False

    def __init__(self, refs: dict[str, list[int]], vocab: int):
        self.refs, self.vocab = refs, vocab

    def propose(self, seqs, k):
        out = []
        for s in seqs:
            ref, g = self.refs[s.request_id], len(s.generated)
            out.append([ref[g + j] if g + j < len(ref) else 0 for j in range(k)])
        return out

    def release(self, request_id):
        pass


class RandomProposer:
    needs_hidden = False

    def __init__(self, vocab: int, seed: int = 0):
        self.rng, self.vocab = random.Random(seed), vocab

    def propose(self, seqs, k):
        return [[self.rng.randrange(self.vocab) for _ in range(k)] for _ in seqs]

    def release(self, request_id):
        pass


class AdversarialProposer:
    """Right for exactly j tokens then wrong, j cycling 0..k per call and per sequence; records j."""

    needs_hidden = False

    def __init__(self, refs: dict[str, list[int]], vocab: int):
        self.refs, self.vocab = refs, vocab
        self.calls = 0
        self.planned: list[tuple[str, int, int]] = []  # (request id, j, generated before the step)

    def propose(self, seqs, k):
        out = []
        for i, s in enumerate(seqs):
            ref, g = self.refs[s.request_id], len(s.generated)
            j = (self.calls + i) % (k + 1)
            row = []
            for c in range(k):
                right = ref[g + c] if g + c < len(ref) else 0
                row.append(right if c < j else (right + 1) % self.vocab)
            self.planned.append((s.request_id, j, g))
            out.append(row)
        self.calls += 1
        return out

    def release(self, request_id):
        pass
