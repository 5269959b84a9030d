"""The corruption study on the five stored synthetic pages: every corruption changes the page and the ranking holds."""

from __future__ import annotations

import json
import random

from minuscule.markup.tables import html_tables
from minuscule.rewards import score
from minuscule.rewards.study import CORRUPTIONS, main, run_study
from reward_pages import DATA, synth_pages


def test_corruptions_do_what_they_say():
    _, ref, _ = next(p for p in synth_pages() if p[0] == "p000007")
    rng = random.Random(0)
    ref_rows = sum(t.n_rows for t in html_tables(ref))
    assert sum(t.n_rows for t in html_tables(CORRUPTIONS["drop_rows"](ref, rng))) < ref_rows
    swapped = CORRUPTIONS["swap_cells"](ref, rng)
    assert swapped != ref and sorted(swapped) == sorted(ref)
    pipes = CORRUPTIONS["pipe_tables"](ref, rng)
    assert "<table" not in pipes and "| --- |" in pipes
    assert CORRUPTIONS["broken_latex"](ref, rng).count("}") < ref.count("}")
    assert len(CORRUPTIONS["truncation"](ref, rng)) == len(ref) // 2
    looped = CORRUPTIONS["loop"](ref, rng).split("\n")
    assert len(set(looped[-300:])) == 1


def test_ranking_of_corruptions_is_consistent():
    result = run_study(synth_pages(), seed=0)
    means = {name: c["mean_reward"] for name, c in result["corruptions"].items()}
    assert means["clean"] == 1.0
    # Small, local table errors cost least; broken formulas and the wrong table syntax more
    # (floored terms); losing half the page more still; a loop is vetoed.
    assert 1.0 > means["swap_cells"] > means["drop_rows"] > max(means["broken_latex"], means["pipe_tables"])
    assert min(means["broken_latex"], means["pipe_tables"]) > means["truncation"] > means["loop"]
    assert means["loop"] < 0.01
    # Per page as well: every corruption of a page scores below the clean page, and the loop lowest.
    for page_id, ref, tests in synth_pages():
        rewards = {name: score(fn(ref, random.Random(f"0:{page_id}:{name}")), ref, tests).reward
                   for name, fn in CORRUPTIONS.items()}
        changed = {k: v for k, v in rewards.items() if k != "clean" and CORRUPTIONS[k](ref, random.Random(f"0:{page_id}:{k}")) != ref}
        assert rewards["clean"] == 1.0
        assert all(v < 1.0 for v in changed.values()), (page_id, changed)
        assert rewards["loop"] == min(rewards.values()), (page_id, rewards)
    assert result["timing"]["scores"] == sum(c["pages"] for c in result["corruptions"].values())


def test_study_command_prints_json(capsys, tmp_path):
    out = tmp_path / "study.json"
    assert main(["--synth", str(DATA), "--n", "2", "--json", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    assert printed["pages"] == 2 and set(printed["corruptions"]) == set(CORRUPTIONS)


def test_study_command_bad_folder_is_one_line(capsys, tmp_path):
    assert main(["--synth", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no pages/*.md" in err and err.count("\n") == 1
