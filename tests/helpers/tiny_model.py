"""A tiny sentence-embedding model written to a folder, for tests that run fastembed for real.

The folder has the sentence-transformers layout an exported model has (``model.onnx``,
``tokenizer.json``, ``tokenizer_config.json``, ``special_tokens_map.json``, ``config.json``,
``modules.json``, ``1_Pooling/config.json``), so ``[retrieval.embeddings] kind = "fastembed"``
with ``model = <folder>`` loads it through the same path as a real model, with nothing
downloaded. The graph is a BERT reduced to its first and last steps: a token embedding plus a
token-type embedding, one dense layer, the padding masked out, ``last_hidden_state`` out
(fastembed mean-pools it). The tokenizer knows ``vocabulary`` as whole lower-cased words; any
other word is ``[UNK]``, whose vector is zero, so it adds nothing to a text's direction: texts
that share known words are nearer than texts that share none. About 17 KB; built in
milliseconds. onnx, numpy and tokenizers are imported when a model is built, not when this
module is (onnx alone takes 0.8 s, which every test worker would pay while collecting).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokenizers import Tokenizer

# GitLab documentation words, no stop words: texts near each other share what they are about.
VOCABULARY = (
    "pipeline pipelines schedule schedules cron nightly runner runners job jobs merge request "
    "requests approval approvals review branch branches protected tag tags release releases "
    "deploy deployment environment variable variables secret token tokens project projects group "
    "groups issue issues label labels milestone wiki page pages docker image registry cache "
    "artifact artifacts build test night"
).split()
SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")
DIMENSION = 64
MAX_TOKENS = 64  # the tokenizer's model_max_length: longer texts are cut to this many tokens


def build(
    folder: Path,
    *,
    vocabulary: Sequence[str] = VOCABULARY,
    dimension: int = DIMENSION,
    max_tokens: int = MAX_TOKENS,
    seed: int = 7,
    broken_word: str | None = None,
) -> Path:
    """Write the model's files into ``folder`` (created) and return it. ``broken_word``, one of
    ``vocabulary``, gets a vector of NaN: a model whose output for a text holding it is unusable."""
    words = list(dict.fromkeys(word.lower() for word in vocabulary))
    vocab = {token: index for index, token in enumerate([*SPECIALS, *words])}
    folder.mkdir(parents=True, exist_ok=True)
    broken = None if broken_word is None else vocab[broken_word.lower()]
    (folder / "model.onnx").write_bytes(_graph(len(vocab), dimension, seed, broken))
    _tokenizer(vocab).save(str(folder / "tokenizer.json"))
    files = {
        "config.json": {
            "model_type": "bert",
            "hidden_size": dimension,
            "vocab_size": len(vocab),
            "pad_token_id": vocab["[PAD]"],
        },
        "tokenizer_config.json": {
            "model_max_length": max_tokens,
            "do_lower_case": True,
            "pad_token": "[PAD]",
            "unk_token": "[UNK]",
            "cls_token": "[CLS]",
            "sep_token": "[SEP]",
        },
        "special_tokens_map.json": {
            "pad_token": "[PAD]",
            "unk_token": "[UNK]",
            "cls_token": "[CLS]",
            "sep_token": "[SEP]",
        },
        "modules.json": [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {
                "idx": 1,
                "name": "1",
                "path": "1_Pooling",
                "type": "sentence_transformers.models.Pooling",
            },
            {
                "idx": 2,
                "name": "2",
                "path": "2_Normalize",
                "type": "sentence_transformers.models.Normalize",
            },
        ],
        "1_Pooling/config.json": {
            "word_embedding_dimension": dimension,
            "pooling_mode_cls_token": False,
            "pooling_mode_mean_tokens": True,
            "pooling_mode_max_tokens": False,
            "pooling_mode_mean_sqrt_len_tokens": False,
        },
    }
    for name, content in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(json.dumps(content, indent=2), encoding="utf-8")
    return folder


def _graph(vocabulary: int, dimension: int, seed: int, broken: int | None) -> bytes:
    """The ONNX model: inputs as fastembed feeds a BERT, ``last_hidden_state`` out."""
    import numpy
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = numpy.random.default_rng(seed)
    words = rng.standard_normal((vocabulary, dimension)).astype(numpy.float32)
    words[: len(SPECIALS)] = 0.0  # [PAD], [UNK], [CLS], [SEP] carry no meaning of their own
    if broken is not None:
        words[broken] = numpy.nan
    types = (0.01 * rng.standard_normal((2, dimension))).astype(numpy.float32)
    # near the identity, so the dense layer keeps which words a text holds
    dense = (numpy.eye(dimension) + 0.1 * rng.standard_normal((dimension, dimension))).astype(
        numpy.float32
    )
    nodes = [
        helper.make_node("Gather", ["words", "input_ids"], ["word_vectors"]),
        helper.make_node("Gather", ["types", "token_type_ids"], ["type_vectors"]),
        helper.make_node("Add", ["word_vectors", "type_vectors"], ["summed"]),
        helper.make_node("MatMul", ["summed", "dense"], ["hidden"]),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask", "last_axis"], ["mask3"]),
        helper.make_node("Mul", ["hidden", "mask3"], ["last_hidden_state"]),
    ]
    ids = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", dimension]
    )
    initializers = [
        numpy_helper.from_array(words, "words"),
        numpy_helper.from_array(types, "types"),
        numpy_helper.from_array(dense, "dense"),
        numpy_helper.from_array(numpy.array([-1], dtype=numpy.int64), "last_axis"),
    ]
    graph = helper.make_graph(nodes, "tiny_sentence_model", ids, [output], initializers)
    # opset 17 and IR 8: what onnxruntime releases of the last years all load
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(model)
    return bytes(model.SerializeToString())


def _tokenizer(vocab: dict[str, int]) -> Tokenizer:
    """A BERT-shaped word-level tokenizer: lower-cased words, ``[CLS] text [SEP]``."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tokenizer.enable_padding(pad_id=vocab["[PAD]"], pad_token="[PAD]")
    return tokenizer
