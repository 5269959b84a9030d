"""Open any supported input (PDF or image, from a path or bytes) as a list of Pages."""

from __future__ import annotations

from pathlib import Path

from minuscule.documents.image import frame_count, image_pages, open_image
from minuscule.documents.pages import check_pages
from minuscule.documents.pdf import open_pdf, pdf_pages
from minuscule.documents.types import Page
from minuscule.errors import InputError

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".webp", ".tif", ".tiff"}
DOCUMENT_SUFFIXES = {".pdf"} | IMAGE_SUFFIXES
_IMAGE_MAGIC = (b"\x89PNG", b"\xff\xd8\xff", b"II*\x00", b"MM\x00*", b"RIFF")


def read_input(path: str | Path) -> bytes:
    """The bytes of a file, with one-line errors for what users get wrong."""
    p = Path(path)
    if not p.exists():
        raise InputError(str(path), "no such file")
    if p.is_dir():
        raise InputError(str(path), "is a folder, not a document")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from None
    if not data:
        raise InputError(str(path), "empty file")
    return data


def load(source: str | Path, pages: list[int] | None = None, *, data: bytes | None = None,
         max_side: int | None = None, dpi: float | None = None, password: str | None = None) -> list[Page]:
    """Pages of a PDF or image, selected by 1-based numbers (None = all).

    PDF pages render lazily at `dpi`, or so that the longest side is `max_side` pixels (default 1600).
    """
    name = str(source)
    if data is None:
        data = read_input(source)
    elif not data:
        raise InputError(name, "empty file")
    head = data[:8]
    if head.startswith(b"%PDF") or b"%PDF" in data[:1024]:
        doc = open_pdf(data, name, password)
        numbers = _select(name, pages, len(doc))
        return pdf_pages(doc, name, numbers, max_side=max_side, dpi=dpi)
    if head.startswith(_IMAGE_MAGIC):
        img = open_image(data, name)
        numbers = _select(name, pages, frame_count(img))
        return image_pages(img, name, numbers, max_side=None if dpi else max_side)
    raise InputError(name, "not a PDF or a supported image (PNG, JPEG, WebP, TIFF)")


def _select(name: str, pages: list[int] | None, count: int) -> list[int]:
    if count == 0:
        raise InputError(name, "document has no pages")
    try:
        return check_pages(pages, count)
    except ValueError as exc:
        raise InputError(name, str(exc)) from None
