"""`minuscule bench forward --quick`: one JSON object with every figure and its in-run baseline."""

from __future__ import annotations

import json

import pytest

from minuscule.cli import main


def test_quick_forward_benchmark(tmp_path, capsys):
    out = tmp_path / "forward.json"
    assert main(["bench", "forward", "--quick", "--decode-tokens", "4", "--page", "700x990", "--json", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    result = json.loads(out.read_text())
    assert printed == result
    assert result["inputs"]["preset"] == "nano" and result["inputs"]["tiles"] == [2, 3]
    assert result["inputs"]["image_tokens"] == 903 and result["inputs"]["prompt_tokens"] > 903
    assert result["environment"]["cores"] >= 1 and result["environment"]["torch"] and result["environment"]["torch_threads"] >= 1
    assert result["environment"]["load_average_1m"] >= 0
    for key in ("vision_seconds_per_page", "prefill_tokens_per_s", "decode_tokens_per_s", "copy_bandwidth_gb_s",
                "decode_bandwidth_bound_tokens_per_s"):
        assert result[key] > 0, key
    m = result["model"]
    assert m["active_bytes_per_token"] == pytest.approx(m["active_parameters_per_token"] * 2
                                                        + m["kv_bytes_per_token_at_mean_context"], abs=1)
    bound = result["copy_bandwidth_gb_s"] * 1e9 / m["active_bytes_per_token"]
    assert result["decode_bandwidth_bound_tokens_per_s"] == pytest.approx(bound, rel=3e-3)
    assert result["ratios"]["decode_vs_bandwidth_bound"] == pytest.approx(
        result["decode_tokens_per_s"] / result["decode_bandwidth_bound_tokens_per_s"], rel=1e-2)


def test_bad_page_size_is_one_line_error(capsys):
    assert main(["bench", "forward", "--quick", "--page", "big"]) == 2
    assert capsys.readouterr().err.strip() == "error: big: expected WxH in pixels"
