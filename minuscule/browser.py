"""Headless Chromium (Debian's package) driven by Playwright, and where KaTeX lives on disk."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from minuscule.errors import MissingExtraError

# As root on a closed network: no sandbox, and no background traffic that would only be refused.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def chromium_path() -> str:
    """The Chromium executable: $MINUSCULE_CHROMIUM, else Debian's chromium on PATH."""
    path = os.environ.get("MINUSCULE_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        raise MissingExtraError("chromium (Debian package 'chromium'; `make test` installs it)", "eval")
    return path


def launch_chromium():
    """Start Playwright and a headless Chromium; returns (playwright, browser). Close both when done."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError("playwright", "eval") from exc
    pw = sync_playwright().start()
    try:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
    except Exception:
        pw.stop()
        raise
    return pw, browser


def katex_dir() -> Path:
    """The npm `katex` package: $MINUSCULE_KATEX, else node_modules/katex of the source tree."""
    env = os.environ.get("MINUSCULE_KATEX")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parent.parent / "node_modules" / "katex")
    for cand in candidates:
        if (cand / "dist" / "katex.min.js").exists():
            return cand
    raise MissingExtraError("KaTeX (npm package 'katex'; `make test` runs npm install)", "eval")
