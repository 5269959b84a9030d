"""FastMTP head wiring: concat order, shared norm/head, post-norm feedback, position-0 zeroing, draft KV cache."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from minuscule.model.ocr import build_model


def _rms(v: torch.Tensor, eps: float) -> torch.Tensor:
    return v / torch.sqrt(v.pow(2).mean(-1, keepdim=True) + eps)


@pytest.fixture()
def identity_head_model(nano_cfg):
    """fp64 nano model whose draft block is the identity (o_proj and down_proj zero)."""
    m = build_model(nano_cfg, seed=21).double()
    head = m.mtp_module.heads[0]
    with torch.no_grad():
        head.mtp_block.self_attn.o_proj.weight.zero_()
        head.mtp_block.mlp.down_proj.weight.zero_()
        m.model.norm.weight.copy_(torch.linspace(0.5, 1.5, nano_cfg.hidden_size))  # the shared final norm
    return m


def _select(m, embed_side: bool) -> None:
    h = m.cfg.hidden_size
    eye, zero = torch.eye(h, dtype=torch.float64), torch.zeros(h, h, dtype=torch.float64)
    with torch.no_grad():
        m.mtp_module.heads[0].eh_proj.weight.copy_(torch.cat([eye, zero] if embed_side else [zero, eye], dim=1))


def test_embedding_comes_first_and_final_norm_and_head_are_shared(identity_head_model):
    m = identity_head_model
    eps = m.cfg.rms_norm_eps
    _select(m, embed_side=True)
    tokens = torch.tensor([[7, 9, 11]])
    positions = torch.tensor([[4, 5, 6]])
    prev = torch.randn(1, 3, m.cfg.hidden_size, dtype=torch.float64)
    with torch.no_grad():
        out = m.draft_step(tokens, prev, positions)
    emb = m.model.embed_tokens.weight[tokens[0]]
    want_hidden = m.model.norm.weight * _rms(_rms(emb, eps), eps)
    torch.testing.assert_close(out.hidden[0], want_hidden)
    torch.testing.assert_close(out.logits[0], (want_hidden @ m.lm_head.weight.T).float())
    assert out.logits.dtype == torch.float32


def test_hidden_side_and_recursive_post_norm_feedback(identity_head_model):
    m = identity_head_model
    eps = m.cfg.rms_norm_eps
    _select(m, embed_side=False)
    prev = torch.randn(1, 1, m.cfg.hidden_size, dtype=torch.float64) * 3
    tok, pos = torch.tensor([[5]]), torch.tensor([[9]])
    with torch.no_grad():
        first = m.draft_step(tok, prev, pos)
        second = m.draft_step(tok, first.hidden, pos + 1)
    w = m.model.norm.weight
    torch.testing.assert_close(first.hidden[0, 0], w * _rms(_rms(prev[0, 0], eps), eps))
    # The next step's previous hidden state is exactly the post-norm output of the last one.
    torch.testing.assert_close(second.hidden[0, 0], w * _rms(_rms(first.hidden[0, 0], eps), eps))


def test_position_zero_embedding_is_zeroed(identity_head_model):
    m = identity_head_model
    _select(m, embed_side=True)
    with torch.no_grad():
        out = m.draft_step(torch.tensor([[7, 7]]), torch.randn(1, 2, m.cfg.hidden_size, dtype=torch.float64),
                           torch.tensor([[0, 1]]))
    assert torch.count_nonzero(out.hidden[0, 0]) == 0 and torch.count_nonzero(out.logits[0, 0]) == 0
    assert torch.count_nonzero(out.hidden[0, 1]) > 0


def test_copy_head_drafts_its_input_token(identity_head_model):
    """With lm_head = embedding rows of equal norm, the embed-side head is a copy function."""
    m = identity_head_model
    _select(m, embed_side=True)
    with torch.no_grad():
        e = torch.nn.functional.normalize(torch.randn_like(m.model.embed_tokens.weight), dim=-1)
        m.model.embed_tokens.weight.copy_(e)
        m.lm_head.weight.copy_(e)
        m.model.norm.weight.fill_(1.0)
        tokens = torch.arange(10, 60)[None]
        out = m.draft_step(tokens, torch.zeros(1, 50, m.cfg.hidden_size, dtype=torch.float64),
                           torch.arange(1, 51)[None])
    assert torch.equal(out.logits[0].argmax(-1), tokens[0])


def test_draft_cache_matches_uncached_run(nano_cfg):
    m = build_model(nano_cfg, seed=5)
    t = 9
    tokens = torch.randint(4, nano_cfg.vocab_size, (1, t), generator=torch.Generator().manual_seed(1))
    prev = torch.randn(1, t, nano_cfg.hidden_size, generator=torch.Generator().manual_seed(2))
    pos = torch.arange(t)[None]
    with torch.no_grad():
        whole = m.draft_step(tokens, prev, pos)
        cache = m.new_draft_cache(1, 16)
        steps = [m.draft_step(tokens[:, a:b], prev[:, a:b], pos[:, a:b], cache) for a, b in ((0, 5), (5, 6), (6, 9))]
    assert cache.length == t
    torch.testing.assert_close(torch.cat([s.logits for s in steps], 1), whole.logits, rtol=1e-5, atol=1e-5)


def test_models_without_a_head_refuse_to_draft(nano_cfg):
    cfg = dataclasses.replace(nano_cfg, num_nextn_predict_layers=0, mtp_num_heads=0, mtp_num_speculative_steps=0)
    m = build_model(cfg, seed=0)
    assert m.mtp_module is None and not any(n.startswith("mtp_module") for n in m.published_tensors())
    with pytest.raises(ValueError, match="no FastMTP head"):
        m.draft_step(torch.tensor([[1]]), torch.zeros(1, 1, cfg.hidden_size), torch.tensor([[1]]))
