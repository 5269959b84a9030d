"""`minuscule reward`: score one predicted page against its reference with the GRPO reward."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from minuscule.errors import InputError, MissingExtraError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pred", type=Path, required=True, help="predicted Markdown of one page")
    parser.add_argument("--ref", type=Path, required=True, help="reference Markdown of the same page")
    parser.add_argument("--tests", type=Path, help="olmOCR-Bench JSONL tests; from a file covering several pages, "
                                                   "those whose pdf name matches the reference's name are used")
    parser.add_argument("--json", action="store_true", help="print {reward, terms, notes} as JSON")
    parser.add_argument("--render-math", action="store_true",
                        help="compare formulas by KaTeX rendering in Chromium (default: normalised LaTeX only)")
    parser.add_argument("--exact-teds", action="store_true", help="tables by APTED TEDS instead of the row-aligned fast form")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(str(path), "no such file") from None
    except IsADirectoryError:
        raise InputError(str(path), "is a directory, expected a Markdown file") from None
    except OSError as exc:
        raise InputError(str(path), exc.strerror or "cannot be read") from None
    except UnicodeDecodeError:
        raise InputError(str(path), "not UTF-8 text") from None


def page_tests(path: Path, ref: Path) -> list:
    """The tests of `path` that concern the reference page: all of them when the file covers one
    page, else those whose pdf has the reference's file stem (synth: pages/p000003.pdf ↔ p000003.md)."""
    from minuscule.checks import load_tests

    tests = load_tests(path)
    keys = {t.key for t in tests}
    if len(keys) <= 1:
        return tests
    mine = [t for t in tests if Path(t.pdf).stem == ref.stem]
    if not mine:
        raise InputError(str(path), f"has tests for {len(keys)} pages, none for a pdf named {ref.stem!r}")
    return mine


def run(args: argparse.Namespace) -> int:
    from minuscule.rewards.config import RewardConfig
    from minuscule.rewards.score import RewardScorer

    try:
        pred, ref = _read(args.pred), _read(args.ref)
        tests = page_tests(args.tests, args.ref) if args.tests else None
        with RewardScorer(RewardConfig(exact_teds=args.exact_teds), render_math=args.render_math) as scorer:
            breakdown = scorer.score(pred, ref, tests)
    except (InputError, MissingExtraError) as exc:
        print(f"minuscule reward: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(breakdown.to_json(), ensure_ascii=False))
        return 0
    print(f"reward {breakdown.reward:.4f}")
    for name, term in breakdown.terms.items():
        state = f"raw {term.raw:.4f}  floored {term.floored:.4f}" if term.applied else "not applicable"
        print(f"  {name:<11} {state}")
    for note in breakdown.notes:
        print(f"  - {note}")
    return 0
