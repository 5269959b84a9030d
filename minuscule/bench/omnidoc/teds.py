"""TEDS and TEDS-S: tree-edit-distance similarity of two HTML tables (APTED, PubTabNet cost model)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rapidfuzz.distance import Levenshtein


@dataclass
class _Node:
    """One element of a table tree; `td` nodes carry their spans and cell tokens."""

    tag: str
    colspan: int | None = None
    rowspan: int | None = None
    content: list[str] | None = None
    children: list["_Node"] = field(default_factory=list)


def _cell_tokens(element) -> list[str]:
    """Characters of the cell text plus `<tag>`/`</tag>` tokens of inner elements, as in PubTabNet."""
    tokens: list[str] = []

    def walk(node, root: bool) -> None:
        tokens.append(f"<{node.tag}>")
        if node.text is not None:
            tokens.extend(node.text)
        for child in node:
            walk(child, False)
        if node.tag != "unk":
            tokens.append(f"</{node.tag}>")
        if not root and node.tag != "td" and node.tail is not None:
            tokens.extend(node.tail)

    walk(element, True)
    return tokens[1:-1]


def _tree(element, structure_only: bool) -> _Node:
    if element.tag == "td":
        return _Node("td", int(element.attrib.get("colspan", "1")), int(element.attrib.get("rowspan", "1")),
                     [] if structure_only else _cell_tokens(element))
    return _Node(element.tag, children=[_tree(child, structure_only) for child in element])


def _rename_cost(a: _Node, b: _Node) -> float:
    if a.tag != b.tag or a.colspan != b.colspan or a.rowspan != b.rowspan:
        return 1.0
    if a.tag == "td" and (a.content or b.content):
        return Levenshtein.distance(a.content, b.content) / max(len(a.content), len(b.content))
    return 0.0


def _parse_table(markup: str):
    from lxml import html

    parser = html.HTMLParser(remove_comments=True, encoding="utf-8")
    root = html.fromstring(markup, parser=parser)
    found = root.xpath("body/table")
    return found[0] if found else None


def teds(pred: str, gt: str, structure_only: bool = False) -> float:
    """1 − edit distance / max(node count); 0 when either side is empty or has no body/table."""
    if not pred or not gt:
        return 0.0
    from apted import APTED, Config

    pred_table, gt_table = _parse_table(pred), _parse_table(gt)
    if pred_table is None or gt_table is None:
        return 0.0
    n_nodes = max(len(pred_table.xpath(".//*")), len(gt_table.xpath(".//*")))
    if n_nodes == 0:  # two empty tables: the published code fails on 0/0 and scores 0
        return 0.0

    class _Cost(Config):
        def rename(self, a, b):
            return _rename_cost(a, b)

        def children(self, node):
            return node.children

    distance = APTED(_tree(pred_table, structure_only), _tree(gt_table, structure_only), _Cost()).compute_edit_distance()
    return 1.0 - float(distance) / n_nodes
