"""JinaOCRSynth: synthetic pages dense in tables and formulas, with reference Markdown and olmOCR-Bench unit tests.

    minuscule synth --n 200 --out synth/ --seed 0 --degrade 0.3 --workers 2 --preview

Pipeline per page: content.py (Faker text, tables, formulas.py) → layout.py (paper, fonts, columns)
→ html.py → render.py (one reused Chromium: KaTeX, trim overflow, measure lines, print, rasterise)
→ reference.py (Markdown) → mine.py (tests) → selfcheck.py (keep tests that pass on the reference)
→ degrade.py (optional degraded copy). pipeline.py writes the files; cli.py is the subcommand.
"""
