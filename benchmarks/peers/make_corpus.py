"""Build the peer-comparison corpus: LaTeX, LibreOffice and Chromium documents, scans of them, tests and truths.

    python benchmarks/peers/make_corpus.py out/peers            # everything (needs texlive, soffice, chromium)
    python benchmarks/peers/make_corpus.py out/peers --only chrome --small

Every page is made from blocks this script chose (headings, paragraphs, lists, tables, code), with a forced page
break between pages, so the content of each page is known. A render whose text layer does not show each block on
its own page is re-made with fewer blocks. The tests (olmOCR-Bench JSONL) and the plain-text truths come from the
blocks; each test must pass on the page's perfect Markdown or it is dropped.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for _p in (str(ROOT), str(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from corpus_content import Doc, Writer, cer_text, hyphen_tests, make_pages, make_tests, page_markdown, self_check  # noqa: E402,F401
# misplaced_page is read by the tests through this module.
from corpus_render import Chromium, misplaced_page, render_doc, scan_page  # noqa: E402,F401

# ---------------------------------------------------------------------------------------------------------------
# The corpus

# id, source, columns, pages, style, features, header, footer, scanned
PLAN = [
    ("latex-a", "latex", 2, 3, "cm", {"booktabs", "ul", "code", "ol"}, "Proceedings of the Northwind Workshop on Data Systems",
     "Page {n} of {m}", True),
    ("latex-b", "latex", 2, 3, "times", {"ruled", "ol", "borderless"}, "Journal of Applied Field Studies, Vol. 14",
     "{n}", True),
    ("latex-c", "latex", 1, 2, "palatino", {"borderless", "code", "ul"}, "Technical Report TR-2031: Internal Draft",
     "Draft page {n}", True),
    ("latex-d", "latex", 2, 2, "helvet", {"ruled", "ul"}, "Letters in Computational Methods", "Page {n} of {m}", False),
    ("lo-a", "lo", 1, 3, "serif", {"ruled", "ul", "ol", "borderless"}, "Harbor City Council - Quarterly Minutes",
     "Page {n} of {m}", True),
    ("lo-b", "lo", 2, 2, "sans", {"borderless", "ul"}, "Field Notes Newsletter", "Newsletter page {n}", False),
    ("lo-c", "lo", 1, 2, "narrow", {"ruled", "code"}, "Operations Handbook (Confidential)", "Page {n} of {m}", True),
    ("chrome-a", "chrome", 1, 3, "serif", {"ruled", "ul", "code"}, "Acme Analytics - Product Brief",
     "Page {n} of {m}", False),
    ("chrome-b", "chrome", 2, 3, "sans", {"ruled", "borderless", "ol", "code"}, "Weekly Engineering Digest",
     "Digest page {n} of {m}", True),
    ("chrome-c", "chrome", 3, 2, "narrow", {"ul", "borderless"}, "The Riverside Gazette - Local Edition",
     "Gazette page {n}", True),
    ("chrome-d", "chrome", 2, 2, "serif", {"ruled", "ul"}, "Annual Review of Process Engineering", "Page {n} of {m}",
     False),
]
BUDGET = {("latex", 2): 6600, ("latex", 1): 3600, ("lo", 1): 3000, ("lo", 2): 5200, ("chrome", 1): 3000,
          ("chrome", 2): 4400, ("chrome", 3): 4600}


def plan_docs(only: set[str] | None, small: bool, seed: int = 20261130) -> list[Doc]:
    docs, seen = [], set()
    for k, (doc_id, source, cols, n, style, feats, header, footer, scan) in enumerate(PLAN):
        if (only and source not in only) or (small and source in seen):
            continue
        seen.add(source)
        if small:
            n = min(n, 2)
        w = Writer(seed + 101 * k)
        narrow = cols >= 2 and source != "chrome" or cols == 3
        pages = make_pages(w, n, BUDGET[(source, cols)], narrow, set(feats))
        docs.append(Doc(doc_id, source, cols, header, footer, style, pages, scan))
    return docs


def build(out: Path, only: set[str] | None = None, small: bool = False, dpi: int = 200, log=print) -> dict:
    """Make the corpus under `out`: docs/*.pdf, scans/*.jpg, tests.jsonl, truth/, manifest.json."""
    import pypdfium2 as pdfium

    out.mkdir(parents=True, exist_ok=True)
    for sub in ("docs", "scans", "truth"):
        (out / sub).mkdir(exist_ok=True)
    docs = plan_docs(only, small)
    chromium = Chromium() if any(d.source == "chrome" for d in docs) else None
    manifest = {"docs": [], "notes": [], "dropped_tests": []}
    all_tests: list[dict] = []
    try:
        with tempfile.TemporaryDirectory(prefix="peers-") as tmp:
            for doc in docs:
                work = Path(tmp) / doc.id
                work.mkdir()
                pdf_path = out / "docs" / f"{doc.id}.pdf"
                try:
                    manifest["notes"] += render_doc(doc, pdf_path, work, chromium)
                except (RuntimeError, FileNotFoundError, subprocess.TimeoutExpired) as exc:
                    manifest["notes"].append(f"{doc.id}: not made ({exc})")
                    log(f"skip {doc.id}: {exc}")
                    continue
                entries = [("docs/" + pdf_path.name, "text", [pdf_path.name])]
                pdfdoc = pdfium.PdfDocument(str(pdf_path))
                page_texts = [p.get_textpage().get_text_range() for p in pdfdoc]
                pdfdoc.close()
                if doc.scan:
                    pdfdoc = pdfium.PdfDocument(str(pdf_path))
                    names = []
                    for i, p in enumerate(pdfdoc):
                        img = p.render(scale=dpi / 72).to_pil()
                        name = f"{doc.id}-p{i + 1}.jpg"
                        (out / "scans" / name).write_bytes(scan_page(img, seed=hash_seed(doc.id, i), dpi=dpi,
                                                                         heavy=i % 2 == 1))
                        names.append(name)
                    pdfdoc.close()
                    entries.append((f"scans/{doc.id}", "scan", names))
                for key, kind, files in entries:
                    rng = random.Random(hash_seed(key, 0))
                    for n, blocks in enumerate(doc.pages, 1):
                        md = page_markdown(blocks)
                        stem = key.replace("/", "__") + f"_{n}"
                        (out / "truth" / f"{stem}.md").write_text(md)
                        (out / "truth" / f"{stem}.txt").write_text(cer_text(md) + "\n")
                        tests = make_tests(key, n, blocks, doc, rng) + hyphen_tests(key, n, page_texts[n - 1], md, 0)
                        kept, dropped = self_check(tests, md)
                        all_tests += kept
                        manifest["dropped_tests"] += dropped
                    manifest["docs"].append({"key": key, "id": doc.id, "source": doc.source, "kind": kind,
                                             "columns": doc.columns, "pages": len(doc.pages), "files": files})
                log(f"made {doc.id}: {len(doc.pages)} pages ({doc.source}, {doc.columns} col){' + scans' if doc.scan else ''}")
    finally:
        if chromium:
            chromium.close()
    with open(out / "tests.jsonl", "w") as f:
        for t in all_tests:
            f.write(json.dumps(t) + "\n")
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def hash_seed(name: str, i: int) -> int:
    import zlib

    return zlib.crc32(f"{name}:{i}".encode())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default="out/peers", help="output folder (default out/peers)")
    ap.add_argument("--only", default="", help="comma-separated makers to build: latex,lo,chrome")
    ap.add_argument("--small", action="store_true", help="one document per maker, at most 2 pages")
    ap.add_argument("--dpi", type=int, default=200, help="scan resolution (default 200)")
    args = ap.parse_args(argv)
    only = {s for s in args.only.split(",") if s} or None
    m = build(Path(args.out), only, args.small, args.dpi)
    n_tests = sum(1 for _ in open(Path(args.out) / "tests.jsonl"))
    print(f"{len(m['docs'])} document entries, {n_tests} tests, {len(m['dropped_tests'])} dropped by the self-check")
    for note in m["notes"]:
        print("note:", note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
