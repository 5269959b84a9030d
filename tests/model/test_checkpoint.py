"""Checkpoint directories: save → load bit-identical, casting, sharding with an index, strict errors."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from minuscule.config import ModelConfig
from minuscule.errors import InputError
from minuscule.model import checkpoint
from minuscule.tokenizer import Tokenizer


@pytest.fixture(scope="module")
def saved(nano_model, nano_tok, tmp_path_factory):
    d = tmp_path_factory.mktemp("nano")
    checkpoint.save(nano_model, d, tokenizer=nano_tok)
    return d


def _assert_same_weights(a, b):
    ta, tb = a.published_tensors(), b.published_tensors()
    assert list(ta) == list(tb)
    for n in ta:
        assert ta[n].dtype == tb[n].dtype and torch.equal(ta[n], tb[n]), n


def test_layout_and_published_names(saved, nano_model):
    assert sorted(p.name for p in saved.iterdir()) == ["config.json", "model.safetensors", "tokenizer.json"]
    with safe_open(saved / "model.safetensors", framework="pt") as f:
        names = set(f.keys())
    assert names == set(nano_model.published_tensors())
    assert "model.vision_model.embeddings.position_ids" not in names  # a derived buffer, never stored
    assert {"lm_head.weight", "model.embed_tokens.weight", "model.norm.weight", "model.image_newline",
            "model.view_seperator", "model.projector.layers.weight", "mtp_module.heads.0.eh_proj.weight",
            "model.layers.1.mlp.experts.7.down_proj.weight", "model.layers.0.mlp.gate_proj.weight"} <= names
    assert ModelConfig.from_pretrained(saved) == nano_model.cfg.with_dtype_name("float32")
    assert Tokenizer.from_dir(saved).image_id == nano_model.cfg.image_token_id


def test_round_trip_is_bit_identical(saved, nano_model, tmp_path):
    loaded = checkpoint.load(saved)
    _assert_same_weights(nano_model, loaded)
    ids = torch.randint(4, nano_model.cfg.vocab_size, (1, 12), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert torch.equal(nano_model(ids).logits, loaded(ids).logits)
    # CLIP's derived position ids survived loading (they are not in the file).
    pos_ids = loaded.model.vision_model.embeddings.position_ids
    assert torch.equal(pos_ids, torch.arange(pos_ids.shape[1])[None])
    # Saving the loaded model again gives byte-identical weights.
    checkpoint.save(loaded, tmp_path)
    assert (tmp_path / "model.safetensors").read_bytes() == (saved / "model.safetensors").read_bytes()


def test_load_casts_to_bf16(saved, nano_model):
    m = checkpoint.load(saved, dtype="bf16")
    for n, p in m.published_tensors().items():
        assert p.dtype == torch.bfloat16
        assert torch.equal(p, nano_model.published_tensors()[n].to(torch.bfloat16)), n
    with pytest.raises(InputError, match="unknown dtype"):
        checkpoint.load(saved, dtype="int3")


def test_sharded_save_and_load_with_index(nano_model, tmp_path):
    checkpoint.save(nano_model, tmp_path, max_shard_bytes=600_000)
    shards = sorted(p.name for p in tmp_path.glob("*.safetensors"))
    assert len(shards) >= 3 and shards[0] == f"model-00001-of-{len(shards):05d}.safetensors"
    index = json.loads((tmp_path / checkpoint.INDEX_NAME).read_text())
    assert set(index["weight_map"]) == set(nano_model.published_tensors())
    assert index["metadata"]["total_size"] == sum(p.numel() * 4 for p in nano_model.published_tensors().values())
    _assert_same_weights(nano_model, checkpoint.load(tmp_path))


def _rewrite(src, dst, edit):
    tensors = load_file(src / "model.safetensors")
    edit(tensors)
    dst.mkdir(exist_ok=True)
    save_file(tensors, dst / "model.safetensors")
    (dst / "config.json").write_text((src / "config.json").read_text())


def test_strict_loading_lists_every_problem_in_one_error(saved, tmp_path):
    def damage(t):
        del t["model.norm.weight"]
        del t["mtp_module.heads.0.hnorm.weight"]
        t["model.layers.0.extra.weight"] = torch.zeros(2)
        t["lm_head.weight"] = t["lm_head.weight"][:-1].clone()

    _rewrite(saved, tmp_path / "bad", damage)
    with pytest.raises(InputError) as e:
        checkpoint.load(tmp_path / "bad")
    msg = str(e.value)
    assert "2 missing: model.norm.weight, mtp_module.heads.0.hnorm.weight" in msg
    assert "1 unexpected: model.layers.0.extra.weight" in msg
    assert "1 wrong shape: lm_head.weight [511, 64] (expected [512, 64])" in msg
    cfg, report = checkpoint.inspect_dir(tmp_path / "bad")
    assert report.missing == ["model.norm.weight", "mtp_module.heads.0.hnorm.weight"]


def test_index_naming_absent_shards_and_empty_dirs(saved, tmp_path):
    (tmp_path / "config.json").write_text((saved / "config.json").read_text())
    with pytest.raises(InputError, match="no \\*.safetensors files"):
        checkpoint.load(tmp_path)
    (tmp_path / checkpoint.INDEX_NAME).write_text(json.dumps({"weight_map": {"lm_head.weight": "nope.safetensors"}}))
    with pytest.raises(InputError, match="nope.safetensors"):
        checkpoint.load(tmp_path)
    with pytest.raises(InputError, match="not a directory"):
        checkpoint.load(tmp_path / "missing")


def test_stored_copy_of_the_shared_embedding_is_checked_and_dropped(saved, nano_model, tmp_path):
    _rewrite(saved, tmp_path / "dup", lambda t: t.update({"mtp_embed_tokens.weight": t["model.embed_tokens.weight"].clone()}))
    _, report = checkpoint.inspect_dir(tmp_path / "dup")
    assert report.unexpected == [] and report.duplicates == {"mtp_embed_tokens.weight": "model.embed_tokens.weight"}
    loaded = checkpoint.load(tmp_path / "dup")
    _assert_same_weights(nano_model, loaded)

    def differ(t):
        t["mtp_embed_tokens.weight"] = t["model.embed_tokens.weight"] + 1

    _rewrite(saved, tmp_path / "diff", differ)
    with pytest.raises(InputError, match="mtp_embed_tokens.weight differs from model.embed_tokens.weight"):
        checkpoint.load(tmp_path / "diff")
