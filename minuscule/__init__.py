"""minuscule: open, self-hostable document parser (PDFs, scans, URLs → Markdown)."""

__version__ = "0.1.0"
