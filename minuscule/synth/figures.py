"""Text-free SVG charts for figure blocks: the page shows a picture, the reference keeps only its caption."""

from __future__ import annotations

import random

PALETTES = (("#4c72b0", "#dd8452", "#55a868"), ("#333333", "#888888", "#bbbbbb"), ("#1b9e77", "#d95f02", "#7570b3"))


def svg_chart(rng: random.Random) -> str:
    """A bar, line or scatter chart with axes and ticks but no text (text would be on the page but
    not in the reference, which is how design.md treats pictures)."""
    w, h = 400, rng.randint(150, 260)
    colors = rng.choice(PALETTES)
    x0, y0, x1, y1 = 30, 10, w - 10, h - 25
    parts = [f'<line x1="{x0}" y1="{y1}" x2="{x1}" y2="{y1}" stroke="#000" stroke-width="1.2"/>',
             f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="#000" stroke-width="1.2"/>']
    for k in range(1, 6):
        y = y1 - k * (y1 - y0) / 5
        parts.append(f'<line x1="{x0 - 4}" y1="{y:.1f}" x2="{x0}" y2="{y:.1f}" stroke="#000"/>')
        if rng.random() < 0.5:
            parts.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x1}" y2="{y:.1f}" stroke="#ddd" stroke-width="0.6"/>')
    kind = rng.choice(["bar", "line", "scatter"])
    n = rng.randint(5, 14)
    step = (x1 - x0) / (n + 1)
    if kind == "bar":
        series = rng.randint(1, 2)
        bw = step * 0.8 / series
        for i in range(n):
            for s in range(series):
                v = rng.uniform(0.1, 0.95) * (y1 - y0)
                x = x0 + step * (i + 0.6) + s * bw
                parts.append(f'<rect x="{x:.1f}" y="{y1 - v:.1f}" width="{bw:.1f}" height="{v:.1f}" fill="{colors[s]}"/>')
    elif kind == "line":
        for s in range(rng.randint(1, 3)):
            v = rng.uniform(0.2, 0.8)
            pts = []
            for i in range(n):
                v = min(0.95, max(0.05, v + rng.uniform(-0.15, 0.15)))
                pts.append(f"{x0 + step * (i + 1):.1f},{y1 - v * (y1 - y0):.1f}")
            parts.append(f'<polyline points="{" ".join(pts)}" fill="none" stroke="{colors[s]}" stroke-width="1.8"/>')
    else:
        for _ in range(n * 4):
            x = rng.uniform(x0 + 5, x1 - 5)
            y = rng.uniform(y0 + 5, y1 - 5)
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.4" fill="{rng.choice(colors)}"/>')
    for i in range(n):
        x = x0 + step * (i + 1)
        parts.append(f'<line x1="{x:.1f}" y1="{y1}" x2="{x:.1f}" y2="{y1 + 4}" stroke="#000"/>')
    return (f'<svg viewBox="0 0 {w} {h}" width="100%" preserveAspectRatio="xMidYMid meet" '
            f'xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg>')
