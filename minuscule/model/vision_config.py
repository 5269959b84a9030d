"""Vision-side configuration of DeepSeek-OCR / jina-ocr-v1: SAM ViT-B, CLIP-L and the projector."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Keys of the published `vision_config.width` block; kept for our own (nano) checkpoints too, so
# one parser reads both.
SAM_KEY = "sam_vit_b"
CLIP_KEY = "clip-l-14-224"


@dataclass(frozen=True)
class SamConfig:
    """SAM ViT image encoder, its neck and the 16x conv compressor (`net_2`, `net_3`)."""

    width: int = 768
    layers: int = 12
    heads: int = 12
    global_attn_indexes: tuple[int, ...] = (2, 5, 8, 11)
    downsample_channels: tuple[int, ...] = (512, 1024)  # net_2, net_3 output channels
    # Not in the published block (the reference code hard-codes them); written by to_json only
    # when they differ from these values.
    patch_size: int = 16
    window_size: int = 14
    mlp_dim: int = 3072
    neck_channels: int = 256
    pos_grid: int = 64  # side of the stored absolute position table (1024 / 16)

    def __post_init__(self) -> None:
        _check(self.width % self.heads == 0, f"sam width {self.width} not divisible by heads {self.heads}")
        _check(len(self.downsample_channels) == 2, "sam downsample_channels must have 2 entries")
        _check(
            all(0 <= i < self.layers for i in self.global_attn_indexes),
            f"sam global_attn_indexes {list(self.global_attn_indexes)} outside 0..{self.layers - 1}",
        )
        _check(min(self.width, self.layers, self.patch_size, self.window_size, self.mlp_dim) > 0,
               "sam sizes must be positive")

    @property
    def head_dim(self) -> int:
        return self.width // self.heads

    @property
    def out_channels(self) -> int:
        return self.downsample_channels[-1]


@dataclass(frozen=True)
class ClipConfig:
    """CLIP ViT that runs on the compressed SAM features instead of its own patches."""

    width: int = 1024
    layers: int = 24
    heads: int = 16
    patch_size: int = 14  # only shapes the unused `patch_embedding` weight
    image_size: int = 224  # with patch_size, fixes the stored position table: (224/14)^2 + 1 = 257
    mlp_dim: int = 4096  # not in the published block (hard-coded in the reference code)

    def __post_init__(self) -> None:
        _check(self.width % self.heads == 0, f"clip width {self.width} not divisible by heads {self.heads}")
        _check(self.image_size % self.patch_size == 0, "clip image_size must be a multiple of patch_size")

    @property
    def head_dim(self) -> int:
        return self.width // self.heads

    @property
    def num_positions(self) -> int:
        return (self.image_size // self.patch_size) ** 2 + 1


@dataclass(frozen=True)
class VisionConfig:
    """DeepEncoder (SAM → compressor → CLIP, concat CLIP|SAM) and the linear projector to the decoder."""

    image_size: int = 1024  # SAM's native input side; the global view
    sam: SamConfig = field(default_factory=SamConfig)
    clip: ClipConfig = field(default_factory=ClipConfig)
    projector_input_dim: int = 2048
    n_embed: int = 1280  # decoder hidden size
    projector_type: str = "linear"
    # Informational fields of the published blocks, kept so that to_json gives them back.
    model_name: str = "deeplip_b_l"
    model_type: str = "vision"
    mlp_ratio: float = 3.7362  # unused by the network (a DeepSeek-VL2 leftover)
    projector_model_type: str = "mlp_projector"

    def __post_init__(self) -> None:
        _check(self.projector_type == "linear", f"projector_type {self.projector_type!r} is not supported (only 'linear')")
        _check(self.sam.out_channels == self.clip.width,
               f"sam output channels {self.sam.out_channels} must equal clip width {self.clip.width}")
        _check(self.projector_input_dim == self.clip.width + self.sam.out_channels,
               f"projector input_dim {self.projector_input_dim} != clip width + sam channels "
               f"{self.clip.width + self.sam.out_channels}")
        _check(self.image_size == self.sam.pos_grid * self.sam.patch_size,
               f"image_size {self.image_size} != sam position grid {self.sam.pos_grid} x patch {self.sam.patch_size}")

    # -- presets ---------------------------------------------------------------------------
    @classmethod
    def real(cls) -> VisionConfig:
        """The published DeepSeek-OCR / jina-ocr-v1 sizes."""
        return cls()

    @classmethod
    def nano(cls, n_embed: int = 64) -> VisionConfig:
        """Same architecture and token geometry (patch 16, window 14, 1024/640 views), tiny widths."""
        return cls(
            sam=SamConfig(width=32, layers=4, heads=2, global_attn_indexes=(1, 3), downsample_channels=(32, 64),
                          mlp_dim=64, neck_channels=16),
            clip=ClipConfig(width=64, layers=2, heads=2, mlp_dim=128),
            projector_input_dim=128,
            n_embed=n_embed,
            model_name="minuscule_nano",
        )

    # -- published JSON blocks ---------------------------------------------------------------
    @classmethod
    def from_json(cls, vision_config: dict[str, Any], projector_config: dict[str, Any]) -> VisionConfig:
        """Parse the checkpoint's `vision_config` and `projector_config` blocks; unknown keys are errors."""
        _known(vision_config, {"image_size", "mlp_ratio", "model_name", "model_type", "width"}, "vision_config")
        _known(projector_config, {"input_dim", "model_type", "n_embed", "projector_type"}, "projector_config")
        width = vision_config.get("width", {})
        _check(isinstance(width, dict), "vision_config.width must be an object")
        _known(width, {SAM_KEY, CLIP_KEY}, "vision_config.width")
        sam_j = dict(width.get(SAM_KEY, {}))
        clip_j = dict(width.get(CLIP_KEY, {}))
        sam_fields = {"width", "layers", "heads", "global_attn_indexes", "downsample_channels", "patch_size",
                      "window_size", "mlp_dim", "neck_channels", "pos_grid"}
        clip_fields = {"width", "layers", "heads", "patch_size", "image_size", "mlp_dim"}
        _known(sam_j, sam_fields, f"vision_config.width.{SAM_KEY}")
        _known(clip_j, clip_fields, f"vision_config.width.{CLIP_KEY}")
        for k in ("global_attn_indexes", "downsample_channels"):
            if k in sam_j:
                sam_j[k] = tuple(int(v) for v in sam_j[k])
        d = cls()
        try:
            return cls(
                image_size=int(vision_config.get("image_size", d.image_size)),
                sam=SamConfig(**sam_j),
                clip=ClipConfig(**clip_j),
                projector_input_dim=int(projector_config.get("input_dim", d.projector_input_dim)),
                n_embed=int(projector_config.get("n_embed", d.n_embed)),
                projector_type=str(projector_config.get("projector_type", d.projector_type)),
                model_name=str(vision_config.get("model_name", d.model_name)),
                model_type=str(vision_config.get("model_type", d.model_type)),
                mlp_ratio=float(vision_config.get("mlp_ratio", d.mlp_ratio)),
                projector_model_type=str(projector_config.get("model_type", d.projector_model_type)),
            )
        except TypeError as e:  # a wrongly typed value in the JSON
            raise ValueError(f"vision_config: {e}") from e

    def to_json(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(vision_config, projector_config) blocks; the real preset gives the published ones back."""
        sam_j: dict[str, Any] = {
            "downsample_channels": list(self.sam.downsample_channels),
            "global_attn_indexes": list(self.sam.global_attn_indexes),
            "heads": self.sam.heads,
            "layers": self.sam.layers,
            "width": self.sam.width,
        }
        ds, dc = SamConfig(), ClipConfig()
        for k in ("patch_size", "window_size", "mlp_dim", "neck_channels", "pos_grid"):
            if getattr(self.sam, k) != getattr(ds, k):
                sam_j[k] = getattr(self.sam, k)
        clip_j: dict[str, Any] = {
            "heads": self.clip.heads,
            "image_size": self.clip.image_size,
            "layers": self.clip.layers,
            "patch_size": self.clip.patch_size,
            "width": self.clip.width,
        }
        if self.clip.mlp_dim != dc.mlp_dim:
            clip_j["mlp_dim"] = self.clip.mlp_dim
        vision = {
            "image_size": self.image_size,
            "mlp_ratio": self.mlp_ratio,
            "model_name": self.model_name,
            "model_type": self.model_type,
            "width": {CLIP_KEY: clip_j, SAM_KEY: sam_j},
        }
        projector = {
            "input_dim": self.projector_input_dim,
            "model_type": self.projector_model_type,
            "n_embed": self.n_embed,
            "projector_type": self.projector_type,
        }
        return vision, projector


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)


def _known(block: dict[str, Any], allowed: set[str], where: str) -> None:
    if not isinstance(block, dict):
        raise ValueError(f"{where} must be an object")
    unknown = sorted(set(block) - allowed)
    if unknown:
        raise ValueError(f"{where}: unknown keys {unknown}")
