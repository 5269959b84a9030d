"""Headless Chromium (Debian's package) driven by Playwright, and where KaTeX lives on disk."""

from __future__ import annotations

import os
import shutil
import threading
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


class _SharedPlaywright:
    """One Playwright driver per thread, shared by every browser started in it.

    Playwright's sync API refuses to start a second driver while one runs in the same thread (it owns
    the thread's event loop), so a long-lived math renderer and a page renderer must share it. `stop()`
    releases one user; the driver stops with the last.
    """

    _local = threading.local()

    def __init__(self) -> None:
        state = self._local.__dict__
        if state.get("users", 0) == 0:
            try:
                from playwright.sync_api import sync_playwright
            except ImportError as exc:  # pragma: no cover - depends on the environment
                raise MissingExtraError("playwright", "eval") from exc
            state["driver"] = sync_playwright().start()
        state["users"] = state.get("users", 0) + 1
        self._driver = state["driver"]
        self._stopped = False

    @property
    def chromium(self):
        return self._driver.chromium

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        state = self._local.__dict__
        state["users"] -= 1
        if state["users"] == 0:
            state.pop("driver").stop()


def launch_chromium():
    """Start a headless Chromium; returns (playwright, browser). Close the browser, then stop playwright."""
    path = chromium_path()
    pw = _SharedPlaywright()
    try:
        browser = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, headless=True)
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
