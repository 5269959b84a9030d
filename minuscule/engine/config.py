"""Engine configuration: sampling parameters, guards, speculation and capacity (frozen dataclasses)."""

from __future__ import annotations

from dataclasses import dataclass, field

PROPOSERS = ("none", "fastmtp", "replay", "ngram")


@dataclass(frozen=True)
class GuardConfig:
    """Anti-loop guards of the reference recipes, applied identically at every verified position.

    No-repeat n-gram: a token that would complete an `ngram_size`-gram already seen among the last
    `window` generated tokens is banned (ids in `exempt_ids`, e.g. `<td>`/`</td>`, never are).
    Repetition stop: when the last repeat_period × repeat_count generated tokens are one pattern of
    at most `repeat_period` tokens repeated, the request ends with finish reason `repetition`.
    A size or count of 0 turns that guard off.
    """

    ngram_size: int = 35
    window: int = 1024
    exempt_ids: tuple[int, ...] = ()
    repeat_period: int = 35
    repeat_count: int = 10

    def __post_init__(self) -> None:
        if self.ngram_size < 0 or self.window < 0 or self.repeat_period < 0 or self.repeat_count < 0:
            raise ValueError("guard sizes must be >= 0")
        if self.ngram_size == 1:
            raise ValueError("ngram_size 1 would ban every token already generated; use 0 to turn it off")
        if self.repeat_count == 1:
            raise ValueError("repeat_count 1 stops at once; use 0 to turn the repetition stop off")


@dataclass(frozen=True)
class SamplingParams:
    """Greedy decoding (the only mode: speculation is lossless against it) with its limits and guards."""

    max_tokens: int = 512
    stop_ids: tuple[int, ...] = ()
    guards: GuardConfig | None = None

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be >= 1")


@dataclass(frozen=True)
class SpecConfig:
    """Which proposer drafts and how many tokens per step.

    k: draft length, or the upper bound when `adaptive` picks K in 0..k per step.
    replay_q: probability that each replayed draft token is right (benchmarks only).
    ngram_min/ngram_max: suffix lengths the n-gram proposer looks up, longest first.
    """

    proposer: str = "none"
    k: int = 0
    adaptive: bool = False
    replay_q: float = 0.75
    seed: int = 0
    ngram_min: int = 2
    ngram_max: int = 4

    def __post_init__(self) -> None:
        if self.proposer not in PROPOSERS:
            raise ValueError(f"unknown proposer {self.proposer!r} (choose from {', '.join(PROPOSERS)})")
        if not 0 <= self.k <= 16:
            raise ValueError("k must be in 0..16")
        if self.proposer == "none" and self.k:
            raise ValueError("k > 0 needs a proposer")
        if not 0.0 <= self.replay_q <= 1.0:
            raise ValueError("replay_q must be in [0, 1]")
        if not 1 <= self.ngram_min <= self.ngram_max:
            raise ValueError("need 1 <= ngram_min <= ngram_max")

    @classmethod
    def parse(cls, proposer: str, k: int = 0, adaptive: bool = False, seed: int = 0) -> SpecConfig:
        """`replay:0.75` → SpecConfig(proposer="replay", replay_q=0.75); other names as they are."""
        name, _, arg = proposer.partition(":")
        if name == "replay" and arg:
            return cls(proposer="replay", k=k, adaptive=adaptive, replay_q=float(arg), seed=seed)
        if arg:
            raise ValueError(f"proposer {name!r} takes no argument")
        return cls(proposer=name, k=k, adaptive=adaptive, seed=seed)


@dataclass(frozen=True)
class EngineConfig:
    """Capacity: `max_batch` slots of `max_len` positions each (prompt + output + draft lookahead),
    at most `max_tokens_per_step` tokens through the target per step (prefills + decodes)."""

    max_batch: int = 8
    max_len: int = 2048
    max_tokens_per_step: int = 4096
    spec: SpecConfig = field(default_factory=SpecConfig)

    def __post_init__(self) -> None:
        if self.max_batch < 1 or self.max_len < 2 or self.max_tokens_per_step < 1:
            raise ValueError("max_batch, max_len and max_tokens_per_step must be positive")
