"""N-gram proposer: prompt-free lookup over the generated text (free; good on tables and repeated markup).

The last n generated tokens (n from ngram_max down to ngram_min) are looked up among earlier
positions; the tokens that followed their latest earlier occurrence are proposed, continuing the
copy into the proposal itself when it runs past the end (a loop repeats with its period).
"""

from __future__ import annotations

from minuscule.engine.request import Sequence


class _Index:
    """Latest end position of every n-gram of the generated tokens, for each n, up to `upto`."""

    def __init__(self, sizes: range):
        self.sizes = sizes
        self.last: dict[int, dict[tuple[int, ...], int]] = {n: {} for n in sizes}
        self.upto = 0  # positions < upto are indexed

    def extend(self, gen: list[int], end: int) -> None:
        for i in range(self.upto, end):
            for n in self.sizes:
                if i + 1 >= n:
                    self.last[n][tuple(gen[i + 1 - n:i + 1])] = i
        self.upto = max(self.upto, end)


class NgramProposer:
    needs_hidden = False

    def __init__(self, ngram_min: int = 2, ngram_max: int = 4):
        self.sizes = range(ngram_max, ngram_min - 1, -1)
        self._index: dict[str, _Index] = {}

    def propose(self, seqs: list[Sequence], k: int) -> list[list[int]]:
        out = []
        for seq in seqs:
            gen = seq.generated
            idx = self._index.setdefault(seq.request_id, _Index(self.sizes))
            # Index every n-gram ending before the last token, so the current suffix never finds itself.
            idx.extend(gen, len(gen) - 1)
            drafts: list[int] = []
            for n in self.sizes:
                if len(gen) < n:
                    continue
                end = idx.last[n].get(tuple(gen[len(gen) - n:]))
                if end is not None:
                    ext = list(gen[end + 1:])
                    while len(ext) < k:  # the match implies a period: continue it
                        ext.append(ext[len(ext) - (len(gen) - 1 - end)])
                    drafts = ext[:k]
                    break
            if not drafts:
                drafts = [gen[-1] if gen else 0] * k  # nothing to copy; verification rejects it cheaply
            out.append(drafts)
        return out

    def release(self, request_id: str) -> None:
        self._index.pop(request_id, None)
