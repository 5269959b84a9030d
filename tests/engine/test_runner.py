"""Cache bookkeeping: after speculative steps the target and draft caches equal a fresh computation."""

from __future__ import annotations

import torch

from minuscule.engine.config import EngineConfig, SamplingParams, SpecConfig
from minuscule.engine.engine import Engine
from minuscule.engine.request import Request


@torch.inference_mode()
def test_caches_match_fresh_prefill_after_speculative_steps(varied_model, prompts):
    m = varied_model
    eng = Engine(m, EngineConfig(max_batch=3, max_len=128, spec=SpecConfig("fastmtp", k=3)))
    for i, p in enumerate(prompts[:3]):
        eng.add_request(Request(str(i), p, SamplingParams(max_tokens=60)))
    for _ in range(12):
        eng.step()
    r = eng.runner
    for slot, rid in enumerate(eng.scheduler.running):
        seq = eng.seqs[rid]
        n = len(seq.tokens)
        assert n >= seq.prompt_len + 12  # prefill + 11 decode steps, at least one token each
        ids = torch.tensor([seq.tokens])
        cache = m.new_cache(1, n)
        hidden = m(ids[:, : n - 1], cache=cache).hidden  # (1, n-1, H): positions 0..n-2
        for layer in range(m.cfg.num_hidden_layers):
            torch.testing.assert_close(r.kv.keys[layer][slot, :, : n - 1], cache.keys[layer][0, :, : n - 1])
            torch.testing.assert_close(r.kv.values[layer][slot, :, : n - 1], cache.values[layer][0, :, : n - 1])
        torch.testing.assert_close(r.hidden.buf[slot, : n - 1], hidden[0])
        # Draft entries 1..draft_valid: pairs (t_j, h_{j-1}) at position j, from the target's states.
        dv = seq.draft_valid
        assert dv >= n - 5
        dcache = m.new_draft_cache(1, n)
        m.draft_step(ids[:, 1: dv + 1], hidden[:, :dv], torch.arange(1, dv + 1)[None], dcache)
        torch.testing.assert_close(r.draft_kv.keys[0][slot, :, 1: dv + 1], dcache.keys[0][0, :, :dv])
        torch.testing.assert_close(r.draft_kv.values[0][slot, :, 1: dv + 1], dcache.values[0][0, :, :dv])


@torch.inference_mode()
def test_draft_pass_is_the_models_draft_step(varied_model, prompts):
    """The runner's batched draft pass (slot cache, per-row positions) computes mtp.draft_step."""
    m = varied_model
    eng = Engine(m, EngineConfig(max_batch=2, max_len=128, spec=SpecConfig("fastmtp", k=1)))
    r = eng.runner
    g = torch.Generator().manual_seed(4)
    toks = torch.randint(4, m.cfg.vocab_size, (2, 9), generator=g)
    prev = torch.randn(2, 9, m.cfg.hidden_size, generator=g)
    pos = torch.arange(1, 10)[None].expand(2, 9)
    logits, hidden = r.draft(toks, prev, pos)
    want = m.draft_step(toks, prev, pos)
    torch.testing.assert_close(logits, want.logits[:, -1], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(hidden, want.hidden[:, -1], rtol=1e-5, atol=1e-5)


class _Script:
    """Stands in for AdaptiveK: K from a fixed schedule."""

    def __init__(self, ks):
        self.ks = list(ks)

    def choose(self, batch):
        return self.ks.pop(0) if self.ks else 3

    def update(self, *args):
        pass


def test_draft_cache_rebuilt_over_a_window_after_steps_without_drafting(varied_model, prompts, references):
    """K=0 for 40 steps (the draft cache falls behind), then K=3: the prompt is primed, the stretch
    before the last WINDOW positions is masked, and the output is still plain greedy."""
    from minuscule.engine.spec.fastmtp import WINDOW

    eng = Engine(varied_model, EngineConfig(max_batch=3, max_len=128, spec=SpecConfig("fastmtp", k=3, adaptive=True)))
    eng.adaptive = _Script([0] * 41)
    for i, p in enumerate(prompts[:3]):
        eng.add_request(Request(str(i), p, SamplingParams(max_tokens=48)))
    for _ in range(43):  # prefill, 41 plain steps (n = prompt + 42), one with drafts
        eng.step()
    for rid in eng.scheduler.running:
        seq = eng.seqs[rid]
        lo, hi = seq.draft_gap
        assert lo == seq.prompt_len and hi == seq.prompt_len + 42 - WINDOW
    outs = {}
    while eng.has_unfinished():
        outs.update({o.request_id: o.token_ids for o in eng.step() if o.finished})
    assert [outs[str(i)] for i in range(3)] == references[:3]


@torch.inference_mode()
def test_hidden_states_of_plain_steps_are_read_back(varied_model, prompts):
    """Plain (K=0) steps defer their hidden-state writes; whatever reads the store sees them all,
    whether the batch moved slots in between (a request leaving) or not."""
    m = varied_model
    eng = Engine(m, EngineConfig(max_batch=3, max_len=128, spec=SpecConfig("fastmtp", k=3, adaptive=True)))
    eng.adaptive = _Script([0] * 100)
    for i, (p, n) in enumerate(zip(prompts[:3], (30, 12, 30))):  # the second leaves first: a slot move
        eng.add_request(Request(str(i), p, SamplingParams(max_tokens=n)))
    for _ in range(20):
        eng.step()
    r = eng.runner
    assert len(eng.scheduler.running) == 2
    for slot, rid in enumerate(eng.scheduler.running):
        seq = eng.seqs[rid]
        n = len(seq.tokens)
        want = m(torch.tensor([seq.tokens[: n - 1]]), cache=m.new_cache(1, n)).hidden[0]  # positions 0..n-2
        got = r.hidden.gather(torch.arange(n - 1)[None], row0=slot)[0]
        torch.testing.assert_close(got, want)
