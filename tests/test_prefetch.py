"""The suite's prefetch of the blind sets' embeddings (tests/conftest.py): held still, it
reads and embeds nothing; the replays run last."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Literal

import pytest

from memrecall.engine.scoring.features import passage_of
from memrecall.tooling.evaluation import load_corpus
from tests.conftest import _PREFETCH, FIXTURES, REPLAYS, Prefetch, replayed_texts


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


def test_the_prefetch_is_asked_for_the_sets_this_session_replays(
    request: pytest.FixtureRequest,
) -> None:
    wanted = request.config.stash[_PREFETCH]
    replayed = {
        item.callspec.params["measured"]
        for item in request.session.items
        if isinstance(item, pytest.Function)
        and hasattr(item, "callspec")
        and "measured" in item.callspec.params
    }
    assert replayed <= set(wanted)
    assert len(wanted) == len(set(wanted))
    names = {item.path.name for item in request.session.items}
    if not names & set(REPLAYS) or names <= set(REPLAYS):
        assert wanted == []  # without the replays, or with nothing else: nothing ahead


def test_what_is_embedded_ahead_is_what_the_replays_ask_for() -> None:
    # the corpus's memories' passages and turns, as the ranking embeds them
    corpus = load_corpus(FIXTURES / "recall-eval.json")
    ahead = replayed_texts(["set-39.json", "set-40.json"])
    assert next(ahead) == ("passage", passage_of(corpus.documents[0]))
    texts = list(ahead)
    assert ("query", corpus.cases[0].query) in texts
    assert ("query", corpus.cases[-1].query) in texts
    # then the sets asked for, the last first: set 40's turns before set 39's
    forty = load_corpus(
        FIXTURES / "recall-eval.json", extra=[FIXTURES / "blind" / "set-40.json"]
    ).cases[-1]
    thirty_nine = load_corpus(
        FIXTURES / "recall-eval.json", extra=[FIXTURES / "blind" / "set-39.json"]
    ).cases[-1]
    assert texts.index(("query", forty.query)) < texts.index(("query", thirty_nine.query))
    assert len(texts) < len(list(replayed_texts([f"set-{n}.json" for n in range(36, 41)])))
