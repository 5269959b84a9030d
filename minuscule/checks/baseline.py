"""baseline: the page output is not empty, not stuck repeating, and in the expected scripts; or a blank page stays blank."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from minuscule.checks.base import BenchTest, CheckResult, register
from minuscule.markup.text import alnum_count, has_alnum, trailing_repeats

_IMAGE = re.compile(r"!\[.*?\]\(.*?\)")
# CJK ideographs, kana and emoji: outside every benchmark page's script, so a sign of a broken decode.
_DISALLOWED = re.compile(
    "[\u4e00-\u9fff\u3040-\u309f\u30a0-\u30ff\U0001f600-\U0001f64f\U0001f300-\U0001f5ff\U0001f680-\U0001f6ff\U0001f1e0-\U0001f1ff]"
)
_HIGH = re.compile("[\u3040-\U0010ffff]")


@dataclass(frozen=True, kw_only=True)
class BaselineTest(BenchTest):
    """With max_length set (blank page): at most that many alphanumeric characters, nothing else.
    Otherwise: some alphanumeric text, no 1..5-character n-gram repeated more than max_repeats
    times at the very end, and (if asked) no CJK/kana/emoji characters."""

    max_length: int | None = None
    max_length_skips_image_alt_tags: bool = False
    max_repeats: int = 30
    check_disallowed_characters: bool = True

    def run(self, markdown: str, renderer: Any = None) -> CheckResult:
        if self.max_length is not None:
            text = _IMAGE.sub("", markdown) if self.max_length_skips_image_alt_tags else markdown
            n = alnum_count(text)
            if n > self.max_length:
                return CheckResult(False, f"{n} alphanumeric characters on a page expected to be blank (max {self.max_length})")
            return CheckResult(True, "")
        if not has_alnum(markdown):
            return CheckResult(False, "the text contains no alphanumeric characters")
        for size, count in enumerate(trailing_repeats(markdown, 5), start=1):
            if count > self.max_repeats:
                return CheckResult(False, f"text ends with {count} repeats of a {size}-character n-gram")
        # Every disallowed range lies at or above U+3040: an ASCII page (a C flag test) or one with
        # nothing that high (a one-range scan) is spared the seven-range class.
        if self.check_disallowed_characters and not markdown.isascii() and _HIGH.search(markdown):
            bad = _DISALLOWED.findall(markdown)
            if bad:
                return CheckResult(False, f"text contains disallowed characters {''.join(dict.fromkeys(bad))[:20]!r}")
        return CheckResult(True, "")


@register(
    ("baseline",),
    {"max_length": None, "max_length_skips_image_alt_tags": False, "max_repeats": 30, "check_disallowed_characters": True},
)
def _build_baseline(values: dict[str, Any], common: dict[str, Any]) -> BaselineTest:
    for name in ("max_length", "max_repeats"):
        value = values[name]
        if (value is not None or name == "max_repeats") and (not isinstance(value, int) or isinstance(value, bool)):
            raise ValueError(f"'{name}' must be an integer")
    return BaselineTest(
        **common,
        max_length=values["max_length"],
        max_length_skips_image_alt_tags=bool(values["max_length_skips_image_alt_tags"]),
        max_repeats=values["max_repeats"],
        check_disallowed_characters=bool(values["check_disallowed_characters"]),
    )


def synthesized_baseline(pdf: str) -> BaselineTest:
    """The default baseline test the harness adds for a PDF that has none of its own."""
    record = {"pdf": pdf, "page": 1, "id": f"{pdf}_baseline", "type": "baseline"}
    return BaselineTest(pdf=pdf, page=1, id=f"{pdf}_baseline", type="baseline", record=record)
