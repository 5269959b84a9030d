"""`minuscule synth` end to end: files, determinism across runs and worker counts, self-checked tests, resume."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from minuscule.cli import main

pytestmark = pytest.mark.browser
N = 6


def _have_browser() -> None:
    try:
        from minuscule.browser import chromium_path, katex_dir

        chromium_path()
        katex_dir()
        import playwright  # noqa: F401
    except Exception as exc:
        pytest.skip(f"browser not available: {exc}")


def _synth(out: Path, *extra: str) -> int:
    return main(["synth", "--n", str(N), "--out", str(out), "--seed", "13", "--degrade", "0.5", *extra])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    _have_browser()
    a = tmp_path_factory.mktemp("synth") / "a"
    b = tmp_path_factory.mktemp("synth") / "b"
    assert _synth(a, "--preview") == 0
    assert _synth(b, "--workers", "2") == 0
    return a, b


def _outputs(out: Path) -> dict[str, bytes]:
    files = {p.name: p.read_bytes() for p in sorted((out / "pages").glob("*.md"))}
    files["tests.jsonl"] = (out / "tests.jsonl").read_bytes()
    return files


def test_files_written(runs):
    a, _ = runs
    manifest = json.loads((a / "manifest.json").read_text())
    assert manifest["pages"] + manifest["dropped"] == N
    assert manifest["seed"] == 13
    for key in ("katex", "chromium", "faker", "minuscule"):
        assert manifest["versions"][key]
    for i in range(N):
        stem = a / "pages" / f"p{i:06d}"
        assert stem.with_suffix(".pdf").stat().st_size > 1000
        assert stem.with_suffix(".png").stat().st_size > 1000
        assert stem.with_suffix(".md").read_text().strip()
    assert not list(a.rglob("*.tmp")), "temporary files left behind"
    assert (a / "preview.png").stat().st_size > 10_000


def test_same_seed_identical_markdown_and_tests_with_any_worker_count(runs):
    a, b = runs
    assert _outputs(a) == _outputs(b)


def test_every_page_has_table_or_formula_and_most_have_both(runs):
    a, _ = runs
    manifest = json.loads((a / "manifest.json").read_text())
    sidecars = [json.loads(p.read_text()) for p in sorted((a / "pages").glob("p??????.json"))]
    for side in sidecars:
        assert side["elements"].get("table", 0) + side["elements"].get("formula", 0) > 0
    both = sum(1 for s in sidecars if s["elements"].get("table") and s["elements"].get("formula"))
    assert manifest["pages_with"]["both"] == both
    assert both / len(sidecars) >= 0.5


def test_every_test_passes_on_its_own_reference(runs):
    from minuscule.checks import load_tests

    a, _ = runs
    tests = load_tests(a / "tests.jsonl")
    assert {t.type for t in tests} == {"present", "absent", "order", "table", "math", "baseline"}
    for test in tests:
        pdf = a / test.pdf
        assert pdf.exists(), test.pdf
        markdown = pdf.with_suffix(".md").read_text(encoding="utf-8")
        result = test.run(markdown)
        assert result.passed, (test.id, result.explanation)
    manifest = json.loads((a / "manifest.json").read_text())
    assert manifest["tests_total"] + manifest["tests_of_degraded_copies"] == len(tests)


def test_degraded_copies_keep_size_page_count_and_reference(runs):
    import numpy as np
    import pypdfium2 as pdfium
    from PIL import Image

    a, _ = runs
    copies = sorted((a / "pages").glob("*-d.png"))
    assert copies, "no degraded copy at --degrade 0.5"
    for png in copies:
        clean = png.with_name(png.name.replace("-d.png", ".png"))
        with Image.open(png) as d, Image.open(clean) as c:
            assert d.size == c.size
            assert np.abs(np.asarray(d, dtype=np.int16) - np.asarray(c.convert("RGB"), dtype=np.int16)).mean() > 0.5
        assert png.with_suffix(".md").read_bytes() == clean.with_suffix(".md").read_bytes()
        dpdf = pdfium.PdfDocument(str(png.with_suffix(".pdf")))
        cpdf = pdfium.PdfDocument(str(clean.with_suffix(".pdf")))
        assert len(dpdf) == len(cpdf) == 1
        dw, dh = dpdf[0].get_size()
        cw, ch = cpdf[0].get_size()
        assert abs(dw - cw) < 1.5 and abs(dh - ch) < 1.5


def test_resume_finishes_an_interrupted_run(runs, tmp_path):
    a, _ = runs
    out = tmp_path / "c"
    assert main(["synth", "--n", "3", "--out", str(out), "--seed", "13", "--degrade", "0.5"]) == 0
    # A second call without --resume refuses to mix runs; with --resume it adds the missing pages.
    assert _synth(out) == 2
    (out / "pages" / "p000001.json").unlink()
    (out / "pages" / "p000001.md").unlink()
    assert _synth(out, "--resume") == 0
    assert _outputs(out) == _outputs(a)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["this_run"]["pages_rendered"] == N - 2


def test_resume_with_other_parameters_is_refused(runs, tmp_path, capsys):
    out = tmp_path / "d"
    assert main(["synth", "--n", "1", "--out", str(out), "--seed", "1"]) == 0
    assert main(["synth", "--n", "2", "--out", str(out), "--seed", "2", "--resume"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "cannot resume" in err and str(out) in err


@pytest.mark.parametrize("argv, name", [(["--n", "0"], "--n"), (["--n", "2", "--degrade", "1.5"], "--degrade"),
                                        (["--n", "2", "--workers", "0"], "--workers")])
def test_bad_arguments_are_one_line_errors(tmp_path, capsys, argv, name):
    assert main(["synth", "--out", str(tmp_path / "x"), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and name in err and "Traceback" not in err


def test_cli_module_imports_no_heavy_modules():
    import subprocess
    import sys

    code = ("import sys, minuscule.synth.cli as c, argparse; c.add_arguments(argparse.ArgumentParser()); "
            "print(sorted(m for m in ('playwright', 'torch', 'faker', 'PIL') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_ids_are_unique_and_pdf_paths_relative(runs):
    a, _ = runs
    ids = []
    for line in (a / "tests.jsonl").read_text().splitlines():
        record = json.loads(line)
        ids.append(record["id"])
        assert re.fullmatch(r"pages/p\d{6}(-d)?\.pdf", record["pdf"])
        assert record["page"] == 1
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("workers", ["1", "2"])
def test_missing_browser_is_one_line_error(tmp_path, capsys, monkeypatch, workers):
    _have_browser()
    monkeypatch.setenv("MINUSCULE_CHROMIUM", str(tmp_path / "no-chromium"))
    assert main(["synth", "--n", "2", "--out", str(tmp_path / "x"), "--workers", workers]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot start Chromium" in err
