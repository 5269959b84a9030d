"""Scheduler on its own: FIFO admission under slot and token limits, packed slots, retirement moves."""

from __future__ import annotations

import random

import pytest

from minuscule.engine.scheduler import Scheduler


def test_admits_into_free_slots_in_order():
    s = Scheduler(max_batch=2, max_tokens_per_step=100)
    for rid, n in (("a", 10), ("b", 10), ("c", 10)):
        s.add(rid, n)
    out = s.schedule()
    assert out.decode == () and out.admitted == (("a", 0), ("b", 1))
    out = s.schedule()
    assert out.decode == ("a", "b") and out.admitted == ()  # no free slot for c
    assert s.finish("a") == (1, 0)  # b moves into slot 0
    out = s.schedule()
    assert out.decode == ("b",) and out.admitted == (("c", 1),)
    assert s.running == ["b", "c"]


def test_token_budget_limits_prefills_but_never_starves():
    s = Scheduler(max_batch=8, max_tokens_per_step=50)
    s.add("long", 500)
    s.add("x", 20)
    out = s.schedule()
    assert out.admitted == (("long", 0),)  # alone in an idle engine: admitted despite its length
    s.add("y", 20)
    out = s.schedule(width=4)
    # 1 running x 4 tokens leaves 46: x (20) fits, y (20) fits, total 44
    assert out.decode == ("long",) and out.admitted == (("x", 1), ("y", 2)) and out.tokens == 4
    s.add("z", 40)
    out = s.schedule(width=4)
    assert out.admitted == ()  # 3 x 4 = 12 reserved, 38 left < 40
    assert s.max_width() == 16


def test_width_is_clamped_by_the_budget():
    s = Scheduler(max_batch=4, max_tokens_per_step=8)
    for r in "abcd":
        s.add(r, 1)
    s.schedule()
    assert s.schedule(width=5).width == 2


def test_duplicates_and_bad_limits():
    s = Scheduler(2, 10)
    s.add("a", 3)
    with pytest.raises(ValueError):
        s.add("a", 3)
    with pytest.raises(ValueError):
        Scheduler(0, 10)


def test_random_workload_keeps_slots_packed():
    rng = random.Random(0)
    s = Scheduler(max_batch=5, max_tokens_per_step=64)
    slot_of: dict[str, int] = {}
    n = 0
    for step in range(300):
        for _ in range(rng.randrange(3)):
            s.add(f"r{n}", rng.randrange(1, 40))
            n += 1
        out = s.schedule(width=rng.randrange(1, 4))
        assert out.tokens <= 64 and len(s.running) <= 5
        for rid, slot in out.admitted:
            slot_of[rid] = slot
        assert list(out.decode) == s.running[: len(out.decode)]
        for rid in list(s.running):
            if rng.random() < 0.2:
                moved = s.finish(rid)
                del slot_of[rid]
                if moved:
                    src, dst = moved
                    mover = s.running[dst]
                    assert slot_of[mover] == src
                    slot_of[mover] = dst
        assert {r: i for i, r in enumerate(s.running)} == slot_of


def test_abort_waiting_and_running():
    s = Scheduler(max_batch=2, max_tokens_per_step=100)
    for r in "abc":
        s.add(r, 5)
    s.schedule()
    assert s.abort("c") is None and not s.waiting
    assert s.abort("a") == (1, 0) and s.running == ["b"]
