"""Command line entry point: `minuscule parse|bench|model|synth|reward ...`.

Each subcommand lives in its own module, imported only when it is chosen, and exposes
`add_arguments(parser)` and `run(args) -> int` (the exit code).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from minuscule import __version__

# name -> (module, one-line help). Modules keep heavy imports (torch, browsers) inside run().
COMMANDS: dict[str, tuple[str, str]] = {
    "parse": ("minuscule.commands.parse", "convert PDFs and images to Markdown / JSON"),
    "bench": ("minuscule.bench.cli", "benchmarks and evaluation (speed, forward, olmocr, omnidoc, ...)"),
    "model": ("minuscule.model.cli", "inspect, create and size model checkpoints"),
    "synth": ("minuscule.synth.cli", "generate synthetic pages with reference Markdown and unit tests"),
    "reward": ("minuscule.rewards.cli", "score a prediction against a reference with the GRPO reward"),
}


def dispatch(prog: str, registry: dict[str, tuple[str, str]], argv: list[str], description: str) -> int:
    """Build a parser that knows every name but imports only the chosen module, then run it."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    if prog == "minuscule":
        parser.add_argument("--version", action="version", version=f"minuscule {__version__}")
    subs = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = next((a for a in argv if not a.startswith("-")), None)
    for name, (module, help_text) in registry.items():
        sub = subs.add_parser(name, help=help_text, description=help_text)
        if name == chosen:
            mod = importlib.import_module(module)
            mod.add_arguments(sub)
            sub.set_defaults(_run=mod.run)
    args = parser.parse_args(argv)
    if not hasattr(args, "_run"):
        parser.print_help()
        return 2
    return int(args._run(args) or 0)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        return dispatch("minuscule", COMMANDS, argv, "Convert documents to Markdown, fast.")
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
