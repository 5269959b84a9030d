"""The test record shared by every olmOCR-Bench check: fields, validation, loading from JSONL."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from minuscule.errors import InputError

if TYPE_CHECKING:
    from minuscule.checks.render import MathRenderer

TEST_TYPES = ("present", "absent", "order", "table", "math", "baseline")
COMMON_FIELDS = frozenset({"pdf", "page", "id", "type", "max_diffs", "checked", "url"})


@dataclass(frozen=True)
class CheckResult:
    """Verdict of one test on one Markdown text, with a one-line reason (empty when passed)."""

    passed: bool
    explanation: str = ""


@dataclass(frozen=True, kw_only=True)
class BenchTest:
    """Fields every test has. Text fields of subclasses hold the normalised form the check uses;
    `to_json()` returns the record as it was read."""

    pdf: str
    page: int
    id: str
    type: str
    max_diffs: int = 0
    checked: str | None = None
    url: str | None = None
    record: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def run(self, markdown: str, renderer: "MathRenderer | None" = None) -> CheckResult:
        raise NotImplementedError

    def to_json(self) -> dict[str, Any]:
        return json.loads(json.dumps(self.record))

    @property
    def key(self) -> tuple[str, int]:
        """(pdf, page): the prediction this test reads."""
        return (self.pdf, self.page)


# type name -> ({field: default or REQUIRED}, build(field values, common fields) -> test)
REQUIRED = object()
_REGISTRY: dict[str, tuple[dict[str, Any], Callable[[dict[str, Any], dict[str, Any]], BenchTest]]] = {}


def register(types: tuple[str, ...], fields: dict[str, Any]):
    """Declare the extra fields of some test types and the function that builds them."""

    def wrap(build: Callable[[dict[str, Any], dict[str, Any]], BenchTest]):
        for name in types:
            _REGISTRY[name] = (fields, build)
        return build

    return wrap


def _where(record: Mapping[str, Any]) -> str:
    return f"test {record.get('id')!r}" if isinstance(record, Mapping) and record.get("id") else "test record"


def parse_test(record: Mapping[str, Any]) -> BenchTest:
    """Build a test from one JSON object of the olmOCR-Bench schema. Raises InputError when invalid."""
    where = _where(record)
    if not isinstance(record, Mapping):
        raise InputError(where, "not a JSON object")
    kind = record.get("type")
    if kind in ("format", "footnote"):
        raise InputError(where, f"test type {kind!r} is not supported (not used by the released benchmark)")
    if kind not in _REGISTRY:
        raise InputError(where, f"unknown test type {kind!r}; expected one of {', '.join(TEST_TYPES)}")
    extra, build = _REGISTRY[kind]
    unknown = sorted(set(record) - COMMON_FIELDS - set(extra))
    if unknown:
        raise InputError(where, f"unknown field(s) for a {kind} test: {', '.join(unknown)}")
    missing = [k for k in ("pdf", "page", "id") if k not in record]
    missing += [k for k, default in extra.items() if default is REQUIRED and k not in record]
    if missing:
        raise InputError(where, f"missing field(s): {', '.join(missing)}")
    pdf, page, test_id, max_diffs = record["pdf"], record["page"], record["id"], record.get("max_diffs", 0)
    if not isinstance(pdf, str) or not pdf:
        raise InputError(where, "'pdf' must be a non-empty string")
    if not isinstance(test_id, str) or not test_id:
        raise InputError(where, "'id' must be a non-empty string")
    if not isinstance(page, int) or isinstance(page, bool):
        raise InputError(where, "'page' must be an integer")
    if not isinstance(max_diffs, int) or max_diffs < 0:
        raise InputError(where, "'max_diffs' must be an integer >= 0")
    common = {
        "pdf": pdf,
        "page": page,
        "id": test_id,
        "type": kind,
        "max_diffs": max_diffs,
        "checked": record.get("checked"),
        "url": record.get("url"),
        "record": dict(record),
    }
    values = {k: record.get(k, d) for k, d in extra.items()}
    try:
        return build(values, common)
    except InputError:
        raise
    except (TypeError, ValueError) as exc:
        raise InputError(where, str(exc)) from None


def need_str(values: Mapping[str, Any], name: str) -> str:
    """The named field as a string; a ValueError (reported as an InputError) otherwise."""
    value = values[name]
    if not isinstance(value, str):
        raise ValueError(f"'{name}' must be a string")
    return value


def load_tests(path: str | Path) -> list[BenchTest]:
    """All tests of a JSONL file (blank lines skipped). Duplicate ids and bad lines are InputErrors."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(str(path), exc.strerror or "cannot be read") from None
    except UnicodeDecodeError:
        raise InputError(str(path), "not UTF-8 text") from None
    tests: list[BenchTest] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{number}", f"invalid JSON ({exc.msg})") from None
        try:
            test = parse_test(record)
        except InputError as exc:
            raise InputError(f"{path}:{number}", exc.reason) from None
        if test.id in seen:
            raise InputError(f"{path}:{number}", f"duplicate test id {test.id!r}")
        seen.add(test.id)
        tests.append(test)
    return tests
