"""`minuscule bench decode`: decode tokens/s, tokens/step and acceptance per K and batch size, vs K=0 in the same run.

    minuscule bench decode --model nano --proposer replay:0.75 --k 0,1,2,3,adaptive --batch 1,8,32 --json out.json

Each batch size runs B requests of random prompt ids for exactly --tokens new tokens (no stop
ids, guards off). K=0 runs first; its outputs are the replay proposer's references and the
baseline every other run must reproduce token for token (`identical_to_k0`). Runs are interleaved
over --repeats rounds and each keeps its best round, so load from other processes on a shared CPU
hits every K alike; by default seconds are process CPU time (see --clock). `k: "adaptive"` picks K in 0..max(--k) per step; its engine keeps what it
learned in the warm-up round.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
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
    parser.add_argument("--repeats", type=int, default=3, help="timed rounds after one warm-up round; best kept (default 3)")
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

    runs: list[dict[str, Any]] = []
    for batch in batches:
        prompts = [torch.randint(low, vocab, (args.prompt_len,), generator=g).tolist() for _ in range(batch)]

        def requests() -> list[Request]:
            return [Request(f"r{i}", p, params) for i, p in enumerate(prompts)]

        def timed(engine: Engine) -> tuple[float, list[list[int]]]:
            engine.stats = type(engine.stats)()
            t0 = clock()
            outs = engine.generate(requests())
            return clock() - t0, [o.token_ids for o in outs]

        cfg = EngineConfig(max_batch=batch, max_len=max_len, max_tokens_per_step=batch * (kmax + 1) + batch * args.prompt_len)
        base_engine = Engine(model, cfg, clock=clock)
        timed(base_engine)  # warm-up
        baseline_s, baseline = timed(base_engine)
        refs = {f"r{i}": out for i, out in enumerate(baseline)}
        configs: list[tuple[str, int | str, Engine]] = []
        for prop in proposers:
            for k in ks:
                if k == 0:
                    continue
                spec = SpecConfig.parse(prop, k=kmax if k == "adaptive" else k, adaptive=k == "adaptive", seed=args.seed)
                engine = Engine(model, EngineConfig(cfg.max_batch, cfg.max_len, cfg.max_tokens_per_step, spec),
                                references=refs, clock=clock)
                timed(engine)  # warm-up (and, for adaptive, its cost measurements)
                configs.append((prop, k, engine))
        best: dict[int, tuple[float, Any, list[list[int]]]] = {}
        best_k0 = (baseline_s, base_engine.stats, baseline)
        for _ in range(args.repeats):
            s, outs = timed(base_engine)
            if s < best_k0[0]:
                best_k0 = (s, base_engine.stats, outs)
            for i, (_, _, engine) in enumerate(configs):
                s, outs = timed(engine)
                if i not in best or s < best[i][0]:
                    best[i] = (s, engine.stats, outs)
        generated = batch * args.tokens
        k0_tps = generated / best_k0[0]
        for prop in proposers:
            runs.append(_row(prop, 0, batch, best_k0, generated, k0_tps, baseline))
        for i, (prop, k, _) in enumerate(configs):
            runs.append(_row(prop, k, batch, best[i], generated, k0_tps, baseline))
    return {
        "benchmark": "decode",
        "inputs": {"model": args.model, "weights": weights, "dtype": str(model.lm_head.weight.dtype).removeprefix("torch."),
                   "proposers": proposers, "k": ks, "batch": batches, "tokens": args.tokens,
                   "prompt_len": args.prompt_len, "repeats": args.repeats, "seed": args.seed, "clock": args.clock,
                   "stop_ids": [], "guards": False},
        "environment": {"cores": os.cpu_count(), "torch_threads": torch.get_num_threads(), "torch": torch.__version__,
                        "python": platform.python_version(), "machine": platform.machine()},
        "runs": runs,
        "targets": _targets(runs, batches),
    }


def _row(proposer: str, k: int | str, batch: int, best: tuple[float, Any, list[list[int]]], generated: int,
         k0_tps: float, baseline: list[list[int]]) -> dict[str, Any]:
    seconds, stats, outs = best
    d = stats.to_dict()
    tps = generated / seconds
    return {"proposer": proposer, "k": k, "batch": batch, "tokens_per_s": round(tps, 2),
            "tokens_per_step": d["tokens_per_step"], "acceptance_per_position": d["acceptance_per_position"],
            "speedup_vs_k0": round(tps / k0_tps, 3), "identical_to_k0": outs == baseline,
            "seconds": round(seconds, 4), "k_steps": d["k_steps"], "time_split": d["seconds"]}


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
