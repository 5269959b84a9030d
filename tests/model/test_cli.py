"""`minuscule model inspect|init|tokens` through the real command line."""

from __future__ import annotations

import json
import subprocess
import sys

import torch

from minuscule.cli import main
from minuscule.model import checkpoint
from minuscule.tokenizer import Tokenizer


def _json(capsys, argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_inspect_real_presets_without_allocating():
    # In a fresh interpreter, so its own peak memory can be read: the bf16 weights alone are 6.7 GB.
    # VmHWM is the peak of this process's own memory map; ru_maxrss also counts the parent's peak when
    # the child was spawned by vfork (as subprocess does), which made this test depend on test order.
    code = ("import json, resource; from minuscule.model.cli import inspect; r = inspect('deepseek-ocr'); "
            "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')]; "
            "r['peak_mb'] = int(hwm[0].split()[1]) / 1024 if hwm else "
            "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024; print(json.dumps(r))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    out = json.loads(proc.stdout)
    peak_mb = out.pop("peak_mb")
    assert out == {"source": "deepseek-ocr", "parameters": 3_336_106_240, "active_parameters_per_token": 574_127_360,
                   "tensors": 2710, "dtype": "bfloat16", "missing": [], "unexpected": []}
    assert peak_mb < 1500, peak_mb


def test_inspect_jina(capsys):
    out = _json(capsys, ["model", "inspect", "jina-ocr-v1", "--json"])
    assert out["tensors"] == 2722 and out["parameters"] == 3_336_106_240 + 36_131_840


def test_init_then_inspect_and_load(capsys, tmp_path):
    d = tmp_path / "ck"
    made = _json(capsys, ["model", "init", "nano", "--out", str(d), "--seed", "4", "--json", "--shard-mb", "1"])
    assert made["dtype"] == "float32" and checkpoint.INDEX_NAME in made["files"]
    seen = _json(capsys, ["model", "inspect", str(d), "--json"])
    assert seen["missing"] == [] and seen["unexpected"] == [] and seen["stored_tensors"] == seen["tensors"]
    assert seen["parameters"] == made["parameters"]
    model = checkpoint.load(d)
    tok = Tokenizer.from_dir(d)
    assert tok.image_id == model.cfg.image_token_id and tok.eos_id == model.cfg.eos_token_id
    # The same seed gives the same weights.
    d2 = tmp_path / "ck2"
    _json(capsys, ["model", "init", "nano", "--out", str(d2), "--seed", "4", "--json"])
    other = checkpoint.load(d2)
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), other.parameters()))
    # Refuses to overwrite.
    assert main(["model", "init", "nano", "--out", str(d)]) == 2
    assert "exists and is not empty" in capsys.readouterr().err


def test_tokens(capsys):
    assert _json(capsys, ["model", "tokens", "--size", "1240x1754", "--json"]) == {
        "mode": "gundam", "tiles": [2, 3], "image_tokens": 903}
    assert _json(capsys, ["model", "tokens", "--size", "600x600", "--json"])["image_tokens"] == 273
    assert _json(capsys, ["model", "tokens", "--size", "1240x1754", "--mode", "tiny", "--json"])["image_tokens"] == 73


def test_bad_inputs_are_one_line_errors(capsys, tmp_path):
    assert main(["model", "tokens", "--size", "12x"]) == 2
    assert capsys.readouterr().err.strip() == "error: 12x: expected WxH in pixels, e.g. 1240x1754"
    assert main(["model", "inspect", str(tmp_path / "nothing")]) == 2
    assert "neither a checkpoint directory nor a preset" in capsys.readouterr().err
    assert main(["model", "inspect", str(tmp_path)]) == 2  # a directory without config.json
    assert "no config.json" in capsys.readouterr().err
