"""Preallocated per-slot KV caches (target and draft) indexed by position; rollback is a length update."""

from __future__ import annotations

import torch


class SlotCache:
    """Keys and values of `layers` attention layers for `slots` sequences of up to `capacity` positions.

    Entry p of a slot holds the key/value of position p, so a rejected draft is rolled back by
    simply not counting it: the next pass writes over the same positions. Batches run on the
    first B slots (the scheduler keeps active requests packed there), so a batch's view of the
    cache is a slice, never a gather.
    """

    def __init__(self, layers: int, slots: int, heads: int, head_dim: int, capacity: int,
                 dtype: torch.dtype, device: torch.device | str):
        shape = (slots, heads, capacity, head_dim)
        self.keys = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(layers)]
        self.values = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(layers)]
        self.capacity = capacity

    def write(self, layer: int, positions: torch.Tensor, k: torch.Tensor, v: torch.Tensor, span: int,
              row0: int = 0, start: int = -1, rows: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Store k/v (B, H, T, D) of slots row0..row0+B-1 at `positions` (B, T); return those slots'
        keys/values (B, H, span, D). With one row, `start` is its first position (contiguous); with
        several, `rows` (B, T) may give their slot indices (a pass builds them once for all layers)."""
        b, t = positions.shape
        if b == 1:  # one row: a slice write is cheapest
            if start < 0:
                start = int(positions[0, 0])
            self.keys[layer][row0:row0 + 1, :, start:start + t] = k
            self.values[layer][row0:row0 + 1, :, start:start + t] = v
        else:
            if rows is None:
                rows = row0 + torch.arange(b, device=positions.device)[:, None].expand(b, t)  # (B, T)
            # Advanced indices on dims 0 and 2 put (B, T) first: (B, T, H, D) targets.
            self.keys[layer][rows, :, positions] = k.transpose(1, 2)
            self.values[layer][rows, :, positions] = v.transpose(1, 2)
        return self.keys[layer][row0:row0 + b, :, :span], self.values[layer][row0:row0 + b, :, :span]

    def move(self, src: int, dst: int, length: int) -> None:
        """Copy slot `src`'s first `length` positions to slot `dst` (packing after a request leaves)."""
        for buf in (*self.keys, *self.values):
            buf[dst, :, :length] = buf[src, :, :length]


class HiddenStore:
    """Target post-norm hidden states per slot and position: the FastMTP draft refills from them."""

    DEFER = 64  # single-position writes kept before they are copied in one go

    def __init__(self, slots: int, capacity: int, hidden: int, dtype: torch.dtype, device: torch.device | str):
        self._buf = torch.zeros(slots, capacity, hidden, dtype=dtype, device=device)
        self.capacity = capacity
        self._deferred: list[tuple[torch.Tensor, list[int]]] = []  # (rows (N, H), flat slot*capacity+position)

    @property
    def buf(self) -> torch.Tensor:
        """(slots, capacity, H), with every write applied."""
        self.flush()
        return self._buf

    def defer(self, starts: list[int], hidden: torch.Tensor, row0: int = 0) -> None:
        """hidden (B, 1, H) at position starts[b] of slot row0+b, copied later with others (plain
        decoding steps write one position per row, and FastMTP may never read them)."""
        cap = self.capacity
        self._deferred.append((hidden.reshape(len(starts), -1), [(row0 + b) * cap + p for b, p in enumerate(starts)]))
        if len(self._deferred) >= self.DEFER:
            self.flush()

    def flush(self) -> None:
        """Copy the deferred writes, oldest first (no position repeats among them: a slot's next
        sequence arrives with a prefill, an ordinary write, which flushes first)."""
        if not self._deferred:
            return
        rows = torch.cat([h for h, _ in self._deferred])
        index = torch.tensor([i for _, ii in self._deferred for i in ii], device=rows.device)
        self._deferred.clear()
        self._buf.view(-1, self._buf.shape[-1]).index_copy_(0, index, rows)

    def write(self, positions: torch.Tensor, hidden: torch.Tensor, row0: int = 0, start: int = -1) -> None:
        """hidden (B, T, H) at positions (B, T) of slots row0..row0+B-1, each row's positions contiguous;
        with one row, `start` (its first position, when the caller knows it) saves a host read."""
        self.flush()
        b, t = positions.shape
        if b == 1:  # a slice write is several times cheaper than an indexed one
            if start < 0:
                start = int(positions[0, 0])
            self._buf[row0, start:start + t] = hidden[0]
            return
        rows = row0 + torch.arange(b, device=positions.device)[:, None].expand(b, t)  # (B, T)
        self._buf[rows, positions] = hidden

    def gather(self, positions: torch.Tensor, row0: int = 0) -> torch.Tensor:
        """(B, T, H) at positions (B, T) of slots row0..row0+B-1."""
        b, t = positions.shape
        rows = row0 + torch.arange(b, device=positions.device)[:, None].expand(b, t)  # (B, T)
        return self.buf[rows, positions]

    def move(self, src: int, dst: int, length: int) -> None:
        buf = self.buf
        buf[dst, :length] = buf[src, :length]
