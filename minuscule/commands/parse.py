"""`minuscule parse INPUT... -o OUTDIR`: convert documents to Markdown and JSON."""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

from minuscule.commands.inputs import expand_inputs
from minuscule.documents import load, parse_pages
from minuscule.documents.types import Document
from minuscule.documents.writers import FORMATS, write_document
from minuscule.engines import ENGINES, get_engine, resolve
from minuscule.errors import InputError, MissingExtraError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="PDF or image files, folders, globs, or - for stdin")
    p.add_argument("-o", "--out", required=True, type=Path, help="output folder")
    p.add_argument("--pages", help="1-based page selection, e.g. 1-3,7 (default: all)")
    p.add_argument("--engine", default="auto", choices=["auto", *ENGINES],
                   help="auto: the model engine when a checkpoint is configured, else lite")
    p.add_argument("--model", help="checkpoint directory for the model engine (or $MINUSCULE_MODEL)")
    p.add_argument("--format", default="md,json", help="comma-separated: md, json (default: both)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--dpi", type=float, help="render PDF pages at this resolution")
    size.add_argument("--max-side", type=int, default=None, help="render PDF pages with this longest side (default 1600)")
    p.add_argument("--password", help="password for encrypted PDFs")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.add_argument("--debug", action="store_true", help="show tracebacks")


def _fail(msg: str) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    formats = tuple(f.strip() for f in args.format.split(",") if f.strip())
    bad = [f for f in formats if f not in FORMATS]
    if bad or not formats:
        return _fail(f"--format {args.format!r}: choose from {', '.join(FORMATS)}")
    try:
        pages = parse_pages(args.pages)
    except ValueError as exc:
        return _fail(f"--pages: {exc}")
    if args.dpi is not None and not 10 <= args.dpi <= 1200:
        return _fail("--dpi must be between 10 and 1200")
    if args.max_side is not None and not 64 <= args.max_side <= 20000:
        return _fail("--max-side must be between 64 and 20000")
    name, why = resolve(args.engine, args.model)
    try:
        engine = get_engine(name, args.model)
    except (ValueError, MissingExtraError) as exc:
        return _fail(str(exc))
    print(f"engine: {name} ({why})", file=sys.stderr)

    docs, failures = expand_inputs(args.inputs, args.out)
    for source, reason in failures:
        print(f"error: {source}: {reason}", file=sys.stderr)
    stdin_data = sys.stdin.buffer.read() if any(d.source == "-" for d in docs) else None

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    n_pages = 0
    n_failed = len(failures)
    t_start = time.perf_counter()
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("pages"),
                        TimeElapsedColumn(), transient=True, disable=args.quiet or not sys.stderr.isatty())
    with progress:
        task = progress.add_task("parsing", total=0)
        for i, doc in enumerate(docs, 1):
            label = "stdin" if doc.source == "-" else doc.source
            progress.update(task, description=f"[{i}/{len(docs)}] {Path(label).name[:40]}")
            try:
                loaded = load(label, pages, data=stdin_data if doc.source == "-" else None,
                              max_side=args.max_side, dpi=args.dpi, password=args.password)
                progress.update(task, total=progress.tasks[0].total + len(loaded))
                results = []
                for result in engine.parse_pages(loaded):
                    results.append(result)
                    progress.advance(task)
                write_document(Document(source=label, pages=results), doc.out_base, formats)
                n_pages += len(results)
            except InputError as exc:
                n_failed += 1
                print(f"error: {exc}", file=sys.stderr)
            except Exception as exc:  # one bad document must not stop the batch
                n_failed += 1
                if args.debug:
                    traceback.print_exc()
                print(f"error: {label}: {type(exc).__name__}: {exc}", file=sys.stderr)
    seconds = time.perf_counter() - t_start
    per_page = f"{seconds / n_pages:.3f} s/page" if n_pages else "no pages"
    print(f"{n_pages} pages from {len(docs) - (n_failed - len(failures))} of {len(docs) + len(failures)} inputs "
          f"in {seconds:.1f} s ({per_page}), {n_failed} failed; engine {name}; output in {args.out}",
          file=sys.stderr)
    return 1 if n_failed else 0
