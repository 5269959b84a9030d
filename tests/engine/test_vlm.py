"""VlmEngine and `minuscule parse --engine vlm`: pages → processor → engine → grounding parse, on a nano checkpoint."""

from __future__ import annotations

import json

import pytest
import torch
from PIL import Image, ImageDraw

from minuscule.config import ModelConfig
from minuscule.documents.types import Page
from minuscule.engines import ENGINES, resolve
from minuscule.model import checkpoint
from minuscule.model.generate import generate_greedy
from minuscule.model.ocr import build_model
from minuscule.processor import parse_grounded
from minuscule.tokenizer import build_nano_tokenizer


@pytest.fixture(scope="module")
def nano_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("nano")
    checkpoint.save(build_model(ModelConfig.from_name("nano"), seed=0), d, tokenizer=build_nano_tokenizer())
    return d


def _page(n: int, text: str) -> Page:
    img = Image.new("RGB", (400, 520), "white")
    ImageDraw.Draw(img).text((30, 40), text, fill="black")
    return Page(number=n, width=400, height=520, source="test", _image=img)


def test_registered_and_chosen_by_auto(nano_dir, monkeypatch):
    assert ENGINES["vlm"] == ("minuscule.vlm", "VlmEngine")
    assert resolve("auto", str(nano_dir))[0] == "vlm"
    monkeypatch.setenv("MINUSCULE_MODEL", str(nano_dir))
    assert resolve("auto")[0] == "vlm"


def test_pages_in_order_and_equal_to_plain_greedy(nano_dir):
    from minuscule.vlm import VlmEngine

    eng = VlmEngine(model=str(nano_dir), mode="tiny", max_tokens=12, max_batch=2)
    pages = [_page(i, f"Page number {i}") for i in (1, 2, 3)]
    results = list(eng.parse_pages(pages))
    assert [r.page for r in results] == [1, 2, 3] and all(r.engine == "vlm" for r in results)
    st = results[0].stats
    assert st["generated_tokens"] <= 12 and st["proposer"] == "fastmtp" and st["image_tokens"] > 0
    assert set(st["seconds"]) == {"vision", "prefill", "draft", "decode"} and st["finish_reason"] in ("stop", "length")
    # The same page through plain generate_greedy gives the same blocks.
    tok = eng.tokenizer
    inputs = eng.processor(pages[1].image)
    ids = generate_greedy(eng.engine.model, inputs, 12, eos_id=tok.eos_id)
    text = tok.decode([t for t in ids if t != tok.eos_id])
    assert [b.to_json() for b in results[1].blocks] == [b.to_json() for b in parse_grounded(text, 400, 520)]
    assert eng.parse_page(pages[0]).markdown == results[0].markdown


def test_bad_model_dir_is_a_one_line_error(tmp_path):
    from minuscule.vlm import VlmEngine

    with pytest.raises(ValueError, match="tokenizer.json"):
        VlmEngine(model=str(tmp_path))


@pytest.mark.slow
def test_parse_command_end_to_end_on_a_pdf(nano_dir, tmp_path, monkeypatch):
    from pdfmaker import PageSpec, make_pdf

    from minuscule.cli import main

    pdf = tmp_path / "doc.pdf"
    a, b = PageSpec(), PageSpec()
    a.paragraph(72, 100, ["A first page", "with two lines"])
    b.text(72, 100, "Second page", 14, True)
    pdf.write_bytes(make_pdf([a, b]))
    monkeypatch.setenv("MINUSCULE_MAX_TOKENS", "8")
    monkeypatch.setenv("MINUSCULE_MODE", "tiny")
    monkeypatch.setenv("MINUSCULE_THREADS", str(torch.get_num_threads()))
    rc = main(["parse", str(pdf), "-o", str(tmp_path / "out"), "--engine", "vlm", "--model", str(nano_dir),
               "--max-side", "400", "-q"])
    assert rc == 0
    doc = json.loads((tmp_path / "out" / "doc.json").read_text())
    assert [p["page"] for p in doc["pages"]] == [1, 2]
    for p in doc["pages"]:
        assert p["engine"] == "vlm" and p["stats"]["generated_tokens"] <= 8 and p["stats"]["decode_steps"] >= 0
        assert "tokens_per_step" in p["stats"] and p["stats"]["seconds"]["vision"] > 0
