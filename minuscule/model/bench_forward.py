"""`minuscule bench forward`: vision s/page, prefill and decode tok/s at batch 1, and decode's bandwidth bound."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

# An A4 page rasterised at 144 DPI (the reference PDF scripts' resolution): gundam cuts 2x3 tiles.
A4_144DPI = (1190, 1684)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--preset", default="jina-ocr-v1", help="jina-ocr-v1 (default), deepseek-ocr or nano")
    parser.add_argument("--quick", action="store_true", help="the nano preset and short runs (for tests)")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    parser.add_argument("--dtype", default="bf16", choices=["bf16", "fp32", "fp16"])
    parser.add_argument("--page", default=f"{A4_144DPI[0]}x{A4_144DPI[1]}", help="page size WxH in pixels")
    parser.add_argument("--mode", default="gundam")
    parser.add_argument("--decode-tokens", type=int, default=None, help="decode steps timed (default 32; quick 16)")
    parser.add_argument("--repeats", type=int, default=None, help="timed passes after one warm-up pass; the best of each figure is kept (default 1)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write the JSON object here")


def run(args: argparse.Namespace) -> int:
    from minuscule.errors import InputError

    try:
        result = measure(args)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    text = json.dumps(result, indent=2)
    if args.json is not None:
        from minuscule.atomic import atomic_write

        atomic_write(args.json, text + "\n")
    print(text)
    return 0


def measure(args: argparse.Namespace) -> dict[str, Any]:
    import torch
    from PIL import Image, ImageDraw

    from minuscule.config import ModelConfig
    from minuscule.errors import InputError
    from minuscule.model.checkpoint import DTYPES, dtype_name
    from minuscule.processor import image_views, prompt_ids
    from minuscule.tokenizer import build_nano_tokenizer, build_reserved_tokenizer, published_special_ids

    preset = "nano" if args.quick else args.preset
    decode_n = args.decode_tokens or (16 if args.quick else 32)
    repeats = args.repeats or 1
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if device.type == "cuda" and not torch.cuda.is_available():
        raise InputError("--device cuda", "no CUDA device is available")
    if args.threads:
        torch.set_num_threads(args.threads)
    dtype = DTYPES[args.dtype]
    try:
        width, height = (int(v) for v in args.page.lower().split("x"))
    except ValueError:
        raise InputError(args.page, "expected WxH in pixels") from None
    cfg = ModelConfig.from_name(preset)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)

    t0 = time.perf_counter()
    model = fast_random_model(cfg, device, dtype)
    init_s = time.perf_counter() - t0
    tok = build_nano_tokenizer() if preset == "nano" else build_reserved_tokenizer(
        cfg.vocab_size, published_special_ids(cfg.image_token_id))

    # A page with some ink on it; random weights do not care, but the views are real.
    page = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(page)
    for y in range(40, height - 40, 28):
        draw.text((40, y), "The quick brown fox jumps over the lazy dog. 0123456789 " * 2, fill="black")
    views = image_views(page, args.mode)
    ids = torch.tensor(prompt_ids(tok, views.num_tokens, None, "jina"), device=device)[None]  # (1, L)
    gview = views.global_view.to(device, dtype)
    tiles = views.tiles.to(device, dtype) if views.tiles.shape[0] else None

    def one_pass() -> tuple[float, float, float]:
        """Vision on the page, prefill of the whole prompt, then greedy decode: seconds of each."""
        (vision,), embeds = _timed(lambda: model.encode_image(gview, tiles, views.grid), 1, sync)
        cache = model.new_cache(1, ids.shape[1] + decode_n + 1)
        (prefill,), out = _timed(lambda: model(ids, embeds, cache=cache, last_only=True), 1, sync)
        tok_id = int(out.logits[0, -1].argmax())
        t0 = time.perf_counter()
        for _ in range(decode_n):
            step = torch.tensor([[tok_id]], device=device)
            tok_id = int(model(step, cache=cache, last_only=True).logits[0, -1].argmax())
        sync()
        return vision, prefill, time.perf_counter() - t0

    with torch.inference_mode():
        # One untimed pass first: kernel selection and primitive caches depend on the shapes.
        one_pass()
        passes = [one_pass() for _ in range(repeats)]
    vision_s, prefill, decode_s = (min(p[i] for p in passes) for i in range(3))

    bandwidth = copy_bandwidth(device, 64 if args.quick else 512, sync)
    elsize = torch.empty((), dtype=dtype).element_size()
    active = model.active_parameters_per_token()
    mean_ctx = ids.shape[1] + decode_n / 2
    kv_bytes = 2 * cfg.num_hidden_layers * cfg.hidden_size * mean_ctx * elsize  # keys + values read per token
    active_bytes = active * elsize + kv_bytes
    decode_tps = decode_n / decode_s
    bound_tps = bandwidth / active_bytes
    return {
        "benchmark": "forward",
        "inputs": {"preset": preset, "weights": "random", "device": str(device), "dtype": dtype_name(dtype),
                   "page": [width, height], "mode": args.mode, "tiles": list(views.grid),
                   "image_tokens": views.num_tokens, "prompt_tokens": int(ids.shape[1]), "decode_tokens": decode_n,
                   "repeats": repeats, "batch": 1},
        "environment": _environment(torch, device),
        "model": {"parameters": sum(p.numel() for p in model.published_tensors().values()),
                  "active_parameters_per_token": active, "active_bytes_per_token": int(active_bytes),
                  "kv_bytes_per_token_at_mean_context": int(kv_bytes), "init_seconds": round(init_s, 3)},
        "vision_seconds_per_page": _sig(vision_s),
        "prefill_seconds": _sig(prefill),
        "prefill_tokens_per_s": _sig(ids.shape[1] / prefill),
        "decode_tokens_per_s": _sig(decode_tps),
        "decode_ms_per_token": _sig(1000 * decode_s / decode_n),
        "copy_bandwidth_gb_s": _sig(bandwidth / 1e9),
        "decode_bandwidth_bound_tokens_per_s": _sig(bound_tps),
        "ratios": {
            # Baseline: the memory-bandwidth bound measured in this run (1.0 = weights streamed at copy speed).
            "decode_vs_bandwidth_bound": _sig(decode_tps / bound_tps),
            "prefill_vs_decode_tokens_per_s": _sig(ids.shape[1] / prefill / decode_tps),
            "vision_vs_prefill_seconds": _sig(vision_s / prefill),
        },
    }


def fast_random_model(cfg: Any, device: Any, dtype: Any, seed: int = 0) -> Any:
    """Real-size random weights in seconds: every tensor is cut from one shared random pattern.

    Speed does not depend on the values as long as they are finite and of a sane scale, and a
    normal init of 3.4 B parameters alone would dominate the run; norms are ones.
    """
    import torch
    from torch import nn

    from minuscule.model.ocr import OCRModel, parameters_on_meta

    with parameters_on_meta():
        model = OCRModel(cfg)
    gen = torch.Generator(device=device).manual_seed(seed)
    size = (1 << 20) + 4099  # not a multiple of any width, so rows differ
    pattern = (torch.randn(2 * size, generator=gen, device=device) * 0.02).to(dtype)
    for k, (name, p) in enumerate(model.published_tensors().items()):
        t = torch.empty(p.shape, dtype=dtype, device=device)
        flat = t.view(-1)
        if p.dim() == 1 and "norm" in name:
            flat.fill_(1.0)
        else:
            offset = (k * 7919) % size
            for start in range(0, flat.numel(), size):
                n = min(size, flat.numel() - start)
                flat[start:start + n].copy_(pattern[offset:offset + n])
        owner, _, leaf = name.rpartition(".")
        (model.get_submodule(owner) if owner else model)._parameters[leaf] = nn.Parameter(t, requires_grad=False)
    model.to(device)
    model.model.sync_encoder()
    return model.eval()


def _sig(x: float, digits: int = 4) -> float:
    """Rounded to significant digits, so small ratios keep their precision."""
    return float(f"{x:.{digits}g}")


def _timed(fn: Callable[[], Any], repeats: int, sync: Callable[[], None]) -> tuple[list[float], Any]:
    times, out = [], None
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        out = fn()
        sync()
        times.append(time.perf_counter() - t0)
    return times, out


def copy_bandwidth(device: Any, megabytes: int, sync: Callable[[], None]) -> float:
    """Bytes/s moved by a large tensor copy (read + write counted), best of 5."""
    import torch

    n = megabytes * 2**20
    src = torch.ones(n, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    dst.copy_(src)
    best = float("inf")
    for _ in range(5):
        sync()
        t0 = time.perf_counter()
        dst.copy_(src)
        sync()
        best = min(best, time.perf_counter() - t0)
    return 2 * n / best


def _environment(torch: Any, device: Any) -> dict[str, Any]:
    from minuscule.bench.env import environment

    env = environment("torch", "safetensors", "tokenizers")
    env["torch_threads"] = torch.get_num_threads()
    # Other processes competing for the cores distort CPU timings (small ops wait on thread
    # barriers); recorded so a reader can tell, and --threads 1 helps on a busy machine.
    env["load_average_1m"] = round(os.getloadavg()[0], 2)
    if device.type == "cuda":
        env["gpu"] = torch.cuda.get_device_name(device)
    return env
