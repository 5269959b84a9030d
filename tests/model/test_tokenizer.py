"""Tokenizer wrapper: nano BPE with the published special tokens, reserved real-size vocabulary, errors."""

from __future__ import annotations

import pytest

from minuscule.errors import InputError
from minuscule.tokenizer import (BOS, EOS, IMAGE, NANO_SPECIAL_IDS, NANO_VOCAB_SIZE, PAD, PROMPT_TOKENS, Tokenizer,
                                 build_reserved_tokenizer, published_special_ids)


def test_special_token_spellings():
    # deepseek-ocr.md §3.3: fullwidth vertical bars (U+FF5C) and U+2581 in the sentence tokens.
    assert BOS == "<\uff5cbegin\u2581of\u2581sentence\uff5c>" and EOS == "<\uff5cend\u2581of\u2581sentence\uff5c>"
    assert PAD == "<\uff5c\u2581pad\u2581\uff5c>"
    assert PROMPT_TOKENS[:5] == ("<|ref|>", "<|/ref|>", "<|det|>", "<|/det|>", "<|grounding|>")
    assert PROMPT_TOKENS[-2:] == ("<|User|>", "<|Assistant|>")


def test_nano_tokenizer(nano_tok, tmp_path):
    assert (nano_tok.bos_id, nano_tok.eos_id, nano_tok.pad_id, nano_tok.image_id) == tuple(NANO_SPECIAL_IDS.values())
    assert nano_tok.vocab_size <= NANO_VOCAB_SIZE
    text = "<|User|>:\n<image>\nConvert the document to markdown. Ünïcödé — 漢字 $x^2$\n<|Assistant|>:\n"
    ids = nano_tok.encode(text)
    assert nano_tok.decode(ids) == text
    assert ids.count(nano_tok.image_id) == 1 and ids[0] == nano_tok.token_id("<|User|>")
    assert len(ids) < len(text.encode())  # merges were learned
    nano_tok.save(tmp_path)
    again = Tokenizer.from_dir(tmp_path)
    assert again.encode(text) == ids and again.token_id("<|grounding|>") == nano_tok.token_id("<|grounding|>")


def test_reserved_tokenizer_keeps_published_ids():
    tok = build_reserved_tokenizer(129280, published_special_ids(128815))
    assert tok.vocab_size == 129280
    assert (tok.bos_id, tok.eos_id, tok.pad_id, tok.image_id) == (0, 1, 2, 128815)
    assert tok.token_id("<td>") == 128821 and tok.token_id("</td>") == 128822
    assert tok.token_id("<|User|>") == 128825 and tok.token_id("<|Assistant|>") == 128826
    ids = tok.encode("Hé<image>")
    assert ids[-1] == 128815 and tok.decode(ids) == "Hé<image>"


def test_errors(tmp_path, nano_tok):
    with pytest.raises(InputError, match="no tokenizer.json"):
        Tokenizer.from_dir(tmp_path)
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(InputError, match="unreadable tokenizer.json"):
        Tokenizer.from_dir(tmp_path)
    with pytest.raises(InputError, match="not in the vocabulary"):
        nano_tok.token_id("<|nope|>")
    assert IMAGE == "<image>"
