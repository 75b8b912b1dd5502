"""The chain of turn rules both rankers share (memrecall.engine.scoring.turn_judgement)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memrecall.engine.scoring.judgement import Judgement
from memrecall.engine.scoring.turn_judgement import explains_turn, holds_little, in_turn
from memrecall.engine.scoring.turn_model import Reading

S, W, N = Judgement.STRONG, Judgement.WEAK, Judgement.NONE
RANK = {N: 0, W: 1, S: 2}


class Reader:
    """A turn reader that counts its calls."""

    def __init__(self, reading: Reading) -> None:
        self.reading = reading
        self.calls = 0

    def __call__(self) -> Reading:
        self.calls += 1
        return self.reading


def judge(
    judged: list[tuple[str, float, Judgement]],
    reading: Reading,
    *,
    explained: bool | None = None,
    little: bool | None = None,
    let_through: set[str] | None = None,
    older: frozenset[str] = frozenset(),
) -> list[Judgement]:
    if explained is None:
        explained = explains_turn([(c, j) for _, c, j in judged], 1 / 3)
    if little is None:
        little = holds_little([(c, j) for _, c, j in judged], 0.18)
    return in_turn(
        judged,
        read=Reader(reading),
        talk_share=1 / 3,
        explained=explained,
        little=little,
        let_through=let_through,
        older=older,
    )


def test_plain_talk_holds_back_a_strong_memory_that_explains_little() -> None:
    judged = [("a", 0.2, S), ("b", 0.1, W)]
    assert judge(judged, Reading.PLAIN_TALK) == [N, N]
    assert judge(judged, Reading.TALK) == [S, N]
    assert judge(judged, Reading.QUESTION) == [S, W]


def test_a_memory_that_explains_the_turn_keeps_the_others_strong() -> None:
    judged = [("a", 0.2, S), ("b", 0.5, S)]
    assert judge(judged, Reading.PLAIN_TALK) == [S, S]
    # a weak memory explaining much does not count: only a strong one explains the turn
    assert judge([("a", 0.2, S), ("b", 0.9, W)], Reading.PLAIN_TALK) == [N, N]
    # the caller may know of an explaining memory beyond these (ranked lower)
    assert judge([("a", 0.2, S)], Reading.PLAIN_TALK, explained=True) == [S]


def test_a_lean_towards_talk_holds_back_weak_memories_that_explain_little() -> None:
    little = [("a", 0.17, W), ("b", 0.5, N)]  # a memory judged none does not count
    assert judge(little, Reading.LEANING) == [N, N]
    assert judge(little, Reading.QUESTION) == [W, N]
    # one weak memory explaining a fifth of the turn: the others stay too
    assert judge([("a", 0.1, W), ("b", 0.2, W)], Reading.LEANING) == [W, W]
    # a strong memory: the turn is about something the memories know
    assert judge([("a", 0.1, W), ("b", 0.1, S)], Reading.LEANING) == [W, S]
    # the caller may know of a memory beyond these (ranked lower) that explains more
    assert judge([("a", 0.1, W)], Reading.LEANING, little=False) == [W]


def test_holds_little() -> None:
    assert holds_little([], 0.18)
    assert holds_little([(0.17, W), (0.9, N)], 0.18)
    assert not holds_little([(0.18, W)], 0.18)
    assert not holds_little([(0.01, S)], 0.18)


def test_strong_only_and_older_versions() -> None:
    judged = [("a", 0.5, W), ("b", 0.5, W), ("c", 0.9, S)]
    assert judge(judged, Reading.QUESTION, let_through={"b"}) == [N, W, S]
    assert judge(judged, Reading.QUESTION, older=frozenset({"c"})) == [W, W, W]
    # an older version is weak, and still answers small talk it is strong for
    assert judge(judged, Reading.TALK, older=frozenset({"c"})) == [N, N, W]


def test_the_turn_is_read_only_when_a_rule_needs_it() -> None:
    reader = Reader(Reading.TALK)
    args = {
        "talk_share": 1 / 3,
        "explained": False,
        "little": True,
        "let_through": None,
        "older": (),
    }
    in_turn([("a", 0.9, S), ("b", 0.0, N)], read=reader, **args)  # type: ignore[arg-type]
    assert reader.calls == 0
    in_turn([("a", 0.1, S), ("b", 0.5, W), ("c", 0.5, W)], read=reader, **args)  # type: ignore[arg-type]
    assert reader.calls == 1


judgements = st.sampled_from([S, W, N])
entries = st.lists(
    st.tuples(st.sampled_from("abcdef"), st.floats(0.0, 1.0), judgements),
    max_size=6,
    unique_by=lambda t: t[0],
)
readings = st.sampled_from(list(Reading))
keys = st.frozensets(st.sampled_from("abcdef"))


@given(entries, readings, st.booleans(), st.booleans(), st.none() | keys, keys)
def test_properties(  # noqa: PLR0917
    judged: list[tuple[str, float, Judgement]],
    reading: Reading,
    explained: bool,
    little: bool,
    let_through: frozenset[str] | None,
    older: frozenset[str],
) -> None:
    reader = Reader(reading)
    out = in_turn(
        judged,
        read=reader,
        talk_share=1 / 3,
        explained=explained,
        little=little,
        let_through=let_through,
        older=older,
    )
    assert len(out) == len(judged)
    assert reader.calls <= 1
    for (key, coverage, before), after in zip(judged, out, strict=True):
        assert RANK[after] <= RANK[before]  # a turn rule never raises a judgement
        if after is S:
            assert key not in older
        if reading >= Reading.TALK or (reading is Reading.LEANING and little):
            # small talk: a weak memory is only ever a strong older version
            assert after is not W or (before is S and key in older)
        quiet = reading is Reading.QUESTION or (reading is Reading.LEANING and not little)
        if quiet and (let_through is None or key in let_through):
            assert after == (W if before is S and key in older else before)
        if before is S and reading is Reading.PLAIN_TALK and not explained:
            assert (after is not N) == (coverage >= 1 / 3)
    if all(j is N for _, _, j in judged):
        assert reader.calls == 0
