"""Checkpoint directories in the published layout: config.json, tokenizer.json, safetensors (+ index)."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

from minuscule.config import ModelConfig, write_json_atomic
from minuscule.errors import InputError
from minuscule.model.ocr import OCRModel, build_model, parameters_on_meta

INDEX_NAME = "model.safetensors.index.json"
SINGLE_NAME = "model.safetensors"
DTYPES = {"bf16": torch.bfloat16, "bfloat16": torch.bfloat16, "fp32": torch.float32, "float32": torch.float32,
          "fp16": torch.float16, "float16": torch.float16}
_DTYPE_NAMES = {torch.bfloat16: "bfloat16", torch.float32: "float32", torch.float16: "float16"}
_SAFETENSORS_DTYPES = {"BF16": torch.bfloat16, "F32": torch.float32, "F16": torch.float16, "F64": torch.float64}


@dataclass
class TensorReport:
    """What a directory holds compared with what the config's model expects."""

    expected: dict[str, tuple[int, ...]]
    found: dict[str, tuple[tuple[int, ...], str]]  # name -> (shape, file)
    dtypes: dict[str, str] = field(default_factory=dict)  # name -> safetensors dtype tag
    # Stored copies of shared tensors (name -> the model tensor they must equal); checked, not loaded.
    duplicates: dict[str, str] = field(default_factory=dict)

    @property
    def _wanted(self) -> dict[str, tuple[int, ...]]:
        return {**self.expected, **{d: self.expected[t] for d, t in self.duplicates.items()}}

    @property
    def missing(self) -> list[str]:
        return sorted(set(self.expected) - set(self.found))

    @property
    def unexpected(self) -> list[str]:
        return sorted(set(self.found) - set(self._wanted))

    @property
    def wrong_shapes(self) -> list[str]:
        return sorted(f"{n} {list(self.found[n][0])} (expected {list(s)})" for n, s in self._wanted.items()
                      if n in self.found and tuple(self.found[n][0]) != tuple(s))

    def problems(self) -> str:
        parts = []
        for label, items in (("missing", self.missing), ("unexpected", self.unexpected),
                             ("wrong shape", self.wrong_shapes)):
            if items:
                shown = ", ".join(items[:20]) + (f", … ({len(items) - 20} more)" if len(items) > 20 else "")
                parts.append(f"{len(items)} {label}: {shown}")
        return "; ".join(parts)


def tensor_files(directory: Path) -> dict[str, str]:
    """name -> file for every tensor, from the index when present, else from every *.safetensors file."""
    from safetensors import safe_open

    index = directory / INDEX_NAME
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        except (OSError, json.JSONDecodeError, KeyError, TypeError) as e:
            raise InputError(str(index), f"unreadable index: {e}") from None
        absent = sorted({f for f in weight_map.values() if not (directory / f).is_file()})
        if absent:
            raise InputError(str(index), f"names shard files that do not exist: {', '.join(absent)}")
        return dict(weight_map)
    files = sorted(directory.glob("*.safetensors"))
    if not files:
        raise InputError(str(directory), "no *.safetensors files")
    out: dict[str, str] = {}
    for f in files:
        with safe_open(f, framework="pt") as st:
            for name in st.keys():
                if name in out:
                    raise InputError(str(directory), f"tensor {name} is stored twice ({out[name]}, {f.name})")
                out[name] = f.name
    return out


def inspect_dir(directory: str | os.PathLike[str], cfg: ModelConfig | None = None) -> tuple[ModelConfig, TensorReport]:
    """Config and tensor comparison for a checkpoint directory, reading only the safetensors headers."""
    from safetensors import safe_open

    d = Path(directory)
    if not d.is_dir():
        raise InputError(str(d), "not a directory")
    cfg = cfg or ModelConfig.from_pretrained(d)
    expected = {n: tuple(p.shape) for n, p in build_model(cfg, device="meta").published_tensors().items()}
    files = tensor_files(d)
    found: dict[str, tuple[tuple[int, ...], str]] = {}
    dtypes: dict[str, str] = {}
    by_file: dict[str, list[str]] = {}
    for name, f in files.items():
        by_file.setdefault(f, []).append(name)
    for f, names in by_file.items():
        with safe_open(d / f, framework="pt") as st:
            stored = set(st.keys())
            for name in names:
                if name not in stored:
                    raise InputError(str(d / f), f"the index lists {name} but the file does not hold it")
                sl = st.get_slice(name)
                found[name] = (tuple(sl.get_shape()), f)
                dtypes[name] = sl.get_dtype()
    duplicates = {d: t for d, t in shared_duplicates(cfg).items() if d in found}
    return cfg, TensorReport(expected, found, dtypes, duplicates)


def shared_duplicates(cfg: ModelConfig) -> dict[str, str]:
    """Stored copies of tensors the FastMTP head shares with the decoder.

    jina-ocr-v1's shards reportedly carry the draft's embedding table again as `mtp_embed_tokens.*`
    (jina-ocr-v1.md §1.2, §1.7). With `mtp_share_embedding_weights` it must equal the decoder's
    table: loading checks that bit for bit and keeps one copy.
    """
    if cfg.has_mtp and cfg.mtp_share_embedding_weights:
        return {"mtp_embed_tokens.weight": "model.embed_tokens.weight"}
    return {}


def load(directory: str | os.PathLike[str], dtype: torch.dtype | str | None = None,
         device: str | torch.device = "cpu") -> OCRModel:
    """Load a checkpoint strictly: any missing, unexpected or wrongly shaped tensor is one InputError.

    Tensors are read one at a time from the memory-mapped files, in their stored dtype unless
    `dtype` (bf16/fp32/fp16) asks for a cast.
    """
    from safetensors import safe_open

    d = Path(directory)
    if isinstance(dtype, str) and dtype not in DTYPES:
        raise InputError(dtype, f"unknown dtype (choose from {', '.join(DTYPES)})")
    want = DTYPES[dtype] if isinstance(dtype, str) else dtype
    cfg, report = inspect_dir(d)
    problems = report.problems()
    if problems:
        raise InputError(str(d), f"checkpoint does not match its config: {problems}")
    with parameters_on_meta():
        model = OCRModel(cfg)
    params = model.published_tensors()
    by_file: dict[str, list[str]] = {}
    for name, (_, f) in report.found.items():
        if name not in report.duplicates:
            by_file.setdefault(f, []).append(name)
    for f, names in sorted(by_file.items()):
        with safe_open(d / f, framework="pt", device=str(device)) as st:
            for name in names:
                t = st.get_tensor(name)
                if want is not None:
                    t = t.to(want)
                _set_parameter(model, name, nn.Parameter(t, requires_grad=params[name].requires_grad))
    for dup, target in sorted(report.duplicates.items()):
        with safe_open(d / report.found[dup][1], framework="pt") as st:
            copy = st.get_tensor(dup)
        with safe_open(d / report.found[target][1], framework="pt") as st:
            same = torch.equal(copy, st.get_tensor(target))
        if not same:
            raise InputError(str(d), f"{dup} differs from {target}, but the config says the head shares it")
    model.to(device)  # buffers (CLIP position ids) follow the weights
    model.model.sync_encoder()
    return model.eval()


def _set_parameter(model: nn.Module, name: str, value: nn.Parameter) -> None:
    owner_name, _, leaf = name.rpartition(".")
    owner = model.get_submodule(owner_name) if owner_name else model
    owner._parameters[leaf] = value


def save(model: OCRModel, directory: str | os.PathLike[str], tokenizer=None,
         max_shard_bytes: int | None = None) -> Path:
    """Write config.json, tokenizer.json (when given) and the weights under their published names.

    One `model.safetensors` by default; with `max_shard_bytes`, `model-0000i-of-0000N.safetensors`
    shards plus `model.safetensors.index.json`. Every file is written atomically.
    """
    from safetensors.torch import save_file

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    tensors = {n: p.detach().contiguous().cpu() for n, p in model.published_tensors().items()}
    dtype_names = {_DTYPE_NAMES.get(t.dtype, str(t.dtype)) for t in tensors.values()}
    cfg = model.cfg.with_dtype_name(dtype_names.pop()) if len(dtype_names) == 1 else model.cfg
    shards: list[dict[str, torch.Tensor]] = [{}]
    size = 0
    for name in sorted(tensors):
        t = tensors[name]
        nbytes = t.numel() * t.element_size()
        if max_shard_bytes is not None and shards[-1] and size + nbytes > max_shard_bytes:
            shards.append({})
            size = 0
        shards[-1][name] = t
        size += nbytes
    for old in list(d.glob("*.safetensors")) + [d / INDEX_NAME]:
        old.unlink(missing_ok=True)
    if max_shard_bytes is None:
        _atomic(d / SINGLE_NAME, lambda tmp: save_file(shards[0], tmp, metadata={"format": "pt"}))
    else:
        n = len(shards)
        weight_map: dict[str, str] = {}
        for i, shard in enumerate(shards, 1):
            fname = f"model-{i:05d}-of-{n:05d}.safetensors"
            _atomic(d / fname, lambda tmp, s=shard: save_file(s, tmp, metadata={"format": "pt"}))
            weight_map.update({k: fname for k in shard})
        total = sum(t.numel() * t.element_size() for t in tensors.values())
        write_json_atomic(d / INDEX_NAME, {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))})
    cfg.save(d)
    if tokenizer is not None:
        tokenizer.save(d)
    return d


def _atomic(path: Path, write) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dtype_name(dtype: torch.dtype) -> str:
    return _DTYPE_NAMES.get(dtype, str(dtype).removeprefix("torch."))


def stored_dtype(report: TensorReport) -> str:
    """The single stored dtype of a directory's tensors ("bfloat16"), or "mixed"."""
    names = {dtype_name(_SAFETENSORS_DTYPES[t]) if t in _SAFETENSORS_DTYPES else t.lower() for t in report.dtypes.values()}
    return names.pop() if len(names) == 1 else ("mixed" if names else "none")
