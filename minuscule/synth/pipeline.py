"""Generate a set of synthetic pages: per-page files and sidecars, then tests.jsonl, manifest.json, preview."""

from __future__ import annotations

import io
import json
import random
from dataclasses import asdict, dataclass
from pathlib import Path

from minuscule.atomic import atomic_write
from minuscule.errors import InputError

SIDECAR = ".json"


@dataclass(frozen=True)
class SynthConfig:
    out: Path
    n: int
    seed: int
    degrade: float = 0.0  # probability that a page also gets a degraded copy
    dpi: float = 144.0

    def run_params(self) -> dict:
        return {"seed": self.seed, "degrade": self.degrade, "dpi": self.dpi}


def page_id(index: int) -> str:
    return f"p{index:06d}"


def _png(image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def _image_pdf(image, dpi: float) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PDF", resolution=dpi)
    return buf.getvalue()


def _retarget(records: list[dict], old_id: str, new_id: str, pdf: str) -> list[dict]:
    out = []
    for r in records:
        r = dict(r)
        r["pdf"] = pdf
        r["id"] = new_id + r["id"][len(old_id):]
        out.append(r)
    return out


def generate_page(renderer, cfg: SynthConfig, index: int) -> dict:
    """Render, mine and self-check page `index`; write its files and finally its sidecar (the
    marker that the page is done). Returns the sidecar's content."""
    from minuscule.synth.degrade import degrade
    from minuscule.synth.mine import PageMiner
    from minuscule.synth.page import element_counts, page_seed, render_page
    from minuscule.synth.render import rasterise
    from minuscule.synth.selfcheck import keep_passing

    pid = page_id(index)
    pages = cfg.out / "pages"
    page, attempts = render_page(renderer, cfg.seed, index)
    if page is None:
        side = {"id": pid, "index": index, "dropped": True, "attempts": attempts}
        atomic_write(pages / f"{pid}{SIDECAR}", json.dumps(side).encode())
        return side
    pdf_rel = f"pages/{pid}.pdf"
    records = PageMiner(page, pid, pdf_rel, random.Random(page.spec.seed)).records()
    check = keep_passing(records, page.markdown)
    image = rasterise(page.pdf, cfg.dpi)
    atomic_write(pages / f"{pid}.pdf", page.pdf)
    atomic_write(pages / f"{pid}.png", _png(image))
    atomic_write(pages / f"{pid}.md", page.markdown.encode("utf-8"))
    rejected: dict[str, int] = {}
    for record, _ in check.rejected:
        rejected[record["type"]] = rejected.get(record["type"], 0) + 1
    side = {
        "id": pid, "index": index, "dropped": False, "attempts": attempts, "seed": page.spec.seed,
        "locale": page.spec.locale, "style": asdict(page.spec.style), "elements": element_counts(page),
        "tests": check.kept, "rejected": rejected, "degraded": None,
    }
    choose = random.Random(page_seed(cfg.seed, index, -1))
    if cfg.degrade > 0 and choose.random() < cfg.degrade:
        did = f"{pid}-d"
        result = degrade(image, page_seed(cfg.seed, index, -2))
        atomic_write(pages / f"{did}.png", _png(result.image))
        atomic_write(pages / f"{did}.pdf", _image_pdf(result.image, cfg.dpi))
        atomic_write(pages / f"{did}.md", page.markdown.encode("utf-8"))
        side["degraded"] = {"id": did, "ops": list(result.ops),
                            "tests": _retarget(check.kept, pid, did, f"pages/{did}.pdf")}
    atomic_write(pages / f"{pid}{SIDECAR}", json.dumps(side, ensure_ascii=False).encode("utf-8"))
    return side


def prepare_out(cfg: SynthConfig, resume: bool) -> list[int]:
    """Create the output folder, check a resumed run has the same parameters; return indices to do."""
    pages = cfg.out / "pages"
    run_file = cfg.out / "run.json"
    if cfg.out.exists() and not cfg.out.is_dir():
        raise InputError(str(cfg.out), "exists and is not a folder")
    if run_file.exists():
        try:
            previous = json.loads(run_file.read_text())
        except (OSError, json.JSONDecodeError):
            raise InputError(str(run_file), "unreadable; remove it or choose another --out") from None
        if not resume:
            raise InputError(str(cfg.out), "already holds a synth run; pass --resume or choose another --out")
        if previous != cfg.run_params():
            raise InputError(str(cfg.out), f"was made with {previous}, not {cfg.run_params()}; cannot resume")
    pages.mkdir(parents=True, exist_ok=True)
    atomic_write(run_file, json.dumps(cfg.run_params()).encode())
    return [i for i in range(cfg.n) if not (pages / f"{page_id(i)}{SIDECAR}").exists()]


def load_sidecars(cfg: SynthConfig) -> list[dict]:
    pages = cfg.out / "pages"
    return [json.loads((pages / f"{page_id(i)}{SIDECAR}").read_text(encoding="utf-8")) for i in range(cfg.n)]


def assemble(cfg: SynthConfig, sidecars: list[dict], versions: dict, seconds: float, done_now: int) -> dict:
    """Write tests.jsonl (page order; clean page then its degraded copy) and manifest.json."""
    lines: list[str] = []
    tests: dict[str, int] = {}
    rejected: dict[str, int] = {}
    elements: dict[str, int] = {}
    with_table = with_formula = both = degraded = dropped = 0
    for side in sidecars:
        if side["dropped"]:
            dropped += 1
            continue
        groups = [side["tests"]] + ([side["degraded"]["tests"]] if side["degraded"] else [])
        for group in groups:
            for record in group:
                lines.append(json.dumps(record, ensure_ascii=False))
        for record in side["tests"]:
            tests[record["type"]] = tests.get(record["type"], 0) + 1
        for kind, k in side["rejected"].items():
            rejected[kind] = rejected.get(kind, 0) + k
        for kind, k in side["elements"].items():
            elements[kind] = elements.get(kind, 0) + k
        t, f = side["elements"].get("table", 0) > 0, side["elements"].get("formula", 0) > 0
        with_table += t
        with_formula += f
        both += t and f
        degraded += side["degraded"] is not None
    atomic_write(cfg.out / "tests.jsonl", ("\n".join(lines) + "\n").encode("utf-8"))
    n_pages = len(sidecars) - dropped
    manifest = {
        "generator": "minuscule synth", "seed": cfg.seed, "n": cfg.n, "degrade": cfg.degrade, "dpi": cfg.dpi,
        "versions": versions, "pages": n_pages, "dropped": dropped, "degraded_copies": degraded,
        "elements": dict(sorted(elements.items())),
        "pages_with": {"table": with_table, "formula": with_formula, "both": both,
                       "both_fraction": round(both / n_pages, 4) if n_pages else 0.0},
        "tests": dict(sorted(tests.items())), "tests_total": sum(tests.values()),
        "tests_rejected_by_selfcheck": dict(sorted(rejected.items())),
        "tests_of_degraded_copies": sum(len(s["degraded"]["tests"]) for s in sidecars if not s["dropped"] and s["degraded"]),
        "this_run": {"pages_rendered": done_now, "seconds": round(seconds, 2),
                     "pages_per_second": round(done_now / seconds, 3) if seconds > 0 and done_now else None},
    }
    atomic_write(cfg.out / "manifest.json", (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode())
    return manifest


def contact_sheet(cfg: SynthConfig, sidecars: list[dict], count: int = 12, cols: int = 4) -> Path | None:
    """A PNG grid of the first `count` page images (degraded copies next to their clean page)."""
    from PIL import Image, ImageDraw

    names: list[str] = []
    for side in sidecars:
        if side["dropped"]:
            continue
        names.append(side["id"])
        if side["degraded"]:
            names.append(side["degraded"]["id"])
    names = names[:count]
    if not names:
        return None
    cell_w, cell_h, label = 420, 560, 22
    rows = (len(names) + cols - 1) // cols
    sheet = Image.new("RGB", (cols * cell_w, rows * (cell_h + label)), (200, 200, 200))
    draw = ImageDraw.Draw(sheet)
    for k, name in enumerate(names):
        with Image.open(cfg.out / "pages" / f"{name}.png") as im:
            im = im.convert("RGB")
            im.thumbnail((cell_w - 12, cell_h - 12))
            x = (k % cols) * cell_w + (cell_w - im.width) // 2
            y = (k // cols) * (cell_h + label) + 6
            sheet.paste(im, (x, y))
            draw.text(((k % cols) * cell_w + 8, y + cell_h - 4), name, fill=(0, 0, 0))
    path = cfg.out / "preview.png"
    atomic_write(path, _png(sheet))
    return path
