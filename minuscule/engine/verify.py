"""Greedy verification: accept the longest draft prefix equal to the target's choices, commit one more token.

The target's choice at each position is its argmax after the guards, computed with the guard
state of the candidate prefix; since every choice that gets computed is also committed (a draft is
accepted only when it equals the choice), the guard state simply advances token by token.
Stop ids, the repetition stop and max_tokens cut inside the accepted span.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from minuscule.engine.request import FinishReason, Sequence


@dataclass
class Verdict:
    """What one step committed for one sequence: `tokens` (accepted drafts + the target's token,
    cut at a finish), `accepted` leading drafts that matched, and the finish reason if any."""

    tokens: list[int]
    accepted: int
    finish: FinishReason | None


def choose(seq: Sequence, logits_row: torch.Tensor, argmax: int) -> int:
    """The target's greedy token at one position: the argmax, unless the no-repeat guard bans it."""
    if seq.guards is None:
        return argmax
    banned = seq.guards.banned()
    if argmax not in banned:
        return argmax
    masked = logits_row.clone()
    masked[list(banned)] = float("-inf")
    return int(masked.argmax())


def verify(seqs: list[Sequence], logits: torch.Tensor, drafts: list[list[int]]) -> list[Verdict]:
    """logits (B, K+1, V): the target's logits at [pending, d_1..d_K] of each sequence; drafts B lists of K."""
    argmax = logits.argmax(dim=-1).tolist()  # one host sync for the whole batch
    out = []
    for b, seq in enumerate(seqs):
        d = drafts[b]
        tokens: list[int] = []
        accepted = 0
        for j in range(len(d) + 1):
            # Without guards the choice is the argmax (no logits row to slice out).
            tok = argmax[b][j] if seq.guards is None else choose(seq, logits[b, j], argmax[b][j])
            tokens.append(tok)
            if j < len(d) and d[j] == tok:
                accepted += 1
            if seq.commit(tok) is not None or j == len(d) or d[j] != tok:
                break
        out.append(Verdict(tokens, accepted, seq.finish))
    return out
