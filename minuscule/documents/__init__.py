"""Documents layer: load PDFs and images into Pages, select pages, write results."""

from minuscule.documents.loader import DOCUMENT_SUFFIXES, load
from minuscule.documents.pages import parse_pages
from minuscule.documents.types import Block, Document, Page, PageResult, TextLayer, TextLine

__all__ = ["DOCUMENT_SUFFIXES", "Block", "Document", "Page", "PageResult", "TextLayer", "TextLine", "load",
           "parse_pages"]
