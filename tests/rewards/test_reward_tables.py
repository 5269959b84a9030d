"""Fast TEDS against omnidoc's APTED TEDS, table matching and the table term."""

from __future__ import annotations

import random

import pytest

from minuscule.rewards.page import Table, split_page
from minuscule.rewards.tables import match_tables, teds_exact, teds_fast
from minuscule.rewards.terms import table_term
from reward_pages import REFERENCE, synth_pages


def _tables():
    out = list(split_page(REFERENCE).tables)
    for _, ref, _ in synth_pages():
        out.extend(split_page(ref).tables)
    return out


def _variants(table: Table, rng: random.Random) -> list[Table]:
    rows = [list(r) for r in table.rows]
    out = []
    dropped = [r for i, r in enumerate(rows) if i != rng.randrange(len(rows))]
    out.append(dropped)
    swapped = [r[:] for r in rows]
    k = rng.randrange(len(swapped))
    if len(swapped[k]) > 1:
        swapped[k][0], swapped[k][1] = swapped[k][1], swapped[k][0]
    out.append(swapped)
    out.append([[(t[:-1], rs, cs) for t, rs, cs in r] for r in rows])  # every cell one character short
    out.append([r[:-1] for r in rows])  # last column gone
    out.append(rows + [rows[-1]])  # a row repeated
    out.append([[(t, 1, 1) for t, _, _ in r] for r in rows])  # spans lost
    return [Table(tuple(tuple(r) for r in v), "html") for v in out]


def test_fast_teds_equals_exact_teds_on_typical_corruptions():
    rng = random.Random(3)
    checked = 0
    for table in _tables()[:8]:
        assert teds_fast(table, table) == teds_exact(table, table) == 1.0
        for variant in _variants(table, rng):
            assert teds_fast(variant, table) == pytest.approx(teds_exact(variant, table), abs=1e-9)
            checked += 1
    assert checked >= 40


def test_fast_teds_never_exceeds_exact_teds_on_scrambled_tables():
    rng = random.Random(5)
    table = split_page(REFERENCE).tables[0]
    cells = [c for row in table.rows for c in row]
    for _ in range(12):
        shuffled = cells[:]
        rng.shuffle(shuffled)
        cut = sorted(rng.sample(range(1, len(shuffled)), 3))
        rows = [shuffled[a:b] for a, b in zip([0] + cut, cut + [len(shuffled)])]
        pred = Table(tuple(tuple(r) for r in rows), "html")
        assert teds_fast(pred, table) <= teds_exact(pred, table) + 1e-9


def test_empty_tables_score_zero_like_the_published_code():
    empty = Table((), "html")
    table = split_page(REFERENCE).tables[0]
    assert teds_fast(empty, table) == 0.0 == teds_exact(empty, table)
    assert teds_fast(empty, empty) == 0.0


def test_tables_are_matched_one_to_one_by_content():
    page = split_page(REFERENCE)
    a = page.tables[0]
    b = Table((((("x", 1, 1),) * 3),) * 4, "html")
    assert match_tables((b, a), (a,)) == [(0, 1)]
    assert match_tables((a,), (a, b)) in ([(0, 0), (1, None)],)
    assert match_tables((), (a, b)) == [(0, None), (1, None)]


def test_table_term_averages_over_reference_tables_and_reads_pipe_tables():
    two = REFERENCE + "\n<table><tr><td>Total</td><td>23.6</td></tr></table>\n"
    ref = split_page(two)
    assert table_term(split_page(two), ref).raw == 1.0
    only_first = table_term(split_page(REFERENCE), ref)
    assert only_first.raw == pytest.approx(0.5)
    assert "2 reference table(s), 1 predicted" in only_first.note
    pipe = "| Total | 23.6 |\n| --- | --- |\n"
    pred = split_page(REFERENCE + "\n" + pipe)
    assert pred.pipe_tables == 1
    assert table_term(pred, ref).raw == pytest.approx(1.0)


def test_table_term_with_exact_teds_matches_fast_on_a_dropped_row():
    pred = split_page(REFERENCE.replace("<tr><td>Oats</td><td>4.8</td><td>5.1</td><td>0.44</td></tr>\n", ""))
    ref = split_page(REFERENCE)
    fast, exact = table_term(pred, ref), table_term(pred, ref, exact=True)
    assert 0.7 < fast.raw < 1.0
    assert fast.raw == pytest.approx(exact.raw)
