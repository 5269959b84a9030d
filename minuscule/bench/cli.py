"""`minuscule bench NAME ...`: each benchmark in its own module, imported only when chosen."""

from __future__ import annotations

import argparse

from minuscule.cli import dispatch

BENCHMARKS: dict[str, tuple[str, str]] = {
    "speed": ("minuscule.bench.speed", "pages/s and extraction quality of an engine on a folder of documents"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="benchmark name and its arguments")


def run(args: argparse.Namespace) -> int:
    return dispatch("minuscule bench", BENCHMARKS, args.rest, "Benchmarks; each prints one JSON object.")
