"""Shared nano fixtures for the model tests (tiny widths, same architecture as the real presets)."""

from __future__ import annotations

import pytest
import torch

from minuscule.config import ModelConfig
from minuscule.model.ocr import OCRModel, build_model
from minuscule.tokenizer import Tokenizer, build_nano_tokenizer


@pytest.fixture(scope="session")
def nano_cfg() -> ModelConfig:
    return ModelConfig.from_name("nano")


@pytest.fixture(scope="session")
def nano_tok() -> Tokenizer:
    return build_nano_tokenizer()


@pytest.fixture(scope="module")
def nano_model(nano_cfg: ModelConfig) -> OCRModel:
    torch.manual_seed(0)
    return build_model(nano_cfg, seed=0)
