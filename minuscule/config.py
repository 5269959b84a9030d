"""ModelConfig: the decoder, FastMTP and vision settings read from a published config.json, plus presets."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from minuscule.atomic import atomic_write
from minuscule.errors import InputError
from minuscule.model.vision_config import VisionConfig

PRESETS = ("jina-ocr-v1", "deepseek-ocr", "nano")

# Decoder keys read into fields, with the defaults the reference config class uses when a key is
# absent (DeepSeek-OCR's config.json omits rope_theta, rms_norm_eps, scoring_func, ...).
_DECODER_KEYS: dict[str, Any] = {
    "vocab_size": 129280,
    "hidden_size": 1280,
    "intermediate_size": 6848,
    "moe_intermediate_size": 896,
    "num_hidden_layers": 12,
    "num_attention_heads": 10,
    "num_key_value_heads": 10,
    "first_k_dense_replace": 1,
    "moe_layer_freq": 1,
    "n_routed_experts": 64,
    "n_shared_experts": 2,
    "num_experts_per_tok": 6,
    "routed_scaling_factor": 1.0,
    "scoring_func": "softmax",
    "topk_method": "greedy",
    "norm_topk_prob": False,
    "n_group": 1,
    "topk_group": 1,
    "rms_norm_eps": 1e-6,
    "rope_theta": 10000.0,
    "max_position_embeddings": 8192,
    "hidden_act": "silu",
    "attention_bias": False,
    "tie_word_embeddings": False,
    "bos_token_id": 0,
    "eos_token_id": 1,
    "pad_token_id": None,
}
_MTP_KEYS: dict[str, Any] = {
    "num_nextn_predict_layers": 0,
    "mtp_num_heads": 0,
    "mtp_num_speculative_steps": 0,
    "mtp_recursive": True,
    "mtp_moe": False,
    "mtp_share_embedding_weights": True,
    "mtp_share_lm_head": True,
    "mtp_share_norm": True,
}
# Published keys that must hold exactly these values: they describe variants (MLA, sliding
# windows, other heads) this implementation does not have. Absent is fine.
_FIXED_KEYS: dict[str, Any] = {
    "use_mla": False,
    "kv_lora_rank": None,
    "q_lora_rank": None,
    "qk_nope_head_dim": 0,
    "qk_rope_head_dim": 0,
    "v_head_dim": 0,
    "rope_scaling": None,
    "lm_head": True,
    "rm_head": False,
}
# Published keys accepted and written back verbatim but not used by the network: metadata,
# training-only knobs and DeepSeek-VL2 leftovers that the reference code ignores.
_INFO_KEYS = frozenset({
    "architectures", "auto_map", "model_type", "torch_dtype", "dtype", "transformers_version", "_name_or_path",
    "candidate_resolutions", "global_view_pos", "tile_tag", "processor_config", "aux_loss_alpha", "seq_aux",
    "initializer_range", "use_cache", "ep_size", "pretraining_tp", "attention_dropout", "head_dim",
})
_LANGUAGE_INFO_KEYS = frozenset({"architectures", "model_type", "torch_dtype", "dtype", "transformers_version"})
_STRUCTURE_KEYS = frozenset({"language_config", "vision_config", "projector_config", "image_token_index"})
_INT_KEYS = {k for k, v in {**_DECODER_KEYS, **_MTP_KEYS}.items() if type(v) is int} | {"pad_token_id"}
_FLOAT_KEYS = {"routed_scaling_factor", "rms_norm_eps", "rope_theta"}
_BOOL_KEYS = {k for k, v in {**_DECODER_KEYS, **_MTP_KEYS}.items() if type(v) is bool}

DEFAULT_IMAGE_TOKEN_ID = 128815  # hard-coded in DeepSeek-OCR's code; jina writes it as image_token_index


class ConfigError(ValueError):
    """A config.json that this implementation cannot run exactly as published."""


@dataclass(frozen=True)
class ModelConfig:
    """Everything needed to build the network; field names follow config.json."""

    vocab_size: int = 129280
    hidden_size: int = 1280
    intermediate_size: int = 6848
    moe_intermediate_size: int = 896
    num_hidden_layers: int = 12
    num_attention_heads: int = 10
    num_key_value_heads: int = 10
    first_k_dense_replace: int = 1
    moe_layer_freq: int = 1
    n_routed_experts: int = 64
    n_shared_experts: int = 2
    num_experts_per_tok: int = 6
    routed_scaling_factor: float = 1.0
    scoring_func: str = "softmax"
    topk_method: str = "greedy"
    norm_topk_prob: bool = False
    n_group: int = 1
    topk_group: int = 1
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    max_position_embeddings: int = 8192
    hidden_act: str = "silu"
    attention_bias: bool = False
    tie_word_embeddings: bool = False
    bos_token_id: int = 0
    eos_token_id: int = 1
    pad_token_id: int | None = None
    image_token_id: int = DEFAULT_IMAGE_TOKEN_ID
    num_nextn_predict_layers: int = 0
    mtp_num_heads: int = 0
    mtp_num_speculative_steps: int = 0
    mtp_recursive: bool = True
    mtp_moe: bool = False
    mtp_share_embedding_weights: bool = True
    mtp_share_lm_head: bool = True
    mtp_share_norm: bool = True
    vision: VisionConfig = field(default_factory=VisionConfig)
    # Accepted informational keys, written back unchanged by to_json (sorted (key, json) pairs).
    info: tuple[tuple[str, str], ...] = ()
    # Whether image_token_index was written in config.json (jina does, DeepSeek-OCR does not).
    write_image_token_index: bool = True

    def __post_init__(self) -> None:
        problems = _problems(self)
        if problems:
            raise ConfigError("; ".join(problems))

    # -- derived -------------------------------------------------------------------------
    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads

    @property
    def has_mtp(self) -> bool:
        return self.num_nextn_predict_layers > 0

    def is_moe_layer(self, i: int) -> bool:
        return i >= self.first_k_dense_replace

    @property
    def info_dict(self) -> dict[str, Any]:
        return {k: json.loads(v) for k, v in self.info}

    # -- presets -------------------------------------------------------------------------
    @classmethod
    def from_name(cls, name: str) -> ModelConfig:
        if name == "deepseek-ocr":
            return cls(info=_info({"architectures": ["DeepseekOCRForCausalLM"], "model_type": "deepseek_vl_v2",
                                   "candidate_resolutions": [[1024, 1024]], "global_view_pos": "head",
                                   "tile_tag": "2D", "torch_dtype": "bfloat16"}),
                       write_image_token_index=False)
        if name == "jina-ocr-v1":
            return replace(cls.from_name("deepseek-ocr"), rope_theta=1e6, max_position_embeddings=32768,
                           pad_token_id=2, write_image_token_index=True, **_jina_mtp())
        if name == "nano":
            from minuscule.tokenizer import NANO_SPECIAL_IDS, NANO_VOCAB_SIZE

            return cls(vocab_size=NANO_VOCAB_SIZE, hidden_size=64, intermediate_size=128, moe_intermediate_size=32,
                       num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=4, n_routed_experts=8,
                       n_shared_experts=2, num_experts_per_tok=2, rope_theta=1e6, max_position_embeddings=4096,
                       bos_token_id=NANO_SPECIAL_IDS["bos"], eos_token_id=NANO_SPECIAL_IDS["eos"],
                       pad_token_id=NANO_SPECIAL_IDS["pad"], image_token_id=NANO_SPECIAL_IDS["image"],
                       vision=VisionConfig.nano(n_embed=64),
                       info=_info({"architectures": ["DeepseekOCRForCausalLM"], "model_type": "deepseek_vl_v2",
                                   "torch_dtype": "float32"}),
                       **_jina_mtp())
        raise InputError(name, f"unknown model preset (choose from {', '.join(PRESETS)})")

    # -- config.json ---------------------------------------------------------------------
    @classmethod
    def from_pretrained(cls, path: str | os.PathLike[str]) -> ModelConfig:
        p = Path(path)
        file = p / "config.json" if p.is_dir() else p
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(str(file), "no config.json") from None
        except (OSError, json.JSONDecodeError) as e:
            raise InputError(str(file), f"unreadable config.json: {e}") from None
        try:
            return cls.from_json(data)
        except ConfigError as e:
            raise InputError(str(file), str(e)) from None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelConfig:
        """Parse a published config.json; unknown keys, unsupported variants and contradictions raise ConfigError."""
        if not isinstance(data, dict):
            raise ConfigError("config.json must hold an object")
        lang = data.get("language_config", {})
        if not isinstance(lang, dict):
            raise ConfigError("language_config must be an object")
        known = set(_DECODER_KEYS) | set(_MTP_KEYS) | set(_FIXED_KEYS) | _INFO_KEYS | _STRUCTURE_KEYS
        lang_known = (set(_DECODER_KEYS) | set(_MTP_KEYS) | set(_FIXED_KEYS) | _LANGUAGE_INFO_KEYS
                      | {"image_token_index", "head_dim"})
        problems = [f"unknown key {k!r}" for k in sorted(set(data) - known)]
        problems += [f"unknown key 'language_config.{k}'" for k in sorted(set(lang) - lang_known)]
        # The top level repeats language_config; a key given in both places must agree.
        for k in sorted(set(data) & set(lang) - _LANGUAGE_INFO_KEYS):
            if data[k] != lang[k]:
                problems.append(f"{k} is {data[k]!r} at the top level but {lang[k]!r} in language_config")
        merged = {**lang, **data}
        for k, want in _FIXED_KEYS.items():
            if k in merged and merged[k] != want:
                problems.append(f"{k}={merged[k]!r} is not supported (only {want!r})")
        if "head_dim" in merged and "hidden_size" in merged and "num_attention_heads" in merged and (
                merged["head_dim"] * merged["num_attention_heads"] != merged["hidden_size"]):
            problems.append(f"head_dim {merged['head_dim']} contradicts hidden_size / num_attention_heads")
        if "dtype" in data and "torch_dtype" in data and data["dtype"] != data["torch_dtype"]:
            problems.append(f"dtype {data['dtype']!r} contradicts torch_dtype {data['torch_dtype']!r}")
        if problems:
            raise ConfigError("; ".join(problems))
        values: dict[str, Any] = {}
        for k, default in {**_DECODER_KEYS, **_MTP_KEYS}.items():
            values[k] = _typed(k, merged.get(k, default))
        values["image_token_id"] = _typed("image_token_index", merged.get("image_token_index", DEFAULT_IMAGE_TOKEN_ID))
        try:
            vision = VisionConfig.from_json(data.get("vision_config", {}), data.get("projector_config", {}))
        except ValueError as e:
            raise ConfigError(str(e)) from None
        info = {k: v for k, v in data.items() if k in _INFO_KEYS}
        return cls(**values, vision=vision, info=_info(info), write_image_token_index="image_token_index" in merged)

    def to_json(self) -> dict[str, Any]:
        """The published layout: decoder keys at the top level and repeated in language_config."""
        decoder = {k: getattr(self, k) for k in _DECODER_KEYS}
        decoder.update({k: v for k, v in _FIXED_KEYS.items() if k != "rope_scaling"})
        if self.write_image_token_index:
            decoder["image_token_index"] = self.image_token_id
        if decoder["pad_token_id"] is None:
            del decoder["pad_token_id"]
        info = self.info_dict
        language = {"architectures": ["DeepseekV2ForCausalLM"], **decoder}
        if "torch_dtype" in info:
            language["torch_dtype"] = info["torch_dtype"]
        vision, projector = self.vision.to_json()
        out: dict[str, Any] = {**info, **decoder, "language_config": language, "vision_config": vision,
                               "projector_config": projector}
        if self.has_mtp:
            out.update({k: getattr(self, k) for k in _MTP_KEYS})
        return dict(sorted(out.items()))

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write config.json atomically into `directory`."""
        return write_json_atomic(Path(directory) / "config.json", self.to_json())

    def with_dtype_name(self, dtype_name: str) -> ModelConfig:
        """Copy whose informational torch_dtype says how the weights are stored."""
        info = self.info_dict
        info["torch_dtype"] = dtype_name
        if "dtype" in info:
            info["dtype"] = dtype_name
        return replace(self, info=_info(info))


def _jina_mtp() -> dict[str, Any]:
    return {"num_nextn_predict_layers": 1, "mtp_num_heads": 1, "mtp_num_speculative_steps": 3, "mtp_recursive": True,
            "mtp_moe": False, "mtp_share_embedding_weights": True, "mtp_share_lm_head": True, "mtp_share_norm": True}


def _info(d: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, json.dumps(v, sort_keys=True)) for k, v in d.items()))


def _typed(key: str, value: Any) -> Any:
    if key in _BOOL_KEYS:
        if not isinstance(value, bool):
            raise ConfigError(f"{key} must be true or false, not {value!r}")
        return value
    if key in _INT_KEYS or key == "image_token_index":
        if value is None and key == "pad_token_id":
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key} must be an integer, not {value!r}")
        return value
    if key in _FLOAT_KEYS:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{key} must be a number, not {value!r}")
        return float(value)
    if not isinstance(value, str):
        raise ConfigError(f"{key} must be a string, not {value!r}")
    return value


def _problems(c: ModelConfig) -> list[str]:
    p: list[str] = []
    positive = ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                "max_position_embeddings")
    p += [f"{k} must be positive, got {getattr(c, k)}" for k in positive if getattr(c, k) <= 0]
    if p:
        return p
    if c.hidden_size % c.num_attention_heads:
        p.append(f"hidden_size {c.hidden_size} is not divisible by num_attention_heads {c.num_attention_heads}")
    elif c.head_dim % 2:
        p.append(f"head_dim {c.head_dim} must be even for rotary embeddings")
    if c.num_key_value_heads != c.num_attention_heads:
        p.append(f"num_key_value_heads {c.num_key_value_heads} != num_attention_heads {c.num_attention_heads} "
                 "(only plain multi-head attention is supported)")
    if not 0 <= c.first_k_dense_replace <= c.num_hidden_layers:
        p.append(f"first_k_dense_replace {c.first_k_dense_replace} outside 0..num_hidden_layers")
    if c.first_k_dense_replace < c.num_hidden_layers:  # there are MoE layers
        if c.moe_layer_freq != 1:
            p.append(f"moe_layer_freq {c.moe_layer_freq} is not supported (only 1)")
        if c.n_routed_experts <= 0 or c.moe_intermediate_size <= 0:
            p.append("MoE layers need n_routed_experts and moe_intermediate_size > 0")
        elif not 1 <= c.num_experts_per_tok <= c.n_routed_experts:
            p.append(f"num_experts_per_tok {c.num_experts_per_tok} outside 1..n_routed_experts {c.n_routed_experts}")
        if c.n_shared_experts < 0:
            p.append("n_shared_experts must be >= 0")
    if c.scoring_func != "softmax":
        p.append(f"scoring_func {c.scoring_func!r} is not supported (only 'softmax')")
    if c.topk_method != "greedy":
        p.append(f"topk_method {c.topk_method!r} is not supported (only 'greedy')")
    if (c.n_group, c.topk_group) != (1, 1):
        p.append(f"n_group/topk_group {c.n_group}/{c.topk_group} are not supported with greedy top-k (only 1/1)")
    if c.hidden_act != "silu":
        p.append(f"hidden_act {c.hidden_act!r} is not supported (only 'silu')")
    if c.attention_bias:
        p.append("attention_bias=true is not supported")
    if c.tie_word_embeddings:
        p.append("tie_word_embeddings=true is not supported (the published models have a separate lm_head)")
    if c.rope_theta <= 0 or c.rms_norm_eps <= 0:
        p.append("rope_theta and rms_norm_eps must be positive")
    for k in ("bos_token_id", "eos_token_id", "pad_token_id", "image_token_id"):
        v = getattr(c, k)
        if v is not None and not 0 <= v < c.vocab_size:
            p.append(f"{k} {v} outside the vocabulary (vocab_size {c.vocab_size})")
    if c.vision.n_embed != c.hidden_size:
        p.append(f"projector n_embed {c.vision.n_embed} != hidden_size {c.hidden_size}")
    if c.num_nextn_predict_layers not in (0, 1):
        p.append(f"num_nextn_predict_layers {c.num_nextn_predict_layers} is not supported (0 or 1)")
    if c.has_mtp:
        if c.mtp_num_heads != c.num_nextn_predict_layers:
            p.append(f"mtp_num_heads {c.mtp_num_heads} contradicts num_nextn_predict_layers {c.num_nextn_predict_layers}")
        if c.mtp_num_speculative_steps < 1:
            p.append("mtp_num_speculative_steps must be >= 1 when an MTP head is present")
        if c.mtp_num_speculative_steps > 1 and not c.mtp_recursive:
            p.append("mtp_num_speculative_steps > 1 needs mtp_recursive=true with a single MTP head")
        if c.mtp_moe:
            p.append("mtp_moe=true is not supported (the FastMTP head is a dense block)")
        unshared = [k for k in ("mtp_share_embedding_weights", "mtp_share_lm_head", "mtp_share_norm") if not getattr(c, k)]
        if unshared:
            p.append(f"{', '.join(unshared)}=false is not supported (the head shares them with the decoder)")
    elif c.mtp_num_heads or c.mtp_num_speculative_steps:
        p.append("mtp_num_heads / mtp_num_speculative_steps set but num_nextn_predict_layers is 0")
    return p


def write_json_atomic(path: Path, data: Any) -> Path:
    """Write JSON (indented, UTF-8) next to its destination, then rename over it."""
    atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return path
