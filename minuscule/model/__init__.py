"""The jina-ocr-v1 / DeepSeek-OCR network in plain PyTorch: vision encoder, decoder, draft head, checkpoints."""
