"""Fast paths of the scoring hot spots give exactly what the slow paths give (random inputs)."""

import random

import pytest
from rapidfuzz import fuzz

import minuscule.markup.text as text_mod
from minuscule.markup import CellSpec, build_grid

ALPHABET = "ab c\t\n_*<>/brBI\u2019\u2014\u00b5e\u0301\uff3f x"
# Whole markers, so that tags, emphasis and whitespace runs meet often: "*<b>*x*</b>*" becomes bold
# only after its tags go.
PIECES = ["<b>", "</b>", "<i>", "</i>", "<br>", "<br/>", "**", "__", "*", "_", " ", "  ", "\n", "\t \n", "x", "y z",
          "\u2019", "e\u0301", "\u00a0", "\u2003"]


def _slow_normalize(text: str) -> str:
    """normalize_text's marker steps run unconditionally (the function before its fast path)."""
    for pattern, repl in ((text_mod._BR, " "), (text_mod._BOLD_STARS, r"\1"), (text_mod._BOLD_UNDERSCORES, r"\1"),
                          (text_mod._HTML_B, ""), (text_mod._HTML_I, ""), (text_mod._PAIRED_DOUBLE, r"\2"),
                          (text_mod._PAIRED_SINGLE, r"\2"), (text_mod._SPACES, " ")):
        text = pattern.sub(repl, text)
    return text_mod.unicodedata.normalize("NFC", text).translate(text_mod._CHAR_MAP)


def test_normalize_fast_path_matches_every_step():
    rng = random.Random(7)
    samples = ["plain ascii  text", " lead and trail ", "caf\u00e9 \u2019q\u2019", "e\u0301", "a_b_c", "**x**", "<br>"]
    samples += ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 30))) for _ in range(3000)]
    samples += ["".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 16))) for _ in range(5000)]
    samples += ["*<b>*x*</b>*", "_<i>_y_</i>_", "*<br>*"]
    for sample in samples:
        assert text_mod.normalize_text(sample) == _slow_normalize(sample), repr(sample)


def test_substring_is_a_full_partial_ratio():
    rng = random.Random(3)
    for _ in range(500):
        page = "".join(rng.choice("abcd ") for _ in range(rng.randrange(1, 80)))
        i = rng.randrange(len(page))
        query = page[i : i + rng.randrange(1, 20)]
        assert fuzz.partial_ratio(query, page) == 100


def _bulk_neighbours(spans, grid):
    """The all-cells scan the lazy per-cell relations replaced, kept as the reference."""
    height, width = len(grid), len(grid[0])
    rel = {name: {k: set() for k in spans} for name in ("up", "down", "left", "right")}

    def first(key, slots):
        return next((s for s in slots if s is not None and s != key), None)

    for key, (rowspan, colspan) in spans.items():
        r0, c0 = key
        for r in range(r0, min(r0 + rowspan, height)):
            for name, slots in (("right", grid[r][c0 + colspan :]), ("left", reversed(grid[r][:c0]))):
                if (hit := first(key, slots)) is not None:
                    rel[name][key].add(hit)
        for c in range(c0, min(c0 + colspan, width)):
            for name, rows in (("down", range(r0 + rowspan, height)), ("up", range(r0 - 1, -1, -1))):
                if (hit := first(key, (grid[r][c] for r in rows))) is not None:
                    rel[name][key].add(hit)
    return rel


@pytest.mark.parametrize("seed", range(40))
def test_lazy_relations_equal_the_bulk_scan(seed):
    rng = random.Random(seed)
    rows = [[CellSpec(f"{r}.{i}", rng.choice([1, 1, 1, 2, 3]), rng.choice([1, 1, 1, 2, 3]), rng.random() < 0.2)
             for i in range(rng.randrange(0, 5))] for r in range(rng.randrange(1, 7))]
    grid = build_grid(rows)
    if grid is None:
        return
    bulk = _bulk_neighbours(grid.spans, grid.occupancy)
    for name in ("up", "down", "left", "right"):
        assert getattr(grid, name) == {k: frozenset(v) for k, v in bulk[name].items()}
    for pos in grid.cells:
        assert grid.top_headings(pos) == _walk(grid, bulk["up"], pos)
        assert grid.left_headings(pos) == _walk(grid, bulk["left"], pos)


def _walk(grid, relation, start):
    """Breadth-first walk over a bulk relation: headings met, else the cells where it stops."""
    found, ends, seen, queue = set(), set(), {start}, [start]
    while queue:
        cur = queue.pop(0)
        if cur in grid.headings:
            found.add(cur)
        if not relation[cur]:
            ends.add(cur)
        for nxt in relation[cur] - seen:
            seen.add(nxt)
            queue.append(nxt)
    return frozenset((found - {start}) or (ends - {start}))


def _full_trailing_repeats(text, max_ngram=5):
    flat = text_mod._SPACES.sub(" ", text)
    counts = []
    for size in range(1, max_ngram + 1):
        n, pos = 0, len(flat) - size
        while size <= len(flat) and pos >= 0 and flat[pos : pos + size] == flat[-size:]:
            n, pos = n + 1, pos - size
        counts.append(n)
    return counts


@pytest.mark.parametrize("seed", range(30))
def test_trailing_repeats_read_from_the_tail_equal_the_whole_text(seed):
    rng = random.Random(seed)
    head = "".join(rng.choice("ab \n\t") for _ in range(rng.randrange(0, 6000)))
    unit = rng.choice(["ab", "a", " ", "ab \n", "abcab", "x\t\t"])
    # loops that end well inside the 4096-character tail, straddle its start, or fill it
    text = head + unit * rng.choice([0, 3, 700, 1300, 2100, 5000]) + rng.choice(["", " ", "  \n "])
    assert text_mod.trailing_repeats(text) == _full_trailing_repeats(text)


def test_has_alnum_agrees_with_alnum_count():
    for sample in ["", " _ ", "__", "x", "\u00e9", "\u0660", "\u00b2", "$$ \\ $$", "_a_"]:
        assert text_mod.has_alnum(sample) == (text_mod.alnum_count(sample) > 0), repr(sample)


def test_collapse_spaces_is_the_whitespace_regex_on_every_code_point():
    import re
    import sys

    spaces = [chr(c) for c in range(sys.maxunicode + 1) if re.fullmatch(r"\s", chr(c)) or chr(c).isspace()]
    assert 20 < len(spaces) < 40
    rng = random.Random(5)
    pool = spaces + ["a", "b", "\u00e9", "\u200b", "\ufeff"]  # zero-width chars are not whitespace to either
    samples = ["", " ", "a", " a ", *spaces, *("x" + s + "y" for s in spaces)]
    samples += ["".join(rng.choice(pool) for _ in range(rng.randrange(0, 12))) for _ in range(5000)]
    for sample in samples:
        assert text_mod.collapse_spaces(sample) == re.sub(r"\s+", " ", sample), repr(sample)


def _collapse_loops_plain(text, max_period=8):
    out = []
    for line in text.split("\n"):
        line = line.strip()
        if not line:
            continue
        out.append(line)
        for period in range(1, max_period + 1):
            if len(out) >= 2 * period and out[-period:] == out[-2 * period : -period]:
                del out[-period:]
                break
    return "\n".join(out)


def test_collapse_loops_with_its_precheck_equals_the_plain_scan():
    from minuscule.rewards.page import collapse_loops

    rng = random.Random(9)
    for _ in range(2000):
        text = "\n".join(rng.choice(["a", "b", "c", " a", ""]) for _ in range(rng.randrange(0, 40)))
        assert collapse_loops(text) == _collapse_loops_plain(text)


def test_presence_checks_with_pruned_alignment_equal_the_full_score():
    from minuscule.checks import parse_test

    rng = random.Random(13)

    def reference(test, page):
        """The check's verdict and message from one unpruned partial_ratio."""
        query, text = test.text, text_mod.normalize_text(page)
        if not test.case_sensitive:
            query, text = query.lower(), text.lower()
        threshold = 1.0 - test.max_diffs / (len(query) or 1)
        score = fuzz.partial_ratio(query, text) / 100.0
        return (score >= threshold) == (test.type == "present"), f"{score:.3f}"

    for i in range(3000):
        page = "".join(rng.choice(["ab", "ba", "c", " ", "abc", "Ab"]) for _ in range(rng.randrange(0, 30)))
        query = "".join(rng.choice("abcA ") for _ in range(rng.randrange(1, 12))).strip() or "a"
        kind = rng.choice(["present", "absent"])
        test = parse_test({"pdf": "p.pdf", "page": 1, "id": f"t{i}", "type": kind, "text": query,
                           "max_diffs": rng.choice([0, 1, 2, 3]), "case_sensitive": rng.random() < 0.7})
        result = test.run(page)
        passed, score = reference(test, page)
        assert result.passed == passed, (kind, query, page)
        if result.explanation:  # failures quote the best score
            assert f"match {score} " in result.explanation, (result.explanation, score)
