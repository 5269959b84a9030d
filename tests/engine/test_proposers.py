"""Proposers on their own: replay acceptance matches q, n-gram lookup continues loops."""

from __future__ import annotations

from minuscule.engine.config import SamplingParams
from minuscule.engine.request import Request, Sequence
from minuscule.engine.spec.ngram import NgramProposer
from minuscule.engine.spec.replay import ReplayProposer, kronecker_alpha


def _seq(rid: str, generated: list[int]) -> Sequence:
    s = Sequence(Request(rid, [1, 2, 3], SamplingParams(max_tokens=500)), None)
    for t in generated:
        s.commit(t)
    return s


def test_replay_rate_matches_q_per_position():
    ref = list(range(10, 410))
    prop = ReplayProposer({"a": ref}, q=0.75, kmax=3, vocab_size=512, seed=1)
    seq = _seq("a", ref[:5])
    right = [0, 0, 0]
    n = 300
    for _ in range(n):
        drafts = prop.propose([seq], 3)[0]
        for j in range(3):
            right[j] += drafts[j] == ref[5 + j]
    # Each position is right about q of the time (quasi-random draws: close, not just on average).
    assert all(abs(r / n - 0.75) < 0.02 for r in right)
    assert all(0 < a < 1 for a in kronecker_alpha(3))


def test_replay_wrong_tokens_are_wrong_and_past_the_end():
    prop = ReplayProposer({"a": [5, 6]}, q=0.0, kmax=2, vocab_size=8)
    assert prop.propose([_seq("a", [])], 2) == [[6, 7]]
    assert prop.propose([_seq("b", [])], 2) == [[1, 1]]  # no reference: anything but a real draft


def test_ngram_copies_the_continuation_and_extends_loops():
    prop = NgramProposer(2, 3)
    seq = _seq("a", [7, 8, 9, 4, 5, 7, 8])
    assert prop.propose([seq], 3) == [[9, 4, 5]]
    loop = _seq("b", [1, 2, 1, 2, 1])
    assert prop.propose([loop], 5) == [[2, 1, 2, 1, 2]]
    fresh = _seq("c", [3])
    assert prop.propose([fresh], 2) == [[3, 3]]
