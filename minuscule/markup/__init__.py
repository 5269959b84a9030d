"""Markdown / HTML / LaTeX parsing shared by the checks, the benchmarks and the rewards."""

from minuscule.markup.html import Element, Text, parse_html
from minuscule.markup.math import Formula, extract_math, find_formulas
from minuscule.markup.tables import CellSpec, TableGrid, all_tables, build_grid, html_tables, markdown_tables
from minuscule.markup.text import alnum_count, normalize_text, trailing_repeats

__all__ = [
    "CellSpec",
    "Element",
    "Formula",
    "TableGrid",
    "Text",
    "all_tables",
    "alnum_count",
    "build_grid",
    "extract_math",
    "find_formulas",
    "html_tables",
    "markdown_tables",
    "normalize_text",
    "parse_html",
    "trailing_repeats",
]
