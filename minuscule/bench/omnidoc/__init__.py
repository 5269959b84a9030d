"""OmniDocBench v1.6 end-to-end scoring: split predictions, match to GT, edit distance / TEDS / reading order."""
