"""Engine: continuous batching with optional speculative decoding; `add_request`/`step`/`stream`/`generate`.

    engine = Engine(model, EngineConfig(max_batch=8, spec=SpecConfig("fastmtp", k=3)))
    outputs = engine.generate([Request("a", ids, SamplingParams(max_tokens=256, stop_ids=(eos,)))])

Every step: admit and prefill newcomers (vision encoder + prompt) into free slots, then one decode
pass for all running requests: the proposer drafts K tokens each, one target pass verifies
[pending, drafts], the verifier commits the accepted prefix plus one token. Greedy output is
identical to plain decoding for any proposer, K and batch composition.
"""

from __future__ import annotations

import os
import time
from typing import Callable, Iterator

import torch

from minuscule.engine.adaptive import AdaptiveK
from minuscule.engine.config import EngineConfig, SpecConfig
from minuscule.engine.guards import GuardState
from minuscule.engine.request import Request, RequestOutput, Sequence
from minuscule.engine.runner import Runner
from minuscule.engine.scheduler import Scheduler
from minuscule.engine.spec import Proposer
from minuscule.engine.stats import EngineStats
from minuscule.engine.verify import choose, verify
from minuscule.model.ocr import OCRModel


def build_proposer(spec: SpecConfig, runner: Runner, vocab_size: int,
                   references: dict[str, list[int]] | None) -> Proposer | None:
    if spec.proposer == "none":
        return None
    if spec.proposer == "fastmtp":
        from minuscule.engine.spec.fastmtp import FastMTPProposer

        return FastMTPProposer(runner)
    if spec.proposer == "ngram":
        from minuscule.engine.spec.ngram import NgramProposer

        return NgramProposer(spec.ngram_min, spec.ngram_max)
    from minuscule.engine.spec.replay import ReplayProposer

    if references is None:
        raise ValueError("the replay proposer needs reference continuations (references=)")
    return ReplayProposer(references, spec.replay_q, spec.k, vocab_size, spec.seed)


class Engine:
    """Token ids and tensors in, token ids out. One engine owns one model and its slot caches.

    `proposer` overrides the one `config.spec` names (tests pass oracle or adversarial drafters);
    `references` feeds the replay proposer; `clock` times the stats and adaptive K (a CPU-time
    clock keeps the step costs of a one-thread CPU run free of other processes' preemption).
    """

    def __init__(self, model: OCRModel, config: EngineConfig | None = None, proposer: Proposer | None = None,
                 references: dict[str, list[int]] | None = None, clock: Callable[[], float] = time.perf_counter):
        self.model = model.eval()
        self.clock = clock
        self.cfg = config or EngineConfig()
        spec = self.cfg.spec
        self.kmax = spec.k
        needs_hidden = spec.proposer == "fastmtp" or bool(getattr(proposer, "needs_hidden", False))
        self.runner = Runner(model, self.cfg, with_draft=needs_hidden)
        self.proposer = proposer or build_proposer(spec, self.runner, model.cfg.vocab_size, references)
        if self.proposer is None and self.kmax:
            raise ValueError("k > 0 needs a proposer")
        self.adaptive = AdaptiveK(self.kmax) if spec.adaptive and self.kmax else None
        self.scheduler = Scheduler(self.cfg.max_batch, self.cfg.max_tokens_per_step)
        self.stats = EngineStats()
        self.seqs: dict[str, Sequence] = {}
        self._pending: dict[str, Request] = {}

    @classmethod
    def from_pretrained(cls, directory: str | os.PathLike[str], config: EngineConfig | None = None,
                        dtype: str | None = None, device: str = "cpu") -> Engine:
        from minuscule.model.checkpoint import load

        return cls(load(directory, dtype=dtype, device=device), config)

    # -- API ---------------------------------------------------------------------------------
    def add_request(self, request: Request) -> None:
        """Queue a request; it is admitted when a slot and the step's token budget allow."""
        rid = request.request_id
        if rid in self._pending or rid in self.seqs:
            raise ValueError(f"request {rid!r} is already in the engine")
        need = len(request.prompt_ids) + request.params.max_tokens + self.kmax + 1
        if need > self.cfg.max_len:
            raise ValueError(f"request {rid!r}: prompt {len(request.prompt_ids)} + max_tokens "
                             f"{request.params.max_tokens} + lookahead {self.kmax + 1} exceeds max_len {self.cfg.max_len}")
        n_image = sum(1 for t in request.prompt_ids if t == self.model.cfg.image_token_id)
        if request.pixels is None:
            n_feats = 0 if request.image_embeds is None else request.image_embeds.reshape(-1, self.model.cfg.hidden_size).shape[0]
            if n_feats != n_image:
                raise ValueError(f"request {rid!r}: {n_image} <image> placeholders but {n_feats} image embeddings")
        if need > self.model.cfg.max_position_embeddings:
            raise ValueError(f"request {rid!r} needs {need} positions; the model has "
                             f"{self.model.cfg.max_position_embeddings}")
        self._pending[rid] = request
        self.scheduler.add(rid, len(request.prompt_ids))

    def abort(self, request_id: str) -> None:
        """Remove a request wherever it is (queued or running); its output so far is discarded."""
        if request_id not in self._pending and request_id not in self.seqs:
            return
        self._pending.pop(request_id, None)
        self._retire(request_id, abort=True)

    def has_unfinished(self) -> bool:
        return not self.scheduler.idle

    @torch.inference_mode()
    def step(self) -> list[RequestOutput]:
        """One engine step; returns an output for every request that got tokens (finished ones included)."""
        running = len(self.scheduler.running)
        k = self.adaptive.choose(running) if self.adaptive is not None and running else self.kmax
        plan = self.scheduler.schedule(k + 1)
        outputs = self._prefill(list(plan.admitted)) if plan.admitted else []
        if plan.decode:
            outputs += self._decode(list(plan.decode), plan.width - 1)
        for out in outputs:
            if out.finished:
                self._retire(out.request_id)
        return outputs

    def stream(self, request: Request) -> Iterator[RequestOutput]:
        """Add a request and step the engine until it finishes, yielding its output after each step."""
        self.add_request(request)
        rid = request.request_id
        while True:
            for out in self.step():
                if out.request_id == rid:
                    yield out
                    if out.finished:
                        return

    def generate(self, requests: list[Request]) -> list[RequestOutput]:
        """Run a batch of requests to completion; final outputs in the order given."""
        for r in requests:
            self.add_request(r)
        done: dict[str, RequestOutput] = {}
        wanted = {r.request_id for r in requests}
        while wanted - done.keys():
            for out in self.step():
                if out.finished:
                    done[out.request_id] = out
        return [done[r.request_id] for r in requests]

    # -- internals ---------------------------------------------------------------------------
    def _output(self, seq: Sequence, new: list[int]) -> RequestOutput:
        stats = seq.stats() if seq.finish is not None else {}
        return RequestOutput(seq.request_id, list(seq.generated), new, seq.finish, stats)

    def _prefill(self, admitted: list[tuple[str, int]]) -> list[RequestOutput]:
        """Newcomers (in consecutive slots): the vision encoder for each, then their prompts in one
        padded target pass, or one pass each when padding would be most of the batched one.

        A request whose vision encoding fails leaves and the newcomers after it go back to the
        queue untouched (those before it are prefilled, then the error propagates); when a target
        pass fails, the requests of that pass leave.
        """
        ready: list[tuple[Sequence, int, torch.Tensor | None]] = []
        for i, (rid, slot) in enumerate(admitted):
            try:
                ready.append(self._encode(rid, slot))
            except Exception:
                later = [self._pending[r] for r, _ in admitted[i + 1:]]
                try:
                    self._prefill_passes(ready)  # their first tokens stay in their sequences
                finally:
                    for r, _ in reversed(admitted[i:]):
                        self.abort(r)
                    for req in later:
                        self.add_request(req)
                raise
        return self._prefill_passes(ready)

    def _encode(self, rid: str, slot: int) -> tuple[Sequence, int, torch.Tensor | None]:
        req = self._pending.pop(rid)
        guards = req.params.guards
        seq = self.seqs[rid] = Sequence(req, GuardState(guards) if guards is not None else None)
        r = self.runner
        t0 = self.clock()
        embeds = req.image_embeds
        if req.pixels is not None:
            embeds = r.encode(req.pixels)
        elif embeds is not None:
            embeds = embeds.to(r.device, r.dtype)
        t1 = self.clock()
        seq.seconds["vision"] = t1 - t0
        self.stats.seconds["vision"] += t1 - t0
        return seq, slot, embeds

    def _prefill_passes(self, ready: list[tuple[Sequence, int, torch.Tensor | None]]) -> list[RequestOutput]:
        lens = [seq.prompt_len for seq, _, _ in ready]
        if len(ready) > 1 and len(ready) * max(lens) <= 2 * sum(lens):
            groups = [ready]
        else:
            groups = [[one] for one in ready]
        outputs = []
        for group in groups:
            try:
                outputs += self._prefill_pass(group)
            except Exception:
                for seq, _, _ in reversed(group):
                    self.abort(seq.request_id)
                raise
        return outputs

    def _prefill_pass(self, group: list[tuple[Sequence, int, torch.Tensor | None]]) -> list[RequestOutput]:
        """One target pass over the prompts of consecutive slots, right-padded to the longest: the
        padding sits past each row's prompt, where the cache is rewritten before it is read."""
        r = self.runner
        seqs = [seq for seq, _, _ in group]
        row0 = group[0][1]
        t0 = self.clock()
        if len(group) == 1:
            seq, _, embeds = group[0]
            ids = torch.tensor([seq.tokens], dtype=torch.long, device=r.device)  # (1, P)
            pos = torch.arange(seq.prompt_len, device=r.device)[None]  # (1, P)
            logits, hidden = r.target(ids, pos, row0=row0, image_embeds=embeds, prompt=True, last_only=True)
            rows = [logits[0, -1]]
        else:
            t = max(seq.prompt_len for seq in seqs)
            cfg = self.model.cfg
            pad = cfg.pad_token_id if cfg.pad_token_id != cfg.image_token_id else 0
            ids = torch.tensor([seq.tokens + [pad] * (t - seq.prompt_len) for seq in seqs], dtype=torch.long,
                               device=r.device)  # (B, T)
            pos = torch.arange(t, device=r.device)[None].expand(len(seqs), t)  # (B, T)
            feats = [e.reshape(-1, cfg.hidden_size) for _, _, e in group if e is not None]
            embeds = torch.cat(feats) if feats else None  # row by row, as the placeholders are ordered
            last = torch.tensor([seq.prompt_len - 1 for seq in seqs], device=r.device)
            logits, hidden = r.target(ids, pos, row0=row0, image_embeds=embeds, prompt=True, pick=last)
            rows = list(logits[:, 0])
        if r.hidden is not None:
            r.hidden.write(pos, hidden, row0=row0, start=0)
        st = self.stats
        outputs = []
        for seq, row in zip(seqs, rows):
            tok = choose(seq, row, int(row.argmax()))
            seq.commit(tok)
            st.prefill_tokens += seq.prompt_len
            st.generated += 1
            st.requests += 1
            outputs.append((seq, tok))
        t1 = self.clock()
        st.seconds["prefill"] += t1 - t0
        for seq in seqs:
            seq.seconds["prefill"] = (t1 - t0) / len(seqs)
        return [self._output(seq, [tok]) for seq, tok in outputs]

    def _decode(self, rids: list[str], k: int) -> list[RequestOutput]:
        seqs = [self.seqs[rid] for rid in rids]
        r = self.runner
        t0 = self.clock()
        drafts = self.proposer.propose(seqs, k) if k else [[] for _ in seqs]
        t1 = self.clock()
        ids = torch.tensor([[s.tokens[-1], *d] for s, d in zip(seqs, drafts)], device=r.device)  # (B, K+1)
        starts = [len(s.tokens) - 1 for s in seqs]
        pos = torch.tensor(starts, device=r.device)[:, None] + torch.arange(k + 1, device=r.device)  # (B, K+1)
        logits, hidden = r.target(ids, pos)
        if r.hidden is not None:
            if k:
                r.hidden.write(pos, hidden, start=starts[0])
            else:
                r.hidden.defer(starts, hidden)
        verdicts = verify(seqs, logits, drafts)
        t2 = self.clock()
        accepted = [v.accepted for v in verdicts]
        self.stats.record_step(k, accepted, [len(v.tokens) for v in verdicts])
        self.stats.seconds["draft"] += t1 - t0
        self.stats.seconds["decode"] += t2 - t1
        if self.adaptive is not None:
            self.adaptive.update(len(seqs), k, t2 - t0, accepted)
        outs = []
        for seq, v in zip(seqs, verdicts):
            seq.seconds["draft"] += (t1 - t0) / len(seqs)
            seq.seconds["decode"] += (t2 - t1) / len(seqs)
            seq.steps += 1
            seq.drafted += k
            seq.accepted += v.accepted
            outs.append(self._output(seq, v.tokens))
        return outs

    def _retire(self, rid: str, abort: bool = False) -> None:
        moved = self.scheduler.abort(rid) if abort else self.scheduler.finish(rid)
        self.seqs.pop(rid, None)
        if self.proposer is not None:
            self.proposer.release(rid)
        if moved is not None:
            src, dst = moved
            mover = self.seqs[self.scheduler.running[dst]]
            self.runner.move(src, dst, len(mover.tokens))
