"""Grounded output (<|ref|>label<|/ref|><|det|>[[x1,y1,x2,y2]]<|/det|>) → Blocks in page pixels."""

import pytest

from minuscule.documents.types import BLOCK_TYPES
from minuscule.processor import LABEL_TYPES, parse_grounded

PAGE = (1240, 1754)

OUTPUT = (
    "<|ref|>title<|/ref|><|det|>[[100, 50, 899, 90]]<|/det|>\n# Annual Report\n\n"
    "<|ref|>text<|/ref|><|det|>[[100, 120, 899, 300]]<|/det|>\nRevenue grew \\(12\\%\\) in 2024.\n\n"
    "<|ref|>image<|/ref|><|det|>[[0, 320, 999, 600]]<|/det|>\n\n"
    "<|ref|>image_caption<|/ref|><|det|>[[300, 610, 700, 630]]<|/det|>\n<center>Figure 1: Sales</center>\n\n"
    "<|ref|>table<|/ref|><|det|>[[100, 650, 899, 800], [100, 820, 899, 900]]<|/det|>\n"
    "<table><tr><td>a</td><td>1</td></tr></table>\n\n"
    "<|ref|>sub_title<|/ref|><|det|>[[100, 910, 500, 930]]<|/det|>\n## Outlook"
)


def test_blocks_types_content_and_pixel_boxes():
    blocks = parse_grounded(OUTPUT, *PAGE)
    assert [b.type for b in blocks] == ["title", "text", "figure", "caption", "table", "title"]
    assert blocks[0].markdown == "# Annual Report"
    assert blocks[1].markdown == "Revenue grew \\(12\\%\\) in 2024."
    assert blocks[2].markdown == ""  # no image descriptions
    assert blocks[3].markdown == "<center>Figure 1: Sales</center>"
    assert blocks[5].markdown == "## Outlook"
    x0, y0, x1, y1 = blocks[0].bbox
    assert x0 == pytest.approx(100 / 999 * 1240) and y0 == pytest.approx(50 / 999 * 1754)
    assert x1 == pytest.approx(899 / 999 * 1240) and y1 == pytest.approx(90 / 999 * 1754)
    assert blocks[2].bbox == pytest.approx((0, 320 / 999 * 1754, 1240, 600 / 999 * 1754))  # 999 is the far edge
    assert blocks[4].bbox == pytest.approx((100 / 999 * 1240, 650 / 999 * 1754, 899 / 999 * 1240, 900 / 999 * 1754))


def test_plain_output_is_one_page_sized_text_block():
    blocks = parse_grounded("# Heading\n\nBody text.\n", 800, 600)
    assert len(blocks) == 1 and blocks[0].type == "text" and blocks[0].bbox == (0, 0, 800, 600)
    assert blocks[0].markdown == "# Heading\n\nBody text."
    assert parse_grounded("  \n", 800, 600) == []


def test_malformed_and_unknown_spans():
    text = ("intro line\n<|ref|>Mystery<|/ref|><|det|>[[10, 20]]<|/det|>\nkept\n"
            "<|ref|>text<|/ref|><|det|>[[900, 900, 100, 100]]<|/det|>swapped\n"
            "<|ref|>text<|/ref|><|det|>[[-5, 0, 1200, 999]]<|/det|>clamped\n"
            "<|ref|>text<|/ref|><|det|>[[1, 2")  # truncated generation: not a complete span
    blocks = parse_grounded(text, 999, 999)
    assert blocks[0].type == "text" and blocks[0].markdown == "intro line"
    assert blocks[1].type == "text" and blocks[1].bbox == (0, 0, 999, 999) and blocks[1].markdown == "kept"
    assert blocks[2].bbox == pytest.approx((100, 100, 900, 900))
    assert blocks[3].bbox == pytest.approx((0, 0, 999, 999))
    assert blocks[3].markdown == "clamped"  # the truncated span is dropped
    assert len(blocks) == 4


def test_label_map_targets_known_block_types():
    assert set(LABEL_TYPES.values()) <= set(BLOCK_TYPES)
