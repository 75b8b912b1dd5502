"""The persisted cache of the fielded scorer's per-document features."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from memrecall.actors import SimulatedSelector
from memrecall.engine.scoring.fielded import DocumentFeatures, FieldedIndex
from memrecall.events import MemoryDocument
from memrecall.sources import feature_store
from memrecall.sources.feature_store import FeatureStore, feature_key
from memrecall.sources.scanner import MemoryTree
from memrecall.sources.source import FieldedRanking
from memrecall.testing import open_test_engine
from memrecall.tooling.evaluation import load_corpus

FIXTURE = Path(__file__).parent / "fixtures" / "recall-eval.json"
QUERIES = ("deploy rollback", "回滚", "デプロイ", "owner of the dashboard", "zebra")


def count_analyses(monkeypatch: pytest.MonkeyPatch) -> list[MemoryDocument]:
    """Record every document ``DocumentFeatures.of`` analyses from now on."""
    calls: list[MemoryDocument] = []
    real = DocumentFeatures.of

    def spy(
        cls: type[DocumentFeatures], /, document: MemoryDocument, **options: Any
    ) -> DocumentFeatures:
        calls.append(document)
        return real(document, **options)

    monkeypatch.setattr(DocumentFeatures, "of", classmethod(spy))
    return calls


def test_stored_features_rank_exactly_like_fresh_ones(tmp_path: Path) -> None:
    documents = load_corpus(FIXTURE).documents
    path = tmp_path / "f.bin"
    first = FeatureStore(path)
    first.features(documents)
    assert first.save(documents)
    loaded = FeatureStore(path).features(documents)
    assert loaded == [DocumentFeatures.of(d) for d in documents]
    fresh = FieldedIndex.of(documents)
    again = FieldedIndex.from_features(loaded)
    for query in QUERIES:
        assert again.rank_and_fast(query, 180) == fresh.rank_and_fast(query, 180)


def test_a_loaded_store_analyses_nothing_it_already_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    documents = load_corpus(FIXTURE).documents
    path = tmp_path / "f.bin"
    store = FeatureStore(path)
    store.features(documents)
    store.save(documents)
    calls = count_analyses(monkeypatch)
    changed = [
        *documents[1:],
        documents[0].__class__(
            **{
                **{f: getattr(documents[0], f) for f in documents[0].__struct_fields__},
                "body": documents[0].body + " edited",
            }
        ),
    ]
    FeatureStore(path).features(changed)
    assert calls == [changed[-1]]  # only the edited document is analysed again


def test_keys_cover_every_input_of_the_features() -> None:
    document = load_corpus(FIXTURE).documents[0]
    base = feature_key(document)
    replace = msgspec.structs.replace
    assert feature_key(replace(document, title="x")) != base
    assert feature_key(replace(document, description="x")) != base
    assert feature_key(replace(document, body="x")) != base
    assert feature_key(replace(document, mtime=1.5)) != base
    assert feature_key(replace(document, path="/elsewhere.md")) == base


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],
        lambda data: data[:-40] + bytes(b ^ 0xFF for b in data[-40:]),
        lambda data: b"not msgpack at all",
        lambda data: data.replace(
            feature_store.analysis_version().encode(),
            b"x" * len(feature_store.analysis_version()),
        ),
    ],
    ids=["truncated", "flipped", "garbage", "other-version"],
)
def test_a_damaged_file_is_reported_and_ignored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: object
) -> None:
    documents = load_corpus(FIXTURE).documents[:10]
    path = tmp_path / "f.bin"
    store = FeatureStore(path)
    store.features(documents)
    store.save(documents)
    assert callable(damage)
    path.write_bytes(damage(path.read_bytes()))
    with caplog.at_level(logging.WARNING, logger="memrecall.features"):
        got = FeatureStore(path).features(documents)
    assert got == [DocumentFeatures.of(d) for d in documents]
    assert "ignoring" in caplog.text


def test_save_keeps_only_the_current_pool(tmp_path: Path) -> None:
    documents = load_corpus(FIXTURE).documents
    path = tmp_path / "f.bin"
    ranking = FieldedRanking(FeatureStore(path))
    ranking.index(tuple(documents))
    ranking.index(tuple(documents[:5]))
    assert ranking.save()
    reloaded = FeatureStore(path)
    reloaded.features([])
    assert set(reloaded._entries) == {feature_key(d) for d in documents[:5]}
    assert not ranking.save()  # nothing changed since


async def test_an_engine_reuses_the_features_of_the_previous_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for i in range(5):
        (project / f"t{i}.md").write_text(
            f"---\nname: Deploy note {i}\ndescription: d\ntype: project\n---\n\nbody {i}\n",
            encoding="utf-8",
        )
    tree = MemoryTree.of(project=str(project))
    cache = tmp_path / "cache" / "catalog.bin"
    selector = SimulatedSelector(latency=0.0, choose=lambda request: [])
    async with open_test_engine(
        tree, selector=selector, catalog_cache=cache, scan_in_thread=False
    ) as engine:
        await (await engine.open_session()).user_query("deploy note")
    # The catalog keeps the features in its own file: one cache file, not two.
    assert await trio.Path(str(cache)).exists()
    assert not await trio.Path(str(cache) + ".features").exists()
    calls = count_analyses(monkeypatch)
    async with open_test_engine(
        tree, selector=selector, catalog_cache=cache, scan_in_thread=False
    ) as engine:
        block = await (await engine.open_session()).user_query("deploy note")
        assert block is not None
    assert calls == []
