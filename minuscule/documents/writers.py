"""Writers for parse results: `<stem>.md` and `<stem>.json`, each written atomically."""

from __future__ import annotations

import json
from pathlib import Path

from minuscule.atomic import atomic_write
from minuscule.documents.types import Document

__all__ = ["FORMATS", "atomic_write", "write_document"]

FORMATS = ("md", "json")


def write_document(doc: Document, base: Path, formats: tuple[str, ...] = FORMATS) -> list[Path]:
    """`base` is the output path without suffix; returns the files written."""
    written = []
    if "md" in formats:
        p = base.with_name(base.name + ".md")
        atomic_write(p, doc.markdown)
        written.append(p)
    if "json" in formats:
        p = base.with_name(base.name + ".json")
        atomic_write(p, json.dumps(doc.to_json(), ensure_ascii=False, indent=1) + "\n")
        written.append(p)
    return written
