"""The suite's prefetch of the blind sets' embeddings (tests/conftest.py): held still, it
reads and embeds nothing; the replays run last."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Literal

import pytest

from memrecall.engine.scoring.features import passage_of
from memrecall.tooling.evaluation import load_corpus
from tests.conftest import FIXTURES, REPLAYS, Prefetch, replayed_texts


def _source(read: list[int]) -> Iterator[tuple[Literal["query", "passage"], str]]:
    for i in range(3):
        read.append(i)
        yield "query", str(i)


def test_a_held_prefetch_reads_and_embeds_nothing_until_let_go() -> None:
    prefetch = Prefetch()
    read: list[int] = []
    embedded: list[str] = []

    def embed_all() -> None:
        embedded.extend(text for _, text in prefetch.texts(_source(read)))

    with prefetch.held():  # not running yet: held at once
        worker = threading.Thread(target=prefetch.run, args=(embed_all,))
        worker.start()
        with prefetch._state:  # until it waits for the next text
            prefetch._state.wait_for(lambda: prefetch._waiting)
        assert read == []
        assert embedded == []
    worker.join()
    assert read == [0, 1, 2]
    assert embedded == ["0", "1", "2"]
    with prefetch.held():  # over: held at once
        pass


def test_the_replays_run_last(request: pytest.FixtureRequest) -> None:
    names = [item.path.name for item in request.session.items]
    first = min((i for i, name in enumerate(names) if name in REPLAYS), default=len(names))
    assert all(name in REPLAYS for name in names[first:])


def test_what_is_embedded_ahead_is_what_the_replays_ask_for() -> None:
    # the corpus's memories' passages and turns, as the ranking embeds them
    corpus = load_corpus(FIXTURES / "recall-eval.json")
    ahead = replayed_texts()
    assert next(ahead) == ("passage", passage_of(corpus.documents[0]))
    texts = list(ahead)
    assert ("query", corpus.cases[0].query) in texts
    assert ("query", corpus.cases[-1].query) in texts
