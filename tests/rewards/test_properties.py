"""Properties the reward must have: self-score 1, monotone in lost content, loops and empty output near 0, floors."""

from __future__ import annotations

import pytest

from minuscule.rewards import RewardConfig, score
from minuscule.rewards.config import TERMS
from reward_pages import PLAIN, REFERENCE, TESTS, synth_pages


def test_reference_scores_exactly_one_against_itself():
    for ref, tests in ((REFERENCE, TESTS), (PLAIN, None)):
        got = score(ref, ref, tests)
        assert got.reward == 1.0
        assert all(t.raw == 1.0 and t.floored == 1.0 for t in got.terms.values())
        assert got.notes == ()


def test_stored_synthetic_pages_score_one_against_themselves():
    for page_id, ref, tests in synth_pages():
        assert tests, page_id
        got = score(ref, ref, tests)
        assert got.reward == 1.0, (page_id, got.notes)


def _blocks(text: str) -> list[str]:
    return [b for b in text.split("\n\n") if b.strip()]


@pytest.mark.parametrize("which", ["hand-made", "synthetic"])
def test_removing_more_content_lowers_the_reward(which):
    pages = [("survey", REFERENCE, TESTS)] if which == "hand-made" else synth_pages()
    for page_id, ref, tests in pages:
        blocks = _blocks(ref)
        rewards = []
        for keep in range(len(blocks), -1, -1):  # drop blocks from the end, one more each time
            pred = "\n\n".join(blocks[:keep]) + "\n"
            rewards.append(score(pred, ref, tests).reward)
        assert rewards[0] == 1.0
        assert all(a > b for a, b in zip(rewards, rewards[1:]) if a > 0), (page_id, rewards)
        assert rewards[-1] < 0.05


def test_truncating_more_characters_never_raises_the_content_term():
    previous = 1.0
    for share in (0.0, 0.1, 0.25, 0.4, 0.55, 0.7, 0.85, 1.0):
        pred = REFERENCE[: int(len(REFERENCE) * (1 - share))]
        content = score(pred, REFERENCE).terms["content"].raw
        assert content <= previous
        previous = content
    assert previous == 0.0


@pytest.mark.parametrize("line", ["<tr><td>Rye</td><td>5.5</td><td>5.9</td><td>0.38</td></tr>",
                                  "The effect held for every crop except oats.", "1", "\\\\ \\hline"])
def test_a_looping_page_scores_near_zero_although_its_content_is_high(line):
    pred = REFERENCE + "\n" + "\n".join([line] * 300)
    got = score(pred, REFERENCE, TESTS)
    assert got.terms["content"].raw > 0.9
    assert got.terms["repetition"].raw < 0.05
    assert got.reward < 0.05
    assert any(n.startswith("repetition:") for n in got.notes)


def test_a_loop_that_runs_into_the_token_limit_inside_a_line_scores_zero():
    pred = REFERENCE[:900] + " and the" * 400
    got = score(pred, REFERENCE)
    assert got.terms["repetition"].raw == 0.0
    assert got.reward == 0.0


@pytest.mark.parametrize("empty", ["", "\n\n  \n"])
def test_empty_output_scores_near_zero(empty):
    assert score(empty, REFERENCE, TESTS).reward < 0.05
    assert score(empty, PLAIN).reward < 0.05


def test_floors_hold_for_broken_table_html_with_perfect_text():
    start = REFERENCE.index("<table>")
    end = REFERENCE.index("</table>") + len("</table>")
    broken = REFERENCE[:start] + "<table><tr><td>Wheat 7.1 <td><tr></table></tr>" + REFERENCE[end:]
    got = score(broken, REFERENCE)
    cfg = RewardConfig()
    table, structure = got.terms["table"], got.terms["structure"]
    assert table.raw < 0.1 and table.floored == cfg.floors["table"] == 0.1
    assert structure.raw < 1.0 and structure.floored >= 0.2
    assert got.terms["content"].raw == 1.0 and got.terms["formula"].raw == 1.0
    others = 1.0
    for name, term in got.terms.items():
        if name != "table":
            others *= term.floored
    assert got.reward == pytest.approx(0.1 * others)
    assert got.reward >= 0.1 * others - 1e-12


def test_every_floored_term_is_at_least_its_floor_and_the_reward_is_their_product():
    cfg = RewardConfig()
    for pred in ("", "# x", REFERENCE.replace("<table>", "| a | b |\n| --- | --- |\n| 1 | 2 |\n<table>"), REFERENCE[:400]):
        got = score(pred, REFERENCE, TESTS)
        product = 1.0
        for name, term in got.terms.items():
            assert term.floored == max(cfg.floors[name], term.raw)
            product *= term.floored
        assert got.reward == pytest.approx(product)


def test_terms_that_do_not_apply_are_one():
    got = score(PLAIN.replace("harbour", "harbor"), PLAIN)
    for name in ("formula", "table", "unit_tests"):
        assert got.terms[name].applied is False
        assert got.terms[name].raw == got.terms[name].floored == 1.0
    assert got.terms["content"].applied and got.terms["content"].raw < 1.0
    # Tables and formulas the reference lacks do not make those terms apply either.
    extra = PLAIN + "\n$$x^2$$\n\n<table><tr><td>1</td></tr></table>\n"
    got = score(extra, PLAIN)
    assert not got.terms["formula"].applied and not got.terms["table"].applied


def test_weights_are_exponents_and_zero_weight_removes_a_term():
    pred = REFERENCE.replace("Wheat", "Whaet")
    base = score(pred, REFERENCE)
    cfg = RewardConfig(weights={"table": 0.0})
    got = score(pred, REFERENCE, config=cfg)
    assert got.reward == pytest.approx(base.reward / base.terms["table"].floored)
    assert set(got.terms) == set(TERMS)


def test_removing_blocks_in_random_order_lowers_the_reward_step_by_step():
    import random

    for page_id, ref, tests in synth_pages():
        blocks = _blocks(ref)
        order = list(range(len(blocks)))
        random.Random(page_id).shuffle(order)
        gone: set[int] = set()
        previous = score(ref, ref, tests).reward
        for k in order:
            gone.add(k)
            pred = "\n\n".join(b for i, b in enumerate(blocks) if i not in gone) + "\n"
            reward = score(pred, ref, tests).reward
            assert reward < previous or previous == 0.0, (page_id, sorted(gone), previous, reward)
            previous = reward
        assert previous < 0.05
