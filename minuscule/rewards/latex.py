"""LaTeX token normalisation for formula matching, and the validity checks of one formula body."""

from __future__ import annotations

import re
from functools import lru_cache

_TOKEN = re.compile(r"\\[a-zA-Z]+\*?|\\.|[^\s]")
# Tokens that change spacing or size only.
_DROP = frozenset(
    r"\, \; \: \! \  \quad \qquad \displaystyle \textstyle \scriptstyle \left \right \big \Big \bigg \Bigg "
    r"\bigl \bigr \Bigl \Bigr \biggl \biggr \limits \nolimits \nonumber \notag".split(" ")
) | {"\\ "}
# Spellings of the same symbol folded to one (after CDM's normalisation table, abridged).
_ALIASES = {
    r"\le": r"\leq", r"\ge": r"\geq", r"\ne": r"\neq", r"\to": r"\rightarrow", r"\gets": r"\leftarrow",
    r"\dfrac": r"\frac", r"\tfrac": r"\frac", r"\lbrace": r"\{", r"\rbrace": r"\}", r"\lbrack": "[",
    r"\rbrack": "]", r"\vert": "|", r"\lvert": "|", r"\rvert": "|", r"\Vert": r"\|", r"\lVert": r"\|",
    r"\rVert": r"\|", r"\land": r"\wedge", r"\lor": r"\vee", r"\lnot": r"\neg", r"\cdotp": r"\cdot",
    r"\mathrm": r"\text", r"\textrm": r"\text", r"\operatorname": r"\text", r"\bm": r"\boldsymbol",
    r"\mathbf": r"\boldsymbol", r"\varepsilon": r"\epsilon", r"\dots": r"\ldots", r"\cdots": r"\ldots",
}
_TAG = re.compile(r"\\tag\*?\s*\{[^{}]*\}")


@lru_cache(maxsize=8192)
def latex_tokens(latex: str) -> tuple[str, ...]:
    """Commands, escaped characters and single characters; spacing/sizing dropped, aliases folded,
    `\\tag{…}` kept as one token, braces around a single token removed (`x^{2}` = `x^2`)."""
    tags = _TAG.findall(latex)
    body = _TAG.sub(" ", latex)
    raw = [_ALIASES.get(t, t) for t in _TOKEN.findall(body) if t not in _DROP]
    out: list[str] = []
    i = 0
    while i < len(raw):
        if raw[i] == "{" and i + 2 < len(raw) and raw[i + 2] == "}" and raw[i + 1] not in "{}":
            out.append(raw[i + 1])
            i += 3
            continue
        out.append(raw[i])
        i += 1
    return tuple(out) + tuple(re.sub(r"\s+", "", t) for t in tags)


_CODES: dict[str, str] = {}


@lru_cache(maxsize=8192)  # safe: a token's code never changes once given
def token_string(latex: str) -> str:
    """The token sequence as a string of one private-use character per distinct token, so that
    rapidfuzz computes token-level edit distances at C speed."""
    out = []
    for tok in latex_tokens(latex):
        code = _CODES.get(tok)
        if code is None:
            code = _CODES[tok] = chr(0xF0000 + len(_CODES))
        out.append(code)
    return "".join(out)


_ENV = re.compile(r"\\(begin|end)\s*\{([^{}]*)\}")
_LEFT_RIGHT = re.compile(r"\\(left|right)(?![a-zA-Z])")


def latex_problems(latex: str) -> list[str]:
    """Why a formula body is malformed: unbalanced braces, `\\begin`/`\\end` or `\\left`/`\\right`."""
    problems: list[str] = []
    depth = 0
    i = 0
    while i < len(latex):
        ch = latex[i]
        if ch == "\\":
            i += 2  # an escaped character (\{, \}, \\) is not a group brace
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                break
        i += 1
    if depth != 0:
        problems.append("unbalanced braces")
    stack: list[str] = []
    for kind, name in _ENV.findall(latex):
        if kind == "begin":
            stack.append(name)
        elif not stack or stack.pop() != name:
            problems.append(f"\\end{{{name}}} without its \\begin")
            break
    else:
        if stack:
            problems.append(f"\\begin{{{stack[-1]}}} never ended")
    sides = _LEFT_RIGHT.findall(latex)
    if sides.count("left") != sides.count("right"):
        problems.append("unbalanced \\left/\\right")
    return problems
