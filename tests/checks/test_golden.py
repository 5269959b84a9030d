"""Reproduce the official scorer's printout on olmocr's own sample set (non-math tests).

The golden printout lives in shared/bench-samples/olmocr-bench/golden/. The sample set itself is
part of the allenai/olmocr repository (olmocr/bench/sample_data/); point
$MINUSCULE_OLMOCR_SAMPLE_DATA at a checkout of that folder to run this test.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from minuscule.cli import main

GOLDEN = (Path(__file__).resolve().parents[2] / ".." / "shared" / "bench-samples" / "olmocr-bench" / "golden"
          / "sample_data_nomath_olmocr_pipeline.txt")


def parse_golden(text: str):
    fails = dict(re.findall(r"\[FAIL\] Test (\S+) on .*?Ex: (.*)", text))
    groups = {name.removesuffix(".jsonl"): (int(p), int(t))
              for name, p, t in re.findall(r"^\s+(\S+)\s+: [\d.]+% \((\d+)/(\d+) tests\)", text, re.M)}
    overall = float(re.search(r"Average Score: ([\d.]+)% ±", text).group(1))
    return fails, groups, overall


def test_golden_file_parses():
    if not GOLDEN.exists():
        pytest.skip("shared golden file not present")
    fails, groups, overall = parse_golden(GOLDEN.read_text())
    assert len(fails) == 12 and groups == {"baseline": (19, 20), "blanks": (1, 1), "dataset": (76, 87)}
    assert overall == 94.1


def test_reproduces_official_verdicts(tmp_path):
    sample = os.environ.get("MINUSCULE_OLMOCR_SAMPLE_DATA")
    if not sample or not GOLDEN.exists():
        pytest.skip("set MINUSCULE_OLMOCR_SAMPLE_DATA to allenai/olmocr's olmocr/bench/sample_data")
    sample = Path(sample)
    data = tmp_path / "data"
    data.mkdir()
    (data / "pdfs").symlink_to(sample / "pdfs")
    (data / "blanks.jsonl").write_text((sample / "blanks.jsonl").read_text())
    lines = [ln for ln in (sample / "dataset.jsonl").read_text().splitlines() if ln.strip()]
    (data / "dataset.jsonl").write_text("\n".join(ln for ln in lines if json.loads(ln)["type"] != "math") + "\n")
    out = tmp_path / "r.json"
    assert main(["bench", "olmocr", "--data", str(data), "--pred", str(sample / "olmocr_pipeline"), "--json", str(out)]) == 0
    res = json.loads(out.read_text())

    fails, groups, overall = parse_golden(GOLDEN.read_text())
    ours = {f["id"]: f["explanation"] for f in res["failed"]}
    assert set(ours) == set(fails)
    assert {k: (v["passed"], v["tests"]) for k, v in res["category_counts"].items()} == groups
    assert round(res["overall"] * 100, 1) == overall
    # The similarity figures in the official explanations appear in ours too.
    for test_id, official in fails.items():
        for number in re.findall(r"(?:ratio was|similarity: )(\d\.\d+)", official):
            assert number in ours[test_id], (test_id, official, ours[test_id])
