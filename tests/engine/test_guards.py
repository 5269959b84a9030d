"""Guards: the incremental state matches a naive scan, and guarded speculative output equals guarded plain greedy."""

from __future__ import annotations

import random

import pytest
import torch
from drafters import AdversarialProposer, OracleProposer

from minuscule.engine.config import EngineConfig, GuardConfig, SamplingParams, SpecConfig
from minuscule.engine.engine import Engine
from minuscule.engine.guards import GuardState
from minuscule.engine.request import FinishReason, Request


def naive_banned(seq: list[int], n: int, window: int, exempt: set[int]) -> set[int]:
    """DeepSeek-OCR's no-repeat scan, written out."""
    if n == 0 or len(seq) < n:
        return set()
    prefix = tuple(seq[len(seq) - n + 1:])
    banned = {seq[i + n - 1] for i in range(max(0, len(seq) - window), len(seq) - n + 1)
              if tuple(seq[i:i + n - 1]) == prefix}
    return banned - exempt


def naive_repeats(seq: list[int], period: int, count: int) -> bool:
    span = period * count
    if not period or not count or len(seq) < span:
        return False
    return any(all(seq[j] == seq[j - p] for j in range(len(seq) - span + p, len(seq))) for p in range(1, period + 1))


@torch.inference_mode()
def guarded_greedy(model, prompt, params: SamplingParams) -> tuple[list[int], FinishReason]:
    """Plain one-token-at-a-time greedy with the guards applied the naive way (the reference)."""
    g = params.guards
    cache = model.new_cache(1, len(prompt) + params.max_tokens + 1)
    logits = model(torch.tensor([prompt]), cache=cache, last_only=True).logits[0, -1]
    out: list[int] = []
    while True:
        row = logits.clone()
        banned = naive_banned(out, g.ngram_size, g.window, set(g.exempt_ids))
        if banned:
            row[list(banned)] = float("-inf")
        tok = int(row.argmax())
        out.append(tok)
        if tok in params.stop_ids:
            return out, FinishReason.STOP
        if naive_repeats(out, g.repeat_period, g.repeat_count):
            return out, FinishReason.REPETITION
        if len(out) >= params.max_tokens:
            return out, FinishReason.LENGTH
        logits = model(torch.tensor([[tok]]), cache=cache, last_only=True).logits[0, -1]


@pytest.mark.parametrize("cfg", [GuardConfig(ngram_size=3, window=20, repeat_period=0, repeat_count=0),
                                 GuardConfig(ngram_size=4, window=1000, exempt_ids=(5, 7), repeat_period=5, repeat_count=3),
                                 GuardConfig(ngram_size=0, window=0, repeat_period=3, repeat_count=4)])
def test_incremental_state_matches_naive_scan(cfg):
    rng = random.Random(1)
    for trial in range(20):
        state = GuardState(cfg)
        seq: list[int] = []
        alphabet = rng.choice([3, 5, 9])
        for _ in range(120):
            assert state.banned() == naive_banned(seq, cfg.ngram_size, cfg.window, set(cfg.exempt_ids))
            # Mostly loops, sometimes noise, so both guards get exercised.
            tok = seq[-rng.choice([1, 2, 3])] if len(seq) > 3 and rng.random() < 0.7 else rng.randrange(alphabet)
            seq.append(tok)
            assert state.append(tok) == naive_repeats(seq, cfg.repeat_period, cfg.repeat_count)


def test_default_guards_are_the_recipes():
    g = GuardConfig()
    assert (g.ngram_size, g.window, g.repeat_period, g.repeat_count) == (35, 1024, 35, 10)
    with pytest.raises(ValueError):
        GuardConfig(ngram_size=1)


# The n-gram ban keeps short loops from ever repeating long enough for the repetition stop, so
# requests alternate between the two (and one has both, with a window short enough to let loops through).
GUARDS = [GuardConfig(ngram_size=4, window=40, exempt_ids=(27,), repeat_period=0, repeat_count=0),
          GuardConfig(ngram_size=0, window=0, repeat_period=4, repeat_count=5),
          GuardConfig(ngram_size=3, window=4, repeat_period=3, repeat_count=4)]


@pytest.fixture(scope="module")
def guarded(loopy_model, prompts):
    params = [SamplingParams(max_tokens=60, guards=GUARDS[g]) for g in (1, 0, 2, 1, 0, 2)]
    return params, [guarded_greedy(loopy_model, p, q) for p, q in zip(prompts, params)]


def test_reference_exercises_both_guards(loopy_model, prompts, guarded):
    params, refs = guarded
    reasons = {r for _, r in refs}
    assert FinishReason.REPETITION in reasons and FinishReason.LENGTH in reasons
    plain = [guarded_greedy(loopy_model, p, SamplingParams(max_tokens=60, guards=GuardConfig(0, 0, (), 0, 0)))[0]
             for p in prompts]
    assert any(a != b[:len(a)] for (a, _), b in zip(refs, plain))  # the n-gram ban changed the text


@pytest.mark.parametrize("k", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("drafter", ["oracle", "adversarial", "fastmtp"])
def test_guarded_speculation_equals_guarded_greedy(loopy_model, nano_cfg, prompts, guarded, k, drafter):
    params, refs = guarded
    table = {str(i): r for i, (r, _) in enumerate(refs)}
    proposer, spec = None, SpecConfig("fastmtp", k=k) if k else SpecConfig()
    if k and drafter == "oracle":
        proposer, spec = OracleProposer(table, nano_cfg.vocab_size), SpecConfig("ngram", k=k)
    elif k and drafter == "adversarial":
        proposer, spec = AdversarialProposer(table, nano_cfg.vocab_size), SpecConfig("ngram", k=k)
    eng = Engine(loopy_model, EngineConfig(max_batch=4, max_len=160, spec=spec), proposer=proposer)
    outs = eng.generate([Request(str(i), p, q) for i, (p, q) in enumerate(zip(prompts, params))])
    assert [(o.token_ids, o.finish_reason) for o in outs] == refs
