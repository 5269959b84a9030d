"""`minuscule synth`: generate synthetic pages dense in tables and formulas, with reference Markdown and unit tests."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from minuscule.errors import InputError, MissingExtraError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n", type=int, required=True, help="number of pages")
    parser.add_argument("--out", type=Path, required=True, help="output folder (pages/, tests.jsonl, manifest.json)")
    parser.add_argument("--seed", type=int, default=0, help="same seed, same Markdown and tests (default 0)")
    parser.add_argument("--degrade", type=float, default=0.0, metavar="P",
                        help="probability that a page also gets a degraded copy <id>-d (default 0)")
    parser.add_argument("--workers", type=int, default=1, help="processes, each with its own Chromium (default 1)")
    parser.add_argument("--dpi", type=float, default=144.0, help="resolution of the PNG images (default 144)")
    parser.add_argument("--resume", action="store_true", help="continue an interrupted run in the same folder")
    parser.add_argument("--preview", action="store_true", help="also write preview.png, a grid of 12 pages")


_RENDERER = None
_START_ERROR: str | None = None


class BrowserStartError(RuntimeError):
    """Chromium could not be started in a worker (reported as one line, not a respawn loop)."""


def _init_worker() -> None:
    global _RENDERER, _START_ERROR
    from minuscule.synth.render import PageRenderer

    try:
        _RENDERER = PageRenderer()
    except Exception as exc:  # any launch failure; a raising pool initializer would respawn forever
        _START_ERROR = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return
    from multiprocessing import util

    # Pool workers that exit normally (close + join) shut their browser down.
    util.Finalize(_RENDERER, _RENDERER.close, exitpriority=10)


def _work(job):
    from minuscule.synth.pipeline import generate_page

    if _START_ERROR is not None:
        raise BrowserStartError(f"cannot start Chromium: {_START_ERROR}")
    cfg, index = job
    return generate_page(_RENDERER, cfg, index)


def _versions(browser_version: str | None) -> dict:
    import json
    import platform
    from importlib import metadata

    from minuscule import __version__
    from minuscule.browser import katex_dir

    out = {"minuscule": __version__, "python": platform.python_version()}
    for dist in ("faker", "pypdfium2", "pillow", "playwright", "numpy"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    out["katex"] = json.loads((katex_dir() / "package.json").read_text())["version"]
    out["chromium"] = browser_version
    return out


def _check(args: argparse.Namespace) -> None:
    if args.n < 1:
        raise InputError("--n", f"must be at least 1, got {args.n}")
    if not 0.0 <= args.degrade <= 1.0:
        raise InputError("--degrade", f"must be a probability in [0, 1], got {args.degrade}")
    if args.workers < 1:
        raise InputError("--workers", f"must be at least 1, got {args.workers}")
    if not 36 <= args.dpi <= 600:
        raise InputError("--dpi", f"must be between 36 and 600, got {args.dpi}")


def _preflight() -> None:
    """Fail in this process, with one line, before workers would each fail to start a browser."""
    from minuscule.browser import chromium_path, katex_dir

    chromium_path()
    katex_dir()
    try:
        import faker  # noqa: F401
        import playwright  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError(exc.name or "playwright", "eval") from None


def run(args: argparse.Namespace) -> int:
    from minuscule.synth.pipeline import SynthConfig, assemble, contact_sheet, load_sidecars, prepare_out

    try:
        _check(args)
        _preflight()
        cfg = SynthConfig(out=args.out, n=args.n, seed=args.seed, degrade=args.degrade, dpi=args.dpi)
        todo = prepare_out(cfg, args.resume)
        start = time.perf_counter()
        browser_version = _generate(cfg, todo, args.workers)
        seconds = time.perf_counter() - start
        sidecars = load_sidecars(cfg)
        manifest = assemble(cfg, sidecars, _versions(browser_version), seconds, len(todo))
        preview = contact_sheet(cfg, sidecars) if args.preview else None
    except (InputError, MissingExtraError, BrowserStartError) as exc:
        print(f"minuscule synth: {exc}", file=sys.stderr)
        return 2
    summary = (f"{manifest['pages']} pages ({manifest['dropped']} dropped, {manifest['degraded_copies']} degraded copies), "
               f"{manifest['tests_total']} tests {manifest['tests']}; tables and formulas on "
               f"{manifest['pages_with']['both_fraction']:.0%} of pages")
    rate = manifest["this_run"]["pages_per_second"]
    if rate:
        summary += f"; {rate:.2f} pages/s"
    print(summary + (f"; preview {preview}" if preview else ""), file=sys.stderr)
    return 0


def _generate(cfg, todo: list[int], workers: int) -> str | None:
    """Run the pages with a rich progress bar; returns the Chromium version string."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    if not todo:
        return None
    columns = (TextColumn("synth"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
               TimeElapsedColumn(), TimeRemainingColumn())
    start = time.perf_counter()
    with Progress(*columns, transient=False) as progress:
        task = progress.add_task("pages", total=len(todo), rate="")

        def advance(done: int) -> None:
            rate = done / max(time.perf_counter() - start, 1e-9)
            progress.update(task, completed=done, rate=f"{rate:.2f} pages/s")

        if workers == 1:
            from minuscule.synth.render import PageRenderer

            global _RENDERER
            try:
                _RENDERER = PageRenderer()
            except Exception as exc:
                raise BrowserStartError(f"cannot start Chromium: {(str(exc).strip().splitlines() or [type(exc).__name__])[0]}") from None
            try:
                for k, index in enumerate(todo, 1):
                    _work((cfg, index))
                    advance(k)
                return _RENDERER.browser_version
            finally:
                _RENDERER.close()
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        with ctx.Pool(processes=min(workers, len(todo)), initializer=_init_worker) as pool:
            for k, _ in enumerate(pool.imap_unordered(_work, [(cfg, i) for i in todo]), 1):
                advance(k)
            version = pool.apply(_browser_version)
            pool.close()
            pool.join()
    return version


def _browser_version() -> str:
    return _RENDERER.browser_version
