"""Decoder math: RMSNorm, RoPE, KV cache, MoE routing, determinism, image scatter, parameter counts."""

from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.nn.functional as F

from minuscule.config import ModelConfig
from minuscule.model.decoder import KVCache, RMSNorm, apply_rope, rope_cos_sin
from minuscule.model.moe import MoE
from minuscule.model.ocr import build_model

VISION_PREFIXES = ("model.sam_model.", "model.vision_model.", "model.projector.", "model.image_newline",
                   "model.view_seperator")


def test_rmsnorm_runs_in_fp32_then_casts_before_the_weight():
    norm = RMSNorm(8, 1e-6)
    with torch.no_grad():
        norm.weight.copy_(torch.linspace(0.5, 2.0, 8))
    x = (torch.randn(3, 8) * 100).to(torch.bfloat16)
    x32 = x.float()
    want = norm.weight.to(torch.bfloat16) * (x32 / torch.sqrt(x32.pow(2).mean(-1, keepdim=True) + 1e-6)).to(torch.bfloat16)
    got = norm.to(torch.bfloat16)(x)
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_rope_is_rotate_half_with_theta_from_config():
    d, theta = 16, 1e6
    pos = torch.arange(7)[None]
    cos, sin = rope_cos_sin(pos, d, theta, torch.float64)
    x = torch.randn(1, 1, 7, d, dtype=torch.float64)
    got = apply_rope(x, cos, sin)
    # NeoX layout: dimension i rotates with i + d/2 (not with its neighbour), angle p / theta^(2i/d).
    half = d // 2
    angle = pos[0, :, None].double() / theta ** (torch.arange(half).double() * 2 / d)
    z = torch.complex(x[..., :half], x[..., half:]) * torch.polar(torch.ones_like(angle), angle)
    torch.testing.assert_close(got, torch.cat([z.real, z.imag], dim=-1), rtol=1e-6, atol=1e-6)
    # Relative: <rope(q, m), rope(k, n)> depends only on m - n.
    q, k = torch.randn(2, d, dtype=torch.float64)
    qs = apply_rope(q.expand(1, 1, 7, d), cos, sin)[0, 0]
    ks = apply_rope(k.expand(1, 1, 7, d), cos, sin)[0, 0]
    assert torch.allclose(qs[3] @ ks[1], qs[6] @ ks[4]) and torch.allclose(qs[2] @ ks[2], qs[5] @ ks[5])


def test_rope_theta_changes_the_output(nano_cfg):
    torch.manual_seed(1)
    a = build_model(nano_cfg, seed=3)
    b = build_model(dataclasses.replace(nano_cfg, rope_theta=10000.0), seed=3)
    ids = torch.randint(4, nano_cfg.vocab_size, (1, 12))
    with torch.no_grad():
        assert not torch.allclose(a(ids).logits, b(ids).logits)


def test_cached_prefill_in_chunks_matches_full_forward(nano_model, nano_cfg):
    torch.manual_seed(2)
    ids = torch.randint(4, nano_cfg.vocab_size, (2, 20))
    with torch.no_grad():
        full = nano_model(ids)
        cache = nano_model.new_cache(2, 32)
        parts = [nano_model(ids[:, a:b], cache=cache) for a, b in ((0, 7), (7, 8), (8, 20))]
    assert cache.length == 20
    torch.testing.assert_close(torch.cat([p.hidden for p in parts], 1), full.hidden, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(torch.cat([p.logits for p in parts], 1), full.logits, rtol=1e-5, atol=1e-5)


def test_kv_cache_bounds_and_truncate():
    c = KVCache.allocate(1, 1, 2, 4, 5, torch.float32)
    k = torch.ones(1, 2, 3, 4)
    c.write(0, k, k)
    c.advance(3)
    with pytest.raises(ValueError, match="KV cache full"):
        c.write(0, k, k)
    c.truncate(1)
    keys, _ = c.write(0, k, k)
    assert keys.shape[2] == 4
    with pytest.raises(ValueError):
        c.truncate(9)


def _naive_moe(moe: MoE, x: torch.Tensor, top_k: int, scale: float) -> torch.Tensor:
    """Token by token: fp32 softmax router, top-k, no renormalisation, weighted experts + shared."""
    out = []
    for row in x.reshape(-1, x.shape[-1]):
        probs = F.softmax(row.float() @ moe.gate.weight.float().T, dim=-1)
        w, idx = probs.topk(top_k)
        acc = torch.zeros(x.shape[-1])
        for wi, e in zip(w, idx):
            acc += scale * wi * moe.experts[int(e)](row[None])[0].float()
        out.append(acc + moe.shared_experts(row[None])[0])
    return torch.stack(out).reshape(x.shape)


@pytest.mark.parametrize("scale", [1.0, 2.5])
def test_moe_matches_a_token_by_token_reference(nano_cfg, scale):
    cfg = dataclasses.replace(nano_cfg, routed_scaling_factor=scale)
    torch.manual_seed(4)
    moe = MoE(cfg)
    x = torch.randn(2, 5, cfg.hidden_size)
    with torch.no_grad():
        torch.testing.assert_close(moe(x), _naive_moe(moe, x, cfg.num_experts_per_tok, scale), rtol=1e-5, atol=1e-5)
        ids, w = moe.gate(x.reshape(-1, cfg.hidden_size))
    assert w.dtype == torch.float32 and ids.shape == (10, cfg.num_experts_per_tok)
    assert bool((w.sum(-1) < scale).all())  # not renormalised to sum to the scale
    assert moe.shared_experts.gate_proj.weight.shape == (cfg.moe_intermediate_size * cfg.n_shared_experts, cfg.hidden_size)


def test_nano_forward_is_deterministic_in_fp32(nano_cfg):
    ids = torch.randint(4, nano_cfg.vocab_size, (1, 16), generator=torch.Generator().manual_seed(5))
    a, b = build_model(nano_cfg, seed=11), build_model(nano_cfg, seed=11)
    for (na, pa), (nb, pb) in zip(a.named_parameters(), b.named_parameters()):
        assert na == nb and torch.equal(pa, pb), na
    with torch.no_grad():
        first, second, other = a(ids), a(ids), b(ids)
    assert first.logits.dtype == torch.float32
    assert torch.equal(first.logits, second.logits) and torch.equal(first.logits, other.logits)
    assert torch.equal(first.hidden, other.hidden)


def test_image_embeddings_fill_the_placeholders_in_order(nano_model, nano_cfg):
    img = nano_cfg.image_token_id
    ids = torch.tensor([[0, 5, img, img, img, 6]])
    feats = torch.randn(3, nano_cfg.hidden_size)
    x = nano_model.embed(ids, feats)
    assert torch.equal(x[0, 2:5], feats)
    assert torch.equal(x[0, 1], nano_model.model.embed_tokens.weight[5])
    with pytest.raises(ValueError, match="3 <image> placeholders but 2 image embeddings"):
        nano_model.embed(ids, feats[:2])


def _count(name: str) -> tuple[int, int]:
    m = build_model(ModelConfig.from_name(name), device="meta")
    tensors = m.published_tensors()
    assert all(p.device.type == "meta" for p in tensors.values())
    return sum(p.numel() for p in tensors.values()), len(tensors)


def test_real_parameter_counts_on_meta():
    assert _count("deepseek-ocr") == (3_336_106_240, 2710)
    m = build_model(ModelConfig.from_name("deepseek-ocr"), device="meta")
    decoder = {n: p for n, p in m.published_tensors().items() if not n.startswith(VISION_PREFIXES)}
    # deepseek-ocr.md §1.3: decoder 2,934.73 M; §5: 2,234 decoder tensors (2,231 in layers + embed, norm, head).
    assert sum(p.numel() for p in decoder.values()) == 2_934_734_080 and len(decoder) == 2234
    assert sum(1 for n in decoder if n.startswith("model.layers.")) == 2231
    # §3.2: about 409 M active without embeddings, 574 M with lm_head ("A570M").
    assert m.active_parameters_per_token() == 574_127_360
    assert m.active_parameters_per_token() - m.lm_head.weight.numel() == 408_648_960
    shapes = {n: tuple(p.shape) for n, p in m.published_tensors().items()}
    assert shapes["model.layers.0.mlp.gate_proj.weight"] == (6848, 1280)
    assert shapes["model.layers.5.mlp.experts.63.down_proj.weight"] == (1280, 896)
    assert shapes["model.layers.11.mlp.shared_experts.up_proj.weight"] == (1792, 1280)
    assert shapes["model.layers.1.mlp.gate.weight"] == (64, 1280)
    assert shapes["model.view_seperator"] == (1280,) and "model.layers.0.mlp.gate.weight" not in shapes


def test_jina_adds_the_mtp_module_tensors():
    jina_params, jina_tensors = _count("jina-ocr-v1")
    m = build_model(ModelConfig.from_name("jina-ocr-v1"), device="meta")
    mtp = {n: tuple(p.shape) for n, p in m.published_tensors().items() if n.startswith("mtp_module.")}
    h = 1280
    assert mtp == {
        "mtp_module.heads.0.enorm.weight": (h,), "mtp_module.heads.0.hnorm.weight": (h,),
        "mtp_module.heads.0.eh_proj.weight": (h, 2 * h),
        "mtp_module.heads.0.mtp_block.input_layernorm.weight": (h,),
        "mtp_module.heads.0.mtp_block.post_attention_layernorm.weight": (h,),
        **{f"mtp_module.heads.0.mtp_block.self_attn.{p}_proj.weight": (h, h) for p in "qkvo"},
        "mtp_module.heads.0.mtp_block.mlp.gate_proj.weight": (6848, h),
        "mtp_module.heads.0.mtp_block.mlp.up_proj.weight": (6848, h),
        "mtp_module.heads.0.mtp_block.mlp.down_proj.weight": (h, 6848),
    }
    assert jina_tensors == 2710 + 12
    assert jina_params == 3_336_106_240 + 36_131_840


def _naive_forward(m, ids: torch.Tensor) -> torch.Tensor:
    """An independent spelling of the decoder in fp64: explicit causal softmax attention, pre-norm residuals."""
    cfg = m.cfg
    eps, h, d = cfg.rms_norm_eps, cfg.num_attention_heads, cfg.head_dim

    def norm(w, x):
        return w * x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps)

    def rope(x):  # x (T, H, D): dimension i rotates with i + D/2
        t = torch.arange(x.shape[0], dtype=torch.float64)[:, None, None]
        ang = t / cfg.rope_theta ** (torch.arange(d // 2, dtype=torch.float64) * 2 / d)
        a, b = x[..., : d // 2], x[..., d // 2:]
        return torch.cat([a * ang.cos() - b * ang.sin(), b * ang.cos() + a * ang.sin()], dim=-1)

    def mlp(p, x):
        return p.down_proj.weight @ (F.silu(p.gate_proj.weight @ x) * (p.up_proj.weight @ x))

    x = m.model.embed_tokens.weight[ids[0]]  # (T, H)
    n = x.shape[0]
    for i, layer in enumerate(m.model.layers):
        a = layer.self_attn
        y = norm(layer.input_layernorm.weight, x)
        q = rope((y @ a.q_proj.weight.T).view(n, h, d))
        k = rope((y @ a.k_proj.weight.T).view(n, h, d))
        v = (y @ a.v_proj.weight.T).view(n, h, d)
        scores = torch.einsum("qhd,khd->hqk", q, k) / d**0.5
        scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
        x = x + torch.einsum("hqk,khd->qhd", scores.softmax(-1), v).reshape(n, -1) @ a.o_proj.weight.T
        y = norm(layer.post_attention_layernorm.weight, x)
        if i < cfg.first_k_dense_replace:
            x = x + torch.stack([mlp(layer.mlp, r) for r in y])
        else:
            x = x + _naive_moe(layer.mlp, y, cfg.num_experts_per_tok, cfg.routed_scaling_factor).to(x.dtype)
    return norm(m.model.norm.weight, x) @ m.lm_head.weight.T


def test_decoder_matches_an_independent_fp64_spelling(nano_cfg):
    m = build_model(nano_cfg, seed=9).double()
    ids = torch.randint(4, nano_cfg.vocab_size, (1, 11), generator=torch.Generator().manual_seed(9))
    with torch.no_grad():
        got = m(ids).logits.double()
        want = _naive_forward(m, ids)
    torch.testing.assert_close(got, want[None], rtol=1e-5, atol=1e-5)
