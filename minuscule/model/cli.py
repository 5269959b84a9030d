"""`minuscule model inspect|init|tokens`: size up checkpoints, create random ones, count image tokens."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from minuscule.errors import InputError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="model_command", metavar="ACTION", required=True)
    p = subs.add_parser("inspect", help="parameters, active parameters per token, tensors, dtype (no allocation)")
    p.add_argument("source", help="checkpoint directory or preset (jina-ocr-v1, deepseek-ocr, nano)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p = subs.add_parser("init", help="write a complete checkpoint directory with random weights")
    p.add_argument("preset", help="jina-ocr-v1, deepseek-ocr or nano")
    p.add_argument("--out", required=True, type=Path, help="directory to create")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dtype", default=None, choices=["fp32", "bf16", "fp16"],
                   help="stored dtype (default: fp32 for nano, bf16 for the real sizes)")
    p.add_argument("--shard-mb", type=float, default=None, help="split the weights into shards of this size")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p = subs.add_parser("tokens", help="tile grid and image placeholder count for a page size")
    p.add_argument("--size", required=True, help="page size in pixels, WxH (e.g. 1240x1754)")
    p.add_argument("--mode", default="gundam", help="tiny, small, base, large or gundam (default)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    try:
        if args.model_command == "inspect":
            result = inspect(args.source)
        elif args.model_command == "init":
            result = init(args.preset, args.out, args.seed, args.dtype, args.shard_mb)
        else:
            result = tokens(args.size, args.mode)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if getattr(args, "json", False):
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k}: {v}")
    return 0


def inspect(source: str) -> dict[str, Any]:
    """Counts from the config's model built on the meta device; a directory's tensors are compared too."""
    from minuscule.config import PRESETS, ModelConfig
    from minuscule.model.checkpoint import inspect_dir, stored_dtype
    from minuscule.model.ocr import build_model

    path = Path(source)
    if source in PRESETS and not path.is_dir():
        cfg = ModelConfig.from_name(source)
        report = None
    elif path.is_dir():
        cfg, report = inspect_dir(path)
    else:
        raise InputError(source, "neither a checkpoint directory nor a preset (jina-ocr-v1, deepseek-ocr, nano)")
    model = build_model(cfg, device="meta")
    tensors = model.published_tensors()
    out: dict[str, Any] = {
        "source": source,
        "parameters": sum(p.numel() for p in tensors.values()),
        "active_parameters_per_token": model.active_parameters_per_token(),
        "tensors": len(tensors),
        "dtype": cfg.info_dict.get("torch_dtype", cfg.info_dict.get("dtype", "unknown")),
        "missing": [],
        "unexpected": [],
    }
    if report is not None:
        out.update(dtype=stored_dtype(report), stored_tensors=len(report.found), missing=report.missing,
                   unexpected=report.unexpected, wrong_shapes=report.wrong_shapes,
                   shared_copies=sorted(report.duplicates))
    return out


def init(preset: str, out: Path, seed: int, dtype: str | None, shard_mb: float | None) -> dict[str, Any]:
    """Random weights, the config and a tokenizer: a directory that `checkpoint.load` accepts."""
    import torch

    from minuscule.config import ModelConfig
    from minuscule.model import checkpoint
    from minuscule.model.ocr import build_model
    from minuscule.tokenizer import build_nano_tokenizer, build_reserved_tokenizer, published_special_ids

    cfg = ModelConfig.from_name(preset)
    if out.exists() and any(out.iterdir()):
        raise InputError(str(out), "exists and is not empty")
    name = dtype or ("fp32" if preset == "nano" else "bf16")
    tok = build_nano_tokenizer() if preset == "nano" else build_reserved_tokenizer(
        cfg.vocab_size, published_special_ids(cfg.image_token_id))
    model = build_model(cfg, seed=seed, dtype=checkpoint.DTYPES[name])
    with torch.no_grad():
        checkpoint.save(model, out, tokenizer=tok,
                        max_shard_bytes=None if shard_mb is None else int(shard_mb * 2**20))
    return {"out": str(out), "preset": preset, "seed": seed, "dtype": checkpoint.dtype_name(checkpoint.DTYPES[name]),
            "parameters": sum(p.numel() for p in model.published_tensors().values()),
            "files": sorted(p.name for p in out.iterdir())}


def tokens(size: str, mode: str) -> dict[str, Any]:
    from minuscule.processor import get_mode, image_token_layout

    try:
        w, h = (int(v) for v in size.lower().split("x"))
    except ValueError:
        raise InputError(size, "expected WxH in pixels, e.g. 1240x1754") from None
    m = get_mode(mode)
    w_t, h_t, n = image_token_layout(w, h, m)
    return {"mode": m.name, "tiles": [w_t, h_t], "image_tokens": n}
