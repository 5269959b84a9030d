"""Split a predicted Markdown page into text, display-formula and table items (v1.6 rules)."""

from __future__ import annotations

import re
from collections import defaultdict

from minuscule.bench.omnidoc import table_extract
from minuscule.bench.omnidoc.normalize import INLINE_MATH_RE, latex_to_text

_DISPLAY_RE = re.compile(r"\$\$(.*?)\$\$|\\\[(.*?)\\\]|\$(.*?)\$|\\\((.*?)\\\)", re.DOTALL)
_DOLLAR_RE = re.compile(r"\$\$(.*?)\$\$|\$(.*?)\$|\\\((.*?)\\\)", re.DOTALL)
_IMAGE_RE = re.compile(r"!\[(.*?)\]\((.*?)\)")
_CODE_RE = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)
_FORMULA_TOKEN_RE = re.compile(
    r"(\\frac|\\sqrt|\\sum|\\int|\\prod|\\times|\\div|\\square|\\cdots|\\left|\\right|"
    r"\\approx|\\xrightarrow|\\rightarrow|\\longrightarrow|"
    r"=|<|>|≤|≥|≈|÷|×|±|∑|∫|√|→|\^|_|□|△|…|%|/|\+|-)")
_CJK_RE = re.compile(r"[\u4e00-\u9fff]")
_WORD4_RE = re.compile(r"[A-Za-z]{4,}")
_SPACERS = r"(?:\\qquad|\\quad|\\enspace|\\,|\\;|\\:)"
_LEAD_NUMBER_RE = re.compile(
    r"^\s*(?P<prefix>(?:\\left\(\s*[0-9IVXivx]+\s*\\right\)|\(\s*[0-9IVXivx]+\s*\)))\s*(?:" + _SPACERS + r"\s*)*")
_TRAILING_CAPTION_RES = (
    re.compile(r"(?P<sep>" + _SPACERS + r"\s*)(?P<caption>\\text\s*\{[^{}]*\}\.?)\s*$"),
    re.compile(r"(?P<sep>" + _SPACERS + r"\s*)(?P<caption>\([^)]*[A-Za-z][^)]*\)\.?)\s*$"),
)


def _blank(content: str, start: int, end: int) -> str:
    """Replace a span by spaces so later offsets still point into the original page."""
    return content[:start] + " " * (end - start) + content[end:]


def _unwrap_all_math(text: str) -> str:
    for pattern in (r"\$\$(.*?)\$\$", r"\\\[(.*?)\\\]", r"\\\((.*?)\\\)", r"\$(.*?)\$"):
        text = re.sub(pattern, lambda m: f" {m.group(1)} ", text, flags=re.DOTALL)
    return text


def formula_like(text: str) -> bool:
    """Short text that is mostly arithmetic/relations: a candidate for a display formula written as text."""
    text = " ".join(str(text or "").split())
    if not text or len(text) > 220:
        return False
    bare = _unwrap_all_math(text)
    compact = re.sub(r"\s+", "", bare)
    if not compact:
        return False
    ops = len(_FORMULA_TOKEN_RE.findall(bare))
    digits = len(re.findall(r"\d", bare))
    inline = len(list(INLINE_MATH_RE.finditer(text))) + len(
        list(re.finditer(r"\$\$(.*?)\$\$|\\\[(.*?)\\\]", text, re.DOTALL)))
    cjk = len(_CJK_RE.findall(bare))
    words = len(_WORD4_RE.findall(bare))
    residual = re.sub(r"(\\[A-Za-z]+|[=<>≤≥÷×±∑∫√\^_□△…%/()+\-])", " ", bare)
    residual = re.sub(r"\s+", "", re.sub(r"\d", " ", residual))
    if inline > 0 and len(residual) <= 18 and ops >= 1:
        return True
    if ("□" in bare or "\\square" in bare) and ops >= 1 and words <= 1 and len(compact) <= 80:
        return True
    if ("\\xrightarrow" in bare or "\\longrightarrow" in bare or "→" in bare) and cjk <= 24 and len(compact) <= 120:
        return True
    if ops >= 2 and digits >= 1 and words <= 2 and cjk <= 12 and len(compact) <= 100:
        return True
    return ops >= 3 and words == 0 and cjk <= 18 and len(compact) <= 80


_SANITIZE = (("……", " \\cdots \\cdots "), ("…", " \\cdots "), ("×", " \\times "), ("÷", " \\div "),
             ("≤", " \\leq "), ("≥", " \\geq "), ("≠", " \\neq "), ("≈", " \\approx "), ("□", " \\square "),
             ("△", " \\triangle "), ("（", "("), ("）", ")"), ("［", "["), ("］", "]"), ("｛", "{"), ("｝", "}"))


def sanitize_formula(text: str) -> str:
    """Text written as a formula → display LaTeX `\\[ … \\]` (symbols to macros, % and & escaped)."""
    text = " ".join(str(text or "").replace("\u3000", " ").split())
    if not text:
        return ""
    text = _unwrap_all_math(text)
    for src, dst in _SANITIZE:
        text = text.replace(src, dst)
    arrow = re.search(r"(?P<lhs>.*?)\\xrightarrow\s*\{(?P<label>[^{}]+)\}(?P<rhs>.*)", text)
    if arrow:
        lhs, label, rhs = arrow.group("lhs").strip(), arrow.group("label").strip(), arrow.group("rhs").strip()
        if label and "\\" not in label:
            label = f"\\text{{{label}}}"
        if rhs.endswith("氧化还原反应"):
            text = f"{lhs} \\underset{{氧化还原反应}}{{\\xrightarrow{{{label}}}}} {rhs[:-6].strip()}".strip()
        else:
            text = f"{lhs} \\xrightarrow{{{label}}} {rhs}".strip()
    text = re.sub(r"(?<!\\)%", r"\\%", text)
    text = re.sub(r"(?<!\\)&", r"\\&", text)
    text = re.sub(r"\s+", " ", text).strip()
    if not text:
        return ""
    if text.startswith(("\\begin{", "$$", "\\[")):
        return text
    return "\\[ " + text + " \\]"


def _rescue(items: list[dict], text: str, position: list[int], fine: str) -> None:
    if not formula_like(text):
        return
    content = sanitize_formula(text)
    if not content:
        return
    arrow = "\\xrightarrow" in content or "\\longrightarrow" in content
    items.append({"category_type": "equation_isolated" if arrow else "formula_rescue", "position": position,
                  "content": content, "fine_category_type": fine})


def _table_cell_rescues(table: str, position: list[int]) -> list[dict]:
    from bs4 import BeautifulSoup

    out, cursor = [], max(int(position[0]), 0)
    for cell in BeautifulSoup(table, "html.parser").find_all(["td", "th"]):
        text = " ".join(cell.get_text(separator=" ").split())
        if not text or len(text) > 120 or not formula_like(text):
            continue
        digits = len(re.findall(r"\d", text))
        fraction = "\\frac" in text or bool(re.search(r"\d+\s*/\s*\d+", text))
        ops = sum(t in text for t in ("=", "+", "-", "×", "÷", "/", "≈", "\\times", "\\div", "\\approx"))
        if ops < 1 or not (digits >= 2 or fraction):
            continue
        content = sanitize_formula(text)
        if not content:
            continue
        end = cursor + max(len(text), 1)
        out.append({"category_type": "equation_isolated", "position": [cursor, end], "content": content,
                    "fine_category_type": "table_formula_rescue"})
        cursor = end + 1
    return out


def _unwrap_envelope(text: str) -> tuple[str, str, str]:
    text = " ".join(str(text or "").split())
    for left, right in (("\\[", "\\]"), ("\\(", "\\)"), ("$$", "$$"), ("$", "$")):
        if text.startswith(left) and text.endswith(right) and len(text) >= len(left) + len(right):
            return left, right, text[len(left):len(text) - len(right)].strip()
    return "", "", text


def _wrap_envelope(inner: str, left: str, right: str) -> str:
    inner = inner.strip()
    if not inner:
        return ""
    return f"{left} {inner} {right}" if left and right else inner


def _plain(text: str) -> str:
    text = str(text or "").strip()
    if not text:
        return ""
    return re.sub(r"\s+", " ", latex_to_text(text).replace("\xa0", " ")).strip()


def _caption_like(text: str) -> bool:
    raw = str(text or "").strip()
    plain = _plain(raw)
    if not plain:
        return False
    letters = len(re.findall(r"[A-Za-z]", plain))
    words = re.findall(r"[A-Za-z]{2,}", plain)
    maths = len(re.findall(r"(\\[A-Za-z]+|[=<>≤≥÷×±∑∫√_^{}])", raw))
    digits = len(re.findall(r"\d", plain))
    core = plain[1:-1].strip() if plain.startswith("(") and plain.endswith(")") else plain
    if re.fullmatch(r"[0-9IVXivx]+", core.replace(" ", "")):
        return False
    return (letters >= 10 and len(words) >= 2 and maths <= 6) or (letters >= 14 and digits == 0 and maths <= 3)


def _has_margin_text(formula: str) -> bool:
    _, _, inner = _unwrap_envelope(formula)
    if not inner:
        return False
    if _LEAD_NUMBER_RE.match(inner):
        return True
    return any((m := r.search(inner)) and _caption_like(m.group("caption")) for r in _TRAILING_CAPTION_RES)


def _margin_item(text: str, position: list[int]) -> dict | None:
    plain = _plain(text)
    if not plain:
        return None
    return {"category_type": "text_all", "position": position, "content": plain,
            "fine_category_type": "equation_caption"}


def _split_margin_text(formula: str, position: list[int]) -> tuple[str, list[dict]]:
    """Equation numbers / trailing captions written inside a display formula become text items."""
    compact = " ".join(str(formula or "").split())
    left, right, inner = _unwrap_envelope(compact)
    if not inner:
        return compact, []
    extra, work = [], inner
    lead = _LEAD_NUMBER_RE.match(work)
    if lead:
        prefix = lead.group("prefix").strip()
        item = _margin_item(prefix, [position[0], min(position[1], position[0] + max(len(prefix), 1))])
        if item:
            extra.append(item)
        work = work[lead.end():].strip()
    while work:
        for pattern in _TRAILING_CAPTION_RES:
            m = pattern.search(work)
            if not m or not _caption_like(m.group("caption").strip()):
                continue
            caption = m.group("caption").strip()
            item = _margin_item(caption, [max(position[0], position[1] - max(len(caption), 1)), position[1]])
            if item:
                extra.append(item)
            work = work[:m.start("sep")].rstrip()
            break
        else:
            break
    work = re.sub(r"(?:" + _SPACERS + r"\s*)+$", "", work).strip()
    if not work:
        return compact, []
    return _wrap_envelope(work, left, right), extra


def _arithmetic_segment(text: str) -> bool:
    text = " ".join(str(text or "").split())
    if not text or len(text) > 160 or "\\begin{" in text or "\\end{" in text:
        return False
    if re.search(r"\\(mathbf|left|right|cdot|lambda|Gamma|varGamma|text|matrix|pmatrix|bmatrix)", text):
        return False
    digits = len(re.findall(r"\d", text))
    fraction = "\\frac" in text or bool(re.search(r"\d+\s*/\s*\d+", text))
    relations = sum(t in text for t in ("=", "\\approx", "≈", "\\neq", "≠", "\\leq", "≤", "\\geq", "≥"))
    return relations >= 1 and (digits >= 2 or fraction)


def _split_compound(formula: str, position: list[int]) -> list[dict]:
    """`a = 1 \\quad b = 2` written as one display formula → one item per arithmetic segment."""
    left, right, inner = _unwrap_envelope(formula)
    if not inner or ("\\quad" not in inner and "\\qquad" not in inner):
        return []
    segments = [s.strip() for s in re.split(r"\s*(?:\\qquad|\\quad)\s*", inner) if s.strip()]
    if len(segments) <= 1 or not all(_arithmetic_segment(s) for s in segments):
        return []
    span = max((max(position[1] - position[0], len(segments))) // len(segments), 1)
    out = []
    for k, seg in enumerate(segments):
        start = position[0] + k * span
        end = position[1] if k == len(segments) - 1 else min(position[1], start + span)
        out.append({"category_type": "equation_isolated", "position": [start, end],
                    "content": _wrap_envelope(seg, left, right)})
    return out


def _add_display(items: list[dict], formula: str, position: list[int], fine: str | None = None) -> None:
    formula, extra = _split_margin_text(formula, position) if _has_margin_text(formula) else (formula, [])
    parts = _split_compound(formula, position) or [
        {"category_type": "equation_isolated", "position": position, "content": formula}]
    for part in parts:
        if fine:
            part["fine_category_type"] = fine
        items.append(part)
    items.extend(extra)


def _html_fragment_text(text: str) -> str:
    """A text block that is a `<div>`/`<dir>` fragment → its text with line breaks kept."""
    stripped = text.strip()
    if not stripped or "<table" in stripped.lower() or not re.match(r"^<(div|dir)\b", stripped, re.IGNORECASE):
        return stripped
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(stripped, "html.parser")
    for tag in soup.find_all(["style", "script"]):
        tag.decompose()
    for tag in soup.find_all(["span", "font", "b", "strong", "i", "em", "u", "a", "sup", "sub"]):
        tag.unwrap()
    for br in soup.find_all("br"):
        br.replace_with("\n")
    for block in soup.find_all(["div", "dir", "p", "li"]):
        if not block.contents or block.contents[-1] != "\n":
            block.append("\n")
    out = re.sub(r"[ \t]*\n[ \t]*", "\n", soup.get_text(separator="").replace("\xa0", " "))
    return "\n".join(ln.strip() for ln in out.split("\n") if ln.strip()).strip() or stripped


_IMAGE_DESCRIPTION_PREFIXES = ("the image ", "the image displays", "the figure ", "the figure shows", "the diagram ",
                               "diagram:", "[diagram:", "[image:", "qr code ")


def _strip_math_in_image_descriptions(content: str) -> str:
    blocks = re.split(r"(\n\s*\n)", content)
    for k in range(0, len(blocks), 2):
        compact = " ".join(blocks[k].split()).strip().lower()
        if len(compact) >= 24 and compact.startswith(_IMAGE_DESCRIPTION_PREFIXES):
            b = re.sub(r"\\\((.*?)\\\)", lambda m: m.group(1), blocks[k], flags=re.DOTALL)
            blocks[k] = re.sub(r"\$(.*?)\$", lambda m: m.group(1), b, flags=re.DOTALL)
    return "".join(blocks)


_STRONG_MATH = ("=", "<", ">", "≤", "≥", "≈", "≠", "^", "+", "-", "/", "\\cdot", "\\frac", "\\sqrt", "\\sum", "\\int",
                "\\times", "\\div", "\\approx", "\\neq", "\\leq", "\\geq", "\\xrightarrow", "\\longrightarrow")


def _short_inline_label(item: dict) -> bool:
    """Inline math that is only a label (`$x$`, `$A_1$`) is not worth a formula slot."""
    if item.get("category_type") != "equation_isolated" or item.get("fine_category_type") != "equation_inline":
        return False
    raw = str(item.get("content", "") or "").strip()
    if not raw:
        return False
    core = _unwrap_all_math(raw)
    compact = re.sub(r"\s+", "", core)
    if compact.startswith(("\\xrightarrow", "\\longrightarrow")):
        return True
    if not compact or len(compact) > 24 or any(t in core for t in _STRONG_MATH):
        return False
    label = compact or re.sub(r"\s+", "", _plain(raw))
    if not label:
        return False
    return bool(re.fullmatch(r"[A-Za-z0-9._,-]+", label) or re.fullmatch(r"[A-Za-z][A-Za-z0-9_.,-]*", label)
                or re.fullmatch(r"[A-Za-z0-9]+Oy", label) or re.fullmatch(r"[ΓγλμνxyzuvwMNOabcABC0-9._,-]+", label))


def remove_fences(content: str) -> str:
    for lang in ("markdown", "html", "latex"):
        content = re.sub(rf"^```{lang}\n?", "", content, flags=re.MULTILINE)
    return re.sub(r"```\n?$", "", content, flags=re.MULTILINE)


def split_markdown(content: str) -> dict[str, list[dict]]:
    """Items by category: text_all, equation_isolated, html_table, latex_table, formula_rescue.

    Each item has `position` [start, end] (character offsets into the page; the published text
    offsets drift by the separator length and that drift is kept) and `content`.
    """
    items: list[dict] = []
    for m in _IMAGE_RE.finditer(content):
        _rescue(items, (m.group(1) or "").strip(), [m.start(), m.end()], "image_formula")
    content = re.sub(r"!\[.*?\]\(.*?\)", lambda m: " " * len(m.group(0)), content)
    content = remove_fences(content)
    content = re.sub(r" {4,}", "    ", re.sub(r"_{4,}", "____", content))
    for tag in ("<html>", "</html>", "<body>", "</body>"):
        content = content.replace(tag, "")
    content = _strip_math_in_image_descriptions(content)

    # LaTeX tables: without a LaTeX→HTML converter they become empty tables (as in a run without latexmlc).
    for start, end in table_extract.latex_tables(content):
        end = start + len(content[start:end])
        items.append({"category_type": "latex_table", "position": [start, end], "content": content[start:end],
                      "fine_category_type": "latex_table"})
        content = _blank(content, start, end)

    for start, end in table_extract.html_tables(content):
        table = content[start:end]
        items.append({"category_type": "html_table", "position": [start, end], "content": table})
        items.extend(_table_cell_rescues(table, [start, end]))
        content = _blank(content, start, end)

    for m in _DISPLAY_RE.finditer(content):
        if not m.group(0):
            continue
        line = " ".join(m.group(0).strip().split("\n"))
        position = [m.start(), m.end()]
        sub = _DOLLAR_RE.search(line)
        if sub is None:
            content = _blank(content, *position)
            _add_display(items, line, position)
        elif sub.group(1):
            content = _blank(content, *position)
            _add_display(items, _DOLLAR_RE.sub(r"\\[\1\\]", line), position)
        else:  # inline math: a formula candidate that stays in the text as well
            _add_display(items, _DOLLAR_RE.sub(r"\\[\2\3\\]", line), position, fine="equation_inline")

    if len(table_extract.MD_ROW_RE.findall(content + "\n")) >= 2:
        content = table_extract.markdown_tables_to_html(content)
        for m in re.finditer(r"(<table.*?</table>)", content, re.DOTALL):
            table = m.group(0).strip()
            items.append({"category_type": "html_table", "position": [m.start(), m.end()], "content": table,
                          "fine_category_type": "md2html_table"})
            items.extend(_table_cell_rescues(table, [m.start(), m.end()]))
            content = _blank(content, m.start(), m.end())

    for m in _CODE_RE.finditer(content):
        items.append({"category_type": "text_all", "position": [m.start(), m.end()], "content": m.group(2).strip(),
                      "language": m.group(1), "fine_category_type": "code"})
        content = _blank(content, m.start(), m.end())

    content = re.sub(r"\\title\{(.*?)\}", r"\1", content)
    content = re.sub(r"\\title\s*\{\s*(.*?)\s*\}", r"\1", content, flags=re.DOTALL)
    content = re.sub(r"\\text\s*\{\s*(.*?)\s*\}", r"\1", content, flags=re.DOTALL)
    content = re.sub(r"\\section\*?\{(.*?)\}", r"\1", content)
    content = re.sub(r"\\section\*?\{\s*(.*?)\s*\}", r"\1", content, flags=re.DOTALL)

    pieces = content.split("\n\n")
    if len(pieces) == 1:
        pieces = content.split("\n")
    offset = 0
    for piece in pieces:
        position = [offset, offset + len(piece)]
        offset += len(piece)  # the scorer does not count the separator; positions drift on purpose
        text = "\n".join(ln.strip() for ln in piece.strip().strip("\n").split("\n") if ln.strip())
        text = _html_fragment_text(text).strip()
        if text:
            items.append({"category_type": "text_all", "position": position, "content": text,
                          "fine_category_type": "text_block"})
            _rescue(items, text, position, "text_formula")

    out: dict[str, list[dict]] = defaultdict(list)
    for item in sorted(items, key=lambda it: it["position"][0]):
        if not _short_inline_label(item):
            out[item["category_type"]].append(item)
    return out
