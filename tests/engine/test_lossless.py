"""Speculative output equals plain greedy (generate_greedy) token for token, whatever the drafts, K and batch."""

from __future__ import annotations

import pytest
from drafters import AdversarialProposer, OracleProposer, RandomProposer

from minuscule.engine.config import EngineConfig, SamplingParams, SpecConfig
from minuscule.engine.engine import Engine
from minuscule.engine.request import FinishReason, Request


def _run(model, prompts, params, k=0, proposer=None, spec=None, max_batch=8, references=None):
    spec = spec or SpecConfig(proposer="none" if proposer is None and k == 0 else "ngram", k=k)
    eng = Engine(model, EngineConfig(max_batch=max_batch, max_len=160, spec=spec), proposer=proposer,
                 references=references)
    ps = params if isinstance(params, list) else [params] * len(prompts)
    outs = eng.generate([Request(str(i), p, q) for i, (p, q) in enumerate(zip(prompts, ps))])
    return outs, eng


def _refs(references):
    return {str(i): r for i, r in enumerate(references)}


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_oracle_drafts_are_all_accepted(varied_model, nano_cfg, prompts, references, k):
    outs, eng = _run(varied_model, prompts, SamplingParams(max_tokens=48), k,
                     OracleProposer(_refs(references), nano_cfg.vocab_size))
    assert [o.token_ids for o in outs] == references
    # 47 decode tokens per request: full steps of k+1 (every draft accepted), then a cut last step.
    steps = -(-47 // (k + 1))
    assert eng.stats.seq_steps == len(prompts) * steps
    assert eng.stats.accepted >= len(prompts) * (steps - 1) * k
    assert all(o.finish_reason is FinishReason.LENGTH for o in outs)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_random_drafts(varied_model, nano_cfg, prompts, references, k):
    outs, eng = _run(varied_model, prompts, SamplingParams(max_tokens=48), k, RandomProposer(nano_cfg.vocab_size, k))
    assert [o.token_ids for o in outs] == references
    assert eng.stats.accepted <= 2  # a random id out of 512 is almost never right


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_adversarial_drafts_right_for_exactly_j(varied_model, nano_cfg, prompts, references, k):
    adv = AdversarialProposer(_refs(references), nano_cfg.vocab_size)
    outs, eng = _run(varied_model, prompts, SamplingParams(max_tokens=48), k, adv)
    assert [o.token_ids for o in outs] == references
    # Each step accepted exactly j drafts (fewer only where max_tokens cut the step).
    cut = sum(1 for rid, j, g in adv.planned if g + j + 1 > 47)
    full = [j for rid, j, g in adv.planned if g + j + 1 <= 47]
    assert eng.stats.accepted >= sum(full) and eng.stats.seq_steps == len(adv.planned)
    assert len(full) + cut == len(adv.planned)


@pytest.mark.parametrize("k", [1, 3])
def test_trained_looking_drafts(varied_model, prompts, references, k):
    """Replayed greedy continuations, each draft right with probability 0.75: acceptance decays by position."""
    outs, eng = _run(varied_model, prompts, SamplingParams(max_tokens=48),
                     spec=SpecConfig("replay", k=k, replay_q=0.75), references=_refs(references))
    assert [o.token_ids for o in outs] == references
    p = eng.stats.to_dict()["acceptance_per_position"]
    assert 0.6 < p[0] < 0.9 and p == sorted(p, reverse=True)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_fastmtp_head(varied_model, prompts, references, k):
    outs, eng = _run(varied_model, prompts, SamplingParams(max_tokens=48), spec=SpecConfig("fastmtp", k=k))
    assert [o.token_ids for o in outs] == references
    assert eng.stats.drafted > 0


def test_ngram_proposer(varied_model, prompts, references):
    outs, _ = _run(varied_model, prompts, SamplingParams(max_tokens=48), spec=SpecConfig("ngram", k=3))
    assert [o.token_ids for o in outs] == references


@pytest.mark.parametrize("k", [2, 4])
def test_stop_inside_accepted_drafts(varied_model, nano_cfg, prompts, references, k):
    """A stop id in the middle of an all-accepted step, and as the bonus token: exact greedy cut."""
    params, want = [], []
    for i, ref in enumerate(references):
        m = 5 + 3 * i  # stop positions that land at every offset inside a step of k+1
        stop = ref[m]
        params.append(SamplingParams(max_tokens=48, stop_ids=(stop,)))
        want.append(ref[: ref.index(stop) + 1])
    outs, _ = _run(varied_model, prompts, params, k, OracleProposer(_refs(references), nano_cfg.vocab_size))
    assert [o.token_ids for o in outs] == want
    assert all(o.finish_reason is FinishReason.STOP for o in outs)


@pytest.mark.parametrize("k", [1, 3])
def test_max_tokens_boundaries(varied_model, nano_cfg, prompts, references, k):
    limits = [1, 2, k, k + 1, k + 2, 2 * k + 3]
    params = [SamplingParams(max_tokens=n) for n in limits]
    outs, _ = _run(varied_model, prompts, params, k, OracleProposer(_refs(references), nano_cfg.vocab_size))
    assert [o.token_ids for o in outs] == [r[:n] for r, n in zip(references, limits)]
    assert all(o.finish_reason is FinishReason.LENGTH for o in outs)


@pytest.mark.parametrize("spec", [SpecConfig(), SpecConfig("fastmtp", k=2), SpecConfig("replay", k=3)])
def test_mixed_batch_with_continuous_admission(varied_model, prompts, references, spec):
    """Requests finish at different steps (stop ids, limits) while waiting ones take their slots."""
    params = [SamplingParams(max_tokens=n, stop_ids=(references[i][s],) if s is not None else ())
              for i, (n, s) in enumerate([(48, None), (9, None), (48, 14), (30, 3), (17, None), (48, 25)])]
    want = []
    for ref, p in zip(references, params):
        out = ref[:p.max_tokens]
        for j, t in enumerate(out):
            if t in p.stop_ids:
                out = out[: j + 1]
                break
        want.append(out)
    outs, eng = _run(varied_model, prompts, params, spec=spec, max_batch=3, references=_refs(references))
    assert [o.token_ids for o in outs] == want
    assert eng.scheduler.idle and not eng.seqs


def test_batched_equals_single(varied_model, prompts):
    spec = SpecConfig("fastmtp", k=3)
    params = SamplingParams(max_tokens=40)
    batched, _ = _run(varied_model, prompts, params, spec=spec, max_batch=6)
    single = [_run(varied_model, [p], params, spec=spec, max_batch=1)[0][0] for p in prompts]
    assert [o.token_ids for o in batched] == [o.token_ids for o in single]


def test_stats_identities(varied_model, prompts, references):
    _, eng = _run(varied_model, prompts, SamplingParams(max_tokens=48),
                  spec=SpecConfig("replay", k=3, replay_q=0.6), references=_refs(references))
    st = eng.stats
    d = st.to_dict()
    # No stop ids and max_tokens cuts only where a draft matched past the limit: every step
    # committed its accepted drafts plus one, so tau = 1 + sum_j p_j and alpha = (tau - 1) / K.
    assert st.accepted == sum(st.accepted_at) and st.drafted == 3 * st.seq_steps
    tau = 1 + sum(a / st.seq_steps for a in st.accepted_at)
    assert abs(d["tokens_per_step"] - tau) < 0.03
    assert d["acceptance_rate"] == round((tau - 1) / 3, 4)


@pytest.mark.parametrize("spec", [SpecConfig("fastmtp", k=3), SpecConfig("fastmtp", k=4, adaptive=True)])
def test_slots_filled_to_capacity(varied_model, prompts, references, spec):
    """max_len exactly prompt + max_tokens + K + 1 for the longest prompt: padding never overflows."""
    need = max(map(len, prompts)) + 48 + spec.k + 1
    eng = Engine(varied_model, EngineConfig(max_batch=3, max_len=need, spec=spec))
    outs = eng.generate([Request(str(i), p, SamplingParams(max_tokens=48)) for i, p in enumerate(prompts)])
    assert [o.token_ids for o in outs] == references
