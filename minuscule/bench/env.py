"""The environment a benchmark ran in: cores, Python, platform and package versions."""

from __future__ import annotations

import os
import platform
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from minuscule import __version__


def package_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def environment(*packages: str) -> dict[str, Any]:
    """Cores available to this process, Python, platform, minuscule and the named packages' versions."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    env: dict[str, Any] = {"cores": cores, "python": platform.python_version(), "platform": platform.platform(),
                           "minuscule": __version__}
    env.update({name: package_version(name) for name in packages})
    return env
