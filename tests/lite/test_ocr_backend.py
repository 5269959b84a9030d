"""OCR backends: OpenVINO and onnxruntime read a page alike; the backend choice is validated."""

from __future__ import annotations

import pytest

from minuscule.bench.cer import cer
from minuscule.lite import ocr

pytest.importorskip("rapidocr")


@pytest.fixture
def fresh_engine(monkeypatch):
    """Each test builds its own RapidOCR instance for the backend it sets."""
    monkeypatch.setattr(ocr, "_engine", None)
    yield monkeypatch
    ocr._engine = None


def test_unknown_backend_is_an_error(fresh_engine):
    fresh_engine.setenv("MINUSCULE_OCR_BACKEND", "tensorrt")
    with pytest.raises(ValueError, match="MINUSCULE_OCR_BACKEND"):
        ocr.ocr_backend()


def test_openvino_and_onnxruntime_read_the_same_text(fresh_engine, tmp_path):
    pytest.importorskip("openvino")
    from test_ocr import rendered_page

    from minuscule.documents import load

    path, truth = rendered_page(tmp_path, 200)
    image = load(path)[0].image
    texts = {}
    for backend in ("openvino", "onnxruntime"):
        fresh_engine.setenv("MINUSCULE_OCR_BACKEND", backend)
        fresh_engine.setattr(ocr, "_engine", None)
        assert ocr.ocr_backend() == backend
        texts[backend] = " ".join(ln.text for ln in sorted(ocr.ocr_lines(image), key=lambda ln: (ln.bbox[0] > 600, ln.bbox[1])))
    assert cer(texts["openvino"], texts["onnxruntime"]) < 0.005, texts
    assert cer(texts["openvino"], truth) < 0.02, texts["openvino"]
