"""`minuscule bench olmocr`: score Markdown predictions (or an engine run) on olmOCR-Bench."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from minuscule.atomic import atomic_write
from minuscule.bench.emit import emit_json
from minuscule.bench.env import environment as _environment
from minuscule.errors import InputError, MissingExtraError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", required=True, help="bench_data folder: *.jsonl tests and pdfs/")
    src = parser.add_mutually_exclusive_group()
    src.add_argument("--pred", help="folder of <pdf name>_pg<page>_repeat<r>.md predictions")
    src.add_argument("--engine", help="run this engine (lite, auto, ...) on the PDFs first")
    parser.add_argument("--out", help="with --engine: prediction folder to write (default DATA/<engine>)")
    parser.add_argument("--model", help="model checkpoint for the engine")
    parser.add_argument("--repeats", type=int, default=1, help="engine runs per page (default 1)")
    parser.add_argument("--json", help="write the result JSON here (default: stdout)")
    parser.add_argument("--report", help="write a Markdown report here (bar chart PNG beside it)")
    parser.add_argument("--skip-baseline", action="store_true", help="leave out the baseline tests")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap samples for the 95%% interval")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--math-cache", help="SQLite file caching KaTeX renders across runs")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when prediction files are missing (they are scored as failures either way)")


def run(args: argparse.Namespace) -> int:
    try:
        result = evaluate(args)
    except (InputError, MissingExtraError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    emit_json(result, args.json)
    if args.report:
        from minuscule.bench.report import write_report

        write_report(result, Path(args.report))
    missing = result["missing_pages"]
    print(
        f"olmOCR-Bench: {result['overall'] * 100:.1f}% (95% CI {result['ci95'][0] * 100:.1f}-{result['ci95'][1] * 100:.1f}) "
        f"over {result['tests']} tests, {len(result['categories'])} categories"
        + (f"; {len(missing)} page(s) without predictions" if missing else ""),
        file=sys.stderr,
    )
    return 1 if (args.strict and missing) else 0


def evaluate(args: argparse.Namespace) -> dict[str, Any]:
    """Load tests, produce or find predictions, score; the JSON object the command prints."""
    from minuscule.bench.olmocr_data import index_predictions, load_benchmark, read_prediction, summarize
    from minuscule.checks import MathRenderer, run_one

    t0 = time.perf_counter()
    bench = load_benchmark(args.data, skip_baseline=args.skip_baseline)
    engine_info = None
    if args.engine:
        pred_dir = Path(args.out or Path(args.data) / args.engine)
        engine_info = run_engine(args.engine, args.model, bench, pred_dir, max(1, args.repeats))
    elif args.pred:
        pred_dir = Path(args.pred)
    else:
        raise InputError("minuscule bench olmocr", "give --pred DIR or --engine NAME")
    t1 = time.perf_counter()

    index = index_predictions(pred_dir, bench.pdfs)
    texts: dict[Path, str | None] = {}
    renderer = MathRenderer(args.math_cache) if any(t.type == "math" for t in bench.tests) else None
    outcomes = []
    try:
        for test in bench.tests:
            paths = index.get(test.key, [])
            for p in paths:
                if p not in texts:
                    texts[p] = read_prediction(p)
            outcomes.append(run_one(test, [texts[p] for p in paths], renderer))
    finally:
        if renderer is not None:
            renderer.close()
    t2 = time.perf_counter()

    result = summarize(bench, outcomes, samples=args.bootstrap, seed=args.seed)
    missing = sorted({f"{t.pdf}#{t.page}" for t in bench.tests if not index.get(t.key)})
    return {
        "benchmark": "olmocr-bench",
        "inputs": {
            "data": str(args.data),
            "pred": str(pred_dir),
            "engine": args.engine,
            "model": args.model,
            "test_files": sorted(p.name for p in Path(args.data).glob("*.jsonl")),
            "pdfs": len(bench.pdfs),
            "bootstrap": args.bootstrap,
            "seed": args.seed,
        },
        "environment": environment(),
        "overall": result["overall"],
        "ci95": result["ci95"],
        "categories": result["categories"],
        "category_counts": result["category_counts"],
        "types": result["types"],
        "tests": result["tests"],
        "missing_pages": missing,
        "math_renders": renderer.rendered if renderer is not None else 0,
        "seconds": {"engine": round(t1 - t0, 3), "scoring": round(t2 - t1, 3)},
        "engine_run": engine_info,
        "failed": result["failed"],
    }


def run_engine(name: str, model: str | None, bench, out_dir: Path, repeats: int) -> dict[str, Any]:
    """Parse every page of every benchmark PDF, writing `<pdf minus .pdf>_pg<N>_repeat<R>.md` under
    out_dir (the published layout). Pages already written are kept, so an interrupted run resumes."""
    from rich.progress import Progress

    from minuscule.documents import load
    from minuscule.engines import get_engine

    try:
        engine = get_engine(name, model=model)
    except ValueError as exc:
        raise InputError(f"--engine {name}", str(exc)) from None
    pdf_root = bench.root / "pdfs"
    pages_done = pages_skipped = 0
    seconds = 0.0
    with Progress(transient=True) as progress:
        task = progress.add_task(f"{name} on {len(bench.pdfs)} PDFs", total=len(bench.pdfs))
        for pdf in bench.pdfs:
            base = out_dir / pdf[:-4]
            start = time.perf_counter()
            pages = load(pdf_root / pdf)
            seconds += time.perf_counter() - start
            for page in pages:
                for r in range(1, repeats + 1):
                    target = Path(f"{base}_pg{page.number}_repeat{r}.md")
                    if target.exists():
                        pages_skipped += 1
                        continue
                    start = time.perf_counter()
                    markdown = engine.parse_page(page).markdown
                    seconds += time.perf_counter() - start
                    atomic_write(target, markdown)
                    pages_done += 1
            progress.advance(task)
    return {
        "engine": name,
        "pages_parsed": pages_done,
        "pages_reused": pages_skipped,
        "seconds": round(seconds, 3),  # loading + parsing, without the Markdown writes
        "pages_per_second": round(pages_done / seconds, 3) if seconds > 0 else None,
    }


def environment() -> dict[str, Any]:
    return _environment("torch", "rapidfuzz", "fuzzysearch")
