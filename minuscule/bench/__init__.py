"""Benchmarks and evaluation: speed, model forward, olmOCR-Bench, OmniDocBench."""
