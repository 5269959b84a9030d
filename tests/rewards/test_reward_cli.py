"""`minuscule reward`: JSON shape, test selection, one-line errors; the batch scorer and its browser."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from minuscule.cli import main
from minuscule.rewards import RewardScorer, score
from reward_pages import DATA, REFERENCE, TESTS


@pytest.fixture
def files(tmp_path):
    ref = tmp_path / "survey.md"
    ref.write_text(REFERENCE, encoding="utf-8")
    pred = tmp_path / "pred.md"
    pred.write_text(REFERENCE.replace("<tr><td>Oats</td><td>4.8</td><td>5.1</td><td>0.44</td></tr>\n", ""), encoding="utf-8")
    tests = tmp_path / "tests.jsonl"
    tests.write_text("\n".join(json.dumps(t) for t in TESTS) + "\n", encoding="utf-8")
    return ref, pred, tests


def test_json_output_has_reward_terms_and_notes(files, capsys):
    ref, pred, tests = files
    assert main(["reward", "--pred", str(pred), "--ref", str(ref), "--tests", str(tests), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"reward", "terms", "notes"}
    assert set(out["terms"]) == {"content", "formula", "table", "structure", "unit_tests", "repetition", "format"}
    assert all(set(t) == {"raw", "floored", "applied"} for t in out["terms"].values())
    assert out["terms"]["unit_tests"]["applied"] is True
    assert out["reward"] == pytest.approx(score(pred.read_text(), REFERENCE, TESTS).reward)
    assert 0 < out["reward"] < 1 and any(n.startswith("table:") for n in out["notes"])


def test_text_output_and_no_tests(files, capsys):
    ref, _, _ = files
    assert main(["reward", "--pred", str(ref), "--ref", str(ref)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("reward 1.0000") and "unit_tests  not applicable" in out


def test_tests_of_a_many_page_file_are_chosen_by_the_reference_name(tmp_path, capsys):
    ref = DATA / "pages" / "p000013.md"
    args = ["reward", "--pred", str(ref), "--ref", str(ref), "--tests", str(DATA / "tests.jsonl"), "--json"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["reward"] == 1.0
    other = tmp_path / "p999999.md"
    other.write_text("x", encoding="utf-8")
    assert main(["reward", "--pred", str(other), "--ref", str(other), "--tests", str(DATA / "tests.jsonl")]) == 2
    assert "none for a pdf named 'p999999'" in capsys.readouterr().err


@pytest.mark.parametrize("case", ["missing", "directory", "binary", "bad-tests"])
def test_bad_input_is_one_line_and_exit_2(files, tmp_path, capsys, case):
    ref, pred, tests = files
    args = ["reward", "--pred", str(pred), "--ref", str(ref)]
    if case == "missing":
        args[2] = str(tmp_path / "nope.md")
    elif case == "directory":
        args[4] = str(tmp_path)
    elif case == "binary":
        pred.write_bytes(b"\xff\xfe\x00bad")
    else:
        tests.write_text('{"pdf": "a.pdf", "page": 1, "id": "x", "type": "present"}\n', encoding="utf-8")
        args += ["--tests", str(tests)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("minuscule reward: ") and err.count("\n") == 1 and "Traceback" not in err


def test_module_runs_as_a_command(files):
    ref, pred, _ = files
    done = subprocess.run([sys.executable, "-m", "minuscule", "reward", "--pred", str(pred), "--ref", str(ref), "--json"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert 0 < json.loads(done.stdout)["reward"] < 1


def test_batch_scorer_without_math_rendering_starts_no_browser():
    scorer = RewardScorer()
    got = scorer.score_batch([(REFERENCE, REFERENCE, TESTS), ("", REFERENCE, None)])
    assert [round(b.reward, 6) for b in got] == [1.0, 0.0]
    assert scorer.renderer is None
    assert scorer.rewards([REFERENCE], [REFERENCE]) == [1.0]
    with pytest.raises(Exception, match="2 predictions for 1 references"):
        scorer.rewards([REFERENCE, REFERENCE], [REFERENCE])


@pytest.mark.slow
@pytest.mark.browser
def test_batch_scorer_keeps_one_browser_for_math():
    try:
        from minuscule.browser import chromium_path, katex_dir

        chromium_path()
        katex_dir()
        import playwright  # noqa: F401
    except Exception as exc:
        pytest.skip(f"browser not available: {exc}")
    # `\sigma^{2}{}` is not the same token string, but KaTeX renders it the same.
    pred = REFERENCE.replace("\\sigma^{2}", "\\sigma^{2}{}")
    with RewardScorer(render_math=True) as scorer:
        first = scorer.renderer
        got = scorer.score_batch([(pred, REFERENCE, TESTS), (pred, REFERENCE, TESTS), (REFERENCE, REFERENCE, TESTS)])
        assert scorer.renderer is first
        assert first.rendered >= 2  # formulas went to the browser once, then came from its cache
        rendered = first.rendered
        scorer.score(pred, REFERENCE, TESTS)
        assert first.rendered == rendered
    assert [b.terms["formula"].raw for b in got] == [1.0, 1.0, 1.0]
    assert all(b.reward == 1.0 for b in got)
    assert score(pred, REFERENCE, TESTS).terms["formula"].raw < 1.0  # without the browser
