"""Page selection strings such as `1-3,7` (1-based, inclusive ranges)."""

from __future__ import annotations

import re

_PART = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


def parse_pages(spec: str | None) -> list[int] | None:
    """`"1-3,7"` → `[1, 2, 3, 7]` (sorted, unique); None or empty → None (all pages).

    Raises ValueError with a message that can be shown as is.
    """
    if spec is None or not spec.strip():
        return None
    pages: set[int] = set()
    for part in spec.split(","):
        m = _PART.match(part)
        if not m:
            raise ValueError(f"bad page selection {spec!r}: expected numbers and ranges like 1-3,7")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if lo < 1 or hi < lo:
            raise ValueError(f"bad page range {part.strip()!r}: pages are numbered from 1 and ranges go upwards")
        pages.update(range(lo, hi + 1))
    return sorted(pages)


def check_pages(selected: list[int] | None, count: int) -> list[int]:
    """The 1-based pages to process for a document of `count` pages; out-of-range pages raise ValueError."""
    if selected is None:
        return list(range(1, count + 1))
    missing = [p for p in selected if p > count]
    if missing:
        shown = ",".join(map(str, missing[:5])) + ("…" if len(missing) > 5 else "")
        raise ValueError(f"page {shown} out of range (document has {count} page{'s' if count != 1 else ''})")
    return selected
