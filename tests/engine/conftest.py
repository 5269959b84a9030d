"""Shared fixtures for the engine tests: fp32 nano models, prompts and their plain greedy references."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from minuscule.config import ModelConfig
from minuscule.model.generate import generate_greedy
from minuscule.model.ocr import build_model

sys.path.insert(0, str(Path(__file__).resolve().parent))  # drafters.py
from nano_models import varied_nano  # noqa: E402 - tests/ is on sys.path (rootdir conftest)

torch.set_num_threads(1)  # tiny models: threads only add overhead on the shared CPU


@pytest.fixture(scope="session")
def nano_cfg() -> ModelConfig:
    return ModelConfig.from_name("nano")


@pytest.fixture(scope="session")
def varied_model(nano_cfg):
    """A random nano model with a wide weight spread, so greedy output is varied rather than one loop."""
    return varied_nano(nano_cfg)


@pytest.fixture(scope="session")
def loopy_model(nano_cfg):
    """The default-initialised random nano model: its greedy output falls into loops (guards fire)."""
    return build_model(nano_cfg, seed=3)


@pytest.fixture(scope="session")
def prompts(nano_cfg):
    g = torch.Generator().manual_seed(0)
    return [torch.randint(4, nano_cfg.vocab_size, (n,), generator=g).tolist() for n in (20, 33, 7, 50, 12, 28)]


@pytest.fixture(scope="session")
def references(varied_model, prompts):
    """Plain greedy continuations (generate_greedy, no stop ids) of every prompt, 48 tokens each."""
    return [generate_greedy(varied_model, p, 48) for p in prompts]
