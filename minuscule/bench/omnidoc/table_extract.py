"""Find tables in predicted Markdown: outermost HTML tables, LaTeX tables, Markdown pipe tables."""

from __future__ import annotations

import re

_HTML_BEGIN_RE = re.compile(r"<table(?:[^>]*)>")
_HTML_END = "</table>"
_TABULAR_BEGIN_RE = re.compile(r"\\begin{tabular}")
_TABULAR_END = "\\end{tabular}"


def _balanced_blocks(text: str, begin_re: re.Pattern, end_token: str) -> list[tuple[int, int]]:
    """Outermost begin…end spans found by a stack scan; an unclosed begin restarts the scan after it.

    The cursor steps over a begin by len(end_token) characters, as the published scanner does,
    so spans match its output exactly.
    """
    spans: list[tuple[int, int]] = []
    pos, stack = 0, []
    while pos < len(text):
        b = begin_re.search(text, pos)
        e = text.find(end_token, pos)
        if not b and e < 0:
            break
        if b and (e < 0 or b.start() < e):
            stack.append(b.start())
            pos = b.start() + len(end_token)
        else:
            if stack:
                start = stack.pop()
                if not stack:
                    spans.append((start, e + len(end_token)))
            pos = e + len(end_token)
    if stack:
        # The published code skips the length of its begin *pattern source*, not of the match.
        offset = stack[0] + len(begin_re.pattern)
        spans += [(s + offset, t + offset) for s, t in _balanced_blocks(text[offset:], begin_re, end_token)]
    return spans


def html_tables(text: str) -> list[tuple[int, int]]:
    return _balanced_blocks(text, _HTML_BEGIN_RE, _HTML_END)


def latex_tables(text: str) -> list[tuple[int, int]]:
    """`\\begin{table}…\\end{table}` blocks, then balanced tabulars outside them, by start offset."""
    spans = []
    for m in re.finditer(r"\\begin{table}(.*?)\\end{table}", text, re.DOTALL):
        spans.append((m.start(), m.end()))
        text = text[:m.start()] + " " * (m.end() - m.start()) + text[m.end():]
    spans += _balanced_blocks(text, _TABULAR_BEGIN_RE, _TABULAR_END)
    return sorted(spans, key=lambda s: s[0])


# --- Markdown pipe tables → HTML (the published converter's exact behaviour) ----------------

MD_ROW_RE = re.compile(r"\|\s*.*?\s*\|\n", re.DOTALL)


def _pipe_block_to_html(block: str) -> str:
    rows = [r.strip() for r in block.strip().split("\n")]
    out = "<table>\n  <thead>\n    <tr>\n"
    for cell in (c.strip() for c in rows[0].split("|")[1:-1]):
        out += f"      <th>{cell}</th>\n"
    out += "    </tr>\n  </thead>\n  <tbody>\n"
    for row in rows[2:]:
        out += "    <tr>\n"
        for cell in (c.strip() for c in row.split("|")[1:-1]):
            out += f"      <td>{cell}</td>\n"
        out += "    </tr>\n"
    return out + "  </tbody>\n</table>\n"


def _is_rule_line(line: str) -> bool:
    return bool(re.search(r"-*?:", line) or re.search(r"---", line) or re.search(r":-*?", line))


def _merge_table_block(block: str) -> str:
    block = re.sub(r"<!--[\s\S]*?-->", "", block)
    lines_out = []
    for table in re.findall(r"<table>[\s\S]*?</table>", block):
        lines = [ln.replace("<th>", "<td>").replace("</th>", "</td>") if "<th>" in ln else ln
                 for ln in table.split("\n")]
        kept = [ln for ln in lines if not re.search(r"</?t(able|head|body)>", ln)]
        if len(kept) > 2:
            lines_out.extend(kept)
    return "\n\n" + "<table>\n{}\n</table>".format("\n".join(lines_out)) + "\n\n"


def _join_table_blocks(text: str) -> str:
    out, block, last, in_table = [], "", "", False
    for line in text.split("\n"):
        if "<table>" in line:
            in_table = True
            block += last
        elif in_table:
            if not _is_rule_line(last) and "</thead>" not in last:
                block += "\n" + last
            if "</table>" in last and "<table>" not in line:
                in_table = False
                out.append(_merge_table_block(block))
                block = ""
        else:
            out.append(last)
        last = line
    if last:
        if in_table or "</table>" in last:
            out.append(_merge_table_block(block + "\n" + last))
        else:
            out.append(last)
    return "\n".join(out)


def markdown_tables_to_html(text: str) -> str:
    """Replace pipe tables by `<table border="1" >` HTML with explicit spans, like the scorer."""
    text = text.replace("\r", "") + "\n"
    for match in MD_ROW_RE.findall(text):
        text = text.replace(match, _pipe_block_to_html(match), 1)
    text = _join_table_blocks(text)
    return text.replace("<table>", '<table border="1" >').replace("<td>", '<td colspan="1" rowspan="1">')
