"""Engine registry: name → engine class, imported only when chosen."""

from __future__ import annotations

import importlib
import os
from typing import Iterable, Iterator, Protocol

from minuscule.documents.types import Page, PageResult

# name -> (module, class), imported on first use: the model engine pulls in torch, lite does not.
ENGINES: dict[str, tuple[str, str]] = {
    "lite": ("minuscule.lite.engine", "LiteEngine"),
    "vlm": ("minuscule.vlm", "VlmEngine"),
}
MODEL_ENV = "MINUSCULE_MODEL"


class Engine(Protocol):
    name: str

    def parse_pages(self, pages: Iterable[Page]) -> Iterator[PageResult]: ...

    def parse_page(self, page: Page) -> PageResult: ...


def resolve(name: str, model: str | None = None) -> tuple[str, str]:
    """The engine `auto` stands for, and why; other names are returned as they are."""
    if name != "auto":
        return name, "chosen"
    model = model or os.environ.get(MODEL_ENV)
    if model and "vlm" in ENGINES:
        return "vlm", f"model {model}"
    if model:
        return "lite", f"a model is configured ({model}) but this version has no model engine yet"
    return "lite", f"no model configured (--model or ${MODEL_ENV})"


def get_engine(name: str, model: str | None = None) -> Engine:
    """An engine instance by name (`auto` resolves first)."""
    name, _ = resolve(name, model)
    if name not in ENGINES:
        raise ValueError(f"unknown engine {name!r}; available: auto, {', '.join(ENGINES)}")
    module, cls = ENGINES[name]
    engine_cls = getattr(importlib.import_module(module), cls)
    return engine_cls(model=model) if name != "lite" else engine_cls()
