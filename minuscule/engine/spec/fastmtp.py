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

    def _pass(self, seqs: list[Sequence], uptos: list[int], row0: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """One padded draft pass over rows row0.. refilling positions draft_valid+1 .. upto of each;
        returns the logits and hidden state at each row's `upto`.

        Padding columns (and a row with nothing to refill gets one) sit past the row's own range,
        where entries are not valid anyway and are rewritten before they count.
        """
        r = self.runner
        dev = r.device
        firsts = [s.draft_valid + 1 for s in seqs]
        t = max(max(u - f + 1 for u, f in zip(uptos, firsts)), 1)
        cap = r.capacity - 1
        pos = torch.tensor([[min(f + c, cap) for c in range(t)] for f in firsts], device=dev)  # (B, T)
        toks = torch.tensor([(s.tokens[f:u + 1] + [0] * t)[:t] for s, f, u in zip(seqs, firsts, uptos)],
                            device=dev)  # (B, T)
        pick = torch.tensor([max(u - f, 0) for u, f in zip(uptos, firsts)], device=dev)
        out = r.draft(toks, r.hidden.gather(pos - 1, row0), pos, pick, row0=row0, gaps=self._gaps(seqs))
        for s, u in zip(seqs, uptos):
            s.draft_valid = max(s.draft_valid, u)
        return out

    def _refill(self, seqs: list[Sequence], uptos: list[int]) -> None:
        """Refill every row up to its `upto` (no drafting): one batched pass, or row by row when
        padding would be most of the batched one."""
        lags = [max(u - s.draft_valid, 0) for s, u in zip(seqs, uptos)]
        if max(lags) == 0:
            return
        if len(seqs) * max(lags) > 2 * sum(lags):
            for row, (seq, u, lag) in enumerate(zip(seqs, uptos, lags)):
                if lag:
                    self._pass([seq], [u], row0=row)
        else:
            self._pass(seqs, [max(u, s.draft_valid) for s, u in zip(seqs, uptos)])

    @torch.inference_mode()
    def propose(self, seqs: list[Sequence], k: int) -> list[list[int]]:
        r = self.runner
        if k == 0 or not seqs:
            return [[] for _ in seqs]
        dev = r.device
        n = [len(s.tokens) for s in seqs]
        behind = [i for i, s in enumerate(seqs) if n[i] - 1 - s.draft_valid > WINDOW]
        if behind:
            # Prime prompts in full (one batched pass when several rows need it), then keep only
            # the last WINDOW generated positions to rebuild; the stretch before them is masked.
            self._refill(seqs, [min(s.prompt_len, n[i] - 2) if i in behind else s.draft_valid
                                for i, s in enumerate(seqs)])
            for i in behind:
                s, start = seqs[i], n[i] - WINDOW
                if start > s.draft_valid + 1:
                    lo, hi = s.draft_gap
                    s.draft_gap = (s.draft_valid if hi <= lo + 1 else lo, start)
                    s.draft_valid = start - 1
        # One pass up to each row's last position, whose output is draft 1; rows far behind the
        # others (a newcomer's prompt) first catch up alone so that the pass pads little.
        lags = [m - 1 - s.draft_valid for m, s in zip(n, seqs)]
        if max(lags) > SHORT_REFILL and len(seqs) * max(lags) > 2 * sum(lags):
            for row, (seq, m, lag) in enumerate(zip(seqs, n, lags)):
                if lag > SHORT_REFILL:
                    self._pass([seq], [m - 2], row0=row)
        logits, hidden = self._pass(seqs, [m - 1 for m in n])
        gaps = self._gaps(seqs)
        last = torch.tensor([m - 1 for m in n], device=dev)  # (B,) position of draft 1's input
        drafts = [logits.argmax(-1)]  # (B,)
        for i in range(2, k + 1):
            p = (last + i - 1)[:, None]  # (B, 1)
            logits, hidden = r.draft(drafts[-1][:, None], hidden[:, None], p, gaps=gaps)
            drafts.append(logits.argmax(-1))
        return torch.stack(drafts, dim=1).tolist()  # (B, K)

    def release(self, request_id: str) -> None:
        pass
