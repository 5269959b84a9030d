"""Document loaders: images of every supported kind, PDF rendering sizes, page selection parsing."""

from __future__ import annotations

import io

import pytest
from PIL import Image
from pdfmaker import PageSpec, make_pdf

from minuscule.documents import load, parse_pages
from minuscule.documents.pdf import group_lines
from minuscule.documents.types import Char
from minuscule.errors import InputError


def test_parse_pages():
    assert parse_pages("1-3,7") == [1, 2, 3, 7]
    assert parse_pages(" 2 , 2-3 ") == [2, 3]
    assert parse_pages(None) is None and parse_pages("") is None
    for bad in ("0", "3-1", "a", "1-", "1,,2"):
        with pytest.raises(ValueError):
            parse_pages(bad)


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP", "TIFF"])
def test_single_images(tmp_path, fmt):
    path = tmp_path / f"page.{fmt.lower()}"
    Image.new("RGB", (300, 200), "white").save(path, format=fmt)
    pages = load(path)
    assert len(pages) == 1 and pages[0].image.size == (300, 200) and pages[0].number == 1


def test_multipage_tiff_and_selection(tmp_path):
    path = tmp_path / "scan.tif"
    frames = [Image.new("L", (100 + i, 80), 255) for i in range(3)]
    frames[0].save(path, save_all=True, append_images=frames[1:])
    pages = load(path)
    assert [p.image.width for p in pages] == [100, 101, 102]
    assert [p.number for p in load(path, [3])] == [3]
    with pytest.raises(InputError, match="out of range"):
        load(path, [4])


def test_exif_orientation_is_applied(tmp_path):
    img = Image.new("RGB", (300, 100), "white")
    exif = img.getexif()
    exif[0x0112] = 6  # rotate 90° clockwise when shown
    path = tmp_path / "photo.jpg"
    img.save(path, exif=exif)
    assert load(path)[0].image.size == (100, 300)


def test_pdf_render_size_and_lazy_image(tmp_path):
    path = tmp_path / "doc.pdf"
    path.write_bytes(make_pdf([PageSpec().text(60, 100, "Hello", 12)]))
    page = load(path)[0]
    assert page._image is None  # born-digital pages render only when asked
    assert max(page.image.size) == 1600
    assert max(load(path, max_side=800)[0].image.size) == 800
    assert load(path, dpi=72)[0].image.size == (595, 842)
    assert page.text_layer.lines[0].text == "Hello"


def test_truncated_image(tmp_path):
    buf = io.BytesIO()
    Image.effect_noise((400, 400), 50).convert("RGB").save(buf, format="PNG")
    path = tmp_path / "cut.png"
    path.write_bytes(buf.getvalue()[:2000])
    with pytest.raises(InputError, match="corrupt or truncated"):
        load(path)


def test_soft_hyphen_and_space_handling():
    def ch(t, x, space=False):
        return Char(t, (x, 0, x + 5, 10), 10.0, space_before=space)

    # U+FFFE arrives already mapped to "-" by the loader; here: spaces come from the text layer flags
    line = group_lines([ch("a", 0), ch("b", 5), ch("c", 10, space=True), ch("d", 18)])
    assert [ln.text for ln in line] == ["ab c d"]
    # a gap of more than one em starts a new line (another column)
    split = group_lines([ch("a", 0), ch("b", 30)])
    assert [ln.text for ln in split] == ["a", "b"]
