"""ModelConfig: the published config.json of both checkpoints, presets, round trips and errors."""

from __future__ import annotations

import copy
import json

import pytest

from minuscule.config import ConfigError, ModelConfig
from minuscule.errors import InputError

# Values as listed in deepseek-ocr.md §5 ("config.json key fields, verbatim values").
_LANGUAGE = {
    "architectures": ["DeepseekV2ForCausalLM"], "bos_token_id": 0, "eos_token_id": 1, "first_k_dense_replace": 1,
    "hidden_size": 1280, "intermediate_size": 6848, "kv_lora_rank": None, "lm_head": True,
    "max_position_embeddings": 8192, "moe_intermediate_size": 896, "n_group": 1, "n_routed_experts": 64,
    "n_shared_experts": 2, "num_attention_heads": 10, "num_experts_per_tok": 6, "num_hidden_layers": 12,
    "num_key_value_heads": 10, "q_lora_rank": None, "qk_nope_head_dim": 0, "qk_rope_head_dim": 0, "rm_head": False,
    "topk_group": 1, "topk_method": "greedy", "torch_dtype": "bfloat16", "use_mla": False, "v_head_dim": 0,
    "vocab_size": 129280,
}
_VISION = {"image_size": 1024, "mlp_ratio": 3.7362, "model_name": "deeplip_b_l", "model_type": "vision",
           "width": {"clip-l-14-224": {"heads": 16, "image_size": 224, "layers": 24, "patch_size": 14, "width": 1024},
                     "sam_vit_b": {"downsample_channels": [512, 1024], "global_attn_indexes": [2, 5, 8, 11],
                                   "heads": 12, "layers": 12, "width": 768}}}
_PROJECTOR = {"input_dim": 2048, "model_type": "mlp_projector", "n_embed": 1280, "projector_type": "linear"}


def deepseek_ocr_json() -> dict:
    top = {k: v for k, v in _LANGUAGE.items() if k != "architectures"}
    return {
        "architectures": ["DeepseekOCRForCausalLM"], "model_type": "deepseek_vl_v2",
        "auto_map": {"AutoConfig": "modeling_deepseekocr.DeepseekOCRConfig",
                     "AutoModel": "modeling_deepseekocr.DeepseekOCRForCausalLM"},
        "candidate_resolutions": [[1024, 1024]], "global_view_pos": "head", "tile_tag": "2D",
        "language_config": copy.deepcopy(_LANGUAGE), "vision_config": copy.deepcopy(_VISION),
        "projector_config": dict(_PROJECTOR), "transformers_version": "4.46.3", **top,
    }


def jina_ocr_json() -> dict:
    """jina-ocr-v1.md §1.3: the same architecture plus rope/positions/pad/image index and the MTP fields."""
    data = deepseek_ocr_json()
    extra = {"max_position_embeddings": 32768, "rope_theta": 1000000.0, "rms_norm_eps": 1e-6, "hidden_act": "silu",
             "attention_bias": False, "scoring_func": "softmax", "norm_topk_prob": False, "routed_scaling_factor": 1.0,
             "moe_layer_freq": 1, "tie_word_embeddings": False, "pad_token_id": 2, "image_token_index": 128815}
    data.update(extra)
    data["language_config"].update(extra)
    del data["transformers_version"]
    data["dtype"] = "bfloat16"
    data.update({"num_nextn_predict_layers": 1, "mtp_num_heads": 1, "mtp_num_speculative_steps": 3,
                 "mtp_recursive": True, "mtp_moe": False, "mtp_share_embedding_weights": True,
                 "mtp_share_lm_head": True, "mtp_share_norm": True})
    return data


def test_deepseek_ocr_published_config_defaults():
    cfg = ModelConfig.from_json(deepseek_ocr_json())
    assert cfg.rope_theta == 10000.0  # absent → the config class default
    assert cfg.max_position_embeddings == 8192
    assert not cfg.has_mtp and cfg.num_nextn_predict_layers == 0
    assert cfg.image_token_id == 128815 and cfg.pad_token_id is None
    assert (cfg.hidden_size, cfg.head_dim, cfg.n_routed_experts, cfg.num_experts_per_tok) == (1280, 128, 64, 6)
    assert cfg.vision.sam.global_attn_indexes == (2, 5, 8, 11)
    preset = ModelConfig.from_name("deepseek-ocr")
    for f in ("rope_theta", "max_position_embeddings", "num_hidden_layers", "intermediate_size", "vocab_size",
              "moe_intermediate_size", "n_shared_experts", "norm_topk_prob", "routed_scaling_factor"):
        assert getattr(cfg, f) == getattr(preset, f), f
    assert cfg.vision == preset.vision


def test_jina_published_config():
    cfg = ModelConfig.from_json(jina_ocr_json())
    assert cfg.rope_theta == 1e6 and cfg.max_position_embeddings == 32768
    assert cfg.has_mtp and cfg.mtp_num_speculative_steps == 3 and cfg.mtp_recursive
    assert cfg.pad_token_id == 2 and cfg.image_token_id == 128815
    preset = ModelConfig.from_name("jina-ocr-v1")
    for f in ("rope_theta", "max_position_embeddings", "num_nextn_predict_layers", "mtp_num_speculative_steps",
              "pad_token_id", "image_token_id"):
        assert getattr(cfg, f) == getattr(preset, f), f


@pytest.mark.parametrize("make", [deepseek_ocr_json, jina_ocr_json])
def test_published_config_round_trips(make, tmp_path):
    cfg = ModelConfig.from_json(make())
    cfg.save(tmp_path)
    again = ModelConfig.from_pretrained(tmp_path)
    assert again == cfg
    written = json.loads((tmp_path / "config.json").read_text())
    # The informational keys come back verbatim, and the decoder keys sit in both places.
    assert written["auto_map"] == make()["auto_map"]
    assert written["language_config"]["hidden_size"] == written["hidden_size"] == 1280
    assert ("rope_theta" in written) and ("num_nextn_predict_layers" in written) == cfg.has_mtp


@pytest.mark.parametrize("name", ["jina-ocr-v1", "deepseek-ocr", "nano"])
def test_presets_round_trip(name):
    cfg = ModelConfig.from_name(name)
    assert ModelConfig.from_json(json.loads(json.dumps(cfg.to_json()))) == cfg


def test_nano_preset_is_small_and_moe():
    cfg = ModelConfig.from_name("nano")
    assert cfg.hidden_size == 64 and cfg.num_hidden_layers == 4 and cfg.first_k_dense_replace == 1
    assert (cfg.n_routed_experts, cfg.num_experts_per_tok, cfg.n_shared_experts) == (8, 2, 2)
    assert cfg.vocab_size <= 1024 and cfg.has_mtp and cfg.vision.n_embed == 64


def _error(data: dict) -> str:
    with pytest.raises(ConfigError) as e:
        ModelConfig.from_json(data)
    return str(e.value)


def test_unknown_keys_are_errors():
    data = jina_ocr_json()
    data["sliding_window"] = 128
    data["language_config"]["frobnicate"] = 1
    msg = _error(data)
    assert "'sliding_window'" in msg and "language_config.frobnicate" in msg


def test_contradictions_and_unsupported_values():
    data = deepseek_ocr_json()
    data["hidden_size"] = 1024
    assert "hidden_size is 1024 at the top level but 1280 in language_config" in _error(data)
    data = deepseek_ocr_json()
    data["use_mla"] = True
    data["language_config"]["use_mla"] = True
    assert "use_mla=True is not supported" in _error(data)
    data = jina_ocr_json()
    data["mtp_num_heads"] = 2
    assert "mtp_num_heads 2 contradicts num_nextn_predict_layers 1" in _error(data)
    data = jina_ocr_json()
    data["mtp_moe"] = True
    assert "mtp_moe" in _error(data)
    data = deepseek_ocr_json()
    data["num_experts_per_tok"] = data["language_config"]["num_experts_per_tok"] = 65
    assert "num_experts_per_tok 65" in _error(data)
    data = deepseek_ocr_json()
    data["rope_theta"] = "big"
    assert "rope_theta must be a number" in _error(data)
    data = deepseek_ocr_json()
    data["vision_config"]["width"]["sam_vit_b"]["depth"] = 3
    assert "unknown keys ['depth']" in _error(data)


def test_from_pretrained_errors_name_the_file(tmp_path):
    with pytest.raises(InputError, match="no config.json"):
        ModelConfig.from_pretrained(tmp_path)
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(InputError, match="unreadable config.json"):
        ModelConfig.from_pretrained(tmp_path)
    data = deepseek_ocr_json()
    data["bogus"] = 1
    (tmp_path / "config.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"config\.json: unknown key 'bogus'"):
        ModelConfig.from_pretrained(tmp_path)
    with pytest.raises(InputError, match="unknown model preset"):
        ModelConfig.from_name("gpt-5")


def test_head_dim_and_mtp_keys_in_language_config():
    data = jina_ocr_json()
    data["head_dim"] = 64
    assert "head_dim 64 contradicts" in _error(data)
    data = jina_ocr_json()
    data["head_dim"] = 128
    data["language_config"]["mtp_num_speculative_steps"] = 3
    assert ModelConfig.from_json(data).mtp_num_speculative_steps == 3
    data["language_config"]["mtp_num_speculative_steps"] = 2
    assert "mtp_num_speculative_steps is 3 at the top level but 2 in language_config" in _error(data)
