"""Page image → DeepEncoder views and prompt ids with image placeholders; grounded output → Blocks."""

from __future__ import annotations

import io
import math
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
from PIL import Image, ImageOps

from minuscule.documents.types import Block
from minuscule.errors import InputError

if TYPE_CHECKING:
    import torch

# Hard-coded in both reference processors: SAM patch 16, two stride-2 convs.
PATCH_SIZE = 16
DOWNSAMPLE = 4
# A page is tiled only when a side exceeds this (also hard-coded in the references).
TILE_THRESHOLD = 640
MIN_TILES, MAX_TILES = 2, 9  # HF `infer` defaults; jina-ocr-v1's nine-crop setting
PAD_GRAY = 127  # int(0.5 * 255): the normalisation mean
MEAN = STD = 0.5


@dataclass(frozen=True)
class Mode:
    """A published resolution mode: the global view's side, the tile side, whether tiles are cut."""

    name: str
    base_size: int
    image_size: int
    crop: bool


MODES = {
    "tiny": Mode("tiny", 512, 512, False),
    "small": Mode("small", 640, 640, False),
    "base": Mode("base", 1024, 1024, False),
    "large": Mode("large", 1280, 1280, False),
    "gundam": Mode("gundam", 1024, 640, True),
}
DEFAULT_MODE = "gundam"


def get_mode(mode: str | Mode) -> Mode:
    if isinstance(mode, Mode):
        return mode
    try:
        return MODES[mode]
    except KeyError:
        raise InputError("mode", f"unknown mode {mode!r} (choose from {', '.join(MODES)})") from None


def tokens_per_side(size: int) -> int:
    return math.ceil((size // PATCH_SIZE) / DOWNSAMPLE)


# -- tile grid --------------------------------------------------------------------------------
def tile_candidates(min_num: int = MIN_TILES, max_num: int = MAX_TILES) -> list[tuple[int, int]]:
    """(tiles across, tiles down) grids with min_num ≤ i·j ≤ max_num, in the reference's order.

    The reference builds a Python set and stable-sorts it by tile count, so grids with the same
    count keep CPython's set iteration order (deterministic for small int tuples). That order
    decides ties, so it is reproduced the same way; tests pin it for 2..9.
    """
    grids = {(i, j) for n in range(min_num, max_num + 1) for i in range(1, n + 1) for j in range(1, n + 1)
             if min_num <= i * j <= max_num}
    return sorted(grids, key=lambda g: g[0] * g[1])


def closest_grid(width: int, height: int, candidates: list[tuple[int, int]],
                 tile_size: int = TILE_THRESHOLD) -> tuple[int, int]:
    """The candidate whose aspect ratio is closest to width/height.

    On an exact tie a later candidate wins only if the page area exceeds half the area of its
    tiles, so big pages move to the larger grid and small ones stay on the smaller.
    """
    aspect = width / height
    best, best_diff = (1, 1), float("inf")
    for i, j in candidates:
        diff = abs(aspect - i / j)
        if diff < best_diff:
            best, best_diff = (i, j), diff
        elif diff == best_diff and width * height > 0.5 * tile_size * tile_size * i * j:
            best = (i, j)
    return best


def tile_grid(width: int, height: int, mode: str | Mode = DEFAULT_MODE) -> tuple[int, int]:
    """(tiles across, tiles down); (1, 1) means no local tiles, only the global view."""
    m = get_mode(mode)
    if not m.crop or (width <= TILE_THRESHOLD and height <= TILE_THRESHOLD):
        return 1, 1
    return closest_grid(width, height, tile_candidates(), m.image_size)


def image_token_layout(width: int, height: int, mode: str | Mode = DEFAULT_MODE) -> tuple[int, int, int]:
    """(tiles_w, tiles_h, image_tokens) for a width x height page; tokens include newlines and the separator."""
    if width <= 0 or height <= 0:
        raise InputError(f"{width}x{height}", "image size must be positive")
    m = get_mode(mode)
    w_t, h_t = tile_grid(width, height, m)
    if not m.crop:
        q = tokens_per_side(m.image_size)
        return 1, 1, q * (q + 1) + 1
    q = tokens_per_side(m.base_size)
    tokens = q * (q + 1) + 1
    if (w_t, h_t) != (1, 1):
        t = tokens_per_side(m.image_size)
        tokens += (t * h_t) * (t * w_t + 1)
    return w_t, h_t, tokens


# -- pixels ------------------------------------------------------------------------------------
def load_image(source: str | os.PathLike[str] | bytes | Image.Image, name: str | None = None) -> Image.Image:
    """An RGB image upright per its EXIF orientation, from a path, bytes or a PIL image."""
    label = name or (str(source) if isinstance(source, (str, os.PathLike)) else "image")
    try:
        if isinstance(source, Image.Image):
            img = source
        elif isinstance(source, bytes):
            img = Image.open(io.BytesIO(source))
        else:
            img = Image.open(source)
        img = ImageOps.exif_transpose(img)
        return img.convert("RGB")
    except (OSError, ValueError, Image.DecompressionBombError) as e:
        raise InputError(label, f"cannot read image: {e}") from None


def to_tensor(img: Image.Image) -> torch.Tensor:
    """(3, H, W) float32 in [-1, 1]: /255, then (x - 0.5) / 0.5 in that order, as ToTensor + Normalize do."""
    import torch

    x = torch.from_numpy(np.asarray(img.convert("RGB"), dtype=np.uint8).copy())  # (H, W, 3)
    x = x.permute(2, 0, 1).float().div(255.0)  # (3, H, W)
    return (x - MEAN) / STD


def global_view(img: Image.Image, mode: str | Mode = DEFAULT_MODE) -> Image.Image:
    """The whole page as one square view: stretched for tiny/small, letterboxed on gray 127 otherwise."""
    m = get_mode(mode)
    size = m.base_size if m.crop else m.image_size
    if not m.crop and m.image_size <= TILE_THRESHOLD:
        img = img.resize((size, size), Image.Resampling.BICUBIC)
    return ImageOps.pad(img, (size, size), method=Image.Resampling.BICUBIC, color=(PAD_GRAY,) * 3)


def local_tiles(img: Image.Image, grid: tuple[int, int], tile: int) -> list[Image.Image]:
    """Resize to (tile·w_t, tile·h_t), aspect not kept, and cut row-major."""
    w_t, h_t = grid
    big = img.resize((tile * w_t, tile * h_t), Image.Resampling.BICUBIC)
    return [big.crop((c * tile, r * tile, (c + 1) * tile, (r + 1) * tile)) for r in range(h_t) for c in range(w_t)]


@dataclass
class ImageViews:
    """One page's encoder inputs: the global view, its tiles (row-major, possibly none), the grid."""

    global_view: torch.Tensor  # (1, 3, S, S) float32
    tiles: torch.Tensor  # (w_t·h_t, 3, T, T) float32, or (0, 3, T, T) when not tiled
    grid: tuple[int, int]  # (tiles across, tiles down); (1, 1) when not tiled
    num_tokens: int  # placeholders this image takes in the prompt


def image_views(img: Image.Image, mode: str | Mode = DEFAULT_MODE) -> ImageViews:
    import torch

    m = get_mode(mode)
    w_t, h_t, n = image_token_layout(img.width, img.height, m)
    g = to_tensor(global_view(img, m))[None]  # (1, 3, S, S)
    tile = m.image_size
    if (w_t, h_t) == (1, 1):
        tiles = torch.zeros(0, 3, tile, tile)
    else:
        tiles = torch.stack([to_tensor(t) for t in local_tiles(img, (w_t, h_t), tile)])  # (n, 3, T, T)
    return ImageViews(g, tiles, (w_t, h_t), n)


# -- prompts -----------------------------------------------------------------------------------
IMAGE_MARKER = "<image>"
DEEPSEEK_PROMPT = "<|grounding|>Convert the document to markdown."
JINA_PROMPT = ("Transcribe the provided document image into a clean Markdown format, "
               "preserving the natural reading order.")
PROMPT_FORMATS = ("deepseek", "jina")


class TokenizerLike(Protocol):
    bos_id: int
    image_id: int

    def encode(self, text: str) -> list[int]: ...


def prompt_text(prompt: str | None = None, fmt: str = "jina") -> str:
    """The rendered prompt with its one `<image>` marker.

    deepseek: the `plain` template, i.e. "<image>\\n" + instruction, stripped (BOS is added as an id).
    jina: the chat template "<|User|>:\\n<image>\\n{prompt}\\n<|Assistant|>:\\n", text right-stripped.
    """
    if fmt == "deepseek":
        return (IMAGE_MARKER + "\n" + (DEEPSEEK_PROMPT if prompt is None else prompt)).strip()
    if fmt == "jina":
        body = (JINA_PROMPT if prompt is None else prompt).rstrip()
        return f"<|User|>:\n{IMAGE_MARKER}\n{body}\n<|Assistant|>:\n"
    raise InputError("prompt format", f"unknown format {fmt!r} (choose from {', '.join(PROMPT_FORMATS)})")


def prompt_ids(tokenizer: TokenizerLike, n_image_tokens: int, prompt: str | None = None,
               fmt: str = "jina") -> list[int]:
    """Ids of the prompt with `n_image_tokens` image ids spliced in at the marker.

    Each side of the marker is encoded on its own, without special tokens; deepseek prepends BOS.
    """
    if n_image_tokens <= 0:
        raise ValueError("an image takes at least one placeholder")
    text = prompt_text(prompt, fmt)
    parts = text.split(IMAGE_MARKER)
    if len(parts) != 2:
        raise InputError("prompt", f"expected exactly one {IMAGE_MARKER} marker, found {len(parts) - 1}")
    before, after = (tokenizer.encode(p) if p else [] for p in parts)
    ids = before + [tokenizer.image_id] * n_image_tokens + after
    return [tokenizer.bos_id] + ids if fmt == "deepseek" else ids


@dataclass
class ModelInputs:
    """What the engine gets for one page: ids and tensors only."""

    input_ids: torch.Tensor  # (L,) int64
    image_mask: torch.Tensor  # (L,) bool, True at image placeholders
    global_view: torch.Tensor  # (1, 3, S, S) float32
    tiles: torch.Tensor  # (n, 3, T, T) float32, n = w_t·h_t or 0
    grid: tuple[int, int]  # (tiles across, tiles down); (1, 1) when not tiled

    @property
    def image_positions(self) -> torch.Tensor:
        return self.image_mask.nonzero().flatten()

    @property
    def num_image_tokens(self) -> int:
        return int(self.image_mask.sum())


class Processor:
    """Turns a page image (+ optional instruction) into ModelInputs for a given prompt format and mode."""

    def __init__(self, tokenizer: TokenizerLike, fmt: str = "jina", mode: str = DEFAULT_MODE,
                 prompt: str | None = None):
        prompt_text(prompt, fmt)  # validates the format early
        self.tokenizer = tokenizer
        self.fmt = fmt
        self.mode = get_mode(mode)
        self.prompt = prompt

    def __call__(self, image: str | os.PathLike[str] | bytes | Image.Image, prompt: str | None = None) -> ModelInputs:
        import torch

        views = image_views(load_image(image), self.mode)
        ids = prompt_ids(self.tokenizer, views.num_tokens, prompt if prompt is not None else self.prompt, self.fmt)
        input_ids = torch.tensor(ids, dtype=torch.long)
        mask = input_ids == self.tokenizer.image_id
        return ModelInputs(input_ids, mask, views.global_view, views.tiles, views.grid)


# -- grounded output ---------------------------------------------------------------------------
# Labels DeepSeek-OCR emits under <|grounding|>, mapped to our block types; others become text.
LABEL_TYPES = {
    "title": "title", "sub_title": "title", "text": "text", "list": "list", "table": "table",
    "image": "figure", "figure": "figure", "chart": "figure",
    "image_caption": "caption", "table_caption": "caption", "figure_caption": "caption",
    "table_footnote": "caption", "caption": "caption",
    "equation": "formula", "formula": "formula", "isolate_formula": "formula",
    "code": "code", "header": "header", "page_header": "header", "footer": "footer", "page_footer": "footer",
    "page_number": "footer",
}
_REF = re.compile(r"<\|ref\|>(.*?)<\|/ref\|><\|det\|>(.*?)<\|/det\|>", re.DOTALL)
_BOX = re.compile(r"\[\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*\]")
_INCOMPLETE = re.compile(r"<\|/?(?:ref|det)\|>")  # left over only from a span cut off by the token limit
GRID_MAX = 999  # coordinates are 0..999 bins of the page side


def _bbox(det: str, width: float, height: float) -> tuple[float, float, float, float]:
    """Union of the boxes in a det span, in page pixels; the whole page when none parses."""
    boxes = [tuple(float(v) for v in m.groups()) for m in _BOX.finditer(det)]
    if not boxes:
        return 0.0, 0.0, float(width), float(height)
    x0 = min(b[0] for b in boxes)
    y0 = min(b[1] for b in boxes)
    x1 = max(b[2] for b in boxes)
    y1 = max(b[3] for b in boxes)

    def sx(v: float) -> float:
        return min(max(v, 0.0), GRID_MAX) / GRID_MAX * width

    def sy(v: float) -> float:
        return min(max(v, 0.0), GRID_MAX) / GRID_MAX * height

    return sx(min(x0, x1)), sy(min(y0, y1)), sx(max(x0, x1)), sy(max(y0, y1))


def parse_grounded(text: str, width: float, height: float) -> list[Block]:
    """Blocks from `<|ref|>label<|/ref|><|det|>[[x1,y1,x2,y2]]<|/det|>` + content spans, in order.

    Content runs from a det span to the next ref span. Text outside any span (or output without
    grounding) becomes a text block covering the whole page. Figures keep no Markdown; a span cut
    off at the end of generation is dropped.
    """
    blocks: list[Block] = []
    matches = list(_REF.finditer(text))
    lead = _INCOMPLETE.split(text[: matches[0].start()] if matches else text, 1)[0]
    if lead.strip():
        blocks.append(Block("text", (0.0, 0.0, float(width), float(height)), lead.strip()))
    for k, m in enumerate(matches):
        end = matches[k + 1].start() if k + 1 < len(matches) else len(text)
        label = m.group(1).strip().lower()
        kind = LABEL_TYPES.get(label, "text")
        content = _INCOMPLETE.split(text[m.end():end], 1)[0].strip()
        blocks.append(Block(kind, _bbox(m.group(2), width, height), "" if kind == "figure" else content))
    return blocks
