"""Anti-loop guards: sliding-window no-repeat n-gram ban and the repetition stop, kept incrementally per request.

Both act on the generated tokens only (an OCR prompt is mostly image placeholders). The verifier
feeds every committed token through `append`, so speculative and plain decoding see the same
guard state at every position.
"""

from __future__ import annotations

from minuscule.engine.config import GuardConfig


class GuardState:
    """Per-request guard state over the generated tokens.

    No-repeat n-gram (DeepSeek-OCR's NoRepeatNGramLogitsProcessor semantics): with n = ngram_size,
    the next token t is banned when the last n-1 tokens followed by t form an n-gram that starts
    within the last `window` tokens, unless t is exempt. An index from (n-1)-gram to the starts of
    its earlier occurrences keeps each check O(occurrences) instead of O(window).

    Repetition stop: with P = repeat_period and R = repeat_count, the request stops once its last
    P·R tokens repeat one pattern of at most P tokens (a 35-token loop ten times over, or a shorter
    loop over as many tokens). `runs[p]` counts consecutive tokens equal to the token p places
    back, so the last P·R tokens have period p exactly when runs[p] >= P·R - p.
    """

    def __init__(self, cfg: GuardConfig):
        self.cfg = cfg
        self.tokens: list[int] = []
        self.exempt = frozenset(cfg.exempt_ids)
        self._index: dict[tuple[int, ...], list[tuple[int, int]]] = {}  # prefix -> [(start, next token)]
        self._runs = [0] * (cfg.repeat_period + 1)

    def banned(self) -> set[int]:
        """Tokens the no-repeat rule forbids as the next one."""
        n = self.cfg.ngram_size
        seq = self.tokens
        if n == 0 or len(seq) < n - 1:
            return set()
        hits = self._index.get(tuple(seq[len(seq) - n + 1:]))
        if not hits:
            return set()
        # The reference scans n-gram starts from len - window on.
        first = len(seq) - self.cfg.window
        return {t for s, t in hits if s >= first} - self.exempt

    def is_banned(self, token: int) -> bool:
        return token in self.banned() if self._index else False

    def append(self, token: int) -> bool:
        """Record a committed token; True when it completes the repetition pattern (stop here)."""
        seq = self.tokens
        n = self.cfg.ngram_size
        seq.append(token)
        if n and len(seq) >= n:
            start = len(seq) - n
            self._index.setdefault(tuple(seq[start:start + n - 1]), []).append((start, token))
        period, count = self.cfg.repeat_period, self.cfg.repeat_count
        if not period or not count:
            return False
        stop = False
        last = len(seq) - 1
        span = period * count
        runs = self._runs
        for p in range(1, min(period, last) + 1):
            runs[p] = runs[p] + 1 if seq[last - p] == token else 0
            if runs[p] >= span - p:
                stop = True
        return stop
