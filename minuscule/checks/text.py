"""present / absent (fuzzy partial match) and order (fuzzy before/after) checks."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz

from minuscule.checks.base import REQUIRED, BenchTest, CheckResult, need_str, register
from minuscule.errors import MissingExtraError
from minuscule.markup.text import normalize_cached, normalize_text


@dataclass(frozen=True, kw_only=True)
class PresenceTest(BenchTest):
    """`present`: the text occurs (fuzzily) in the page; `absent`: it does not.

    The score is rapidfuzz's partial_ratio (best Indel alignment of the shorter string inside the
    longer); it must reach 1 - max_diffs/len(text). With max_diffs = 0 that is an exact substring.
    """

    text: str
    case_sensitive: bool = True
    first_n: int | None = None
    last_n: int | None = None

    def run(self, markdown: str, renderer: Any = None) -> CheckResult:
        query = self.text
        page = normalize_cached(markdown)
        if not self.case_sensitive:
            query, page = query.lower(), _lower_cached(page)
        # Zero counts as "not set", as in the published scorer.
        if self.first_n and self.last_n:
            page = page[: self.first_n] + page[-self.last_n :]
        elif self.first_n:
            page = page[: self.first_n]
        elif self.last_n:
            page = page[-self.last_n :]
        threshold = 1.0 - self.max_diffs / (len(query) or 1)
        # An exact occurrence is partial_ratio's 100; the substring test (C, no alignment) settles
        # most present tests of a good page at a fraction of the alignment's cost. Otherwise the
        # alignment prunes with a cutoff a hair below the threshold: scores at or above it are
        # exact, and below it only a failing `present` needs the real score, for its message.
        if query in page:
            score = 1.0
        else:
            score = fuzz.partial_ratio(query, page, score_cutoff=max(0.0, 100.0 * threshold - 1e-6)) / 100.0
            if score < threshold and self.type == "present":
                score = fuzz.partial_ratio(query, page) / 100.0
        if self.type == "present":
            if score >= threshold:
                return CheckResult(True, "")
            return CheckResult(False, f"expected {_short(query)!r}: best match {score:.3f} < threshold {threshold:.3f}")
        if score < threshold:
            return CheckResult(True, "")
        return CheckResult(False, f"expected absence of {_short(query)!r}: best match {score:.3f} >= threshold {threshold:.3f}")


@register(("present", "absent"), {"text": REQUIRED, "case_sensitive": True, "first_n": None, "last_n": None})
def _build_presence(values: dict[str, Any], common: dict[str, Any]) -> PresenceTest:
    text = normalize_text(need_str(values, "text"))
    if not text.strip():
        raise ValueError("'text' is empty")
    for name in ("first_n", "last_n"):
        if values[name] is not None and (not isinstance(values[name], int) or values[name] < 0):
            raise ValueError(f"'{name}' must be null or an integer >= 0")
    return PresenceTest(
        **common,
        text=text,
        case_sensitive=bool(values["case_sensitive"]),
        first_n=values["first_n"],
        last_n=values["last_n"],
    )


@dataclass(frozen=True, kw_only=True)
class OrderTest(BenchTest):
    """`order`: some occurrence of `before` starts strictly before some occurrence of `after`.

    Occurrences are Levenshtein matches within max_diffs (fuzzysearch's find_near_matches,
    overlapping matches merged as it does); always case-sensitive.
    """

    before: str
    after: str

    def run(self, markdown: str, renderer: Any = None) -> CheckResult:
        page = normalize_cached(markdown)
        before = _match_starts(self.before, page, self.max_diffs)
        if not before:
            return CheckResult(False, f"'before' text {_short(self.before)!r} not found (max distance {self.max_diffs})")
        after = _match_starts(self.after, page, self.max_diffs)
        if not after:
            return CheckResult(False, f"'after' text {_short(self.after)!r} not found (max distance {self.max_diffs})")
        if min(before) < max(after):
            return CheckResult(True, "")
        return CheckResult(False, f"{_short(self.before)!r} never appears before {_short(self.after)!r}")


@lru_cache(maxsize=1024)
def _match_starts(needle: str, text: str, max_dist: int) -> tuple[int, ...]:
    """Starts of the (consolidated) matches; cached, as neighbouring order tests share their texts
    (A before B, B before C) and fuzzy search is pure Python here."""
    if max_dist == 0:
        # Exact search returns every occurrence; only the first and last can decide the verdict.
        first = text.find(needle)
        return () if first < 0 else (first, text.rfind(needle))
    try:
        from fuzzysearch import find_near_matches
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError("fuzzysearch (order tests with max_diffs > 0)", "eval") from exc
    if not _may_match(needle, text, max_dist):
        return ()
    return tuple(m.start for m in find_near_matches(needle, text, max_l_dist=max_dist))


def _may_match(needle: str, text: str, max_dist: int) -> bool:
    """False only when no substring of `text` is within `max_dist` edits of `needle` (edlib's infix
    distance, in C), in which case fuzzysearch, which finds every such substring, finds none: the
    pure-Python search is skipped, the verdict is the same. True when edlib is missing or declines."""
    try:
        import edlib
    except ImportError:
        return True
    try:
        return edlib.align(needle, text, mode="HW", task="distance", k=max_dist)["editDistance"] >= 0
    except (ValueError, TypeError):  # e.g. more than 256 distinct characters
        return True


@register(("order",), {"before": REQUIRED, "after": REQUIRED})
def _build_order(values: dict[str, Any], common: dict[str, Any]) -> OrderTest:
    before = normalize_text(need_str(values, "before"))
    after = normalize_text(need_str(values, "after"))
    if not before.strip() or not after.strip():
        raise ValueError("'before' and 'after' must not be empty")
    if common["max_diffs"] > len(before) // 2 or common["max_diffs"] > len(after) // 2:
        raise ValueError("'max_diffs' is more than half of 'before' or 'after'")
    return OrderTest(**common, before=before, after=after)


@lru_cache(maxsize=64)
def _lower_cached(text: str) -> str:
    return text.lower()


def _short(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[:n] + "..."
