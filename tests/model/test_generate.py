"""generate_greedy: cached and uncached decoding agree token for token, with and without images."""

from __future__ import annotations

import pytest
import torch
from PIL import Image, ImageDraw

from minuscule.model.generate import generate_greedy
from minuscule.processor import Processor
from nano_models import varied_nano


@pytest.fixture(scope="module")
def model(nano_cfg):
    return varied_nano(nano_cfg)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cache_and_no_cache_give_identical_tokens(model, nano_cfg, seed):
    ids = torch.randint(4, nano_cfg.vocab_size, (25,), generator=torch.Generator().manual_seed(seed))
    with_cache = generate_greedy(model, ids, 30)
    without = generate_greedy(model, ids, 30, use_cache=False)
    assert with_cache == without and len(with_cache) == 30
    assert len(set(with_cache)) > 3  # a varied sequence, not one repeated token


def test_page_image_prompt(model, nano_tok):
    img = Image.new("RGB", (500, 380), "white")
    ImageDraw.Draw(img).text((20, 20), "Hello page", fill="black")
    inputs = Processor(nano_tok, fmt="jina", mode="gundam")(img)
    assert inputs.grid == (1, 1)  # small page: global view only, 273 placeholders
    out = generate_greedy(model, inputs, 12, eos_id=nano_tok.eos_id)
    assert out == generate_greedy(model, inputs, 12, eos_id=nano_tok.eos_id, use_cache=False)


def test_tiled_page_prompt(model, nano_tok):
    inputs = Processor(nano_tok, fmt="deepseek", mode="gundam")(Image.new("RGB", (700, 990), (230, 230, 230)))
    assert inputs.grid == (2, 3) and inputs.num_image_tokens == 903
    assert generate_greedy(model, inputs, 6) == generate_greedy(model, inputs, 6, use_cache=False)


def test_stops_at_eos_and_limits(model, nano_cfg):
    ids = torch.randint(4, nano_cfg.vocab_size, (10,), generator=torch.Generator().manual_seed(3))
    free = generate_greedy(model, ids, 8)
    stop = free[3]
    cut = generate_greedy(model, ids, 8, eos_id=stop)
    assert cut == free[: free.index(stop) + 1]
    assert generate_greedy(model, ids, 0) == []
    with pytest.raises(ValueError, match="exceeds"):
        generate_greedy(model, ids, nano_cfg.max_position_embeddings)
