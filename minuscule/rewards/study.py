"""Corruption study: mean reward per systematic corruption of synthetic reference pages (one JSON object).

    python -m minuscule.rewards.study --synth DIR [--n 200] [--json out.json]

DIR is the output of `minuscule synth` (pages/<id>.md and tests.jsonl). Every page is scored as
it is ("clean") and under each corruption below; a corruption that leaves a page unchanged (say,
dropped rows on a page without tables) is not counted for that page.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

from minuscule.atomic import atomic_write
from minuscule.bench.env import cpu_reference_seconds, environment
from minuscule.errors import InputError, MissingExtraError
from minuscule.markup.math import find_formulas
from minuscule.markup.tables import html_tables

_ROW = re.compile(r"<tr\b.*?</tr>\s*", re.DOTALL | re.IGNORECASE)
_CELL = re.compile(r"<(td|th)\b[^>]*>.*?</\1>", re.DOTALL | re.IGNORECASE)
_TABLE = re.compile(r"<table\b.*?</table>", re.DOTALL | re.IGNORECASE)
_COMMAND = re.compile(r"\\[a-zA-Z]{2,}")


def _per_table(md: str, edit: Callable[[str], str]) -> str:
    return _TABLE.sub(lambda m: edit(m.group(0)), md)


def drop_rows(md: str, rng: random.Random) -> str:
    """Drop a third of each table's body rows (at least one), header row kept."""

    def edit(table: str) -> str:
        rows = list(_ROW.finditer(table))[1:]
        if not rows:
            return table
        gone = set(rng.sample(range(len(rows)), max(1, len(rows) // 3)))
        for k in sorted(gone, reverse=True):
            table = table[: rows[k].start()] + table[rows[k].end() :]
        return table

    return _per_table(md, edit)


def swap_cells(md: str, rng: random.Random) -> str:
    """In a third of each table's body rows (at least one), swap two neighbouring cells."""

    def edit(table: str) -> str:
        rows = [r for r in list(_ROW.finditer(table))[1:] if len(_CELL.findall(r.group(0))) >= 2]
        if not rows:
            return table
        for row in sorted(rng.sample(rows, max(1, len(rows) // 3)), key=lambda r: -r.start()):
            cells = list(_CELL.finditer(row.group(0)))
            k = rng.randrange(len(cells) - 1)
            a, b = cells[k], cells[k + 1]
            text = row.group(0)
            text = text[: a.start()] + b.group(0) + text[a.end() : b.start()] + a.group(0) + text[b.end() :]
            table = table[: row.start()] + text + table[row.end() :]
        return table

    return _per_table(md, edit)


def broken_latex(md: str, rng: random.Random) -> str:
    """In every formula: one closing brace dropped and one command's backslash lost."""
    out, last = [], 0
    for f in find_formulas(md):
        body = md[f.start : f.end]
        closes = [i for i, ch in enumerate(body) if ch == "}"]
        if closes:
            i = rng.choice(closes)
            body = body[:i] + body[i + 1 :]
        commands = list(_COMMAND.finditer(body))
        if commands:
            c = rng.choice(commands)
            body = body[: c.start()] + body[c.start() + 1 :]
        out.append(md[last : f.start])
        out.append(body)
        last = f.end
    out.append(md[last:])
    return "".join(out)


def pipe_tables(md: str, rng: random.Random) -> str:
    """Every HTML table written as a Markdown pipe table (spans lost: a spanned cell once, blanks after)."""

    def edit(table: str) -> str:
        grids = html_tables(table)
        if not grids:
            return table
        grid = grids[0]
        lines = []
        for r, row in enumerate(grid.occupancy):
            cells = [grid.cells[slot] if slot == (r, c) else "" for c, slot in enumerate(row)]
            lines.append("| " + " | ".join(cell.replace("|", "/").replace("\n", " ") for cell in cells) + " |")
            if r == 0:
                lines.append("|" + "|".join(" --- " for _ in row) + "|")
        return "\n".join(lines)

    return _per_table(md, edit)


def truncation(md: str, rng: random.Random) -> str:
    """The first half of the page (by characters)."""
    return md[: len(md) // 2]


def loop(md: str, rng: random.Random) -> str:
    """The first 60% of the lines, then the last of them repeated 300 times (a loop to the token limit)."""
    lines = md.split("\n")
    head = lines[: max(1, int(len(lines) * 0.6))]
    last = next((line for line in reversed(head) if line.strip()), "the end")
    return "\n".join(head + [last] * 300)


CORRUPTIONS: dict[str, Callable[[str, random.Random], str]] = {
    "clean": lambda md, rng: md,
    "swap_cells": swap_cells,
    "drop_rows": drop_rows,
    "broken_latex": broken_latex,
    "pipe_tables": pipe_tables,
    "truncation": truncation,
    "loop": loop,
}


def load_synth(folder: Path, n: int | None = None) -> list[tuple[str, str, list]]:
    """(page id, reference Markdown, tests) for the first n pages of a synth folder, tests grouped by page."""
    from minuscule.checks import load_tests

    pages = sorted((folder / "pages").glob("*.md"))
    if not pages:
        raise InputError(str(folder), "no pages/*.md; expected the output folder of `minuscule synth`")
    tests_path = folder / "tests.jsonl"
    by_page: dict[str, list] = {}
    if tests_path.exists():
        for test in load_tests(tests_path):
            by_page.setdefault(Path(test.pdf).stem, []).append(test)
    pages = pages[:n] if n else pages
    return [(p.stem, p.read_text(encoding="utf-8"), by_page.get(p.stem, [])) for p in pages]


def run_study(pages: list[tuple[str, str, list]], seed: int = 0, config=None) -> dict:
    """Score every page under every corruption; means per corruption and per term, timing per score."""
    from minuscule.rewards.score import score

    rewards: dict[str, list[float]] = {name: [] for name in CORRUPTIONS}
    terms: dict[str, dict[str, list[float]]] = {name: {} for name in CORRUPTIONS}
    wall, cpu = [], []
    cpu_by: dict[str, list[float]] = {name: [] for name in CORRUPTIONS}
    for page_id, ref, tests in pages:
        for name, corrupt in CORRUPTIONS.items():
            pred = corrupt(ref, random.Random(f"{seed}:{page_id}:{name}"))
            if name != "clean" and pred == ref:
                continue
            w0, c0 = time.perf_counter(), time.process_time()
            breakdown = score(pred, ref, tests, config)
            wall.append(time.perf_counter() - w0)
            cpu.append(time.process_time() - c0)
            cpu_by[name].append(cpu[-1])
            rewards[name].append(breakdown.reward)
            for term, value in breakdown.terms.items():
                terms[name].setdefault(term, []).append(value.raw)
    summary = {
        name: {
            "pages": len(values),
            "mean_reward": statistics.fmean(values) if values else None,
            "median_reward": statistics.median(values) if values else None,
            "mean_raw_terms": {t: round(statistics.fmean(v), 4) for t, v in terms[name].items()},
            "median_ms_cpu": 1e3 * statistics.median(cpu_by[name]) if cpu_by[name] else None,
        }
        for name, values in rewards.items()
    }
    return {
        "pages": len(pages),
        "corruptions": summary,
        "timing": {
            "scores": len(wall),
            "median_ms_wall": 1e3 * statistics.median(wall) if wall else None,
            "median_ms_cpu": 1e3 * statistics.median(cpu) if cpu else None,
            "p90_ms_cpu": 1e3 * statistics.quantiles(cpu, n=10)[-1] if len(cpu) > 1 else None,
            "math_rendering": False,
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minuscule.rewards.study", description=__doc__.splitlines()[0])
    parser.add_argument("--synth", type=Path, required=True, help="output folder of `minuscule synth`")
    parser.add_argument("--n", type=int, help="use the first N pages (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the corruptions (default 0)")
    parser.add_argument("--json", type=Path, help="also write the result to this file")
    args = parser.parse_args(argv)
    try:
        if args.n is not None and args.n < 1:
            raise InputError("--n", f"must be at least 1, got {args.n}")
        pages = load_synth(args.synth, args.n)
        env = environment("rapidfuzz", "edlib", "fuzzysearch")
        result = run_study(pages, args.seed)
        # The VM's speed drifts; a reference loop before and after brackets the run's timings.
        env["cpu_reference_s_after"] = cpu_reference_seconds()
    except (InputError, MissingExtraError) as exc:
        print(f"minuscule.rewards.study: {exc}", file=sys.stderr)
        return 2
    result["source"] = str(args.synth)
    result["env"] = env
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        atomic_write(args.json, text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
