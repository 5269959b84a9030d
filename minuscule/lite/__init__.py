"""The `lite` engine: CPU only, from the PDF text layer or RapidOCR, with layout heuristics."""
