"""Processor: token layout per mode, tile-grid choice and ties, pixels (gray padding, EXIF, tiles), prompts."""

import io

import numpy as np
import pytest
import torch
from PIL import Image

from minuscule.errors import InputError
from minuscule.processor import (
    DEEPSEEK_PROMPT,
    JINA_PROMPT,
    MODES,
    Processor,
    closest_grid,
    global_view,
    image_token_layout,
    image_views,
    load_image,
    prompt_ids,
    prompt_text,
    tile_candidates,
    to_tensor,
)

# research/deepseek-ocr.md §2.3: the set-then-stable-sort order of the reference (2..9 tiles).
PUBLISHED_ORDER = [(1, 2), (2, 1), (3, 1), (1, 3), (2, 2), (4, 1), (1, 4), (5, 1), (1, 5), (1, 6), (6, 1), (3, 2),
                   (2, 3), (7, 1), (1, 7), (4, 2), (2, 4), (1, 8), (8, 1), (1, 9), (3, 3), (9, 1)]


def test_candidate_order_is_the_published_one():
    assert tile_candidates() == PUBLISHED_ORDER


@pytest.mark.parametrize("mode,tokens", [("tiny", 73), ("small", 111), ("base", 273), ("large", 421)])
def test_native_modes_ignore_page_size(mode, tokens):
    for size in [(100, 100), (1240, 1754), (4000, 300)]:
        assert image_token_layout(*size, mode) == (1, 1, tokens)


@pytest.mark.parametrize("size,grid,tokens", [
    ((640, 640), (1, 1), 273),  # no side over 640: global view only
    ((300, 500), (1, 1), 273),
    ((1240, 1754), (2, 3), 903),  # A4 at 150 dpi
    ((595, 842), (2, 3), 903),  # A4 in points: only the height exceeds 640, still tiled
    ((2480, 3508), (2, 3), 903),  # A4 at 300 dpi
    ((600, 800), (2, 3), 903),
    ((1700, 2200), (2, 3), 903),  # US letter: 0.773 is closer to 2/3 than to 3/4 (not a candidate)
    ((1920, 1080), (4, 2), 273 + 20 * 41),  # 1.78: 2/1 and 4/2 tie (0.22, better than 3/2); the page is large
    ((641, 100), (6, 1), 273 + 10 * 61),
    ((3000, 1000), (3, 1), 273 + 10 * 31),
    ((800, 6400), (1, 8), 273 + 80 * 11),
])
def test_gundam_layout(size, grid, tokens):
    assert image_token_layout(*size) == (*grid, tokens)
    assert image_token_layout(*size, "gundam") == (*grid, tokens)


@pytest.mark.parametrize("size,grid", [
    # aspect 1: (2,2) comes first; (3,3) ties and wins only when W·H > 0.5·640²·9 = 1,843,200
    ((1000, 1000), (2, 2)), ((1357, 1357), (2, 2)), ((1358, 1358), (3, 3)),
    # aspect 2: (2,1) first; (4,2) ties and wins when W·H > 0.5·640²·8 = 1,638,400
    ((1800, 900), (2, 1)), ((1810, 905), (2, 1)), ((1820, 910), (4, 2)),
    # aspect 1/2: (1,2) first; (2,4) later
    ((900, 1800), (1, 2)), ((910, 1820), (2, 4)),
])
def test_ties_prefer_the_later_grid_only_for_large_pages(size, grid):
    assert image_token_layout(*size)[:2] == grid


def test_tie_rule_uses_candidate_order():
    assert closest_grid(2000, 2000, [(2, 2), (3, 3)]) == (3, 3)  # 4e6 > 0.5·640²·9: later one replaces
    assert closest_grid(1000, 1000, [(3, 3), (2, 2)]) == (2, 2)  # 1e6 > 819,200: later one replaces
    assert closest_grid(700, 700, [(3, 3), (2, 2)]) == (3, 3)  # 490,000 < 819,200: kept


def test_bad_sizes_and_modes_are_input_errors():
    with pytest.raises(InputError):
        image_token_layout(0, 100)
    with pytest.raises(InputError, match="mode"):
        image_token_layout(100, 100, "huge")


# -- pixels ------------------------------------------------------------------------------------
GRAY = (127 / 255 - 0.5) / 0.5


def test_gundam_global_view_pads_with_gray_127():
    img = Image.new("RGB", (200, 400), (255, 255, 255))
    v = image_views(img, "gundam")
    g = v.global_view[0]
    assert g.shape == (3, 1024, 1024) and v.tiles.shape == (0, 3, 640, 640) and v.grid == (1, 1)
    assert torch.allclose(g[:, :, :200], torch.tensor(GRAY))  # letterbox bars left and right
    assert torch.allclose(g[:, :, -200:], torch.tensor(GRAY))
    assert torch.allclose(g[:, :, 300:700], torch.tensor(1.0))  # the page, scaled to 512x1024, centred
    assert torch.allclose(to_tensor(Image.new("RGB", (2, 2), (0, 0, 0))), torch.tensor(-1.0))


@pytest.mark.parametrize("mode,size,padded", [("tiny", 512, False), ("small", 640, False), ("base", 1024, True),
                                              ("large", 1280, True)])
def test_native_modes_stretch_small_views_and_pad_large(mode, size, padded):
    img = Image.new("RGB", (100, 300), (0, 0, 0))
    view = global_view(img, mode)
    assert view.size == (size, size)
    corner = np.asarray(view)[0, 0]
    assert (corner == 127).all() if padded else (corner == 0).all()


def test_tiles_are_cut_row_major_from_the_resized_page():
    img = Image.new("RGB", (1280, 1920))
    colors = {}
    for r in range(3):
        for c in range(2):
            color = (40 * r + 10 * c, 200 - 50 * r, 30 * c)
            img.paste(color, (640 * c, 640 * r, 640 * (c + 1), 640 * (r + 1)))
            colors[r * 2 + c] = color
    v = image_views(img)
    assert v.grid == (2, 3) and v.num_tokens == 903 and v.tiles.shape == (6, 3, 640, 640)
    for k, color in colors.items():
        want = (torch.tensor(color, dtype=torch.float32) / 255 - 0.5) / 0.5
        assert torch.allclose(v.tiles[k], want[:, None, None].expand(3, 640, 640))


def test_exif_orientation_is_applied(tmp_path):
    img = Image.new("RGB", (300, 200), (255, 0, 0))
    img.paste((0, 0, 255), (0, 0, 30, 200))  # blue stripe on the left of the stored pixels
    exif = Image.Exif()
    exif[0x0112] = 6  # stored rotated: display after turning 90° clockwise
    buf = io.BytesIO()
    img.save(buf, "JPEG", exif=exif, quality=95)
    path = tmp_path / "rotated.jpg"
    path.write_bytes(buf.getvalue())
    for source in (buf.getvalue(), path):
        up = load_image(source)
        assert up.size == (200, 300) and up.mode == "RGB"
        top = np.asarray(up)[5, 100]
        assert top[2] > 200 and top[0] < 60  # the left stripe is now at the top
    with pytest.raises(InputError, match="cannot read image"):
        load_image(b"not an image")


# -- prompts -----------------------------------------------------------------------------------
class FakeTokenizer:
    """Character-level ids with the special tokens kept whole, mirroring Tokenizer's interface."""

    SPECIAL = {"<|User|>": 500, "<|Assistant|>": 501, "<|grounding|>": 502, "<image>": 503}
    bos_id, eos_id, pad_id, image_id = 0, 1, 2, 503

    def encode(self, text):
        ids, i = [], 0
        while i < len(text):
            for tok, tid in self.SPECIAL.items():
                if text.startswith(tok, i):
                    ids.append(tid)
                    i += len(tok)
                    break
            else:
                ids.append(1000 + ord(text[i]))
                i += 1
        return ids

    def decode(self, ids):
        inv = {v: k for k, v in self.SPECIAL.items()}
        return "".join(inv.get(i, chr(i - 1000) if i >= 1000 else "") for i in ids)

    def token_id(self, token):
        return self.SPECIAL[token]


def test_deepseek_plain_prompt():
    tok = FakeTokenizer()
    assert prompt_text(None, "deepseek") == "<image>\n<|grounding|>Convert the document to markdown."
    ids = prompt_ids(tok, 273, fmt="deepseek")
    assert ids == [0] + [503] * 273 + tok.encode("\n" + DEEPSEEK_PROMPT)
    assert prompt_ids(tok, 5, "Free OCR. ", "deepseek") == [0] + [503] * 5 + tok.encode("\nFree OCR.")


def test_jina_chat_prompt_has_no_bos():
    tok = FakeTokenizer()
    assert JINA_PROMPT == ("Transcribe the provided document image into a clean Markdown format, "
                           "preserving the natural reading order.")
    text = prompt_text(None, "jina")
    assert text == f"<|User|>:\n<image>\n{JINA_PROMPT}\n<|Assistant|>:\n"
    ids = prompt_ids(tok, 903, fmt="jina")
    assert ids == tok.encode("<|User|>:\n") + [503] * 903 + tok.encode(f"\n{JINA_PROMPT}\n<|Assistant|>:\n")
    assert ids[0] == 500
    assert prompt_text("Free OCR.  \n", "jina") == "<|User|>:\n<image>\nFree OCR.\n<|Assistant|>:\n"
    with pytest.raises(InputError, match="format"):
        prompt_text(None, "chatml")
    with pytest.raises(InputError, match="marker"):
        prompt_ids(tok, 3, "two <image> markers", "jina")


@pytest.mark.parametrize("fmt", ["jina", "deepseek"])
def test_processor_builds_model_inputs(fmt):
    tok = FakeTokenizer()
    img = Image.new("RGB", (1240, 1754), (250, 250, 250))
    inputs = Processor(tok, fmt=fmt)(img)
    assert inputs.num_image_tokens == 903 and inputs.grid == (2, 3)
    pos = inputs.image_positions
    assert torch.equal(pos, torch.arange(pos[0], pos[0] + 903))  # one contiguous run
    assert pos[0] == (1 if fmt == "deepseek" else len(tok.encode("<|User|>:\n")))
    assert inputs.input_ids.dtype == torch.long and inputs.image_mask.dtype == torch.bool
    assert inputs.global_view.shape == (1, 3, 1024, 1024) and inputs.tiles.shape == (6, 3, 640, 640)
    small = Processor(tok, fmt=fmt, mode="small")(img)
    assert small.num_image_tokens == 111 and small.tiles.shape[0] == 0 and small.global_view.shape[-1] == 640


def test_processor_with_the_nano_tokenizer():
    tokenizer = pytest.importorskip("minuscule.tokenizer")
    tok = tokenizer.build_nano_tokenizer()
    inputs = Processor(tok, fmt="jina")(Image.new("RGB", (500, 500), (255, 255, 255)))
    ids = inputs.input_ids.tolist()
    assert inputs.num_image_tokens == 273 and ids.count(tok.image_id) == 273
    text = tok.decode([i for i in ids if i != tok.image_id])
    assert text == f"<|User|>:\n\n{JINA_PROMPT}\n<|Assistant|>:\n"
    assert set(MODES) == {"tiny", "small", "base", "large", "gundam"}
