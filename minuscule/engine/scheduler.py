"""Continuous batching in pure Python: admit waiting requests into free slots, decode the running ones, retire.

Active requests occupy slots 0..n-1 with no holes, so the runner's batch is a slice of the caches.
When a request leaves from the middle, the last one moves into its slot (one cache copy).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class SchedulerOutput:
    """One step's plan.

    decode: running requests in slot order (request i is in slot i), each fed `width` tokens.
    admitted: (request id, slot) of newcomers to prefill this step; they decode from the next step.
    """

    decode: tuple[str, ...]
    admitted: tuple[tuple[str, int], ...]
    width: int

    @property
    def tokens(self) -> int:
        return len(self.decode) * self.width


class Scheduler:
    """FIFO admission under two limits: `max_batch` slots and `max_tokens_per_step` target tokens.

    A step first reserves `width` tokens per running request, then admits newcomers whose prompt
    fits in what is left. A newcomer is always admitted into an idle engine, however long its
    prompt, so no request can wait forever.
    """

    def __init__(self, max_batch: int, max_tokens_per_step: int):
        if max_batch < 1 or max_tokens_per_step < 1:
            raise ValueError("max_batch and max_tokens_per_step must be positive")
        self.max_batch = max_batch
        self.max_tokens = max_tokens_per_step
        self.waiting: deque[tuple[str, int]] = deque()
        self.running: list[str] = []  # index = slot

    def add(self, request_id: str, prompt_len: int) -> None:
        if request_id in self.running or any(r == request_id for r, _ in self.waiting):
            raise ValueError(f"request {request_id!r} is already queued")
        self.waiting.append((request_id, prompt_len))

    def max_width(self) -> int:
        """Largest per-request decode width (1 + drafts) the token budget allows for the running batch."""
        return max(1, self.max_tokens // max(1, len(self.running)))

    def schedule(self, width: int = 1) -> SchedulerOutput:
        """Plan a step: decode every running request with `width` tokens, then admit what fits."""
        width = max(1, min(width, self.max_width()))
        decode = tuple(self.running)
        budget = self.max_tokens - len(decode) * width
        admitted: list[tuple[str, int]] = []
        while self.waiting and len(self.running) < self.max_batch:
            rid, n = self.waiting[0]
            if n > budget and (decode or admitted):
                break
            self.waiting.popleft()
            admitted.append((rid, len(self.running)))
            self.running.append(rid)
            budget -= n
        return SchedulerOutput(decode, tuple(admitted), width)

    def slot_of(self, request_id: str) -> int:
        return self.running.index(request_id)

    def finish(self, request_id: str) -> tuple[int, int] | None:
        """Retire a running request; returns (src, dst) when the last slot's request moved into its slot."""
        slot = self.running.index(request_id)
        last = len(self.running) - 1
        if slot == last:
            self.running.pop()
            return None
        self.running[slot] = self.running.pop()
        return last, slot

    def abort(self, request_id: str) -> tuple[int, int] | None:
        """Drop a waiting or running request; like `finish` for a running one."""
        for i, (rid, _) in enumerate(self.waiting):
            if rid == request_id:
                del self.waiting[i]
                return None
        return self.finish(request_id)

    @property
    def idle(self) -> bool:
        return not self.running and not self.waiting
