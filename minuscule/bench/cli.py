"""`minuscule bench NAME ...`: each benchmark in its own module, imported only when chosen."""

from __future__ import annotations

import argparse

from minuscule.cli import dispatch

BENCHMARKS: dict[str, tuple[str, str]] = {
    "forward": ("minuscule.model.bench_forward", "model forward speed on random weights: vision s/page, prefill/decode tok/s vs bandwidth bound"),
    "speed": ("minuscule.bench.speed", "pages/s and extraction quality of an engine on a folder of documents"),
    "omnidoc": ("minuscule.bench.omnidoc.run", "OmniDocBench v1.6 end-to-end scores of predicted Markdown: text edit, table TEDS, reading order"),
    "decode": ("minuscule.engine.bench_decode", "engine decode tokens/s, tokens/step and acceptance per K and batch, speculative vs K=0"),
    "olmocr": ("minuscule.bench.olmocr", "olmOCR-Bench unit tests on predictions or an engine run: per-category and overall scores"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="benchmark name and its arguments")


def run(args: argparse.Namespace) -> int:
    return dispatch("minuscule bench", BENCHMARKS, args.rest, "Benchmarks; each prints one JSON object.")
