"""FastMTP proposer: the model's draft block applied recursively K times over its own KV cache.

Draft pairs follow mtp.draft_step: at position j the block reads token t_j with the hidden state
of position j-1 and predicts t_{j+1}. Bookkeeping per sequence with n tokens (last one pending at
position n-1), after the runner stored the target's hidden states of every verified position:

1. Refill: positions draft_valid+1 .. n-1 are recomputed from committed tokens and the target's
   hidden states, overwriting what earlier speculative steps wrote there. The first time, this
   primes the whole prompt (image positions included); in steady state it is the a+1 tokens the
   last step committed. The output at position n-1 is draft 1.
2. Recursion: draft i (i >= 2) is position n-3+i with draft i-1 as its token and the block's own
   previous (post-norm) output as the hidden state. Those entries stay speculative until step 1
   of the next round overwrites them.

After a long run of steps without drafting (adaptive K chose 0), only the last WINDOW generated
positions are rebuilt and the stretch before them is masked (Sequence.draft_gap): a probe step
then costs O(WINDOW) per row instead of O(run length). The prompt is always primed in full.

The refill is one padded pass over the batch. When padding would outweigh the real work (a
newcomer's prompt next to rows that lag by a token or two), the long rows are refilled alone first.
"""

from __future__ import annotations

import torch

from minuscule.engine.request import Sequence
from minuscule.engine.runner import Runner

SHORT_REFILL = 8  # refills up to this long never run on their own
WINDOW = 32  # generated positions rebuilt after a long stretch without drafting


class FastMTPProposer:
    needs_hidden = True

    def __init__(self, runner: Runner):
        if runner.draft_kv is None:
            raise ValueError("the runner was built without a draft cache")
        self.runner = runner

    def _gaps(self, seqs: list[Sequence]) -> torch.Tensor | None:
        if all(s.draft_gap[1] <= s.draft_gap[0] + 1 for s in seqs):
            return None
        return torch.tensor([s.draft_gap for s in seqs], device=self.runner.device)  # (B, 2)

    def _refill_row(self, seq: Sequence, row: int, upto: int) -> None:
        """Recompute draft entries draft_valid+1 .. upto of one sequence (no drafting)."""
        r = self.runner
        start = seq.draft_valid + 1
        if upto < start:
            return
        pos = torch.arange(start, upto + 1, device=r.device)[None]  # (1, T)
        toks = torch.tensor([seq.tokens[start:upto + 1]], device=r.device)
        r.draft(toks, r.hidden.gather(pos - 1, row), pos, row0=row, gaps=self._gaps([seq]))
        seq.draft_valid = upto

    def _skip_to_window(self, seq: Sequence, row: int) -> None:
        """Prime the prompt if needed, then mask all but the last WINDOW positions still to refill."""
        n = len(seq.tokens)
        if seq.draft_valid < seq.prompt_len:
            # Up to n-2: position n-1 stays for the batched pass, whose output there is draft 1.
            self._refill_row(seq, row, min(seq.prompt_len, n - 2))
        start = n - WINDOW
        if start > seq.draft_valid + 1:
            lo, hi = seq.draft_gap
            seq.draft_gap = (seq.draft_valid if hi <= lo + 1 else lo, start)
            seq.draft_valid = start - 1

    @torch.inference_mode()
    def propose(self, seqs: list[Sequence], k: int) -> list[list[int]]:
        r = self.runner
        if k == 0 or not seqs:
            return [[] for _ in seqs]
        dev = r.device
        for row, seq in enumerate(seqs):
            if len(seq.tokens) - 1 - seq.draft_valid > WINDOW:
                self._skip_to_window(seq, row)
        lags = [len(s.tokens) - 1 - s.draft_valid for s in seqs]
        if max(lags) > SHORT_REFILL and len(seqs) * max(lags) > 2 * sum(lags):
            for row, seq in enumerate(seqs):
                if lags[row] > SHORT_REFILL:
                    self._refill_row(seq, row, len(seq.tokens) - 2)
            lags = [len(s.tokens) - 1 - s.draft_valid for s in seqs]
        t = max(lags)
        cap = r.capacity - 1
        pos_rows, tok_rows = [], []
        for s, lag in zip(seqs, lags):
            first = s.draft_valid + 1
            # Padding columns sit after the real ones (positions past n-1, speculative territory).
            pos_rows.append([min(first + c, cap) for c in range(t)])
            tok_rows.append(s.tokens[first:] + [0] * (t - lag))
        pos = torch.tensor(pos_rows, device=dev)  # (B, T)
        toks = torch.tensor(tok_rows, device=dev)
        pick = torch.tensor([lag - 1 for lag in lags], device=dev)
        gaps = self._gaps(seqs)
        logits, hidden = r.draft(toks, r.hidden.gather(pos - 1), pos, pick, gaps=gaps)
        for s in seqs:
            s.draft_valid = len(s.tokens) - 1
        last = torch.tensor([len(s.tokens) - 1 for s in seqs], device=dev)  # (B,) position of draft 1's input
        drafts = [logits.argmax(-1)]  # (B,)
        for i in range(2, k + 1):
            p = (last + i - 1)[:, None]  # (B, 1)
            logits, hidden = r.draft(drafts[-1][:, None], hidden[:, None], p, gaps=gaps)
            drafts.append(logits.argmax(-1))
        return torch.stack(drafts, dim=1).tolist()  # (B, K)

    def release(self, request_id: str) -> None:
        pass
