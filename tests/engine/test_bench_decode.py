"""`minuscule bench decode`: the JSON shape, K=0 baselines and identical outputs (quick settings)."""

from __future__ import annotations

import json

from minuscule.cli import main


def test_bench_decode_quick(tmp_path, capsys):
    out = tmp_path / "decode.json"
    rc = main(["bench", "decode", "--quick", "--model", "nano", "--proposer", "replay:0.75,ngram,fastmtp",
               "--k", "0,2,adaptive", "--batch", "1,3", "--json", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    assert json.loads(capsys.readouterr().out) == data
    runs = data["runs"]
    keys = {"proposer", "k", "batch", "tokens_per_s", "tokens_per_step", "acceptance_per_position",
            "speedup_vs_k0", "identical_to_k0"}
    assert all(keys <= set(r) for r in runs)
    assert {(r["proposer"], r["k"], r["batch"]) for r in runs} == {
        (p, k, b) for p in ("replay:0.75", "ngram", "fastmtp") for k in (0, 2, "adaptive") for b in (1, 3)}
    assert all(r["identical_to_k0"] for r in runs) and data["targets"]["all_identical_to_k0"]
    assert all(r["speedup_vs_k0"] == 1.0 for r in runs if r["k"] == 0)
    replay = next(r for r in runs if r["proposer"] == "replay:0.75" and r["k"] == 2 and r["batch"] == 3)
    assert replay["tokens_per_step"] > 1.5 and len(replay["acceptance_per_position"]) == 2
    assert data["inputs"]["clock"] == "cpu" and data["environment"]["torch_threads"] == 1


def test_bench_decode_bad_arguments(capsys):
    assert main(["bench", "decode", "--quick", "--proposer", "bogus"]) == 2
    assert main(["bench", "decode", "--quick", "--k", "0,adaptive"]) == 2
    assert "error" in capsys.readouterr().err
