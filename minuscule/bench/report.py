"""Markdown report of a benchmark result: score table, per-category bar chart (PNG), failed tests."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from minuscule.atomic import atomic_write

_BAR = (52, 101, 164)
_GRID = (225, 225, 225)


def _font(size: int):
    for name in ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "LiberationSans-Regular.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default()


def bar_chart(scores: dict[str, float], title: str, width: int = 900) -> Image.Image:
    """Horizontal bars, one per category, 0-100 %, value printed at the bar's end."""
    font, bold = _font(15), _font(17)
    row, top, left, right = 30, 46, 210, 70
    height = top + row * max(1, len(scores)) + 30
    img = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(img)
    draw.text((12, 12), title, fill="black", font=bold)
    span = width - left - right
    for pct in range(0, 101, 20):
        x = left + span * pct / 100
        draw.line([(x, top - 4), (x, height - 26)], fill=_GRID)
        draw.text((x - 10, height - 22), f"{pct}%", fill=(90, 90, 90), font=font)
    for i, (name, value) in enumerate(scores.items()):
        y = top + i * row
        label = name if len(name) <= 26 else name[:25] + "…"
        draw.text((12, y + 5), label, fill="black", font=font)
        x1 = left + span * max(0.0, min(1.0, value))
        draw.rectangle([left, y + 4, max(left + 1, x1), y + row - 6], fill=_BAR)
        draw.text((x1 + 6, y + 5), f"{value * 100:.1f}", fill="black", font=font)
    return img


def write_report(result: dict[str, Any], path: Path, max_failed: int = 500) -> None:
    """Write `path` (Markdown) and `<path stem>.png` (category chart) beside it, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    chart = path.with_suffix(".png")
    scores = {"Overall": result["overall"], **result["categories"]}
    img = bar_chart(scores, f"olmOCR-Bench: {result['overall'] * 100:.1f}% overall")
    png = io.BytesIO()
    img.save(png, format="PNG")
    atomic_write(chart, png.getvalue())

    lo, hi = result["ci95"]
    inputs = result.get("inputs", {})
    lines = [
        "# olmOCR-Bench report",
        "",
        f"Predictions: `{inputs.get('pred')}`" + (f" (engine `{inputs['engine']}`)" if inputs.get("engine") else ""),
        f"Data: `{inputs.get('data')}`, {result['tests']} tests",
        "",
        f"**Overall: {result['overall'] * 100:.1f}%** (95% bootstrap interval {lo * 100:.1f}–{hi * 100:.1f}; "
        "mean of the category pass rates)",
        "",
        f"![per-category scores]({chart.name})",
        "",
        "| category | pass rate | passed / tests |",
        "|---|---:|---:|",
    ]
    counts = result.get("category_counts", {})
    for name, score in result["categories"].items():
        c = counts.get(name, {})
        lines.append(f"| {name} | {score * 100:.1f}% | {c.get('passed', '?')} / {c.get('tests', '?')} |")
    if result.get("types"):
        lines += ["", "Mean pass fraction by test type (over repeats): " + ", ".join(
            f"{t} {v * 100:.1f}%" for t, v in result["types"].items())]
    missing = result.get("missing_pages") or []
    if missing:
        lines += ["", f"{len(missing)} page(s) had no prediction file and count as failed: "
                  + ", ".join(f"`{m}`" for m in missing[:20]) + (" …" if len(missing) > 20 else "")]
    failed = result.get("failed", [])
    lines += ["", f"## Failed tests ({len(failed)})", ""]
    if failed:
        lines += ["| test | category | type | page | why |", "|---|---|---|---|---|"]
        for f in failed[:max_failed]:
            why = str(f["explanation"]).replace("|", "\\|").replace("\n", " ")
            lines.append(f"| `{f['id']}` | {f['category']} | {f['type']} | `{f['pdf']}` p{f['page']} | {why} |")
        if len(failed) > max_failed:
            lines.append(f"| … | | | | {len(failed) - max_failed} more in the JSON |")
    atomic_write(path, "\n".join(lines) + "\n")
