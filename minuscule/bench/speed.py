"""`minuscule bench speed`: pages/s of an engine on a folder of documents, split by page kind, with CER.

Pages with a text layer ("born-digital") and pages without one ("image") are timed separately. Beside
each figure stands a baseline measured in the same run on the same pages: pdfium's plain text
extraction for born-digital pages and one bare RapidOCR call for image pages, so the JSON carries
ratios that stay meaningful on a noisy machine. Where `<stem>.truth.json` ({"1": "page text", ...})
lies beside a document, the character error rate of the output against it is reported too.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from minuscule.bench.cer import cer, plain_text
from minuscule.documents import DOCUMENT_SUFFIXES, load
from minuscule.atomic import atomic_write
from minuscule.bench.env import environment
from minuscule.engines import get_engine, resolve
from minuscule.errors import InputError

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "examples"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--engine", default="lite", help="engine to time (default lite)")
    p.add_argument("--model", help="checkpoint directory for the model engine")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of PDFs/images (default: the bundled samples)")
    p.add_argument("--repeat", type=int, default=5, help="passes over born-digital pages (they take milliseconds)")
    p.add_argument("--concurrency", type=int, default=1, help="documents converted at once")
    p.add_argument("--json", type=Path, help="write the JSON here as well as to stdout")


def _truth(path: Path) -> dict[int, str]:
    t = path.with_name(path.stem + ".truth.json")
    return {int(k): v for k, v in json.loads(t.read_text()).items()} if t.exists() else {}


def _bare_text(pages) -> None:
    for page in pages:
        page.text_layer  # noqa: B018 - extraction happened at load; reading the text is the baseline
        "\n".join(ln.text for ln in page.text_layer.lines)


def run(args: argparse.Namespace) -> int:
    if not args.data.is_dir():
        print(f"error: {args.data}: no such folder", file=sys.stderr)
        return 2
    docs = sorted(p for p in args.data.rglob("*") if p.suffix.lower() in DOCUMENT_SUFFIXES)
    if not docs:
        print(f"error: {args.data}: no PDF or image files", file=sys.stderr)
        return 2
    name, _ = resolve(args.engine, args.model)
    engine = get_engine(name, args.model)
    kinds: dict[str, dict] = {k: {"pages": 0, "seconds": 0.0, "baseline_seconds": 0.0, "cer": [], "chars": 0,
                                  "tokens": 0, "stats": {}} for k in ("born_digital", "image")}
    failures = []

    def convert(path: Path):
        pages = load(path)
        kind = "born_digital" if all(p.has_text for p in pages) else "image"
        repeat = args.repeat if kind == "born_digital" else 1
        t0 = time.perf_counter()
        for _ in range(repeat):
            results = list(engine.parse_pages(load(path)))
        seconds = (time.perf_counter() - t0) / repeat
        t0 = time.perf_counter()
        if kind == "born_digital":
            for _ in range(repeat):
                _bare_text(load(path))
            base = (time.perf_counter() - t0) / repeat
        else:
            from minuscule.lite.ocr import ocr_lines
            for page in load(path):
                ocr_lines(page.image)
            base = time.perf_counter() - t0
        return path, kind, results, seconds, base

    # One untimed pass over the first document of each kind: model loading and the OCR runtime's
    # first-shape compilation happen once per process, not once per page.
    warmup = time.perf_counter()
    seen: set[bool] = set()
    for path in docs:
        try:
            pages = load(path)
        except InputError:
            continue
        born = all(p.has_text for p in pages)
        if born not in seen:
            seen.add(born)
            list(engine.parse_pages(pages[:1]))
    warmup = time.perf_counter() - warmup

    t_all = time.perf_counter()
    with ThreadPoolExecutor(max(1, args.concurrency)) as pool:
        futures = [pool.submit(convert, p) for p in docs]
        for fut in futures:
            try:
                path, kind, results, seconds, base = fut.result()
            except InputError as exc:
                failures.append(str(exc))
                continue
            k = kinds[kind]
            k["pages"] += len(results)
            k["seconds"] += seconds
            k["baseline_seconds"] += base
            truth = _truth(path)
            for r in results:
                k["chars"] += len(r.markdown)
                k["tokens"] += int(r.stats.get("generated_tokens") or 0)
                _accumulate(k["stats"], r.stats)
                if r.page in truth:
                    k["cer"].append(cer(plain_text(r.markdown), truth[r.page]))
    wall = time.perf_counter() - t_all
    out = {
        "benchmark": "speed",
        "engine": name,
        "inputs": {"data": str(args.data), "documents": len(docs), "repeat": args.repeat, "concurrency": args.concurrency},
        "environment": environment("onnxruntime", "openvino", "rapidocr", "pypdfium2", "torch"),
        "warmup_seconds": round(warmup, 3),
        "wall_seconds": round(wall, 3),
        "failures": failures,
    }
    for kind, k in kinds.items():
        if not k["pages"]:
            out[kind] = None
            continue
        out[kind] = {
            "pages": k["pages"],
            "pages_per_s": round(k["pages"] / k["seconds"], 3),
            "s_per_page": round(k["seconds"] / k["pages"], 4),
            "baseline": "pdfium text extraction" if kind == "born_digital" else "bare RapidOCR call",
            "baseline_pages_per_s": round(k["pages"] / k["baseline_seconds"], 3) if k["baseline_seconds"] else None,
            "ratio_to_baseline": round(k["baseline_seconds"] / k["seconds"], 3) if k["seconds"] else None,
            "output_chars_per_page": round(k["chars"] / k["pages"], 1),
            # Engines without a tokenizer (lite) generate no tokens: then these are null.
            "output_tokens_per_page": round(k["tokens"] / k["pages"], 1) if k["tokens"] else None,
            "output_tokens_per_s": round(k["tokens"] / k["seconds"], 2) if k["tokens"] and k["seconds"] else None,
            "engine_stats": k["stats"],
            "cer": round(statistics.mean(k["cer"]), 5) if k["cer"] else None,
            "cer_pages": len(k["cer"]),
        }
    text = json.dumps(out, indent=1)
    print(text)
    if args.json:
        atomic_write(args.json, text + "\n")
    return 1 if failures else 0


def _accumulate(total: dict, stats: dict) -> None:
    """Sum the numeric page stats of an engine (nested dicts of numbers too); count the others' values."""
    for key, value in stats.items():
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, (int, float)):
            total[key] = round(total.get(key, 0) + value, 4)
        elif isinstance(value, dict):
            _accumulate(total.setdefault(key, {}), value)
        elif isinstance(value, str):
            counts = total.setdefault(key, {})
            counts[value] = counts.get(value, 0) + 1
