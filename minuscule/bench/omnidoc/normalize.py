"""OmniDocBench v1.6 string normalisation: text, display formulas and HTML tables."""

from __future__ import annotations

import html
import logging
import re
import unicodedata

# Inline math as the scorer sees it inside text blocks: `$...$` or `\(...\)`, never across lines.
INLINE_MATH_RE = re.compile(r"\$(.*?)\$|\\\((.*?)\\\)")

_CIRCLED = {chr(0x2460 + i): str(i + 1) for i in range(20)}
_CIRCLED.update({chr(0x24D0 + i): chr(ord("a") + i) for i in range(26)})
_CIRCLED.update({chr(0x24B6 + i): chr(ord("A") + i) for i in range(26)})
_TEXTCIRCLED_RE = re.compile(r"\\textcircled\s*\{\s*([^{}]+?)\s*\}")


def uncircle(text: str) -> str:
    """①→1, ⓐ→a, \\textcircled{x}→x, so that both sides agree whatever the notation."""
    text = _TEXTCIRCLED_RE.sub(lambda m: m.group(1).strip(), str(text))
    return "".join(_CIRCLED.get(ch, ch) for ch in text)


# --- LaTeX → Unicode text (pylatexenc), guarded like the published scorer -------------------

_ENV_RE = re.compile(r"\\(begin|end)\{([^{}]+)\}")
_LATEX_SIGNAL_RE = re.compile(r"\\[A-Za-z]+|[_^{}$]|\\[\[\]()]]|&|%|#")
_WORD3_RE = re.compile(r"[A-Za-z]{3,}")
_COMMAND_RE = re.compile(r"\\[A-Za-z]+")


def _plain_prose(s: str) -> bool:
    if len(s) < 32:
        return False
    if len(_LATEX_SIGNAL_RE.findall(s)) > 2:
        return False
    if any(ch in s for ch in "{}$^_"):
        return False
    if any(tok in s for tok in (r"\frac", r"\sqrt", r"\left", r"\right", r"\begin", r"\end",
                                 r"\sum", r"\int", r"\alpha", r"\beta")):
        return False
    return len(_WORD3_RE.findall(s)) >= 6 and s.count(" ") >= 5


def _weak_latex(s: str, kind: str) -> bool:
    if s in {"\\", "\\\\"}:
        return True
    commands = len(_COMMAND_RE.findall(s))
    words = len(_WORD3_RE.findall(s))
    signals = sum(ch in "{}$^_=&%#" for ch in s)
    if s.endswith("\\") and not s.endswith("\\\\") and commands == 0:
        return True
    if "\\" in s and commands == 0 and signals == 0:
        return True
    if kind == "formula" and words >= 2 and commands == 0 and signals <= 1:
        return True
    if kind == "formula" and words >= 4 and commands <= 1 and signals <= 2:
        return True
    return False


def _braces_balanced(s: str) -> bool:
    depth, i = 0, 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s) and s[i + 1] in "{}[]()":
            i += 2
            continue
        if s[i] == "{":
            depth += 1
        elif s[i] == "}":
            depth -= 1
            if depth < 0:
                return False
        i += 1
    return depth == 0


def _envs_balanced(s: str) -> bool:
    stack: list[str] = []
    for m in _ENV_RE.finditer(s):
        if m.group(1) == "begin":
            stack.append(m.group(2))
        elif not stack or stack.pop() != m.group(2):
            return False
    return not stack


def bad_latex(s: str, kind: str = "formula") -> bool:
    """Input pylatexenc would choke on (or the scorer refuses): unbalanced braces/envs/delimiters."""
    s = s.strip()
    if not s:
        return False
    if len(s) > 8000 or not _braces_balanced(s) or not _envs_balanced(s):
        return True
    if kind == "formula":
        if len(re.findall(r"\\left\b", s)) != len(re.findall(r"\\right\b", s)):
            return True
        if s.count("\\(") != s.count("\\)") or s.count("\\[") != s.count("\\]"):
            return True
        if len(re.findall(r"(?<!\\)\$", s)) % 2:
            return True
    return False


def latex_to_text(latex: str, kind: str = "formula") -> str:
    """Unicode rendering of a LaTeX fragment; the input itself whenever the scorer would not convert."""
    s = str(latex or "").strip()
    if not s:
        return latex
    if "\\" not in s and "{" not in s and "}" not in s and "$" not in s:
        return s
    if _plain_prose(s) or _weak_latex(s, kind) or bad_latex(s, kind):
        return latex
    from pylatexenc.latex2text import LatexNodes2Text

    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)  # pylatexenc warns on every unknown macro
    try:
        return LatexNodes2Text().latex_to_text(s)
    except Exception:
        return latex
    finally:
        logging.disable(previous)


def _skip_inline(latex: str) -> bool:
    latex = latex.strip()
    if not latex:
        return False
    if len(latex) > 128:
        return True
    if any(t in latex for t in (r"\begin{", r"\end{", r"\array", r"\matrix", r"\tabular", r"\cases",
                                r"\align", "\\\\", "&")):
        return True
    return latex.count("{") != latex.count("}")


def textblock_to_unicode(text: str) -> str:
    """Replace inline formulas that carry ^, _ or a macro by their Unicode rendering."""
    text = uncircle(text)
    replacements = []
    for m in INLINE_MATH_RE.finditer(text):
        content = m.group(1) if m.group(1) is not None else m.group(2)
        clean = re.sub(r"\\([\\_&%^])", "", content)
        if not any(ch in clean for ch in "\\^_"):
            continue
        if clean.endswith("\\"):
            clean += " "
        if _skip_inline(clean):
            continue
        replacements.append((m.start(), m.end(), latex_to_text(clean)))
    for start, end, rendered in reversed(replacements):
        text = text[:start] + rendered.strip() + text[end:]
    return text


def clean_string(text: str) -> str:
    """Keep only word characters and CJK: whitespace and punctuation never count."""
    text = uncircle(text)
    for junk in ("\\t", "\\n", "\t", "\n", "/t", "/n"):
        text = text.replace(junk, "")
    return re.sub(r"[^\w\u4e00-\u9fff]", "", text)


def normalized_text(text: str) -> str:
    return clean_string(textblock_to_unicode(text))


def text_with_normalized_formulas(text: str) -> str:
    """Text whose inline formulas are replaced by their normalised LaTeX (used by one fallback)."""
    parts = []
    for m in INLINE_MATH_RE.finditer(text):
        content = m.group(1) if m.group(1) is not None else m.group(2)
        parts.append((m.start(), m.end(), normalized_formula(content)))
    for start, end, norm in reversed(parts):
        text = text[:start] + norm.strip() + text[end:]
    return text


# --- formulas ------------------------------------------------------------------------------

_DELIMS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))


def strip_formula_delimiters(text: str) -> str:
    if not isinstance(text, str):
        return ""
    text = text.strip().strip("\n")
    changed = True
    while text and changed:
        changed = False
        for left, right in _DELIMS:
            if text.startswith(left) and text.endswith(right) and len(text) >= len(left) + len(right):
                text = text[len(left):len(text) - len(right)].strip()
                changed = True
                break
    return text


def _balanced_group_end(text: str, open_index: int) -> int:
    """Index just past the group opened at `open_index` ('{'), or -1 when it never closes."""
    depth, i = 1, open_index + 1
    while i < len(text) and depth:
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
        i += 1
    return i if depth == 0 else -1


def _drop_command_group(text: str, command: str) -> str:
    """Remove `command{...}` (balanced); an unclosed one loses only its name."""
    token = command + "{"
    while True:
        start = text.find(token)
        if start < 0:
            return text
        end = _balanced_group_end(text, start + len(command))
        if end < 0:
            return text[:start] + text[start + len(command):]
        text = text[:start] + text[end:]


def strip_formula_tags(text: str) -> str:
    """Remove \\tag{..}, \\tag*{..}, \\notag, \\nonumber."""
    text = str(text or "")
    search = 0
    while True:
        start = text.find("\\tag", search)
        if start < 0:
            break
        i = start + 4
        if i < len(text) and text[i].isalpha():
            search = i
            continue
        while i < len(text) and text[i].isspace():
            i += 1
        if i < len(text) and text[i] == "*":
            i += 1
            while i < len(text) and text[i].isspace():
                i += 1
        if i >= len(text) or text[i] != "{":
            search = start + 4
            continue
        end = _balanced_group_end(text, i)
        text = text[:start] + (text[end:] if end >= 0 else text[start + 4:])
        search = start
    return text.replace("\\notag", "").replace("\\nonumber", "")


_FORMULA_DROP = (
    "\\mathbf", "\\mathrm", "\\mathnormal", "\\mathit", "\\mathbb", "\\mathcal", "\\mathscr",
    "\\mathfrak", "\\mathsf", "\\mathtt", "\\textbf", "\\text", "\\boldmath", "\\boldsymbol",
    "\\operatorname", "\\bm", "\\symbfit", "\\mathbfcal", "\\symbf", "\\scriptscriptstyle", "\\notag",
    "\\setlength", "\\coloneqq", "\\space", "\\thickspace", "\\thinspace", "\\medspace",
    "\\nobreakspace", "\\negmedspace", "\\quad", "\\qquad", "\\enspace", "\\substackw", " ", "$$",
    "\\left", "\\right", "\\displaystyle", "\\text",
)
_INNER_DISPLAY_RE = re.compile(r"\\\[(.+?)(?<!\\)\\\]|\\\((.+?)(?<!\\)\\\)")
_SIMPLE_GROUP_RE = re.compile(r"\{([A-Za-z0-9.+\-]+)\}")
_GROUP_RE = re.compile(r"\{([^{}]{1,160})\}")
_GROUP_KEEP_TOKENS = ("=", "+", "-", "\\\\", "^", "_", "[", "]", "(", ")")


def normalized_formula(text: str) -> str:
    """Display-formula LaTeX reduced to what matters for edit distance (lower-case, no spacing)."""
    text = strip_formula_tags(strip_formula_delimiters(uncircle(text)))
    m = _INNER_DISPLAY_RE.search(text)
    if m:
        text = (m.group(1) or m.group(2) or "").strip()
    text = _drop_command_group(text, "\\phantom")
    text = re.sub(r"\\[!,;:]", "", text)
    text = re.sub(r"(?<!\\)&", "", text)
    text = text.replace("\\mid", "|").replace("\\vert", "|")
    text = text.replace(r"\{", "").replace(r"\}", "").replace("~", "")
    text = re.sub(r"\\hspace\{.*?\}", "", text)
    text = re.sub(r"\\begin\{.*?\}", "", text)
    text = re.sub(r"\\end\{.*?\}", "", text)
    text = re.sub(r"\\arraycolsep.*?\}", "", text)
    text = re.sub(r"\{[lcr| ]+\}", "", text)
    text = text.strip(".")
    for token in _FORMULA_DROP:
        text = text.replace(token, "")
    previous = None
    while text != previous:
        previous = text
        text = _SIMPLE_GROUP_RE.sub(r"\1", text)
        text = text.replace("{}", "")
        text = re.sub(r"\{\{+", "{", text)
        text = re.sub(r"}}+", "}", text)
        text = _GROUP_RE.sub(
            lambda g: g.group(1) if any(t in g.group(1) for t in _GROUP_KEEP_TOKENS) else g.group(0), text)
    return re.sub(r"\s+", "", text.lower())


# --- tables --------------------------------------------------------------------------------

_TABLE_LATEX_SYMBOLS = (
    (r"\checkmark", "√"), (r"\checked", "√"), (r"\surd", "√"), (r"\times", "×"), (r"\xmark", "×"),
    (r"\crossmark", "×"), (r"\pm", "±"), (r"\mp", "∓"), (r"\alpha", "α"), (r"\beta", "β"),
    (r"\gamma", "γ"), (r"\gama", "γ"), (r"\mu", "μ"), (r"\lambda", "λ"), (r"\theta", "θ"),
    (r"\eta", "η"), (r"\pi", "π"), (r"\rho", "ρ"), (r"\sigma", "σ"), (r"\omega", "ω"),
    (r"\delta", "δ"), (r"\Delta", "Δ"), (r"\epsilon", "ε"), (r"\varepsilon", "ε"), (r"\phi", "φ"),
    (r"\varphi", "φ"), (r"\tau", "τ"), (r"\partial", "∂"), (r"\varnothing", "∅"),
    (r"\emptyset", "∅"), (r"\sim", "～"),
)
_TABLE_GLYPHS = {
    "✓": "√", "✔": "√", "☑": "√", "✅": "√", "🗸": "√", "✗": "×", "✘": "×", "✕": "×", "✖": "×",
    "☒": "×", "❌": "×", "╳": "×", "⨯": "×", "Ø": "∅", "∼": "～", "〜": "～",
}
_TABLE_DASHES = {"-", "–", "−", "－", "—"}


def _table_symbols(text: str) -> str:
    for src, dst in _TABLE_LATEX_SYMBOLS:
        text = text.replace(src, dst)
    for src, dst in _TABLE_GLYPHS.items():
        text = text.replace(src, dst)
    return text.replace(r"\%", "%").replace(r"\#", "#").replace(r"\&", "&").replace(r"\_", "_")


def _strip_cell_math(text: str) -> str:
    text = text.strip()
    changed = True
    while text and changed:
        changed = False
        for left, right in _DELIMS:
            if text.startswith(left) and text.endswith(right) and len(text) >= len(left) + len(right):
                inner = text[len(left):len(text) - len(right)].strip()
                if not inner or len(inner) > 128 or "<" in inner or ">" in inner or "$" in inner:
                    continue
                text, changed = inner, True
                break
    return text


def normalize_cell_text(text: str) -> str:
    """One text node of a table cell: NFKC, symbol aliases, short math wrappers removed."""
    text = unicodedata.normalize("NFKC", str(text or "")).replace("\xa0", " ").replace("\u200b", "")
    text = _table_symbols(_strip_cell_math(_table_symbols(text)))
    if text.strip() in _TABLE_DASHES:
        text = "—"
    return re.sub(r"\s+", " ", text).strip()


def _normalize_table_dom(markup: str) -> str:
    from bs4 import BeautifulSoup, NavigableString

    soup = BeautifulSoup(markup, "html.parser")
    for th in soup.find_all("th"):
        th.name = "td"
    for tag in soup.find_all(["thead", "tbody"]):
        tag.unwrap()
    for math in soup.find_all("math"):
        math.replace_with(f"${math.get('alttext', '')}$")
    for span in soup.find_all("span"):
        span.unwrap()
    # Re-parse so that text nodes split by the unwrapping are seen as the scorer sees them.
    soup = BeautifulSoup(str(soup), "html.parser")
    for cell in soup.find_all(["td", "th"]):
        for node in list(cell.descendants):
            if isinstance(node, NavigableString):
                fixed = normalize_cell_text(str(node))
                if fixed != str(node):
                    node.replace_with(fixed)
    return str(soup)


def normalized_html_table(text: str) -> str:
    """Canonical `<html><body><table border="1" >…</table></body></html>` form; '' if no table."""
    if "<table" not in text.replace(" ", "").replace("'", '"'):
        return ""
    body = html.unescape(_normalize_table_dom(text)).replace("\n", "")
    body = unicodedata.normalize("NFKC", body).strip()
    body = "".join(re.findall(r"<table\b[^>]*>(.*)</table>", body, re.DOTALL | re.IGNORECASE))
    for attr in ("style", "height", "width", "align", "class"):
        body = re.sub(f'( {attr}=".*?")', "", body)
    body = re.sub("</?tbody>", "", body)
    body = re.sub(r"\s+", " ", body)
    out = '<html><body><table border="1" >' + body + "</table></body></html>"
    for tag in ("sup", "sub", "span", "div", "p"):
        out = out.replace(f"<{tag}>", "").replace(f"</{tag}>", "")
    out = out.replace('<spandata-span-identity="">', "")
    return re.sub("<colgroup>.*?</colgroup>", "", out)
