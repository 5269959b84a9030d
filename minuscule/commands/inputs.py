"""Expand CLI inputs (files, folders, globs, `-` for stdin) into documents with output names."""

from __future__ import annotations

import glob
from dataclasses import dataclass
from pathlib import Path

from minuscule.documents.loader import DOCUMENT_SUFFIXES


@dataclass(frozen=True)
class InputDoc:
    """One document to convert: where it comes from and the output path without suffix."""

    source: str  # path as the user gave it (or found in a folder), "-" for stdin
    out_base: Path


def expand_inputs(inputs: list[str], outdir: Path) -> tuple[list[InputDoc], list[tuple[str, str]]]:
    """Documents in a stable order, and (input, reason) for inputs that match nothing.

    Files found in a folder keep their path relative to it, so equal names in subfolders don't collide.
    """
    docs: list[InputDoc] = []
    errors: list[tuple[str, str]] = []
    taken: set[Path] = set()

    def add(source: str, rel: Path) -> None:
        base = outdir / rel.with_suffix("") if rel.suffix.lower() in DOCUMENT_SUFFIXES else outdir / rel
        candidate, n = base, 2
        while candidate in taken:
            candidate = base.with_name(f"{base.name}-{n}")
            n += 1
        taken.add(candidate)
        docs.append(InputDoc(source, candidate))

    for arg in inputs:
        if arg == "-":
            add("-", Path("stdin"))
            continue
        path = Path(arg)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in DOCUMENT_SUFFIXES
                           and not any(part.startswith(".") for part in p.relative_to(path).parts))
            if not found:
                errors.append((arg, "folder has no PDF or image files"))
            for p in found:
                add(str(p), p.relative_to(path))
        elif not path.exists() and any(ch in arg for ch in "*?["):
            matches = sorted(glob.glob(arg, recursive=True))
            files = [m for m in matches if Path(m).is_file()]
            if not files:
                errors.append((arg, "pattern matches no files"))
            for m in files:
                add(m, Path(Path(m).name))
        else:
            add(arg, Path(path.name))  # a missing file is reported when it is read
    return docs, errors
