"""How a benchmark hands over its result: one JSON object, to a file (atomically) or to stdout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from minuscule.atomic import atomic_write


def emit_json(result: dict[str, Any], path: str | Path | None) -> None:
    text = json.dumps(result, indent=1, ensure_ascii=False)
    if path:
        atomic_write(Path(path), text + "\n")
    else:
        print(text)
