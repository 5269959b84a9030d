"""The environment a benchmark ran in: cores, Python, platform and package versions."""

from __future__ import annotations

import os
import platform
import time
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from minuscule import __version__


def package_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def cpu_reference_seconds(n: int = 2_000_000) -> float:
    """CPU seconds of a fixed pure-Python loop: shared virtual machines change speed from hour to hour,
    and this says how fast this one was when the benchmark ran (lower is faster)."""
    t0 = time.process_time()
    total = 0
    for i in range(n):
        total += i
    return round(time.process_time() - t0, 4)


def environment(*packages: str) -> dict[str, Any]:
    """Cores available to this process, Python, platform, minuscule, the named packages' versions and
    the CPU reference time."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    env: dict[str, Any] = {"cores": cores, "python": platform.python_version(), "platform": platform.platform(),
                           "minuscule": __version__, "cpu_reference_s": cpu_reference_seconds()}
    env.update({name: package_version(name) for name in packages})
    return env
