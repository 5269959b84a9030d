"""The peer-comparison corpus builder on one Chromium document: pages as planned, tests self-checked, truths exact."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]


def _builder():
    spec = importlib.util.spec_from_file_location("peers_make_corpus", ROOT / "benchmarks" / "peers" / "make_corpus.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    try:
        from minuscule.browser import chromium_path

        chromium_path()
        import faker  # noqa: F401
        import playwright  # noqa: F401
    except Exception as exc:
        pytest.skip(f"browser or faker not available: {exc}")
    out = tmp_path_factory.mktemp("peers")
    mod = _builder()
    manifest = mod.build(out, only={"chrome"}, small=True, log=lambda *a: None)
    return mod, out, manifest


def test_document_made_with_every_test_type(corpus):
    mod, out, manifest = corpus
    assert [d["key"] for d in manifest["docs"]] == ["docs/chrome-a.pdf"]
    assert (out / "docs" / "chrome-a.pdf").stat().st_size > 0
    assert manifest["dropped_tests"] == []
    records = [json.loads(line) for line in (out / "tests.jsonl").read_text().splitlines()]
    per_page = Counter(r["page"] for r in records)
    assert set(per_page) == {1, 2} and min(per_page.values()) >= 10
    assert {"present", "absent", "order", "table", "baseline"} <= {r["type"] for r in records}


def test_tests_pass_on_perfect_markdown_and_fail_on_empty(corpus):
    from minuscule.checks import load_tests

    mod, out, _ = corpus
    for test in load_tests(out / "tests.jsonl"):
        perfect = (out / "truth" / f"docs__chrome-a.pdf_{test.page}.md").read_text()
        assert test.run(perfect).passed, test.id
        if test.type in ("present", "order", "table"):
            assert not test.run("").passed, test.id


def test_truth_is_the_perfect_markdown_and_the_text_layer_agrees(corpus):
    from minuscule.bench.cer import cer

    mod, out, manifest = corpus
    for n in (1, 2):
        md = (out / "truth" / f"docs__chrome-a.pdf_{n}.md").read_text()
        truth = (out / "truth" / f"docs__chrome-a.pdf_{n}.txt").read_text()
        assert cer(mod.cer_text(md), truth) == 0.0
        # Furniture is in the PDF but not in the truth: the running header must not leak into it.
        assert "Acme Analytics" not in truth
    # Every planned block was found on its own page of the printed PDF (when none had to be dropped to fit).
    if not manifest["notes"]:
        doc = mod.plan_docs({"chrome"}, small=True)[0]
        assert mod.misplaced_page(doc, out / "docs" / "chrome-a.pdf") is None
