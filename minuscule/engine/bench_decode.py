"""`minuscule bench decode`: decode tokens/s, tokens/step and acceptance per K and batch size, vs K=0 in the same run.

    minuscule bench decode --model nano --proposer replay:0.75 --k 0,1,2,3,adaptive --batch 1,8,32 --json out.json

Each batch size runs B requests of random prompt ids for exactly --tokens new tokens (no stop
ids, guards off). K=0 runs first; its outputs are the replay proposer's references and the
baseline every other run must reproduce token for token, in every round (`identical_to_k0`).
Then --repeats timed rounds run the engines of each batch size together, in interleaved turns
(see --slices), so that load from other processes on a shared CPU, which comes and goes over
seconds, falls on every run alike; tokens/s is all tokens of the timed rounds over the engine's
own time. By default seconds are process CPU time (see --clock). `k: "adaptive"` picks K in
0..max(--k) per step; its engine keeps what it learned in the warm-up round.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default="nano", help="checkpoint directory or preset (default nano, random weights)")
    parser.add_argument("--proposer", default="replay:0.75", help="replay:Q, fastmtp or ngram; comma-separated for several")
    parser.add_argument("--k", default="0,1,2,3,adaptive", help="draft lengths, comma-separated; 'adaptive' = 0..max")
    parser.add_argument("--batch", default="1,8,32", help="batch sizes, comma-separated")
    parser.add_argument("--tokens", type=int, default=256, help="new tokens per request (default 256)")
    parser.add_argument("--prompt-len", type=int, default=32, help="prompt tokens per request (default 32)")
    parser.add_argument("--repeats", type=int, default=3, help="timed rounds after one warm-up round (default 3)")
    parser.add_argument("--slices", type=int, default=64,
                        help="turns per engine and round: engines decode in turns of 1/SLICES of the steps of "
                             "their warm-up round, all engines of a batch size interleaved (default 64; 1: one after the other)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads (default 1: small models are overhead-bound and the CPU is shared)")
    parser.add_argument("--clock", default="cpu", choices=["cpu", "wall"],
                        help="cpu (default): process CPU time, which other processes on a shared CPU do not "
                             "inflate (with one thread it equals wall time on an idle machine); wall: elapsed time")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="short runs (for tests)")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write the JSON object here")


def run(args: argparse.Namespace) -> int:
    from minuscule.errors import InputError

    try:
        result = measure(args)
    except (InputError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.json is not None:
        from minuscule.config import write_json_atomic

        write_json_atomic(args.json, result)
    print(json.dumps(result, indent=2))
    return 0


def _load(source: str, seed: int):
    from minuscule.config import PRESETS, ModelConfig
    from minuscule.errors import InputError
    from minuscule.model.ocr import build_model

    if Path(source).is_dir():
        from minuscule.model.checkpoint import load

        return load(source), "checkpoint"
    if source in PRESETS:
        return build_model(ModelConfig.from_name(source), seed=seed), "random"
    raise InputError(source, "neither a checkpoint directory nor a preset")


def _parse_list(text: str, name: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ValueError(f"--{name} is empty")
    return items


def measure(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    from minuscule.engine.config import EngineConfig, SamplingParams, SpecConfig
    from minuscule.engine.engine import Engine
    from minuscule.engine.request import Request

    if args.quick:
        args.tokens, args.prompt_len, args.repeats = min(args.tokens, 24), min(args.prompt_len, 16), 1
    if args.repeats < 1 or args.slices < 1:
        raise ValueError("--repeats and --slices must be >= 1")
    torch.set_num_threads(args.threads)
    ks: list[int | str] = [k if k == "adaptive" else int(k) for k in _parse_list(args.k, "k")]
    fixed = sorted({k for k in ks if k != "adaptive"} | {0})
    kmax = max(fixed)
    if "adaptive" in ks and kmax == 0:
        raise ValueError("'adaptive' needs a positive K in --k as its upper bound")
    batches = [int(b) for b in _parse_list(args.batch, "batch")]
    proposers = _parse_list(args.proposer, "proposer")
    for p in proposers:
        SpecConfig.parse(p)  # fail early on a bad name
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    model, weights = _load(args.model, args.seed)
    vocab = model.cfg.vocab_size
    g = torch.Generator().manual_seed(args.seed)
    low = 16 if vocab > 64 else 0  # skip the special ids at the bottom of the vocabulary
    max_len = args.prompt_len + args.tokens + kmax + 2
    params = SamplingParams(max_tokens=args.tokens)

    def timed(engine: Engine, prompts: list[list[int]]) -> tuple[float, list[list[int]]]:
        engine.stats = type(engine.stats)()
        t0 = clock()
        outs = engine.generate([Request(f"r{i}", p, params) for i, p in enumerate(prompts)])
        return clock() - t0, [o.token_ids for o in outs]

    # Setup: per batch size, a K=0 engine (its outputs are the references) and one engine per
    # (proposer, K), each warmed up once (adaptive engines keep what they learned there).
    runs: list[dict[str, Any]] = []
    cells: list[dict[str, Any]] = []  # one per engine, every batch size
    for batch in batches:
        prompts = [torch.randint(low, vocab, (args.prompt_len,), generator=g).tolist() for _ in range(batch)]
        cfg = EngineConfig(max_batch=batch, max_len=max_len, max_tokens_per_step=batch * (kmax + 1) + batch * args.prompt_len)
        base_engine = Engine(model, cfg, clock=clock)
        timed(base_engine, prompts)  # warm-up
        _, baseline = timed(base_engine, prompts)
        refs = {f"r{i}": out for i, out in enumerate(baseline)}
        first = len(cells)
        cells.append({"proposer": None, "k": 0, "batch": batch, "engine": base_engine})
        for prop in proposers:
            for k in ks:
                if k == 0:
                    continue
                spec = SpecConfig.parse(prop, k=kmax if k == "adaptive" else k, adaptive=k == "adaptive", seed=args.seed)
                engine = Engine(model, EngineConfig(cfg.max_batch, cfg.max_len, cfg.max_tokens_per_step, spec),
                                references=refs, clock=clock)
                timed(engine, prompts)  # warm-up (and, for adaptive, its cost measurements)
                cells.append({"proposer": prop, "k": k, "batch": batch, "engine": engine})
        for c in cells[first:]:
            c.update(prompts=prompts, baseline=baseline)

    # Timed rounds. In each, the engines of one batch size run their B requests to completion
    # together, in turns: a cycle gives each engine a turn of 1/--slices of the decode steps its
    # warm-up round took, in a shuffled order, so each decodes a little in every stretch of the
    # measurement and load that other processes put on a shared machine (it comes and goes over
    # seconds) falls on all of them alike. Each engine's clock counts only its own turns. Batch
    # sizes take their turn one after the other (engines of different sizes stepping in turns
    # would push each other's data out of the CPU caches, the small ones more), in an order that
    # changes from round to round.
    order = random.Random(args.seed)
    for c in cells:
        steps = c["engine"].stats.steps + 1  # the warm-up round's steps (+1: its prefill step)
        c["engine"].stats = type(c["engine"].stats)()
        c.update(seconds=0.0, identical=True, rate=steps / args.slices, credit=0.0)
    for r in range(args.repeats):
        for batch in batches[r % len(batches):] + batches[:r % len(batches)]:
            block = [c for c in cells if c["batch"] == batch]
            outs: list[dict[str, list[int]]] = [{} for _ in block]
            for c in block:
                c["credit"] = 1.0  # every engine steps in the first cycle
                for i, p in enumerate(c["prompts"]):
                    c["engine"].add_request(Request(f"r{i}", p, params))
            pending = list(range(len(block)))
            while pending:
                order.shuffle(pending)
                for n in pending:
                    # Fractional turns (steps / slices per cycle, carried over) so that all engines
                    # of the block finish their round in about the same number of cycles.
                    c, engine = block[n], block[n]["engine"]
                    c["credit"] += c["rate"]
                    turn = int(c["credit"])
                    c["credit"] -= turn
                    t0 = clock()
                    for _ in range(turn):
                        if not engine.has_unfinished():
                            break
                        for out in engine.step():
                            if out.finished:
                                outs[n][out.request_id] = out.token_ids
                    c["seconds"] += clock() - t0
                pending = [n for n in pending if block[n]["engine"].has_unfinished()]
            for n, c in enumerate(block):
                c["identical"] &= [outs[n][f"r{i}"] for i in range(len(c["prompts"]))] == c["baseline"]

    k0 = {c["batch"]: c for c in cells if c["proposer"] is None}
    for c in cells:
        generated = c["batch"] * args.tokens * args.repeats
        k0_tps = generated / k0[c["batch"]]["seconds"]
        for prop in (proposers if c["proposer"] is None else [c["proposer"]]):
            runs.append(_row(prop, c["k"], c["batch"], c, generated, k0_tps))
    return {
        "benchmark": "decode",
        "inputs": {"model": args.model, "weights": weights, "dtype": str(model.lm_head.weight.dtype).removeprefix("torch."),
                   "proposers": proposers, "k": ks, "batch": batches, "tokens": args.tokens,
                   "prompt_len": args.prompt_len, "repeats": args.repeats, "slices": args.slices,
                   "seed": args.seed, "clock": args.clock,
                   "stop_ids": [], "guards": False},
        "environment": {"cores": os.cpu_count(), "torch_threads": torch.get_num_threads(), "torch": torch.__version__,
                        "python": platform.python_version(), "machine": platform.machine()},
        "runs": runs,
        "targets": _targets(runs, batches),
    }


def _row(proposer: str, k: int | str, batch: int, cell: dict[str, Any], generated: int, k0_tps: float) -> dict[str, Any]:
    d = cell["engine"].stats.to_dict()  # over all timed rounds
    tps = generated / cell["seconds"]
    return {"proposer": proposer, "k": k, "batch": batch, "tokens_per_s": round(tps, 2),
            "tokens_per_step": d["tokens_per_step"], "acceptance_per_position": d["acceptance_per_position"],
            "speedup_vs_k0": round(tps / k0_tps, 3), "identical_to_k0": cell["identical"],
            "seconds": round(cell["seconds"], 4), "k_steps": d["k_steps"], "time_split": d["seconds"]}


def _targets(runs: list[dict[str, Any]], batches: list[int]) -> dict[str, Any]:
    """The issue's targets, evaluated on this run (only those its settings cover)."""
    out: dict[str, Any] = {}
    for r in runs:
        if r["proposer"].startswith("replay") and r["k"] == 3 and r["batch"] == 1:
            out["replay_k3_tokens_per_step"] = {"value": r["tokens_per_step"], "target": 2.7,
                                                "met": (r["tokens_per_step"] or 0) >= 2.7}
            out["replay_k3_batch1_speedup"] = {"value": r["speedup_vs_k0"], "target": 1.6, "met": r["speedup_vs_k0"] >= 1.6}
    adaptive = [r["speedup_vs_k0"] for r in runs if r["k"] == "adaptive"]
    if adaptive:
        out["adaptive_min_speedup"] = {"value": min(adaptive), "target": 0.97, "met": min(adaptive) >= 0.97}
    k0 = {r["batch"]: r["tokens_per_s"] for r in runs if r["k"] == 0}
    if 1 in k0 and max(batches) > 1:
        top = max(batches)
        ratio = round(k0[top] / k0[1], 2)
        out[f"k0_batch{top}_vs_batch1_tokens_per_s"] = {"value": ratio, "target": 8.0 if top >= 32 else None,
                                                         "met": ratio >= 8.0 if top >= 32 else None}
    out["all_identical_to_k0"] = all(r["identical_to_k0"] for r in runs)
    return out
