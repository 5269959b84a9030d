"""`minuscule parse` end to end: outputs, page selection, stdin, and every kind of bad input."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pypdf
import pytest
from PIL import Image
from pdfmaker import PageSpec, make_pdf

from minuscule.cli import main


def three_page_pdf() -> bytes:
    pages = []
    for n in range(1, 4):
        s = PageSpec()
        s.paragraph(60, 100, [f"This is the text of page number {n}.", "A second line follows here."])
        pages.append(s)
    return make_pdf(pages)


def run_cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "minuscule", *args], input=stdin, capture_output=True, timeout=300)


@pytest.fixture
def inputs(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    (d / "good.pdf").write_bytes(three_page_pdf())
    (d / "empty.pdf").write_bytes(b"")
    (d / "notes.pdf").write_bytes(b"just some text, not a pdf at all\n")
    (d / "truncated.pdf").write_bytes(three_page_pdf()[:300])
    w = pypdf.PdfWriter()
    w.add_blank_page(200, 200)
    w.encrypt("secret", algorithm="RC4-128")
    buf = io.BytesIO()
    w.write(buf)
    (d / "locked.pdf").write_bytes(buf.getvalue())
    Image.new("1", (12000, 12000)).save(d / "bomb.png")  # 144 Mpx in a few kB
    return d


def test_bad_inputs_each_get_one_line_and_the_rest_converts(inputs, tmp_path):
    out = tmp_path / "out"
    missing = str(inputs / "missing.pdf")
    proc = run_cli("parse", str(inputs), missing, "-o", str(out))
    err = proc.stderr.decode()
    assert proc.returncode == 1
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    expect = {"empty.pdf": "empty file", "notes.pdf": "not a PDF", "truncated.pdf": "corrupt or truncated",
              "locked.pdf": "encrypted", "bomb.png": "too large", "missing.pdf": "no such file"}
    for name, reason in expect.items():
        hits = [ln for ln in lines if name in ln]
        assert len(hits) == 1 and reason in hits[0], (name, lines)
    assert len(lines) == len(expect)
    assert (out / "good.md").read_text().count("This is the text of page number") == 3
    assert not (out / "empty.md").exists()
    assert "3 pages from 1 of 7 inputs" in err and "6 failed" in err


def test_page_selection_and_out_of_range(tmp_path):
    pdf = tmp_path / "doc.pdf"
    pdf.write_bytes(three_page_pdf())
    out = tmp_path / "out"
    assert main(["parse", str(pdf), "-o", str(out), "--pages", "1,3", "-q"]) == 0
    data = json.loads((out / "doc.json").read_text())
    assert [p["page"] for p in data["pages"]] == [1, 3]
    assert "page number 2" not in (out / "doc.md").read_text()
    proc = run_cli("parse", str(pdf), "-o", str(out / "x"), "--pages", "2-5")
    assert proc.returncode == 1
    assert "page 4,5 out of range (document has 3 pages)" in proc.stderr.decode()
    proc = run_cli("parse", str(pdf), "-o", str(out / "y"), "--pages", "3-1")
    assert proc.returncode == 2 and "--pages" in proc.stderr.decode() and "Traceback" not in proc.stderr.decode()


def test_stdin_and_formats(tmp_path):
    out = tmp_path / "out"
    proc = run_cli("parse", "-", "-o", str(out), "--format", "json", stdin=three_page_pdf())
    assert proc.returncode == 0, proc.stderr
    data = json.loads((out / "stdin.json").read_text())
    assert data["source"] == "stdin" and len(data["pages"]) == 3
    page = data["pages"][0]
    assert set(page) == {"page", "markdown", "blocks", "engine", "seconds", "stats"}
    assert not (out / "stdin.md").exists()
    assert "engine: lite" in proc.stderr.decode()


def test_version_and_unknown_format():
    proc = run_cli("--version")
    assert proc.returncode == 0 and proc.stdout.decode().startswith("minuscule ")
    proc = run_cli("parse", "x.pdf", "-o", "/tmp/none", "--format", "docx")
    assert proc.returncode == 2 and "--format" in proc.stderr.decode()


def test_globs_and_nested_folders_do_not_collide(tmp_path):
    for sub in ("a", "b"):
        (tmp_path / "in" / sub).mkdir(parents=True)
        (tmp_path / "in" / sub / "same.pdf").write_bytes(three_page_pdf())
    out = tmp_path / "out"
    assert main(["parse", str(tmp_path / "in"), "-o", str(out), "-q"]) == 0
    assert (out / "a" / "same.md").exists() and (out / "b" / "same.md").exists()
    out2 = tmp_path / "out2"
    assert main(["parse", str(tmp_path / "in" / "*" / "*.pdf"), "-o", str(out2), "-q"]) == 0
    assert sorted(p.name for p in out2.iterdir()) == ["same-2.json", "same-2.md", "same.json", "same.md"]


def test_output_is_atomic(tmp_path, monkeypatch):
    from minuscule import atomic

    pdf = tmp_path / "doc.pdf"
    pdf.write_bytes(three_page_pdf())
    out = tmp_path / "out"
    assert main(["parse", str(pdf), "-o", str(out), "-q"]) == 0
    before = (out / "doc.md").read_bytes()

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(atomic.os, "replace", broken_replace)
    assert main(["parse", str(pdf), "-o", str(out), "-q", "--pages", "1"]) == 1
    assert (out / "doc.md").read_bytes() == before  # the old result is intact
    assert sorted(os.listdir(out)) == ["doc.json", "doc.md"]  # no temp files left behind
