"""Convert every corpus page with lite and the peer tools, score them with the same tests and CER, write tables.

    /tmp/peers-venv/bin/python benchmarks/peers/run.py out/peers                 # every tool
    /tmp/peers-venv/bin/python benchmarks/peers/run.py out/peers --tools lite    # rerun lite, reuse the others

Predictions are kept under OUT/pred/<tool>/ with their timings, so a rerun of one tool re-scores all of them.
Writes OUT/results.json, OUT/results.md and OUT/lite_losses.md (tests lite fails that another tool passes).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for p in (str(ROOT), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

from corpus_content import cer_text  # noqa: E402
from minuscule.bench.cer import cer  # noqa: E402
from minuscule.checks import load_tests  # noqa: E402

# Tesseract's OpenMP spins on a small shared machine: one thread per process is 3-8x faster (default-engine.md).
os.environ.setdefault("OMP_THREAD_LIMIT", "1")

# tool -> (label in tables, splits it runs on)
TOOLS = {
    "lite": ("minuscule lite", ("text", "scan")),
    "pymupdf4llm": ("pymupdf4llm (layout; OCR: RapidOCR)", ("text", "scan")),
    "pymupdf4llm-tess": ("pymupdf4llm (OCR: Tesseract)", ("scan",)),
    "docling": ("docling native pipeline", ("text",)),
    "pdftotext": ("pdftotext", ("text",)),
    "pdftotext-layout": ("pdftotext -layout", ("text",)),
    "ocrmypdf": ("ocrmypdf + tesseract (--sidecar text)", ("scan",)),
    "ocrmypdf-pdftotext": ("ocrmypdf + tesseract → pdftotext", ("scan",)),
}


# ---------------------------------------------------------------------------------------------------------------
# Tools: each takes a manifest entry and the corpus folder and returns one Markdown/text per page.


def files_of(entry: dict, corpus: Path) -> list[Path]:
    if entry["kind"] == "text":
        return [corpus / entry["key"]]
    return [corpus / "scans" / f for f in entry["files"]]


_LITE = None


def run_lite(entry: dict, corpus: Path) -> list[str]:
    global _LITE
    from minuscule.documents import load
    from minuscule.engines import get_engine

    if _LITE is None:
        _LITE = get_engine("lite")
    if entry["kind"] == "text":
        pages = load(files_of(entry, corpus)[0])
    else:
        # One scanned document = its page images, parsed together so running headers/footers can be seen.
        pages = [replace(load(f)[0], number=i) for i, f in enumerate(files_of(entry, corpus), 1)]
    return [r.markdown for r in _LITE.parse_pages(pages)]


def _pymupdf4llm(entry: dict, corpus: Path, ocr_function=None) -> list[str]:
    import pymupdf
    import pymupdf4llm

    kw = {"page_chunks": True, "header": False, "footer": False, "show_progress": False}
    if ocr_function is not None:
        kw["ocr_function"] = ocr_function
    if entry["kind"] == "text":
        return [c["text"] for c in pymupdf4llm.to_markdown(str(files_of(entry, corpus)[0]), **kw)]
    # Scans: one PDF of the page images (as a scanner would give), so its header/footer logic sees every page.
    out = pymupdf.open()
    for f in files_of(entry, corpus):
        img = pymupdf.open(str(f))
        out.insert_pdf(pymupdf.open("pdf", img.convert_to_pdf()))
    return [c["text"] for c in pymupdf4llm.to_markdown(out, **kw)]


def run_pymupdf4llm(entry: dict, corpus: Path) -> list[str]:
    return _pymupdf4llm(entry, corpus)


def run_pymupdf4llm_tess(entry: dict, corpus: Path) -> list[str]:
    from pymupdf4llm.ocr import tesseract_api

    return _pymupdf4llm(entry, corpus, ocr_function=tesseract_api.exec_ocr)


_DOCLING = None


def run_docling(entry: dict, corpus: Path) -> list[str]:
    global _DOCLING
    if _DOCLING is None:
        from docling.datamodel.base_models import InputFormat
        from docling.datamodel.pipeline_options import NativePdfPipelineOptions
        from docling.document_converter import DocumentConverter, PdfFormatOption
        from docling.pipeline.native_pdf_pipeline import NativePdfPipeline

        opts = NativePdfPipelineOptions(parser_threads=1)
        _DOCLING = DocumentConverter(format_options={
            InputFormat.PDF: PdfFormatOption(pipeline_cls=NativePdfPipeline, pipeline_options=opts)})
    res = _DOCLING.convert(str(files_of(entry, corpus)[0]))
    return [res.document.export_to_markdown(page_no=n) for n in range(1, entry["pages"] + 1)]


def _pdftotext(pdf: Path, pages: int, layout: bool) -> list[str]:
    out = []
    for n in range(1, pages + 1):
        cmd = ["pdftotext", "-f", str(n), "-l", str(n), "-enc", "UTF-8"] + (["-layout"] if layout else [])
        out.append(subprocess.run(cmd + [str(pdf), "-"], capture_output=True, text=True, check=True).stdout)
    return out


def run_pdftotext(entry: dict, corpus: Path) -> list[str]:
    return _pdftotext(files_of(entry, corpus)[0], entry["pages"], layout=False)


def run_pdftotext_layout(entry: dict, corpus: Path) -> list[str]:
    return _pdftotext(files_of(entry, corpus)[0], entry["pages"], layout=True)


def _ocrmypdf(entry: dict, corpus: Path, sidecar: bool) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="peers-ocr-") as tmp:
        src, dst, txt = Path(tmp) / "scan.pdf", Path(tmp) / "ocr.pdf", Path(tmp) / "ocr.txt"
        subprocess.run(["img2pdf", "-o", str(src)] + [str(f) for f in files_of(entry, corpus)], check=True,
                       capture_output=True)
        r = subprocess.run(["ocrmypdf", "--jobs", "1", "-l", "eng", "--output-type", "pdf", "--optimize", "0",
                            "--quiet"] + (["--sidecar", str(txt)] if sidecar else []) + [str(src), str(dst)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"ocrmypdf exit {r.returncode}: {r.stderr[-400:]}")
        if sidecar:
            # Tesseract's own text in its reading order; pages are separated by form feeds.
            pages = txt.read_text().split("\f")
            return (pages + [""] * entry["pages"])[: entry["pages"]]
        return _pdftotext(dst, entry["pages"], layout=False)


def run_ocrmypdf(entry: dict, corpus: Path) -> list[str]:
    return _ocrmypdf(entry, corpus, sidecar=True)


def run_ocrmypdf_pdftotext(entry: dict, corpus: Path) -> list[str]:
    return _ocrmypdf(entry, corpus, sidecar=False)


RUNNERS = {"lite": run_lite, "pymupdf4llm": run_pymupdf4llm, "pymupdf4llm-tess": run_pymupdf4llm_tess,
           "docling": run_docling, "pdftotext": run_pdftotext, "pdftotext-layout": run_pdftotext_layout,
           "ocrmypdf": run_ocrmypdf, "ocrmypdf-pdftotext": run_ocrmypdf_pdftotext}


def docling_offline_probe() -> str:
    """Why docling's standard (layout/table/OCR model) pipeline cannot run here, as the error it gives."""
    code = ("from docling.document_converter import DocumentConverter\n"
            "import sys\nr = DocumentConverter().convert(sys.argv[1])\nprint('OK', len(r.document.export_to_markdown()))")
    pdf = next(iter(sorted((ROOT / "examples").glob("*.pdf"))), None)
    if pdf is None:
        return "not probed (no example PDF)"
    try:
        r = subprocess.run([sys.executable, "-c", code, str(pdf)], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "HF_HUB_OFFLINE": "0"})
    except subprocess.TimeoutExpired:
        return "standard pipeline: timed out after 300 s"
    if r.returncode == 0 and r.stdout.startswith("OK"):
        return "standard pipeline ran (models were already present)"
    lines = [ln.strip() for ln in (r.stderr or r.stdout).strip().splitlines() if ln.strip()]
    errors = [ln for ln in lines if re.match(r"^[\w.]+(Error|Exception): ", ln)]
    what = errors[-1] if errors else (lines[-1] if lines else f"exit {r.returncode}")
    return ("standard pipeline (layout, table and OCR models; also what it uses for images) fails offline: "
            + what[:300])


# ---------------------------------------------------------------------------------------------------------------
# Running and scoring


def page_file(pred: Path, key: str, n: int) -> Path:
    return pred / f"{key.replace('/', '__')}_{n}.md"


def lite_revision() -> str:
    """The last commit that touched lite or the document loaders, and whether the tree differs from it."""
    paths = ["minuscule/lite", "minuscule/documents"]
    rev = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h %s", "--"] + paths,
                         capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--"] + paths,
                           capture_output=True, text=True).stdout.strip()
    return rev[:100] + (" (+ uncommitted changes)" if dirty else "")


def _cpu() -> float:
    """CPU seconds of this process (all threads) and its finished children: steadier than wall time on a
    machine whose cores other jobs share."""
    import resource

    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def convert(tool: str, corpus: Path, manifest: dict, log=print) -> dict:
    """Run one tool over its splits; write its per-page outputs and a timings file. Returns the timings."""
    pred = corpus / "pred" / tool
    if pred.exists():
        shutil.rmtree(pred)
    pred.mkdir(parents=True)
    timing = {"docs": {}, "errors": {}, "revision": lite_revision() if tool == "lite" else None}
    for entry in manifest["docs"]:
        if entry["kind"] not in TOOLS[tool][1]:
            continue
        t0, c0 = time.perf_counter(), _cpu()
        try:
            pages = RUNNERS[tool](entry, corpus)
        except Exception as exc:  # a peer failing on one document is a result, not a crash of the run
            timing["errors"][entry["key"]] = f"{type(exc).__name__}: {exc}"[:500]
            log(f"  {tool} {entry['key']}: ERROR {type(exc).__name__}: {str(exc)[:200]}")
            traceback.print_exc(limit=2, file=sys.stderr)
            continue
        secs = time.perf_counter() - t0
        timing["docs"][entry["key"]] = {"seconds": secs, "cpu_seconds": _cpu() - c0, "pages": entry["pages"]}
        for n, md in enumerate(pages, 1):
            page_file(pred, entry["key"], n).write_text(md)
        log(f"  {tool} {entry['key']}: {entry['pages']} pages in {secs:.1f} s")
    (pred / "_timing.json").write_text(json.dumps(timing, indent=1))
    return timing


def score(corpus: Path, manifest: dict, tools: list[str]) -> dict:
    tests = load_tests(corpus / "tests.jsonl")
    split_of = {e["key"]: e["kind"] for e in manifest["docs"]}
    source_of = {e["key"]: e["source"] for e in manifest["docs"]}
    results: dict = {}
    fails: dict = {}
    for tool in tools:
        pred = corpus / "pred" / tool
        tfile = pred / "_timing.json"
        if not tfile.exists():
            continue
        timing = json.loads(tfile.read_text())
        res: dict = {}
        fails[tool] = {}
        for split in TOOLS[tool][1]:
            keys = [e for e in manifest["docs"] if e["kind"] == split]
            pages = sum(e["pages"] for e in keys)
            done = [e for e in keys if e["key"] in timing["docs"]]
            secs = sum(timing["docs"][e["key"]]["seconds"] for e in done)
            cpu = sum(timing["docs"][e["key"]].get("cpu_seconds", float("nan")) for e in done)
            done_pages = sum(e["pages"] for e in done)
            cers = []
            by_source: dict = defaultdict(lambda: {"pass": [0, 0], "cer": []})
            for e in keys:
                for n in range(1, e["pages"] + 1):
                    f = page_file(pred, e["key"], n)
                    md = f.read_text() if f.exists() else ""
                    truth = (corpus / "truth" / f"{e['key'].replace('/', '__')}_{n}.txt").read_text()
                    cers.append(cer(cer_text(md), truth))
                    by_source[e["source"]]["cer"].append(cers[-1])
            by_type: dict = defaultdict(lambda: [0, 0])
            for t in tests:
                if split_of.get(t.pdf) != split:
                    continue
                f = page_file(pred, t.pdf, t.page)
                md = f.read_text() if f.exists() else ""
                r = t.run(md)
                # Line-end hyphen tests are `present` tests; they get their own column too.
                kinds = [t.type, "all"] + (["hyphen"] if (t.checked or "").startswith("hyphen") else [])
                for kind in kinds:
                    by_type[kind][1] += 1
                    by_type[kind][0] += int(r.passed)
                by_source[source_of[t.pdf]]["pass"][1] += 1
                by_source[source_of[t.pdf]]["pass"][0] += int(r.passed)
                if not r.passed:
                    fails[tool][t.id] = r.explanation
            res[split] = {
                "pages": pages, "pages_converted": done_pages, "seconds": round(secs, 2),
                "s_per_page": round(secs / done_pages, 3) if done_pages else None,
                "cpu_s_per_page": round(cpu / done_pages, 3) if done_pages else None,
                "cer_mean": round(sum(cers) / len(cers), 4) if cers else None,
                "cer_median": round(sorted(cers)[len(cers) // 2], 4) if cers else None,
                "pass": {k: v for k, v in by_type.items()},
                "pass_rate": round(by_type["all"][0] / by_type["all"][1], 4) if by_type["all"][1] else None,
                "errors": {k: v for k, v in timing["errors"].items() if split_of.get(k) == split},
                "by_source": {src: {"pass": v["pass"], "pass_rate": round(v["pass"][0] / v["pass"][1], 4),
                                    "cer_mean": round(sum(v["cer"]) / len(v["cer"]), 4)}
                              for src, v in sorted(by_source.items()) if v["pass"][1] and v["cer"]},
            }
        results[tool] = res
    return {"results": results, "fails": fails}


TYPES = ("present", "hyphen", "absent", "order", "table", "baseline")


def markdown_tables(scored: dict, manifest: dict, tests_n: dict, notes: list[str]) -> str:
    out = []
    for split, title in (("text", "Text-layer pages (born-digital PDFs)"), ("scan", "Scans (page images, OCR needed)")):
        rows = [(t, r[split]) for t, r in scored["results"].items() if split in r]
        if not rows:
            continue
        n_pages = rows[0][1]["pages"]
        out.append(f"### {title}: {n_pages} pages, {tests_n.get(split, 0)} tests\n")
        out.append("Pass rates in %, (passed/total). `hyphen` is the subset of `present` on words broken at a line "
                   "end. CER: character error rate against the page's known text (no header/footer).\n")
        out.append("| tool | overall | " + " | ".join(TYPES) + " | CER mean | CER median | s/page | CPU s/page |")
        out.append("|---|---|" + "---|" * len(TYPES) + "---|---|---|---|")
        rows.sort(key=lambda tr: -(tr[1]["pass_rate"] or 0))
        for tool, r in rows:
            cells = []
            for ty in TYPES:
                p, n = r["pass"].get(ty, [0, 0])
                cells.append(f"{100 * p / n:.1f} ({p}/{n})" if n else "–")
            label = TOOLS[tool][0]
            if r["errors"]:
                label += f" ⚠ {len(r['errors'])} doc(s) failed"
            name = f"**{label}**" if tool == "lite" else label
            out.append(f"| {name} | **{100 * (r['pass_rate'] or 0):.1f}** | " + " | ".join(cells)
                       + f" | {100 * r['cer_mean']:.2f} % | {100 * r['cer_median']:.2f} % | "
                       + (f"{r['s_per_page']:.2f}" if r["s_per_page"] is not None else "–") + " | "
                       + (f"{r['cpu_s_per_page']:.2f}" if r.get("cpu_s_per_page") is not None else "–") + " |")
        out.append("")
        sources = sorted({src for _, r in rows for src in r.get("by_source", {})})
        names = {"latex": "LaTeX", "lo": "LibreOffice", "chrome": "Chromium"}
        out.append("By maker: pass rate / CER mean.\n")
        out.append("| tool | " + " | ".join(names.get(src, src) for src in sources) + " |")
        out.append("|---|" + "---|" * len(sources))
        for tool, r in rows:
            cells = [f"{100 * r['by_source'][src]['pass_rate']:.1f} / {100 * r['by_source'][src]['cer_mean']:.2f} %"
                     if src in r.get("by_source", {}) else "–" for src in sources]
            out.append(f"| {TOOLS[tool][0]} | " + " | ".join(cells) + " |")
        out.append("")
    if notes:
        out.append("Notes:\n")
        out += [f"- {n}" for n in notes]
        out.append("")
    return "\n".join(out)


def lite_losses(scored: dict, corpus: Path, limit: int = 80) -> str:
    """Tests lite fails and at least one peer passes, grouped by type, with lite's reason."""
    tests = {t.id: t for t in load_tests(corpus / "tests.jsonl")}
    lite_fail = scored["fails"].get("lite", {})
    lines = ["# Tests lite fails that another tool passes\n"]
    by_type = defaultdict(list)
    for tid, why in lite_fail.items():
        split = "scan" if tests[tid].pdf.startswith("scans/") else "text"
        winners = [tool for tool, f in scored["fails"].items()
                   if tool != "lite" and split in TOOLS[tool][1] and tid not in f]
        if winners:
            by_type[tests[tid].type].append((tid, why, winners))
    for ty, items in sorted(by_type.items()):
        lines.append(f"## {ty}: {len(items)}\n")
        for tid, why, winners in items[:limit]:
            t = tests[tid]
            what = {k: v for k, v in t.to_json().items() if k in ("text", "before", "after", "cell", "left", "right",
                                                                   "up", "down", "top_heading")}
            lines.append(f"- `{tid}` passed by {', '.join(winners)}: {why}\n  test: `{json.dumps(what)[:300]}`")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", default="out/peers", help="folder made by make_corpus.py")
    ap.add_argument("--tools", default=",".join(TOOLS), help=f"tools to (re)run; default all: {','.join(TOOLS)}")
    ap.add_argument("--score-only", action="store_true", help="re-score the kept predictions, run nothing")
    ap.add_argument("--readme", action="store_true", help="also put the tables into benchmarks/peers/README.md")
    ap.add_argument("--no-probe", action="store_true", help="skip the docling standard-pipeline offline probe")
    args = ap.parse_args(argv)
    corpus = Path(args.corpus)
    manifest = json.loads((corpus / "manifest.json").read_text())
    todo = [] if args.score_only else [t for t in args.tools.split(",") if t]
    for tool in todo:
        if tool not in TOOLS:
            ap.error(f"unknown tool {tool!r}")
    wall0 = time.perf_counter()
    for tool in todo:
        print(f"{tool}:", flush=True)
        convert(tool, corpus, manifest)
    notes = []
    prev = corpus / "results.json"
    old_notes = json.loads(prev.read_text()).get("notes", []) if prev.exists() else []
    if "docling" in todo and not args.no_probe:
        notes.append("docling: " + docling_offline_probe())
    else:
        notes += [n for n in old_notes if n.startswith("docling:")]
    notes.append("pdftotext and docling's native pipeline cannot read page images: scans are scored only for tools "
                 "that OCR (lite, pymupdf4llm, ocrmypdf+tesseract).")
    notes.append("pymupdf4llm picks RapidOCR for OCR when it is installed (it is, in the peers venv) and Tesseract "
                 "otherwise; both are scored on scans.")
    scored = score(corpus, manifest, list(TOOLS))
    tests = load_tests(corpus / "tests.jsonl")
    split_of = {e["key"]: e["kind"] for e in manifest["docs"]}
    tests_n = defaultdict(int)
    for t in tests:
        tests_n[split_of[t.pdf]] += 1
    table = markdown_tables(scored, manifest, tests_n, notes)
    (corpus / "results.md").write_text(table)
    (corpus / "lite_losses.md").write_text(lite_losses(scored, corpus))
    (corpus / "results.json").write_text(json.dumps({"results": scored["results"], "notes": notes,
                                                     "tests": dict(tests_n), "fails": scored["fails"],
                                                     "run_seconds": round(time.perf_counter() - wall0, 1)},
                                                    indent=1))
    if args.readme:
        readme = HERE / "README.md"
        text = readme.read_text()
        a, b = text.index("<!-- results:start -->"), text.index("<!-- results:end -->")
        stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        lt = corpus / "pred" / "lite" / "_timing.json"
        lite_rev = (json.loads(lt.read_text()).get("revision") if lt.exists() else None) or "unknown"
        readme.write_text(text[:a] + "<!-- results:start -->\n" + f"Run of {stamp}; lite at `{lite_rev[:90]}`.\n\n"
                          + table + text[b:])
    print(table)
    print(f"run took {time.perf_counter() - wall0:.0f} s; results in {corpus}/results.md, lite_losses.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
