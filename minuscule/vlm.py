"""VlmEngine: pages → processor → inference engine → grounding parse → PageResults (`--engine vlm`).

    minuscule parse doc.pdf -o out --engine vlm --model CHECKPOINT_DIR

Pages stream through one Engine: up to `max_batch` pages decode together (continuous batching),
results come back in page order. Speculation defaults to the checkpoint's FastMTP head with
adaptive K (K=0 when it does not pay). Settings the `parse` command has no flags for come from
the environment: MINUSCULE_MAX_TOKENS (new tokens per page), MINUSCULE_SPEC (`none`,
`fastmtp:K`, `ngram:K`), MINUSCULE_PROMPT_FORMAT (`jina` or `deepseek`), MINUSCULE_MODE
(tiny, small, base, large, gundam), MINUSCULE_BATCH (pages decoded together), MINUSCULE_THREADS
(torch CPU threads; on a busy shared CPU one thread can be far faster than torch's default).
"""

from __future__ import annotations

import os
import time
from typing import Any, Iterable, Iterator

from minuscule.documents.types import Page, PageResult
from minuscule.errors import InputError, MissingExtraError

NAME = "vlm"
DEFAULT_MAX_TOKENS = 4096


def _spec_from_text(text: str, kmax_default: int):
    from minuscule.engine.config import SpecConfig

    name, _, k = text.partition(":")
    if name == "none":
        return SpecConfig()
    k_value = int(k) if k else kmax_default
    return SpecConfig(proposer=name, k=k_value, adaptive=True)


class VlmEngine:
    """The model engine over a checkpoint directory (config.json, tokenizer.json, safetensors)."""

    name = NAME

    def __init__(self, model: str | None = None, *, fmt: str | None = None, mode: str | None = None,
                 prompt: str | None = None, max_tokens: int | None = None, spec: str | None = None,
                 max_batch: int | None = None, dtype: str | None = None, device: str = "cpu"):
        model = model or os.environ.get("MINUSCULE_MODEL")
        if not model:
            raise ValueError("the vlm engine needs a checkpoint: --model DIR or $MINUSCULE_MODEL")
        try:
            import torch
        except ImportError:
            raise MissingExtraError("torch", "model") from None
        from minuscule.engine.config import EngineConfig, GuardConfig
        from minuscule.engine.engine import Engine
        from minuscule.model.checkpoint import load
        from minuscule.processor import Processor
        from minuscule.tokenizer import Tokenizer

        env = os.environ
        if env.get("MINUSCULE_THREADS"):
            torch.set_num_threads(int(env["MINUSCULE_THREADS"]))
        try:
            self.tokenizer = Tokenizer.from_dir(model)
            net = load(model, dtype=dtype, device=device)
            self.processor = Processor(self.tokenizer, fmt=fmt or env.get("MINUSCULE_PROMPT_FORMAT", "jina"),
                                       mode=mode or env.get("MINUSCULE_MODE", "gundam"), prompt=prompt)
        except InputError as e:
            raise ValueError(str(e)) from None
        cfg = net.cfg
        default_spec = f"fastmtp:{cfg.mtp_num_speculative_steps}" if cfg.has_mtp else "none"
        spec_cfg = _spec_from_text(spec or env.get("MINUSCULE_SPEC", default_spec), cfg.mtp_num_speculative_steps or 3)
        self.max_tokens = int(max_tokens or env.get("MINUSCULE_MAX_TOKENS", DEFAULT_MAX_TOKENS))
        self.max_batch = int(max_batch or env.get("MINUSCULE_BATCH", 8))
        # A slot holds the longest prompt the mode can make plus the output, within the model's range.
        self.max_len = min(cfg.max_position_embeddings,
                           self._longest_prompt() + self.max_tokens + spec_cfg.k + 1)
        exempt = tuple(self._token_ids("<td>", "</td>"))
        self.guards = GuardConfig(exempt_ids=exempt)
        self.engine = Engine(net, EngineConfig(max_batch=self.max_batch, max_len=self.max_len,
                                               max_tokens_per_step=max(8192, self.max_len), spec=spec_cfg))
        self.spec_name = spec_cfg.proposer

    def _longest_prompt(self) -> int:
        from minuscule.processor import prompt_ids, tile_candidates, tokens_per_side

        m = self.processor.mode
        if m.crop:
            q, t = tokens_per_side(m.base_size), tokens_per_side(m.image_size)
            image = q * (q + 1) + 1 + max((t * h) * (t * w + 1) for w, h in tile_candidates())
        else:
            q = tokens_per_side(m.image_size)
            image = q * (q + 1) + 1
        return len(prompt_ids(self.tokenizer, image, self.processor.prompt, self.processor.fmt))

    def _token_ids(self, *tokens: str) -> list[int]:
        ids = []
        for t in tokens:
            try:
                ids.append(self.tokenizer.token_id(t))
            except InputError:
                pass
        return ids

    def parse_page(self, page: Page) -> PageResult:
        return next(iter(self.parse_pages([page])))

    def parse_pages(self, pages: Iterable[Page]) -> Iterator[PageResult]:
        """Results in page order; up to 2 x max_batch pages are prepared ahead of the decoder."""
        eng = self.engine
        try:
            yield from self._parse(pages)
        finally:
            # A failed page (or an abandoned generator) must not leave requests in the engine.
            for rid in list(eng.seqs) + list(eng._pending):
                eng.abort(rid)

    def _parse(self, pages: Iterable[Page]) -> Iterator[PageResult]:
        from minuscule.engine.config import SamplingParams
        from minuscule.engine.request import Request

        eng = self.engine
        source = iter(pages)
        queued: dict[str, tuple[Page, Any, float]] = {}
        order: list[str] = []
        done: dict[str, Any] = {}
        exhausted = False
        n = 0
        while True:
            while not exhausted and len(queued) < 2 * self.max_batch:
                page = next(source, None)
                if page is None:
                    exhausted = True
                    break
                t0 = time.perf_counter()
                inputs = self.processor(page.image)
                ids = inputs.input_ids.tolist()
                budget = min(self.max_tokens, self.max_len - len(ids) - eng.kmax - 1)
                if budget < 1:
                    raise InputError(f"page {page.number}", f"its prompt of {len(ids)} tokens leaves no room to generate")
                rid = f"page-{n}"
                n += 1
                eng.add_request(Request(rid, ids, SamplingParams(max_tokens=budget, stop_ids=(self.tokenizer.eos_id,),
                                                                 guards=self.guards), pixels=inputs))
                queued[rid] = (page, inputs, time.perf_counter() - t0)
                order.append(rid)
            while order and order[0] in done:
                rid = order.pop(0)
                page, inputs, prep = queued.pop(rid)
                yield self._result(page, inputs, prep, done.pop(rid))
            if not order:
                return
            for out in eng.step():
                if out.finished:
                    done[out.request_id] = out

    def _result(self, page: Page, inputs: Any, prep_s: float, out: Any) -> PageResult:
        from minuscule.processor import parse_grounded

        ids = [t for t in out.token_ids if t != self.tokenizer.eos_id]
        text = self.tokenizer.decode(ids)
        blocks = parse_grounded(text, page.width, page.height)
        stats = dict(out.stats)
        stats.update({"proposer": self.spec_name, "image_tokens": inputs.num_image_tokens,
                      "tiles": list(inputs.grid), "preprocess_seconds": round(prep_s, 4)})
        seconds = prep_s + sum(stats.get("seconds", {}).values())
        return PageResult(page=page.number, blocks=blocks, engine=NAME, seconds=seconds, stats=stats)
