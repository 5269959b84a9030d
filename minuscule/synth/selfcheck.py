"""The self-check olmOCR 2 applies to mined tests: keep only those that pass on the page's own reference."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SelfCheck:
    kept: list[dict]
    rejected: list[tuple[dict, str]]  # (record, why it failed or could not be parsed)


def keep_passing(records: list[dict], markdown: str, renderer=None) -> SelfCheck:
    """Run every record with `minuscule.checks` on `markdown` and split kept from rejected.

    Math tests are built from the reference's own `$$…$$` strings, so on their own reference they
    must pass on the exact-match path; one that does not is rejected here rather than sent to
    KaTeX (which would also start a second browser beside the page renderer).
    """
    from minuscule.checks import parse_test
    from minuscule.errors import InputError
    from minuscule.markup.math import extract_math

    formulas = set(extract_math(markdown))

    kept: list[dict] = []
    rejected: list[tuple[dict, str]] = []
    for record in records:
        try:
            test = parse_test(record)
        except InputError as exc:
            rejected.append((record, f"invalid: {exc.reason}"))
            continue
        if record.get("type") == "math" and record.get("math") not in formulas:
            rejected.append((record, "formula is not verbatim in the reference"))
            continue
        result = test.run(markdown, renderer)
        if result.passed:
            kept.append(record)
        else:
            rejected.append((record, result.explanation))
    return SelfCheck(kept, rejected)
