"""Thin wrapper over `tokenizers` for a checkpoint's tokenizer.json, and the small nano tokenizer builder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from minuscule.atomic import atomic_write
from minuscule.errors import InputError, MissingExtraError

if TYPE_CHECKING:
    import tokenizers

# Exact spellings of DeepSeek-OCR's special tokens (fullwidth bars U+FF5C and U+2581 in the first three).
BOS = "<｜begin▁of▁sentence｜>"
EOS = "<｜end▁of▁sentence｜>"
PAD = "<｜▁pad▁｜>"
IMAGE = "<image>"
# In id order as published (128815..128826), after <image>.
PROMPT_TOKENS = ("<|ref|>", "<|/ref|>", "<|det|>", "<|/det|>", "<|grounding|>", "<td>", "</td>", "<tr>", "</tr>",
                 "<|User|>", "<|Assistant|>")

NANO_SPECIALS = (BOS, EOS, PAD, IMAGE, *PROMPT_TOKENS)
NANO_SPECIAL_IDS = {"bos": 0, "eos": 1, "pad": 2, "image": 3}
NANO_VOCAB_SIZE = 512

# A small built-in corpus so the nano BPE learns merges for the text the tests and demos use.
_NANO_CORPUS = (
    "Convert the document to markdown.", "OCR this image.", "Free OCR.", "Parse the figure.",
    "Transcribe the provided document image into a clean Markdown format, preserving the natural reading order.",
    "# Title\n\n## Section 1\n\nThe quick brown fox jumps over the lazy dog. 0123456789",
    "| a | b |\n|---|---|\n| 1 | 2 |", "<table><tr><td>cell</td><td>value</td></tr></table>",
    "Inline math $x^2 + y^2 = z^2$ and display math $$\\int_0^1 f(x)\\,dx$$ and \\(\\alpha\\) \\[\\beta\\]",
    "- item one\n- item two\n1. first\n2. second", "Abstract. Introduction. Results. Discussion. References.",
    "title text table image_caption sub_title figure formula header footer caption",
)


class Tokenizer:
    """encode/decode/token_id over a `tokenizers.Tokenizer`, with the special ids the model needs."""

    def __init__(self, tok: tokenizers.Tokenizer, source: str = "tokenizer"):
        self._tok = tok
        self.source = source
        self.bos_id = self.token_id(BOS)
        self.eos_id = self.token_id(EOS)
        self.pad_id = self.token_id(PAD)
        self.image_id = self.token_id(IMAGE)

    @classmethod
    def from_dir(cls, directory: str | os.PathLike[str]) -> Tokenizer:
        path = Path(directory) / "tokenizer.json"
        if not path.is_file():
            raise InputError(str(path), "no tokenizer.json in the checkpoint directory")
        tk = _tokenizers()
        try:
            tok = tk.Tokenizer.from_file(str(path))
        except Exception as e:  # the library raises a bare Exception for malformed files
            raise InputError(str(path), f"unreadable tokenizer.json: {e}") from None
        return cls(tok, str(path))

    @property
    def vocab_size(self) -> int:
        return self._tok.get_vocab_size(with_added_tokens=True)

    def encode(self, text: str) -> list[int]:
        """Ids of `text` without BOS/EOS (the prompt builders add those where a format wants them)."""
        return self._tok.encode(text, add_special_tokens=False).ids

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return self._tok.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def token_id(self, token: str) -> int:
        i = self._tok.token_to_id(token)
        if i is None:
            raise InputError(self.source, f"token {token!r} is not in the vocabulary")
        return i

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write tokenizer.json atomically into `directory`."""
        path = Path(directory) / "tokenizer.json"
        atomic_write(path, self._tok.to_str())
        return path


def build_nano_tokenizer(vocab_size: int = NANO_VOCAB_SIZE) -> Tokenizer:
    """A byte-level BPE trained on a small built-in corpus; special tokens take ids 0..14 in NANO_SPECIALS order."""
    tk = _tokenizers()
    tok = tk.Tokenizer(tk.models.BPE(unk_token=None))
    tok.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = tk.decoders.ByteLevel()
    trainer = tk.trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(NANO_SPECIALS),
                                     initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(list(_NANO_CORPUS) * 4, trainer=trainer)
    # The table/role tokens are ordinary added tokens in the published tokenizer (kept by decode);
    # marking all of them special keeps them whole when encoding.
    tok.add_special_tokens([tk.AddedToken(t, special=True, normalized=False) for t in NANO_SPECIALS])
    out = Tokenizer(tok, "nano tokenizer")
    want = {"bos": out.bos_id, "eos": out.eos_id, "pad": out.pad_id, "image": out.image_id}
    if want != NANO_SPECIAL_IDS or out.vocab_size > vocab_size:
        raise RuntimeError(f"nano tokenizer layout changed: {want}, size {out.vocab_size}")
    return out


def _tokenizers():
    try:
        import tokenizers
    except ImportError:
        raise MissingExtraError("tokenizers", "model") from None
    return tokenizers


def build_reserved_tokenizer(vocab_size: int, fixed: dict[str, int]) -> Tokenizer:
    """A byte-level tokenizer of exactly `vocab_size` ids for random-weight real-size models.

    The published 129k vocabulary cannot be recreated without downloading it; this one keeps the
    special tokens at their published ids (`fixed`), the 256 byte symbols after the first free ids,
    and fills every other id with a reserved `<｜place▁holder▁no▁N｜>` token (the name DeepSeek's
    own vocabulary uses for unused slots). No merges: text encodes byte by byte.
    """
    tk = _tokenizers()
    if len(set(fixed.values())) != len(fixed) or any(not 0 <= i < vocab_size for i in fixed.values()):
        raise ValueError("fixed token ids must be distinct and inside the vocabulary")
    alphabet = sorted(tk.pre_tokenizers.ByteLevel.alphabet())
    free = (i for i in range(vocab_size) if i not in set(fixed.values()))
    vocab = dict(fixed)
    for ch in alphabet:
        vocab[ch] = next(free)
    for n, i in enumerate(free):
        vocab[f"<｜place▁holder▁no▁{n}｜>"] = i
    tok = tk.Tokenizer(tk.models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = tk.decoders.ByteLevel()
    tok.add_special_tokens([tk.AddedToken(t, special=True, normalized=False) for t in fixed])
    return Tokenizer(tok, "reserved tokenizer")


def published_special_ids(image_token_id: int) -> dict[str, int]:
    """DeepSeek-OCR's special-token ids: BOS/EOS/PAD 0..2, then <image> and the prompt tokens in a row."""
    ids = {BOS: 0, EOS: 1, PAD: 2, IMAGE: image_token_id}
    ids.update({t: image_token_id + 1 + k for k, t in enumerate(PROMPT_TOKENS)})
    return ids
