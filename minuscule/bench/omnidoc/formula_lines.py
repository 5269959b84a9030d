"""Split multi-line display formulas (array/aligned/cases/…, bare `\\\\` rows) into one item per row."""

from __future__ import annotations

import copy
import re

from minuscule.bench.omnidoc.normalize import strip_formula_delimiters, strip_formula_tags

_ENV_NAMES = ("array", "aligned", "align", "align*", "alignedat", "alignedat*", "split", "gather",
              "gather*", "gathered", "multline", "multline*", "flalign", "flalign*", "eqnarray",
              "eqnarray*", "cases")
_ENV_START_RE = re.compile(
    r"^\\begin\{(?P<env>" + "|".join(re.escape(n) for n in _ENV_NAMES) + r")\}\s*(?P<extra>(?:\{[^{}]*\}\s*)*)",
    re.S)
_SPACING_RE = re.compile(r"(?:\\qquad|\\quad|\\,|\\;|\\!|\\>|\\:|~)+")
_LABEL_RE = re.compile(r"\\label\s*\{[^{}]*\}")
_TAG_RE = re.compile(r"\\tag\*?\s*\{[^{}]*\}")
_ALIGNED = {"aligned", "align", "align*", "alignedat", "alignedat*"}
_LOGIC_RE = re.compile(
    r"\\(?:Rightarrow|Leftrightarrow|Longrightarrow|Longleftrightarrow|longrightarrow|"
    r"longleftrightarrow|implies|therefore|because|uparrow|downarrow|Updownarrow|forall|exists)\b|单调|否定")
_NESTED_RE = re.compile(
    r"\\begin\{(?:array|aligned|align\*?|alignedat\*?|split|gathered?|multline\*?|flalign\*?|eqnarray\*?|cases)\}")
_CASE_LEAD_RE = re.compile(
    r"^(?:\(?\d+\)?|\\(?:Rightarrow|Leftrightarrow|Longrightarrow|Longleftrightarrow|implies|therefore|"
    r"uparrow|downarrow|Updownarrow|leftarrow|rightarrow))")
_EXPLAIN_RE = re.compile(r"\\(?:text|mathrm|operatorname)\s*\{")


def _escaped(text: str, index: int) -> bool:
    n, i = 0, index - 1
    while i >= 0 and text[i] == "\\":
        n += 1
        i -= 1
    return n % 2 == 1


def split_rows(body: str) -> list[str]:
    """Top-level `\\\\` rows (not inside braces or nested environments), each stripped, empties dropped."""
    rows, current = [], []
    braces = envs = 0
    i, n = 0, len(body)
    while i < n:
        for token, step in (("\\begin{", 1), ("\\end{", -1)):
            if body.startswith(token, i):
                close = body.find("}", i + len(token))
                if close != -1:
                    current.append(body[i:close + 1])
                    envs = envs + 1 if step > 0 else max(0, envs - 1)
                    i = close + 1
                    break
        else:
            if body.startswith("\\\\", i) and braces == 0 and envs == 0:
                line = "".join(current).strip()
                if line:
                    rows.append(line)
                current = []
                i += 2
                while i < n and body[i].isspace():
                    i += 1
                if i < n and body[i] == "*":
                    i += 1
                if i < n and body[i] == "[":
                    close = body.find("]", i + 1)
                    if close != -1:
                        i = close + 1
                continue
            ch = body[i]
            current.append(ch)
            if ch == "{" and not _escaped(body, i):
                braces += 1
            elif ch == "}" and not _escaped(body, i):
                braces = max(0, braces - 1)
            i += 1
    tail = "".join(current).strip()
    if tail:
        rows.append(tail)
    return rows


def _alignment_cells(line: str) -> list[str]:
    cells, current, envs, i = [], [], 0, 0
    while i < len(line):
        matched = False
        for token, step in (("\\begin{", 1), ("\\end{", -1)):
            if line.startswith(token, i):
                close = line.find("}", i + len(token))
                if close != -1:
                    current.append(line[i:close + 1])
                    envs = envs + 1 if step > 0 else max(0, envs - 1)
                    i = close + 1
                    matched = True
                    break
        if matched:
            continue
        if line[i] == "&" and envs == 0 and not _escaped(line, i):
            cells.append("".join(current).strip())
            current = []
        else:
            current.append(line[i])
        i += 1
    cells.append("".join(current).strip())
    return cells


def _lead(line: str) -> str:
    s = str(line or "").lstrip()
    while s.startswith("&"):
        s = s[1:].lstrip()
    return s


def _has_lhs(line: str) -> bool:
    cells = _alignment_cells(line)
    return len(cells) > 1 and bool(strip_formula_tags(cells[0]).strip())


def _case_like(line: str) -> bool:
    lead = strip_formula_tags(_lead(line)).strip()
    return bool(lead) and bool(_CASE_LEAD_RE.match(lead))


def _explains(line: str) -> bool:
    return bool(_EXPLAIN_RE.search(_lead(line)))


def _logic(line: str) -> bool:
    return bool(_LOGIC_RE.search(_lead(line)))


def _split_cases(body: str, rows: list[str]) -> bool:
    if len(rows) <= 1 or any(len(_alignment_cells(r)) > 1 for r in rows):
        return False
    if not _LOGIC_RE.search(body):
        return False
    if _NESTED_RE.search(body):
        return True
    if any(_logic(r) for r in rows[1:]) or any(_explains(r) for r in rows[1:]):
        return True
    return _logic(rows[0])


def _keep_aligned(body: str, rows: list[str], wrapped: bool) -> bool:
    nested = bool(_NESTED_RE.search(body))
    if nested and any(_case_like(r) for r in rows[1:]):
        return True
    if not wrapped:
        return False
    if nested or sum(1 for r in rows if _has_lhs(r)) >= 2:
        return True
    return any(_explains(r) for r in rows[1:]) or any(_case_like(r) for r in rows[1:])


def _array_spec(spec: str) -> str:
    spec = re.sub(r"\s+|\|", "", str(spec or ""))
    return re.sub(r"!{[^}]*}", "", re.sub(r"@{[^}]*}", "", spec))


def _row_spec_ok(spec: str) -> bool:
    spec = _array_spec(spec)
    if not spec or any(ch not in "lcr" for ch in spec):
        return False
    return len(spec) == 1 or (len(spec) == 2 and ("l" in spec or "r" in spec))


def _keep_array(spec: str, body: str, rows: list[str], wrapped: bool) -> bool:
    spec = _array_spec(spec)
    if not spec:
        return False
    if _NESTED_RE.search(body) and any(_case_like(r) for r in rows[1:]):
        return True
    return wrapped and set(spec) <= {"l"} and len(rows) > 1


def _env_end(text: str, env: str, start: int) -> int:
    begin, end = f"\\begin{{{env}}}", f"\\end{{{env}}}"
    depth, i = 1, start
    while i < len(text):
        nb, ne = text.find(begin, i), text.find(end, i)
        if ne < 0:
            return -1
        if 0 <= nb < ne:
            depth += 1
            i = nb + len(begin)
            continue
        depth -= 1
        if depth == 0:
            return ne
        i = ne + len(end)
    return -1


def _rstrip_spacing(text: str) -> str:
    s = str(text or "").rstrip()
    while True:
        t = re.sub(r"(?:\\qquad|\\quad|\\,|\\;|\\!|\\>|\\:|~)\s*$", "", s).rstrip()
        if t == s:
            return s
        s = t


def _end_label_ok(label: str, prefix: str) -> bool:
    label = label.strip()
    if not label:
        return False
    if prefix and not (prefix[-1].isspace() or _SPACING_RE.search(prefix[-10:])):
        return False
    if re.fullmatch(r"[a-z]{1,3}", label):
        return False
    return bool(re.fullmatch(r"[A-Za-z0-9.\-#]+", label) or re.fullmatch(r"(?:\\[A-Za-z#]+)+", label))


def _strip_end_labels(trailing: str) -> str:
    s = _LABEL_RE.sub("", str(trailing or ""))
    while True:
        t = s.rstrip()
        if not t:
            return ""
        m = _TAG_RE.search(t)
        if m and m.end() == len(t):
            s = _rstrip_spacing(t[:m.start()].rstrip())
            continue
        if t[-1] not in ")]":
            return t
        start = t.rfind("(" if t[-1] == ")" else "[")
        if start < 0 or not _end_label_ok(t[start + 1:-1], t[:start]):
            return t
        s = _rstrip_spacing(t[:start])


def _environment_match(formula: str) -> dict | None:
    raw = str(formula or "")
    stripped = strip_formula_delimiters(raw).strip()
    if not stripped:
        return None
    prefix = re.match(r"^(?P<prefix>(?:\\left\s*\\\{|\\left\.))\s*", stripped)
    candidate = stripped[prefix.end():].lstrip() if prefix else stripped
    suffix = re.search(r"(?P<suffix>\s*\\right(?:\.|\\\}))\s*$", candidate)
    core = candidate[:suffix.start()].rstrip() if suffix else candidate
    start = _ENV_START_RE.match(core)
    if not start:
        return None
    env, extra = start.group("env"), start.group("extra")
    end_tag = f"\\end{{{env}}}"
    end = _env_end(core, env, start.end())
    if end < start.end():
        return None
    spec = ""
    if env == "array":
        groups = re.findall(r"\{([^{}]*)\}", extra)
        spec = groups[0] if groups else ""
    body = core[start.end():end]
    rows = split_rows(body)
    wrapped = bool(prefix or suffix)
    if env == "cases" and not _split_cases(body, rows):
        return None
    if env in _ALIGNED and _keep_aligned(body, rows, wrapped):
        return None
    if env == "array" and (not spec or not _row_spec_ok(spec) or _keep_array(spec, body, rows, wrapped)):
        return None
    trailing = _strip_end_labels(core[end + len(end_tag):]).strip()
    if trailing and len(split_rows(trailing)) > 1:
        return None
    body_start = max(raw.find(body), 0)
    trailing_end = -1
    if trailing:
        tag_at = raw.find(end_tag, body_start + len(body))
        if tag_at >= 0:
            at = raw.find(trailing, tag_at + len(end_tag))
            if at >= 0:
                trailing_end = at + len(trailing)
    return {"body": body, "body_start": body_start, "trailing": trailing, "trailing_end": trailing_end}


def _bare_match(formula: str) -> dict | None:
    raw = str(formula or "")
    stripped = strip_formula_delimiters(raw).strip()
    if not stripped or "\\\\" not in stripped or len(split_rows(stripped)) <= 1:
        return None
    return {"body": stripped, "body_start": max(raw.find(stripped), 0), "trailing": "", "trailing_end": -1}


def formula_rows(formula: str) -> tuple[dict, list[dict]] | None:
    """(match info, [{raw, content}]) when the whole formula is a multi-row block, else None."""
    info = _environment_match(formula) or _bare_match(formula)
    if not info:
        return None
    rows = []
    for raw in split_rows(info["body"]):
        content = strip_formula_tags(raw).strip()
        if content:
            rows.append({"raw": raw, "content": content})
    if len(rows) <= 1:
        return None
    trailing = strip_formula_tags(info["trailing"]).strip()
    if trailing:
        rows[-1]["content"] = f"{rows[-1]['content']} {trailing}".strip()
    return info, rows


def split_gt_formulas(items: list[dict]) -> list[dict]:
    """GT display formulas made of rows become one item per row; order 7 → 7.001, 7.002, …"""
    out = []
    for item in items:
        split = formula_rows(item.get("latex", "")) if item.get("category_type") == "equation_isolated" else None
        if not split:
            out.append(item)
            continue
        for k, row in enumerate(split[1], start=1):
            new = copy.deepcopy(item)
            new["latex"] = f"\\[{row['content']}\\]"
            new["order"] = float(item["order"]) + k / 1000.0
            out.append(new)
    return out


def split_pred_formulas(items: list[dict]) -> list[dict]:
    """Predicted display formulas made of rows become one item per row, with row offsets."""
    out = []
    for item in items:
        split = formula_rows(item.get("content", "")) if item.get("category_type") == "equation_isolated" else None
        if not split:
            out.append(item)
            continue
        info, rows = split
        start0 = item["position"][0]
        cursor = 0
        for k, row in enumerate(rows):
            raw = strip_formula_tags(row["raw"]).strip()
            at = info["body"].find(raw, cursor)
            if at == -1:
                at = cursor
            cursor = at + len(raw)
            begin = start0 + info["body_start"] + at
            end = begin + len(raw) - 1
            if k == len(rows) - 1 and info["trailing_end"] > 0:
                end = start0 + info["trailing_end"] - 1
            new = copy.deepcopy(item)
            new["content"] = f"\\[{row['content'].strip()}\\]"
            new["position"] = [begin, end]
            out.append(new)
    return out


def sort_preds(items: list[dict]) -> list[tuple[int, dict]]:
    """By start offset, inline formulas last, stable: (original index, item) pairs."""
    return sorted(enumerate(items), key=lambda p: (p[1].get("fine_category_type") == "equation_inline",
                                                   p[1]["position"][0], p[0]))


def _normalize_cases(body: str, rows: list[str], trailing: str) -> bool:
    if len(rows) <= 1 or any(len(_alignment_cells(r)) > 1 for r in rows):
        return False
    trailing = trailing.lstrip()
    logic = bool(_LOGIC_RE.search(body)) or bool(_LOGIC_RE.search(trailing))
    follows = bool(_ENV_START_RE.match(trailing))
    if not logic and not follows:
        return False
    return True


def _logic_brace_blocks(text: str) -> tuple[str, bool]:
    pieces, cursor, changed = [], 0, False
    while cursor < len(text):
        begin = text.find("\\begin{", cursor)
        if begin < 0:
            pieces.append(text[cursor:])
            break
        pieces.append(text[cursor:begin])
        start = _ENV_START_RE.match(text[begin:])
        if not start:
            pieces.append(text[begin:begin + 7])
            cursor = begin + 7
            continue
        env = start.group("env")
        end_tag = f"\\end{{{env}}}"
        body_start = begin + start.end()
        end = _env_end(text, env, body_start)
        if end < body_start:
            pieces.append(text[begin:])
            break
        body, body_changed = _logic_brace_blocks(text[body_start:end])
        trailing = text[end + len(end_tag):end + len(end_tag) + 200]
        if env == "cases" and _normalize_cases(body, split_rows(body), trailing):
            pieces.append("\\left\\{ \\begin{array}{l} " + body.strip() + " \\end{array} \\right.")
            changed = True
        else:
            pieces.append(text[begin:body_start] + body + end_tag)
            changed = changed or body_changed
        cursor = end + len(end_tag)
    return "".join(pieces), changed


def logic_brace_formula(formula: str) -> str:
    """`\\begin{cases}` blocks used as logic braces (⇒, ∴ …) rewritten as `\\left\\{ array \\right.`."""
    out, changed = _logic_brace_blocks(str(formula or ""))
    return out if changed else str(formula or "")
