"""Inference engine: continuous batching and lossless speculative decoding over token ids and tensors."""
