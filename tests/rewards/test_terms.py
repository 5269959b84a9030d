"""Each reward term on its own: what raises it, what lowers it, and the note that says why."""

from __future__ import annotations

import pytest

from minuscule.checks import parse_test
from minuscule.rewards import RewardConfig
from minuscule.rewards.latex import latex_problems, latex_tokens
from minuscule.rewards.page import collapse_loops, split_page
from minuscule.rewards.terms import LatexStringMatcher, content_term, formula_term, unit_test_term
from minuscule.rewards.validity import format_term, repetition_term, structure_term
from reward_pages import PLAIN, REFERENCE, TESTS

REF = split_page(REFERENCE)


def parts(text: str):
    return split_page(text)


# --- page splitting -------------------------------------------------------------------------

def test_split_separates_text_formulas_and_tables():
    assert len(REF.tables) == 1 and len(REF.formulas) == 3
    assert "<" not in REF.text and "$" not in REF.text and "Wheat" not in REF.text
    assert REF.text.startswith("2. Results of the survey The survey covered")
    assert REF.tables[0].rows[0] == (("Crop", 2, 1), ("Yield", 1, 2), ("Variance", 1, 1))


def test_pipe_lines_without_a_separator_row_are_text():
    page = parts("We have |x| < 1\nand |y| < 2 here.\n")
    assert page.tables == () and page.pipe_tables == 0 and "|x|" in page.text


def test_collapse_loops_keeps_one_copy_of_a_repeated_block():
    assert collapse_loops("a\nb\nc\nb\nc\nb\nc\nd") == "a\nb\nc\nd"
    assert collapse_loops("x\nx\nx\n\ny") == "x\ny"
    assert collapse_loops("a\nb\na\nc") == "a\nb\na\nc"


# --- content --------------------------------------------------------------------------------

def test_content_is_one_minus_normalised_edit_distance():
    assert content_term(REF, REF).raw == 1.0
    pred = parts(REFERENCE.replace("forty-two", "forty two").replace("northern", "nothern"))
    got = content_term(pred, REF).raw
    assert 0.99 < got < 1.0
    # Typography and emphasis do not count: normalised like the olmOCR checks.
    assert content_term(parts(REFERENCE.replace("The survey", "The **survey**")), REF).raw == 1.0


def test_content_ignores_tables_and_formulas_and_notes_missing_text():
    no_math = REFERENCE.replace("$\\sigma^{2}$", "").replace("$\\mathrm{Var}(Y) \\leq \\mathbb{E}[Y^{2}]$", "")
    assert content_term(parts(no_math), REF).raw == 1.0
    half = content_term(parts(REFERENCE[: len(REFERENCE) // 3]), REF)
    assert half.raw < 0.5 and "characters short" in half.note
    table_only = parts("<table><tr><td>1</td></tr></table>")
    assert content_term(parts("Table 1\n\n" + table_only.raw), table_only).applied is False


# --- formulas -------------------------------------------------------------------------------

def test_latex_tokens_fold_spacing_aliases_and_single_braces():
    assert latex_tokens(r"x^{2} \le y") == latex_tokens(r"x^2\leq y")
    assert latex_tokens(r"\left( a \, b \right)") == latex_tokens("(ab)")
    assert latex_tokens(r"\dfrac{a}{b}") == latex_tokens(r"\frac ab")
    assert latex_tokens(r"x \tag{3}") != latex_tokens("x")


def test_formula_term_matches_one_to_one_and_averages_over_the_reference():
    assert formula_term(REF, REF).raw == 1.0
    shuffled = parts("$\\sigma^2$ then $$Y = \\frac{\\sum_{i=1}^{n} w_{i} y_{i}}{\\sum_{i=1}^{n} w_{i}}$$")
    got = formula_term(shuffled, REF)
    assert got.raw == pytest.approx(2 / 3)  # two exact (in another order), one missing
    assert "2/3 formulas exact" in got.note
    one_off = parts(REFERENCE.replace("\\sigma^{2}", "\\sigma^{3}"))
    assert 0.85 < formula_term(one_off, REF).raw < 1.0
    assert formula_term(parts("no maths"), REF).raw == 0.0
    assert formula_term(REF, parts(PLAIN)).applied is False


def test_formula_term_takes_rendering_equivalence_from_a_renderer():
    pred = parts(REFERENCE.replace("\\sigma^{2}", "\\sigma^{2}{}"))

    class Always(LatexStringMatcher):
        def same(self, reference, hypothesis):
            return True

    assert formula_term(pred, REF).raw < 1.0
    assert formula_term(pred, REF, renderer=Always()).raw == 1.0


# --- structure ------------------------------------------------------------------------------

def test_latex_problems():
    assert latex_problems(r"\frac{a}{b} \{ x \}") == []
    assert latex_problems(r"\frac{a}{b") == ["unbalanced braces"]
    assert latex_problems(r"\begin{cases} a \end{matrix}")[0].startswith("\\end{matrix}")
    assert latex_problems(r"\begin{cases} a")[0].endswith("never ended")
    assert latex_problems(r"\left( a") == ["unbalanced \\left/\\right"]


@pytest.mark.parametrize(
    "pred, bad",
    [
        ("$\\frac{a}{b$ and $c$", "unbalanced braces"),
        ("<table><tr><td>a</td></tr>", "never closed"),
        ("<table><tr><td>a</tr></table>", "closes <td>"),
        ("text </td> more", "outside a table"),
        ("costs $5 in $x$ terms", "unpaired math delimiter"),
        ("<|ref|>Title<|/ref|><|det|>[[1,2,3,4]]<|/det|>", "stray token"),
    ],
)
def test_structure_flags_malformed_elements(pred, bad):
    got = structure_term(parts(pred))
    assert got.raw < 1.0 and bad in got.note


def test_structure_is_graded_by_the_share_of_valid_elements():
    assert structure_term(REF).raw == 1.0
    assert structure_term(parts("plain text")).raw == 1.0
    three_good_one_bad = "$a$ $b$ $c$ $\\frac{d}{e$"
    assert structure_term(parts(three_good_one_bad)).raw == pytest.approx(0.75)


# --- repetition -----------------------------------------------------------------------------

def test_repetition_is_one_without_loops_and_compares_with_the_reference():
    assert repetition_term(REF, REF).raw == 1.0
    # Lines the reference itself repeats (table rows of dashes, `$$`) are not loops.
    table = "<table>\n" + "<tr><td>-</td><td>-</td></tr>\n" * 12 + "</table>\n"
    assert repetition_term(parts(table), parts(table)).raw == 1.0


def test_repetition_falls_with_repeated_lines_and_compression():
    pred = parts(REFERENCE + "\nThe effect held.\n" * 3)
    mild = repetition_term(pred, REF)
    assert 0.75 < mild.raw < 1.0
    heavy = repetition_term(parts(REFERENCE + "\nThe effect held.\n" * 200), REF)
    assert heavy.raw < 0.01 and "of lines repeat" in heavy.note


def test_repetition_is_zero_when_the_output_ends_in_a_character_loop():
    got = repetition_term(parts(REFERENCE + "=" * 200), REF)
    assert got.raw == 0.0 and "token limit" in got.note


# --- format ---------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "extra, why",
    [
        ("\n| a | b |\n| --- | --- |\n| 1 | 2 |\n", "pipe table"),
        ("\n\\begin{equation} x = 1 \\end{equation}\n", "without $"),
        ("\n![a tractor in a field](img.png)\n", "image"),
        ("\n<img src='x.png'>\n", "image"),
        ("\n\n12\n", "page number"),
        ("\n<table><tr><td>cut", "open table"),
        ("\n$$\nx = 1\n", "$$ formula is never closed"),
        ("<|end|>", "chat/grounding token"),
    ],
)
def test_format_flags_each_convention(extra, why):
    got = format_term(parts(REFERENCE + extra), REF)
    assert got.raw < 1.0 and why in got.note


def test_format_is_graded_by_the_share_of_html_tables():
    pipe = "| a | b |\n| --- | --- |\n| 1 | 2 |\n"
    html = "<table><tr><td>1</td></tr></table>\n"
    assert format_term(parts(pipe + "\n" + html + "\n" + html), REF).raw == pytest.approx(2 / 3)
    assert format_term(parts(pipe), REF).raw == 0.0
    assert format_term(REF, REF).raw == 1.0


def test_format_leaves_page_numbers_and_images_the_reference_has():
    ref = parts("Intro\n\n![chart](c.png)\n\nText\n\n3\n")
    assert format_term(ref, ref).raw == 1.0


# --- unit tests -----------------------------------------------------------------------------

def test_unit_tests_pass_rate_micro_and_macro():
    tests = [parse_test(t) for t in TESTS]
    assert unit_test_term(REFERENCE, tests).raw == 1.0
    assert unit_test_term(REFERENCE, None).applied is False
    pred = REFERENCE.replace("barley suffered", "barley suferred") + "\nPage 12\n"
    micro = unit_test_term(pred, tests)
    assert micro.raw == pytest.approx(6 / 8)
    assert "present 1/2" in micro.note and "absent 0/1" in micro.note
    macro = unit_test_term(pred, tests, average="macro")
    assert macro.raw == pytest.approx((1 + 0.5 + 1 + 1 + 1 + 0) / 6)


def test_math_unit_tests_without_a_browser_compare_normalised_latex():
    test = parse_test({"pdf": "a.pdf", "page": 1, "id": "m", "type": "math", "math": "x^{2} \\le y"})
    assert unit_test_term("$x^2\\leq y$", [test]).raw == 1.0
    assert unit_test_term("$x^3 \\leq y$", [test]).raw == 0.0


def test_config_is_frozen_and_validated():
    cfg = RewardConfig()
    assert cfg.floors["table"] == 0.1 and cfg.floors["structure"] == 0.2 and cfg.floors["repetition"] == 0.0
    with pytest.raises(Exception):
        cfg.exact_teds = True  # type: ignore[misc]
    with pytest.raises(TypeError):
        cfg.floors["table"] = 0.5  # type: ignore[index]
    assert RewardConfig(floors={"table": 0.3}).floors["format"] == 0.2
    assert hash(RewardConfig()) == hash(RewardConfig()) and RewardConfig() == RewardConfig()
    for bad in ({"floors": {"tables": 0.1}}, {"floors": {"table": 2.0}}, {"weights": {"content": -1}},
                {"unit_test_average": "median"}, {"cr_ok": 3.0}):
        with pytest.raises(ValueError):
            RewardConfig(**bad)


def test_order_fast_path_agrees_with_the_check_on_corrupted_synthetic_pages():
    import random

    from minuscule.rewards.study import CORRUPTIONS
    from minuscule.rewards.terms import _order_certainly_passes
    from reward_pages import synth_pages

    shortcuts = 0
    for page_id, ref, tests in synth_pages():
        orders = [t for t in tests if t.type == "order"]
        for name, corrupt in CORRUPTIONS.items():
            pred = corrupt(ref, random.Random(name))
            for test in orders:
                if _order_certainly_passes(test, pred):
                    shortcuts += 1
                    assert test.run(pred).passed, (page_id, name, test.id)
    assert shortcuts >= 50
    # Texts that occur twice are left to the check.
    twice = parse_test({"pdf": "a.pdf", "page": 1, "id": "o", "type": "order", "before": "alpha beta", "after": "gamma delta",
                        "max_diffs": 1})
    assert not _order_certainly_passes(twice, "alpha beta gamma delta alpha beta")
    assert _order_certainly_passes(twice, "alpha beta then gamma delta")
    assert not _order_certainly_passes(twice, "gamma delta then alpha beta")


def test_what_the_reference_does_itself_is_not_held_against_the_prediction():
    from minuscule.rewards import score

    ref = "Tickets cost $5 at the gate.\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n\n\\begin{equation} x \\end{equation}\n"
    assert score(ref, ref).reward == 1.0
    got = score(ref + "\n<table><tr><td>x</table>\n", ref)
    assert got.terms["structure"].raw == 0.0 and any("closes <td>" in n for n in got.notes)
    assert got.terms["format"].raw == 1.0  # its pipe table and bare equation are the reference's own


def test_repetition_catches_a_loop_inside_one_line_that_does_not_reach_the_end():
    looped = REFERENCE.replace("A wetter spring", "A wetter spring in the valley" + " in the valley" * 150) + "\nThe end."
    got = repetition_term(parts(looped), REF)
    assert got.raw < 0.05 and ("4-grams repeat" in got.note or "compression ratio" in got.note)
