"""Draft proposers. A proposer only proposes token ids; verify.py decides what is committed.

Interface: `propose(seqs, k) -> list of k draft ids per sequence` for the running batch in slot
order (sequence i in slot i), `release(request_id)` when a request leaves. Proposers that read the
target's hidden states (`needs_hidden`) get them through the runner's hidden store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from minuscule.engine.request import Sequence


class Proposer(Protocol):
    needs_hidden: bool

    def propose(self, seqs: list[Sequence], k: int) -> list[list[int]]: ...

    def release(self, request_id: str) -> None: ...
