"""DeepEncoder: published tensor names and sizes, SAM/CLIP maths against naive versions, nano forward, layout."""

import math

import pytest
import torch
import torch.nn.functional as F

from minuscule.model.clip import resize_clip_pos
from minuscule.model.encoder import DeepEncoder, layout_image_features
from minuscule.model.sam import SamBlock, rel_pos_table, resize_abs_pos
from minuscule.model.vision_config import SamConfig, VisionConfig

# DeepSeek-OCR's total (research report §1.3 / §5: 6,672,212,480 bf16 bytes / 2).
DEEPSEEK_OCR_TOTAL = 3_336_106_240


def published_vision_shapes() -> dict[str, tuple[int, ...]]:
    """Tensor names and shapes of `model.sam_model.*`, `model.vision_model.*`, `model.projector.*`
    as listed in the report's state-dict table (§5), relative to `model.`."""
    s = {"sam_model.patch_embed.proj.weight": (768, 3, 16, 16), "sam_model.patch_embed.proj.bias": (768,),
         "sam_model.pos_embed": (1, 64, 64, 768)}
    for i in range(12):
        p = f"sam_model.blocks.{i}."
        rel = 127 if i in (2, 5, 8, 11) else 27
        for n in ("norm1", "norm2"):
            s[p + n + ".weight"] = s[p + n + ".bias"] = (768,)
        s[p + "attn.qkv.weight"], s[p + "attn.qkv.bias"] = (2304, 768), (2304,)
        s[p + "attn.proj.weight"], s[p + "attn.proj.bias"] = (768, 768), (768,)
        s[p + "attn.rel_pos_h"] = s[p + "attn.rel_pos_w"] = (rel, 64)
        s[p + "mlp.lin1.weight"], s[p + "mlp.lin1.bias"] = (3072, 768), (3072,)
        s[p + "mlp.lin2.weight"], s[p + "mlp.lin2.bias"] = (768, 3072), (768,)
    s["sam_model.neck.0.weight"] = (256, 768, 1, 1)
    s["sam_model.neck.1.weight"] = s["sam_model.neck.1.bias"] = (256,)
    s["sam_model.neck.2.weight"] = (256, 256, 3, 3)
    s["sam_model.neck.3.weight"] = s["sam_model.neck.3.bias"] = (256,)
    s["sam_model.net_2.weight"], s["sam_model.net_3.weight"] = (512, 256, 3, 3), (1024, 512, 3, 3)
    v = "vision_model."
    s[v + "embeddings.class_embedding"] = (1024,)
    s[v + "embeddings.patch_embedding.weight"] = (1024, 3, 14, 14)
    s[v + "embeddings.position_embedding.weight"] = (257, 1024)
    s[v + "pre_layrnorm.weight"] = s[v + "pre_layrnorm.bias"] = (1024,)
    for i in range(24):
        p = f"{v}transformer.layers.{i}."
        for n in ("layer_norm1", "layer_norm2"):
            s[p + n + ".weight"] = s[p + n + ".bias"] = (1024,)
        s[p + "self_attn.qkv_proj.weight"], s[p + "self_attn.qkv_proj.bias"] = (3072, 1024), (3072,)
        s[p + "self_attn.out_proj.weight"], s[p + "self_attn.out_proj.bias"] = (1024, 1024), (1024,)
        s[p + "mlp.fc1.weight"], s[p + "mlp.fc1.bias"] = (4096, 1024), (4096,)
        s[p + "mlp.fc2.weight"], s[p + "mlp.fc2.bias"] = (1024, 4096), (1024,)
    s["projector.layers.weight"], s["projector.layers.bias"] = (1280, 2048), (1280,)
    return s


def decoder_parameters_from_report() -> int:
    """The decoder's size from the report's shapes (§3.1, §5): embed, 12 layers, norm, lm_head."""
    h, vocab, dense, expert, shared, experts = 1280, 129280, 6848, 896, 1792, 64
    attn = 4 * h * h + 2 * h
    layer0 = attn + 3 * dense * h
    moe = attn + experts * h + experts * 3 * expert * h + 3 * shared * h
    return 2 * vocab * h + layer0 + 11 * moe + h


@pytest.fixture(scope="module")
def real_meta():
    with torch.device("meta"):
        return DeepEncoder(VisionConfig.real())


def test_real_state_dict_matches_published_names_and_shapes(real_meta):
    sd = real_meta.state_dict()
    expected = published_vision_shapes()
    assert set(sd) == set(expected)
    assert {k: tuple(t.shape) for k, t in sd.items()} == expected
    assert sum(k.startswith("sam_model.") for k in sd) == 179
    assert sum(k.startswith("vision_model.") for k in sd) == 293
    assert "vision_model.embeddings.position_ids" not in sd  # a buffer, not a checkpoint tensor


def test_real_parameter_count_is_the_vision_part_of_deepseek_ocr(real_meta):
    def count(prefix):
        return sum(p.numel() for n, p in real_meta.named_parameters() if n.startswith(prefix))

    assert count("sam_model.") == 95_569_152
    assert count("vision_model.") == 303_177_728
    assert count("projector.") == 2_622_720
    vision = sum(p.numel() for p in real_meta.parameters())
    assert vision == 401_369_600
    newline_and_separator = 2 * 1280  # model.image_newline, model.view_seperator
    assert vision + newline_and_separator + decoder_parameters_from_report() == DEEPSEEK_OCR_TOTAL


# -- SAM pieces against naive, loop-based versions ------------------------------------------------
def naive_attention(x, attn):
    """Per-query loops over the (H, W) grid: softmax(q·k/√d + q·Rh[dh] + q·Rw[dw]) v."""
    h, w, c = x.shape
    heads = attn.heads
    d = c // heads
    qkv = attn.qkv(x.reshape(h * w, c)).reshape(h * w, 3, heads, d)
    rh_tab, rw_tab = rel_pos_table(h, attn.rel_pos_h), rel_pos_table(w, attn.rel_pos_w)
    out = torch.zeros(h * w, heads, d)
    for n in range(heads):
        q, k, v = qkv[:, 0, n], qkv[:, 1, n], qkv[:, 2, n]
        for i in range(h * w):
            qi, qj = divmod(i, w)
            logits = k @ q[i] / math.sqrt(d)
            for kk in range(h * w):
                ki, kj = divmod(kk, w)
                logits[kk] += q[i] @ rh_tab[qi, ki] + q[i] @ rw_tab[qj, kj]
            out[i, n] = torch.softmax(logits, 0) @ v
    return attn.proj(out.reshape(h * w, c)).reshape(h, w, c)


def test_rel_pos_table_indexing_and_resize():
    table = torch.arange(27.0)[:, None].repeat(1, 4)  # row r holds r
    t = rel_pos_table(14, table)
    assert t[3, 5, 0] == 3 - 5 + 13 and t[13, 0, 0] == 26 and t[0, 13, 0] == 0
    wide = torch.linspace(0, 1, 127)[:, None].repeat(1, 2)  # linear ramp survives linear resizing
    r = rel_pos_table(40, wide)  # 127 → 79 rows
    assert r.shape == (40, 40, 2)
    assert torch.allclose(r[39, 0, 0], torch.tensor(1.0), atol=1e-2) and torch.allclose(r[0, 39, 0], torch.tensor(0.0), atol=1e-2)
    assert torch.allclose(r[7, 7, 0], torch.tensor(0.5), atol=1e-6)


def test_abs_pos_resize_is_identity_at_native_size_and_bicubic_otherwise():
    pos = torch.randn(1, 8, 8, 3)
    assert resize_abs_pos(pos, 8) is pos
    want = F.interpolate(pos.permute(0, 3, 1, 2), size=(5, 5), mode="bicubic", antialias=True,
                         align_corners=False).permute(0, 2, 3, 1)
    assert torch.equal(resize_abs_pos(pos, 5), want)
    table = torch.randn(17, 3)  # CLS + 4x4
    out = resize_clip_pos(table, 9)
    assert out.shape == (10, 3) and torch.equal(out[0], table[0])
    assert resize_clip_pos(table, 16) is table


@pytest.mark.parametrize("window,grid", [(0, 5), (4, 6), (4, 8)])
def test_sam_block_matches_naive_windowed_attention_with_unmasked_zero_padding(window, grid):
    torch.manual_seed(0)
    cfg = SamConfig(width=8, layers=1, heads=2, global_attn_indexes=(), downsample_channels=(8, 8), mlp_dim=16,
                    window_size=4, pos_grid=6)
    block = SamBlock(cfg, window).eval()
    with torch.no_grad():
        for p in (block.attn.rel_pos_h, block.attn.rel_pos_w):
            p.normal_()  # zero-initialised in training; random here so the bias is exercised
        x = torch.randn(1, grid, grid, 8)
        got = block(x)[0]
        y = block.norm1(x[0])
        if window:
            s = window
            pad = (-grid) % s
            y = F.pad(y, (0, 0, 0, pad, 0, pad))  # zeros after norm1, attended to like real tokens
            a = torch.zeros_like(y)
            for r in range(0, grid + pad, s):
                for c in range(0, grid + pad, s):
                    a[r:r + s, c:c + s] = naive_attention(y[r:r + s, c:c + s], block.attn)
            a = a[:grid, :grid]
        else:
            a = naive_attention(y, block.attn)
        h = x[0] + a
        want = h + block.mlp(block.norm2(h))
    assert torch.allclose(got, want, atol=1e-5)


def test_query_chunking_does_not_change_attention(monkeypatch):
    from minuscule.model import sam

    torch.manual_seed(0)
    attn = sam.SamAttention(16, 2, 9)
    with torch.no_grad():
        attn.rel_pos_h.normal_()
        attn.rel_pos_w.normal_()
        x = torch.randn(2, 9, 7, 16)
        whole = attn(x)
        monkeypatch.setattr(sam, "MAX_BIAS_ELEMENTS", 2 * 2 * 63 * 7 * 2)  # two grid rows per chunk
        chunked = attn(x)
    assert torch.allclose(whole, chunked, atol=1e-6)


# -- nano forward and layout ------------------------------------------------------------------
def test_nano_forward_shapes_and_fp32_determinism():
    torch.manual_seed(0)
    enc = DeepEncoder(VisionConfig.nano()).eval()
    torch.manual_seed(1)
    global_view = torch.randn(1, 3, 1024, 1024)
    tiles = torch.randn(6, 3, 640, 640)
    newline, sep = torch.randn(64), torch.randn(64)
    with torch.no_grad():
        g = enc(global_view)
        t = enc(tiles)
        assert g.shape == (1, 256, 64) and t.shape == (6, 100, 64)
        assert enc(torch.randn(1, 3, 512, 512)).shape == (1, 64, 64)
        assert enc(torch.randn(1, 3, 1280, 1280)).shape == (1, 400, 64)
        first = enc.encode_image(global_view, tiles, (2, 3), newline, sep)
        second = enc.encode_image(global_view, tiles, (2, 3), newline, sep)
    assert first.shape == (903, 64)  # A4 page in gundam mode: 2x3 tiles
    assert torch.equal(first, second)
    assert torch.isfinite(first).all()
    assert torch.equal(first[:630].reshape(30, 21, 64)[:, -1], newline.expand(30, 64))
    torch.manual_seed(0)
    again = DeepEncoder(VisionConfig.nano()).eval()
    with torch.no_grad():
        assert torch.equal(again(global_view), g)


def test_clip_runs_on_sam_features_not_pixels():
    torch.manual_seed(0)
    enc = DeepEncoder(VisionConfig.nano()).eval()
    with torch.no_grad():
        enc.vision_model.embeddings.patch_embedding.weight.fill_(1e3)  # unused weight: output must not move
        a = enc(torch.zeros(1, 3, 512, 512))
        enc.vision_model.embeddings.patch_embedding.weight.zero_()
        b = enc(torch.zeros(1, 3, 512, 512))
    assert torch.equal(a, b)


def test_layout_orders_local_then_global_then_separator():
    c, q, t = 3, 2, 2
    glob = torch.arange(q * q * c, dtype=torch.float32).reshape(q * q, c) + 1000  # (q*q, C)
    # tile k, in-tile row y, col x, encoded as 100k + 10y + x
    tiles = torch.tensor([[[100.0 * k + 10 * y + x] * c for y in range(t) for x in range(t)] for k in range(6)])
    nl, sep = torch.full((c,), -1.0), torch.full((c,), -2.0)
    out = layout_image_features(glob, tiles, (3, 2), nl, sep)  # 3 tiles across, 2 down
    assert out.shape == ((t * 2) * (t * 3 + 1) + q * (q + 1) + 1, c)
    local = out[: 4 * 7].reshape(4, 7, c)[..., 0]
    assert (local[:, -1] == -1).all()
    for row in range(4):
        for col in range(6):
            k = (row // t) * 3 + col // t  # tiles are row-major
            assert local[row, col] == 100 * k + 10 * (row % t) + col % t
    g = out[28:34].reshape(q, q + 1, c)
    assert torch.equal(g[:, :q].reshape(q * q, c), glob) and (g[:, -1] == -1).all()
    assert (out[-1] == -2).all()
    only_global = layout_image_features(glob, None, (1, 1), nl, sep)
    assert only_global.shape == (q * (q + 1) + 1, c)
    with pytest.raises(ValueError):
        layout_image_features(glob, tiles, (2, 2), nl, sep)
    with pytest.raises(ValueError):
        layout_image_features(glob, None, (2, 3), nl, sep)
