"""The fastembed kind, running a real ONNX model through fastembed with nothing downloaded.

The model is built by the test (tests/helpers/tiny_model.py: an embedding, a dense layer, a
word-level tokenizer, the sentence-transformers files) and loaded the way a user's folder is
(``model = <folder>``). Covered: what comes out (one float32 row per text, in order, the same
every time and whatever the batching, nearer for texts that share words), inputs at their
worst (none, huge, control characters, a lone surrogate), a deadline, folders that lack a file or
say too little (ConfigError naming the file), broken files and unusable output (EmbeddingError),
names fastembed does not list or cannot download (HF_HUB_OFFLINE, a tmp cache: no network), the
extra not installed, and the name the store records (a new file re-embeds, a copy does not).
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from scout.config import EmbeddingsConfig, load_config
from scout.embeddings import fastembed_local, model_folder
from scout.errors import ConfigError, EmbeddingError
from tests.helpers import tiny_model
from tests.helpers.config import render_config
from tests.helpers.growth import assert_linear
from tests.helpers.sdk import Lazy

# fastembed (1 s to import) and onnx (0.8 s) are paid by one worker, not by each.
pytestmark = pytest.mark.xdist_group("fastembed")
numpy = Lazy("numpy")

TEXTS = [
    "How do I schedule a pipeline to run every night?",
    "A pipeline schedule runs pipelines at regular intervals, using cron.",
    "A merge request needs two approvals before it can merge.",
    "Protected branches and protected tags.",
    "Runners pick up jobs; a job runs in a docker image.",
    "Artifacts of a build are kept in the cache.",
    "Release notes for every release tag.",
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_model.build(tmp_path_factory.mktemp("models") / "tiny")


@pytest.fixture
def folder(built: Path, tmp_path: Path) -> Path:
    """A copy of the model this test may change."""
    return Path(shutil.copytree(built, tmp_path / "tiny"))


def embedder(model: Path | str, **settings: Any) -> fastembed_local.FastembedEmbedder:
    return fastembed_local.make(EmbeddingsConfig(kind="fastembed", model=str(model), **settings))


def cosine(a: Any, b: Any) -> float:
    return float(a @ b / (numpy.linalg.norm(a) * numpy.linalg.norm(b)))


def test_a_folder_model_gives_one_float32_row_per_text_in_order(built: Path) -> None:
    model = embedder(built)
    vectors = model.embed(TEXTS)
    assert vectors.shape == (len(TEXTS), tiny_model.DIMENSION) == (len(TEXTS), model.dimension)
    assert vectors.dtype == numpy.float32
    for text, row in zip(TEXTS, vectors, strict=True):
        assert numpy.allclose(model.embed([text])[0], row, atol=1e-6)
    # modules.json holds a Normalize module: fastembed normalises, as the folder says
    assert numpy.allclose(numpy.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_the_same_texts_give_the_same_vectors_in_another_embedder(built: Path) -> None:
    first, second = embedder(built).embed(TEXTS), embedder(built).embed(TEXTS)
    assert numpy.array_equal(first, second)


def test_texts_that_share_words_are_nearer_than_texts_that_do_not(built: Path) -> None:
    question, schedules, merges, runners = embedder(built).embed(
        [TEXTS[0], TEXTS[1], TEXTS[2], TEXTS[4]]
    )
    assert cosine(question, schedules) > cosine(question, merges) + 0.2
    assert cosine(question, schedules) > cosine(question, runners) + 0.2
    assert cosine(question, question) == pytest.approx(1.0)


@pytest.mark.parametrize("batch", [1, 2, 3, 6, 7, 64])
def test_batching_gives_the_vectors_of_one_batch(built: Path, batch: int) -> None:
    whole = embedder(built, batch=64).embed(TEXTS)
    assert numpy.allclose(embedder(built, batch=batch).embed(TEXTS), whole, atol=1e-6)


def test_no_texts_give_no_rows_of_the_model_dimension(built: Path) -> None:
    vectors = embedder(built).embed([])
    assert vectors.shape == (0, tiny_model.DIMENSION)
    assert vectors.dtype == numpy.float32


def test_a_long_text_is_cut_at_the_tokenizer_maximum(built: Path) -> None:
    words = "pipeline runner merge cache deploy".split() * 200  # 1,000 known words
    model = embedder(built)
    cut = tiny_model.MAX_TOKENS - 2  # [CLS] and [SEP] take two
    long, first, one_more = model.embed(
        [" ".join(words), " ".join(words[:cut]), " ".join(words[: cut - 1])]
    )
    assert numpy.allclose(long, first, atol=1e-6)
    assert not numpy.allclose(long, one_more, atol=1e-6)


def test_a_huge_text_reaches_the_tokenizer_cut_at_max_chars(built: Path) -> None:
    # Blanks make no token: without the cut, "runner" would be read after them.
    huge = "pipeline" + " " * fastembed_local.MAX_CHARS + "runner"
    model = embedder(built)
    cut, pipeline, both = model.embed([huge, "pipeline", "pipeline runner"])
    assert numpy.allclose(cut, pipeline, atol=1e-6)
    assert not numpy.allclose(cut, both, atol=1e-6)


def test_embedding_grows_linearly_with_the_text_up_to_the_cut(built: Path) -> None:
    model = embedder(built)
    assert_linear(lambda n: lambda: model.embed(["pipeline!\x1b" * (n // 10)]), 4096)


@pytest.mark.parametrize(
    "text",
    [
        "\x00\x01\x07\x08\x7f",
        "\x1b[31mred\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07",
        "\u202eenilepip\u202c \u200b\ufeff",
        "\ud800 a lone surrogate \udfff",  # as a JSON question's "\ud800" decodes
        "",
        " \t\n\r ",
        "[CLS] [SEP] [PAD] [UNK] [MASK]",
    ],
    ids=["controls", "escapes", "bidi", "surrogates", "empty", "blank", "special-tokens"],
)
def test_a_text_of_control_characters_gives_a_finite_row(built: Path, text: str) -> None:
    vectors = embedder(built).embed([text, "pipeline"])
    assert vectors.shape == (2, tiny_model.DIMENSION)
    assert numpy.isfinite(vectors).all()


def test_a_passed_deadline_is_an_embedding_error(built: Path) -> None:
    model = embedder(built)
    with pytest.raises(EmbeddingError, match="ran out of time"):
        model.embed(TEXTS, deadline=time.monotonic() - 0.001)
    assert model.embed(TEXTS[:1], deadline=time.monotonic() + 600).shape[0] == 1


def test_threads_share_one_embedder(built: Path) -> None:
    model = embedder(built)  # loaded by whichever thread comes first, once
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: model.embed(TEXTS), range(8)))
    assert all(numpy.allclose(r, results[0], atol=1e-6) for r in results)


def test_unusable_numbers_are_an_embedding_error(tmp_path: Path) -> None:
    model = embedder(tiny_model.build(tmp_path / "nan", broken_word="cron"))
    assert numpy.isfinite(model.embed(["pipeline schedules"])).all()
    with pytest.raises(EmbeddingError, match="not finite"):
        model.embed(["pipeline schedules", "every night by cron"])


def test_vectors_of_another_length_than_the_folder_says_are_an_embedding_error(
    folder: Path,
) -> None:
    _edit_json(folder / "1_Pooling/config.json", word_embedding_dimension=16)
    with pytest.raises(EmbeddingError, match=r"shape \(64,\), not \(16,\)"):
        embedder(folder).embed(TEXTS)


def _remove(name: str) -> Callable[[Path], object]:
    return lambda folder: (folder / name).unlink()


def _edit_json(path: Path, **values: Any) -> None:
    path.write_text(json.dumps({**json.loads(path.read_text()), **values}), encoding="utf-8")


def _modules(*kinds: str) -> Callable[[Path], object]:
    entries = [{"path": "1_Pooling", "type": f"sentence_transformers.models.{k}"} for k in kinds]
    return lambda folder: (folder / "modules.json").write_text(json.dumps(entries))


FOLDERS_LACKING = [
    ("no-model", _remove("model.onnx"), "no model.onnx"),
    ("no-tokenizer", _remove("tokenizer.json"), "tokenizer.json: missing"),
    ("no-tokenizer-config", _remove("tokenizer_config.json"), "tokenizer_config.json: missing"),
    ("no-pooling", _remove("1_Pooling/config.json"), "1_Pooling/config.json: missing"),
    (
        "no-max-length",
        lambda f: _edit_json(f / "tokenizer_config.json", model_max_length=int(1e30)),
        "tokenizer_config.json: no model_max_length",
    ),
    (
        "max-pooling",
        lambda f: _edit_json(
            f / "1_Pooling/config.json",
            pooling_mode_mean_tokens=False,
            pooling_mode_max_tokens=True,
        ),
        "pooling_mode_max_tokens is not a pooling fastembed runs",
    ),
    (
        "no-pooling-flag",
        lambda f: _edit_json(f / "1_Pooling/config.json", pooling_mode_mean_tokens=False),
        "found 0",
    ),
    (
        "two-poolings",
        lambda f: _edit_json(f / "1_Pooling/config.json", pooling_mode_cls_token=True),
        "found 2",
    ),
    ("dense-module", _modules("Transformer", "Pooling", "Dense"), "module 'Dense' is not one"),
    ("no-pooling-module", _modules("Transformer", "Normalize"), "no Pooling module"),
    (
        "modules-not-a-list",
        lambda f: (f / "modules.json").write_text('{"a": 1}'),
        "modules.json: expected a list",
    ),
    (
        "pooling-not-json",
        lambda f: (f / "1_Pooling/config.json").write_bytes(b"\xff{"),
        "config.json: not JSON",
    ),
    (
        "pooling-nested",
        lambda f: (f / "1_Pooling/config.json").write_text("[" * 100_000 + "]" * 100_000),
        "config.json: not JSON",
    ),
    (
        "pooling-huge",
        lambda f: (f / "1_Pooling/config.json").write_text(" " * (2 << 20) + "{}"),
        "config.json: over 1048576 bytes",
    ),
    (
        "no-dimension",
        lambda f: (
            _edit_json(f / "1_Pooling/config.json", word_embedding_dimension=None),
            (f / "config.json").unlink(),
        ),
        "no word_embedding_dimension",
    ),
]


@pytest.mark.parametrize(
    ("change", "message"),
    [case[1:] for case in FOLDERS_LACKING],
    ids=[case[0] for case in FOLDERS_LACKING],
)
def test_a_folder_lacking_what_is_needed_is_a_config_error_naming_the_file(
    folder: Path, change: Callable[[Path], object], message: str
) -> None:
    change(folder)
    with pytest.raises(ConfigError) as raised:
        embedder(folder)
    assert message in str(raised.value)
    assert str(folder.resolve()) in str(raised.value)
    assert "\n" not in str(raised.value)


BROKEN_FILES = [
    ("garbage-onnx", "model.onnx", lambda data: b"\x08\x07garbage" * 100),
    ("truncated-onnx", "model.onnx", lambda data: data[: len(data) // 2]),
    ("empty-onnx", "model.onnx", lambda data: b""),
    ("tokenizer-not-json", "tokenizer.json", lambda data: b"{not json"),
    ("tokenizer-of-nothing", "tokenizer.json", lambda data: b"{}"),
]


@pytest.mark.parametrize(
    ("name", "damage"),
    [case[1:] for case in BROKEN_FILES],
    ids=[case[0] for case in BROKEN_FILES],
)
def test_a_broken_model_file_is_an_embedding_error(
    folder: Path, name: str, damage: Callable[[bytes], bytes]
) -> None:
    (folder / name).write_bytes(damage((folder / name).read_bytes()))
    with pytest.raises(EmbeddingError) as raised:
        embedder(folder).embed(TEXTS)
    assert f"the fastembed model in {folder.resolve()} could not be loaded: " in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_model_in_onnx_subfolder_with_its_external_data_is_found(folder: Path) -> None:
    (folder / "onnx").mkdir()
    (folder / "model.onnx").rename(folder / "onnx/model.onnx")
    before = embedder(folder)
    (folder / "onnx/model.onnx_data").write_bytes(b"weights kept beside the graph")
    after = embedder(folder)
    assert after.embed(TEXTS[:1]).shape == (1, tiny_model.DIMENSION)
    assert before.name != after.name  # the external data is part of the model


def test_a_name_neither_listed_nor_a_folder_is_a_config_error(tmp_path: Path) -> None:
    for model in ("acme/no-such-model", str(tmp_path / "missing-folder")):
        with pytest.raises(ConfigError, match="is neither a folder nor a model fastembed lists"):
            embedder(model)


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    # fastembed reads the variable on every load: only its cache is looked at, no network
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.mark.usefixtures("offline")
def test_a_listed_model_that_cannot_be_downloaded_is_an_embedding_error(tmp_path: Path) -> None:
    model = embedder("baai/bge-small-en-v1.5", cache_dir=tmp_path / "cache")
    assert model.name == "fastembed:BAAI/bge-small-en-v1.5"  # fastembed's spelling
    assert model.dimension == 384
    with pytest.raises(EmbeddingError) as raised:
        model.embed(TEXTS)
    message = str(raised.value)
    assert message.startswith("fastembed could not download model 'BAAI/bge-small-en-v1.5' in")
    assert "set model to a local folder" in message
    assert "\n" not in message


@pytest.mark.usefixtures("offline")
def test_a_question_never_waits_for_a_download(tmp_path: Path) -> None:
    model = embedder("BAAI/bge-small-en-v1.5", cache_dir=tmp_path / "cache")
    with pytest.raises(EmbeddingError, match="is not downloaded in .*; scout index downloads it"):
        model.embed(["how do I run a pipeline?"], deadline=time.monotonic() + 600)


def test_without_the_extra_making_one_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch, built: Path
) -> None:
    monkeypatch.setitem(sys.modules, "fastembed", None)  # what an environment without it gives
    with pytest.raises(ConfigError, match=r"pip install 'scout\[embeddings\]'"):
        embedder(built)


def test_the_name_follows_the_files_not_their_place_or_times(folder: Path, tmp_path: Path) -> None:
    name = embedder(folder).name
    assert name.startswith("fastembed:tiny#") and len(name) == len("fastembed:tiny#") + 12
    copy = Path(shutil.copytree(folder, tmp_path / "elsewhere" / "tiny"))  # new times
    assert embedder(copy).name == name
    tokenizer = json.loads((copy / "tokenizer.json").read_text())
    tokenizer["model"]["vocab"]["pipelines"], tokenizer["model"]["vocab"]["pipeline"] = (
        tokenizer["model"]["vocab"]["pipeline"],
        tokenizer["model"]["vocab"]["pipelines"],
    )
    (copy / "tokenizer.json").write_text(json.dumps(tokenizer))
    assert embedder(copy).name != name
    data = bytearray((folder / "model.onnx").read_bytes())
    data[-5] ^= 1  # same size, one bit
    (folder / "model.onnx").write_bytes(bytes(data))
    assert embedder(folder).name != name


@pytest.mark.parametrize(
    ("files", "pooling", "normalize", "dimension"),
    [
        ({}, "MEAN", True, 64),
        ({"modules.json": None}, "MEAN", False, 64),
        (
            {
                "1_Pooling/config.json": {
                    "pooling_mode_mean_tokens": False,
                    "pooling_mode_cls_token": True,
                }
            },
            "CLS",
            True,
            64,
        ),
        (
            {
                "1_Pooling/config.json": {
                    "pooling_mode_mean_tokens": False,
                    "pooling_mode_lasttoken": True,
                }
            },
            "LAST_TOKEN",
            True,
            64,
        ),
        ({"config.json": {"hidden_size": 48}}, "MEAN", True, 64),
        (
            {
                "1_Pooling/config.json": {"word_embedding_dimension": None},
                "config.json": {"hidden_size": 48},
            },
            "MEAN",
            True,
            48,
        ),
    ],
    ids=["as-built", "no-modules", "cls", "last-token", "pooling-dimension-first", "hidden-size"],
)
def test_a_folder_is_read_as_its_files_say(
    folder: Path, files: dict[str, Any], pooling: str, normalize: bool, dimension: int
) -> None:
    for name, values in files.items():
        if values is None:
            (folder / name).unlink()
        else:
            _edit_json(folder / name, **values)
    read = model_folder.read(folder)
    assert (read.model_file, read.pooling, read.normalize, read.dimension) == (
        "model.onnx",
        pooling,
        normalize,
        dimension,
    )


def test_a_relative_model_folder_is_the_config_files(tmp_path: Path, built: Path) -> None:
    shutil.copytree(built, tmp_path / "models" / "tiny")
    for model, expected in [
        ("models/tiny", str((tmp_path / "models" / "tiny").resolve())),
        ("BAAI/bge-small-en-v1.5", "BAAI/bge-small-en-v1.5"),
    ]:
        section = f'[retrieval.embeddings]\nkind = "fastembed"\nmodel = "{model}"\n'
        toml = render_config(tmp_path / "estate") + "\n" + section
        (tmp_path / "scout.toml").write_text(toml, encoding="utf-8")
        embeddings = load_config(tmp_path / "scout.toml").retrieval.embeddings
        assert embeddings is not None and embeddings.model == expected
