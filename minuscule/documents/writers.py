"""Writers for parse results: `<stem>.md` and `<stem>.json`, each written atomically."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from minuscule.documents.types import Document

FORMATS = ("md", "json")


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write to a temp file in the same folder, then rename: readers never see a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
