"""VisionConfig: published JSON blocks round-trip, presets, unknown keys rejected."""

import dataclasses

import pytest

from minuscule.model.vision_config import ClipConfig, SamConfig, VisionConfig

# The `vision_config` / `projector_config` blocks of DeepSeek-OCR's config.json (research report §5).
PUBLISHED_VISION = {
    "image_size": 1024,
    "mlp_ratio": 3.7362,
    "model_name": "deeplip_b_l",
    "model_type": "vision",
    "width": {
        "clip-l-14-224": {"heads": 16, "image_size": 224, "layers": 24, "patch_size": 14, "width": 1024},
        "sam_vit_b": {"downsample_channels": [512, 1024], "global_attn_indexes": [2, 5, 8, 11], "heads": 12,
                      "layers": 12, "width": 768},
    },
}
PUBLISHED_PROJECTOR = {"input_dim": 2048, "model_type": "mlp_projector", "n_embed": 1280, "projector_type": "linear"}


def test_published_blocks_parse_to_real_preset_and_back():
    cfg = VisionConfig.from_json(PUBLISHED_VISION, PUBLISHED_PROJECTOR)
    assert cfg == VisionConfig.real()
    assert cfg.sam.global_attn_indexes == (2, 5, 8, 11) and cfg.sam.window_size == 14 and cfg.sam.mlp_dim == 3072
    assert cfg.clip.num_positions == 257 and cfg.clip.mlp_dim == 4096
    assert cfg.to_json() == (PUBLISHED_VISION, PUBLISHED_PROJECTOR)


def test_nano_keeps_token_geometry_and_round_trips():
    nano, real = VisionConfig.nano(), VisionConfig.real()
    for f in ("patch_size", "window_size", "pos_grid"):
        assert getattr(nano.sam, f) == getattr(real.sam, f)
    assert nano.image_size == real.image_size and nano.clip.num_positions == real.clip.num_positions
    assert nano.sam.width < real.sam.width and nano.clip.layers < real.clip.layers
    vision, projector = nano.to_json()
    assert VisionConfig.from_json(vision, projector) == nano
    assert VisionConfig.nano(n_embed=96).n_embed == 96


@pytest.mark.parametrize("where", ["vision", "projector", "sam", "clip", "width"])
def test_unknown_keys_are_errors(where):
    vision = {**PUBLISHED_VISION, "width": {k: dict(v) for k, v in PUBLISHED_VISION["width"].items()}}
    projector = dict(PUBLISHED_PROJECTOR)
    target = {"vision": vision, "projector": projector, "sam": vision["width"]["sam_vit_b"],
              "clip": vision["width"]["clip-l-14-224"], "width": vision["width"]}[where]
    target["surprise"] = 1
    with pytest.raises(ValueError, match="surprise"):
        VisionConfig.from_json(vision, projector)


def test_contradictions_are_errors():
    with pytest.raises(ValueError, match="input_dim"):
        VisionConfig.from_json(PUBLISHED_VISION, {**PUBLISHED_PROJECTOR, "input_dim": 2000})
    with pytest.raises(ValueError, match="projector_type"):
        VisionConfig.from_json(PUBLISHED_VISION, {**PUBLISHED_PROJECTOR, "projector_type": "mlp_gelu"})
    with pytest.raises(ValueError, match="image_size"):
        VisionConfig.from_json({**PUBLISHED_VISION, "image_size": 640}, PUBLISHED_PROJECTOR)
    with pytest.raises(ValueError, match="vision_config"):
        VisionConfig.from_json({**PUBLISHED_VISION, "width": {"sam_vit_b": {"layers": "12"}}}, PUBLISHED_PROJECTOR)
    with pytest.raises(ValueError, match="global_attn_indexes"):
        SamConfig(layers=4, global_attn_indexes=(2, 5))
    with pytest.raises(ValueError, match="clip width"):
        dataclasses.replace(VisionConfig.real(), clip=ClipConfig(width=512, heads=8))
