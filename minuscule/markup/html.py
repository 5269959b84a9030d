"""A forgiving HTML tree built on the stdlib tokenizer, shaped like BeautifulSoup's `html.parser` tree.

olmOCR-Bench reads tables out of model output with BeautifulSoup + `html.parser`. That tree
builder never closes tags implicitly: an unclosed `<td>` swallows the next one, and an end tag
closes the most recent open tag of that name (or nothing when none is open). Model output is
often malformed, so the shape of the tree decides verdicts; this builder keeps those rules
without the dependency.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from html.entities import html5, name2codepoint
from html.parser import HTMLParser
from typing import Iterator

# Elements that never hold content (closed as soon as they open).
VOID_ELEMENTS = frozenset(
    "area base br col embed hr img input keygen link menuitem meta param source track wbr "
    "basefont bgsound command frame image isindex nextid spacer".split()
)
# Text inside these is not "text" for get_text() (scripts, styles, ruby annotations, templates).
HIDDEN_TEXT_CONTAINERS = frozenset({"script", "style", "template", "rt", "rp"})


@dataclass(eq=False, slots=True)
class Text:
    """A run of character data; `hidden` when it sits inside a script/style/ruby/template element."""

    data: str
    hidden: bool = False


@dataclass(eq=False, slots=True)
class Element:
    """One element: lower-case name, attributes (last duplicate wins), children in order."""

    name: str
    attrs: dict[str, str | None] = field(default_factory=dict)
    children: list["Element | Text"] = field(default_factory=list)
    parent: "Element | None" = field(default=None, repr=False)

    def iter(self, names: frozenset[str] | set[str] | None = None) -> Iterator["Element"]:
        """Descendant elements in document order (not self), optionally only those named."""
        stack = list(reversed(self.children))
        while stack:
            node = stack.pop()
            if isinstance(node, Element):
                if names is None or node.name in names:
                    yield node
                stack.extend(reversed(node.children))

    def child_elements(self, names: frozenset[str] | set[str]) -> list["Element"]:
        return [c for c in self.children if isinstance(c, Element) and c.name in names]

    def has_ancestor(self, name: str) -> bool:
        node = self.parent
        while node is not None:
            if node.name == name:
                return True
            node = node.parent
        return False

    def text(self, br: str = "\n") -> str:
        """Concatenated visible text of all descendants; each <br> becomes `br`."""
        out: list[str] = []
        stack: list[Element | Text] = list(reversed(self.children))
        while stack:
            node = stack.pop()
            if isinstance(node, Text):
                if not node.hidden:
                    out.append(node.data)
            elif node.name == "br":
                out.append(br)
            else:
                stack.extend(reversed(node.children))
        return "".join(out)


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        # References are resolved here rather than by the tokenizer, so that an unknown `&name;`
        # reads as `&name` (the tree builder the scorer uses does that).
        super().__init__(convert_charrefs=False)
        self.root = Element("[document]")
        self.stack: list[Element] = [self.root]
        self.open_counts: dict[str, int] = {}
        self.hidden_depth = 0
        self.closed_voids: list[str] = []

    def _push(self, name: str, attrs: list[tuple[str, str | None]]) -> None:
        elem = Element(name, dict(attrs), parent=self.stack[-1])
        self.stack[-1].children.append(elem)
        self.stack.append(elem)
        self.open_counts[name] = self.open_counts.get(name, 0) + 1
        if name in HIDDEN_TEXT_CONTAINERS:
            self.hidden_depth += 1

    def _pop_to(self, name: str) -> None:
        if not self.open_counts.get(name):
            return  # a stray end tag closes nothing
        while len(self.stack) > 1:
            elem = self.stack.pop()
            self.open_counts[elem.name] -= 1
            if elem.name in HIDDEN_TEXT_CONTAINERS:
                self.hidden_depth -= 1
            if elem.name == name:
                return

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._push(tag, attrs)
        if tag in VOID_ELEMENTS:
            self._pop_to(tag)
            # The matching end tag, if the author wrote one, must not close an outer element.
            self.closed_voids.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # `<x/>` opens and closes at once; it never cancels a pending `</br>`-style redundant close.
        self._push(tag, attrs)
        self._pop_to(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.closed_voids:
            self.closed_voids.remove(tag)
            return
        self._pop_to(tag)

    def handle_entityref(self, name: str) -> None:
        char = html5.get(name + ";")
        if char is None and name in name2codepoint:
            char = chr(name2codepoint[name])
        self.handle_data(char if char is not None else "&" + name)

    def handle_charref(self, name: str) -> None:
        self.handle_data(html.unescape(f"&#{name};"))

    def handle_data(self, data: str) -> None:
        if data:
            self.stack[-1].children.append(Text(data, hidden=self.hidden_depth > 0))


# Plain table markup is most of what scoring parses, and the stdlib tokenizer spends ~25 µs a tag on
# it. Markup made only of these tags, with double-quoted attribute values, no references and no
# comments (a "<" or "&" that starts nothing is text) is tokenised by one regex into the same events;
# anything else goes to HTMLParser.
_FAST_TAGS = frozenset("table thead tbody tfoot tr td th caption colgroup col br b i u s em strong sub sup "
                       "span p div code small big mark".split())
_SIMPLE_TAG = re.compile(r'<(/?)([a-zA-Z][a-zA-Z0-9]*)((?:\s+[a-zA-Z_:][-a-zA-Z0-9_:.]*="[^"<>&]*")*)\s*>')
# "&" before a letter or "#" may start a reference; any other "&" (LaTeX alignment) is plain text.
_REFERENCE = re.compile(r"&[a-zA-Z#]")
_ATTR = re.compile(r'([a-zA-Z_:][-a-zA-Z0-9_:.]*)="([^"]*)"')


def _fast_feed(builder: _TreeBuilder, markup: str) -> bool:
    """Feed `markup` as start/end tags and data; False (builder unusable) when it is not plain.

    The builder's push/pop rules are inlined (a method call per event was most of the cost). No
    fast tag hides text, so every run is visible."""
    stack, counts, voids = builder.stack, builder.open_counts, builder.closed_voids
    find, match = markup.find, _SIMPLE_TAG.match
    pos = 0
    while True:
        i = find("<", pos)
        if i < 0:
            if pos < len(markup):
                stack[-1].children.append(Text(markup[pos:]))
            return True
        if i > pos:
            stack[-1].children.append(Text(markup[pos:i]))
        m = match(markup, i)
        if m is None:
            nxt = markup[i + 1:i + 2]
            if nxt and not nxt.isascii() or nxt and (nxt.isalpha() or nxt in "/!?"):
                return False
            stack[-1].children.append(Text("<"))  # "a < b": the stdlib tokenizer reads a "<" before anything else as text
            pos = i + 1
            continue
        closing, name, attrs = m.groups()
        name = name.lower()
        if name not in _FAST_TAGS:
            return False
        pos = m.end()
        if closing:
            if name in voids:  # the redundant end tag of a void element
                voids.remove(name)
            elif counts.get(name):
                while len(stack) > 1:
                    elem = stack.pop()
                    counts[elem.name] -= 1
                    if elem.name == name:
                        break
            continue
        parent = stack[-1]
        elem = Element(name, {k.lower(): v for k, v in _ATTR.findall(attrs)} if attrs else {}, [], parent)
        parent.children.append(elem)
        if name in VOID_ELEMENTS:  # opened and closed at once
            voids.append(name)
        else:
            stack.append(elem)
            counts[name] = counts.get(name, 0) + 1


def parse_html(markup: str) -> Element:
    """Parse any string as HTML; never raises on malformed markup. Returns the document root."""
    if not _REFERENCE.search(markup):
        builder = _TreeBuilder()
        if _fast_feed(builder, markup):
            return builder.root
    builder = _TreeBuilder()
    builder.feed(markup)
    builder.close()
    return builder.root
