"""`minuscule bench speed`: JSON shape, page kinds, CER against known text (no timing assertions)."""

from __future__ import annotations

import json

from pdfmaker import PageSpec, make_pdf

from minuscule.cli import main


def test_speed_json_on_a_born_digital_folder(tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    s = PageSpec()
    s.paragraph(60, 100, ["The quick brown fox jumps over the lazy dog.", "It does so twice a day."])
    (data / "doc.pdf").write_bytes(make_pdf([s, s]))
    (data / "doc.truth.json").write_text(json.dumps({"1": "The quick brown fox jumps over the lazy dog. It does so "
                                                          "twice a day.", "2": "The quick brown fox jumps over the lazy cat. It does so "
                                                          "twice a day."}))
    out = tmp_path / "speed.json"
    assert main(["bench", "speed", "--data", str(data), "--repeat", "2", "--json", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    bd = printed["born_digital"]
    assert printed["image"] is None and bd["pages"] == 2 and bd["cer_pages"] == 2
    assert 0.01 < bd["cer"] < 0.03  # page 1 is exact, page 2's truth differs in 3 of 68 characters
    assert bd["pages_per_s"] > 0 and bd["ratio_to_baseline"] > 0
    assert bd["engine_stats"]["source"] == {"text-layer": 2}
    assert printed["environment"]["cores"] >= 1


def test_speed_refuses_a_missing_folder(tmp_path, capsys):
    assert main(["bench", "speed", "--data", str(tmp_path / "nope")]) == 2
    assert "no such folder" in capsys.readouterr().err
