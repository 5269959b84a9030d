"""Image loading (PNG, JPEG, WebP, TIFF incl. multi-page) into pages, with a pixel limit against bombs."""

from __future__ import annotations

import io
import warnings

from PIL import Image, ImageOps, UnidentifiedImageError

from minuscule.documents.types import Page
from minuscule.errors import InputError

# Pages larger than this are refused: ~ A0 at 300 dpi. A hostile file can claim any size in a few bytes.
MAX_PIXELS = 120_000_000


def open_image(data: bytes, source: str) -> Image.Image:
    """Open without decoding pixels; refuse decompression bombs and unknown formats."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(data))
            if img.width * img.height > MAX_PIXELS:
                raise InputError(source, f"image too large: {img.width}x{img.height} pixels "
                                         f"(limit {MAX_PIXELS:,})")
            return img
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise InputError(source, f"image too large (over {MAX_PIXELS:,} pixels, possible decompression bomb)") from None
    except UnidentifiedImageError:
        raise InputError(source, "not a supported image (PNG, JPEG, WebP, TIFF)") from None


def frame_count(img: Image.Image) -> int:
    return getattr(img, "n_frames", 1)


def image_pages(img: Image.Image, source: str, numbers: list[int], max_side: int | None = None) -> list[Page]:
    """One page per frame. Images are decoded now (they are the page) and downscaled to max_side if larger."""
    pages = []
    for number in numbers:
        try:
            img.seek(number - 1)
            frame = ImageOps.exif_transpose(img.copy()) or img.copy()
            frame.load()
            frame = frame.convert("RGB")
        except (OSError, ValueError, EOFError) as exc:
            raise InputError(source, f"image data is corrupt or truncated (frame {number}): {exc}") from None
        if max_side and max(frame.size) > max_side:
            frame.thumbnail((max_side, max_side), Image.LANCZOS)
        pages.append(Page(number=number, width=frame.width, height=frame.height, source=source, _image=frame))
    return pages
