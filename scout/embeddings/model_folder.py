"""What a local model folder says about its model: the files fastembed needs, read before it runs.

A folder is how an air-gapped machine gets a sentence-embedding model: the sentence-transformers
layout of an ONNX export (``model.onnx`` or ``onnx/model.onnx``, ``tokenizer.json``,
``tokenizer_config.json``, ``modules.json``, ``1_Pooling/config.json``, ``config.json``). The main
rule: what the folder's own files say (pooling, normalisation, dimension) is what runs, and a
folder that lacks something needed is refused with a ConfigError naming the file, before any model
is loaded. Nothing here imports an optional package.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from scout.errors import ConfigError

Pooling = Literal["CLS", "MEAN", "LAST_TOKEN"]
# Where an export keeps the model: optimum and sentence-transformers write onnx/model.onnx beside
# variants (model_O1.onnx, model_qint8_avx2.onnx, ...), which are only taken when named.
MODEL_FILES = ("model.onnx", "onnx/model.onnx", "model_optimized.onnx")
# sentence-transformers' pooling flags, as fastembed's pooling types; max, mean_sqrt_len and
# weightedmean pooling are not among fastembed's.
_POOLING_FLAGS: dict[str, Pooling] = {
    "pooling_mode_cls_token": "CLS",
    "pooling_mode_mean_tokens": "MEAN",
    "pooling_mode_lasttoken": "LAST_TOKEN",
}
_OTHER_POOLING = (
    "pooling_mode_max_tokens",
    "pooling_mode_mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens",
)
# The modules of a sentence-transformers pipeline fastembed runs: the transformer (the ONNX
# file), the pooling and a normalisation. A Dense layer or any other module after the pooling is
# not in an ONNX export of the transformer: without it, the vectors are not the model's.
_RUNNABLE_MODULES = ("Transformer", "Pooling", "Normalize")
# Every file here is a small JSON document; a larger one is not a model's configuration.
_MAX_JSON_BYTES = 1 << 20
# The tokenizer files fastembed reads (the two first are required), hashed into the fingerprint
# with the model: a new vocabulary makes new vectors as surely as new weights do.
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")
_OPTIONAL_FILES = ("special_tokens_map.json", "config.json")


@dataclass(frozen=True)
class ModelFolder:
    """A model folder as fastembed is to run it."""

    path: Path
    model_file: str  # relative to path, with "/" separators
    pooling: Pooling
    normalize: bool
    dimension: int
    # sha256 over every file fastembed reads from the folder and the settings above: two folders
    # with the same fingerprint make the same vectors
    fingerprint: str


def read(path: Path) -> ModelFolder:
    """The folder's model, or ConfigError naming the file that is missing or says too little."""
    model_file = next((name for name in MODEL_FILES if (path / name).is_file()), None)
    if model_file is None:
        raise ConfigError(
            f"{path}: no model.onnx (nor onnx/model.onnx): the folder must hold the model "
            "exported to ONNX, as sentence-transformers' export_to_onnx or optimum-cli write it"
        )
    for name in _TOKENIZER_FILES:
        if not (path / name).is_file():
            raise ConfigError(f"{path / name}: missing; fastembed reads the tokenizer from it")
    _max_tokens(path / "tokenizer_config.json")
    pooling_config, normalize = _pipeline(path)
    pooling = _pooling(pooling_config)
    dimension = _dimension(pooling_config, path / "config.json")
    settings = f"{model_file}\n{pooling}\n{normalize}\n{dimension}\n"
    files = [path / model_file, *_external_data(path / model_file)]
    files += [path / name for name in (*_TOKENIZER_FILES, *_OPTIONAL_FILES)]
    return ModelFolder(
        path=path,
        model_file=model_file,
        pooling=pooling,
        normalize=normalize,
        dimension=dimension,
        fingerprint=_fingerprint(settings, [f for f in files if f.is_file()]),
    )


def _pipeline(path: Path) -> tuple[Path, bool]:
    """The pooling module's config file and whether a Normalize module follows it."""
    modules_file = path / "modules.json"
    if not modules_file.is_file():
        # an export without modules.json: the pooling folder sentence-transformers names first
        return path / "1_Pooling" / "config.json", False
    modules = _json(modules_file)
    if not isinstance(modules, list) or not all(isinstance(m, dict) for m in modules):
        raise ConfigError(f"{modules_file}: expected a list of modules")
    kinds = [str(module.get("type", "")).rpartition(".")[2] for module in modules]
    other = [kind for kind in kinds if kind not in _RUNNABLE_MODULES]
    if other:
        raise ConfigError(
            f"{modules_file}: module {other[0]!r} is not one fastembed runs (it runs the "
            "transformer, a pooling and a normalisation)"
        )
    if "Pooling" not in kinds:
        raise ConfigError(f"{modules_file}: no Pooling module (how token vectors become one)")
    pooling = modules[kinds.index("Pooling")]
    return path / str(pooling.get("path", "")) / "config.json", "Normalize" in kinds


def _pooling(config_file: Path) -> Pooling:
    if not config_file.is_file():
        raise ConfigError(
            f"{config_file}: missing; it says how the model's token vectors become one vector "
            "(a sentence-transformers folder has it)"
        )
    config = _object(config_file)
    chosen = [kind for flag, kind in _POOLING_FLAGS.items() if config.get(flag) is True]
    unsupported = [flag for flag in _OTHER_POOLING if config.get(flag) is True]
    if unsupported:
        raise ConfigError(f"{config_file}: {unsupported[0]} is not a pooling fastembed runs")
    if len(chosen) != 1:
        raise ConfigError(
            f"{config_file}: expected one of {', '.join(_POOLING_FLAGS)} true, found {len(chosen)}"
        )
    return chosen[0]


def _dimension(pooling_file: Path, model_config: Path) -> int:
    """The vectors' length: the pooling's word_embedding_dimension, else config.json's
    hidden_size."""
    value = _object(pooling_file).get("word_embedding_dimension")
    if value is None and model_config.is_file():
        value = _object(model_config).get("hidden_size")
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= 65536:
        raise ConfigError(
            f"{pooling_file}: no word_embedding_dimension (nor hidden_size in {model_config}); "
            "the model's vector length is needed"
        )
    return value


def _max_tokens(tokenizer_config: Path) -> None:
    """fastembed cuts texts at this many tokens and refuses a tokenizer that does not say."""
    config = _object(tokenizer_config)
    values = [config.get("model_max_length"), config.get("max_length")]
    # transformers writes 1e30 when the length is unknown
    if not any(type(v) is int and 0 < v <= 1_000_000 for v in values):
        raise ConfigError(
            f"{tokenizer_config}: no model_max_length; set it to the longest input the model "
            "takes in tokens (512 for most BERT-sized models)"
        )


def _external_data(model: Path) -> list[Path]:
    """Weights an ONNX file keeps beside it (models over 2 GB must): model.onnx_data or
    model.onnx.data, as torch.onnx and optimum name them."""
    return sorted(p for p in model.parent.glob(f"{model.name}?data*") if p.is_file())


def _fingerprint(settings: str, files: list[Path]) -> str:
    digest = hashlib.sha256(settings.encode())
    for file in files:
        digest.update(f"{file.name}\n".encode())
        try:
            with file.open("rb") as stream:
                digest.update(hashlib.file_digest(stream, "sha256").digest())
        except OSError as exc:
            raise ConfigError(f"{file}: cannot read ({exc.strerror or exc})") from exc
    return digest.hexdigest()


def _object(path: Path) -> dict[str, Any]:
    value = _json(path)
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    return value


def _json(path: Path) -> Any:
    try:
        with path.open("rb") as stream:
            data = stream.read(_MAX_JSON_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if len(data) > _MAX_JSON_BYTES:
        raise ConfigError(f"{path}: over {_MAX_JSON_BYTES} bytes; not a model's configuration")
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ConfigError(f"{path}: not JSON ({exc})") from exc
