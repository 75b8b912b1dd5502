"""``time_rules.with_update``: an update goes in beside the first document, after it, or
before it when a newer note outranked that one for the query or the update says it changes
something (issue 18)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memrecall.engine.scoring.time_rules import (
    fast_with_update,
    said_update_first,
    updates_placed,
    with_update,
)

kept_lists = st.lists(st.integers(0, 30), unique=True, max_size=8)


@given(
    kept_lists,
    st.integers(1, 10),
    st.none() | st.integers(31, 40),
    st.booleans(),
    st.none() | st.booleans(),
)
def test_an_update_goes_in_beside_the_first_and_nothing_else_moves(
    kept: list[int], limit: int, newer: int | None, outranked: bool, says: bool | None
) -> None:
    kept = kept[:limit]
    asked: list[int] = []
    said: list[int] = []

    def update(first: int) -> int | None:
        asked.append(first)
        return newer

    def says_change(doc: int) -> bool:
        said.append(doc)
        return bool(says)

    out = with_update(
        kept, limit, update, outranked=outranked, says_change=None if says is None else says_change
    )
    assert asked == kept[:1]  # only the first document's update is asked for
    assert set(said) <= {newer}  # and only the update is asked whether it says it changed
    before = outranked or bool(says)
    assert len(out) <= limit
    if not kept or newer is None:
        assert out == kept
        return
    # the kept documents keep their order; only the update is added
    assert [d for d in out if d != newer] == kept[: len([d for d in out if d != newer])]
    expected = [newer, *kept] if before else [kept[0], newer, *kept[1:]]
    assert out == expected[:limit]
    # the update sits right beside the first document: before it only when the first was
    # outranked or the update says it changed something
    if before:
        assert out[0] == newer
    elif limit > 1:
        assert out[:2] == [kept[0], newer]


@given(kept_lists, st.none() | st.integers(0, 40), st.booleans())
def test_an_update_that_says_so_moves_first_from_anywhere_below(
    kept: list[int], newest: int | None, says: bool
) -> None:
    asked: list[int] = []

    def says_change(doc: int) -> bool:
        asked.append(doc)
        return says

    out = said_update_first(kept, newest, says_change)
    assert sorted(out) == sorted(kept)  # nothing added, nothing lost
    if newest is not None and newest in kept[1:] and says:
        assert out == [newest, *(d for d in kept if d != newest)]
    else:
        assert out == kept
    assert set(asked) <= {newest}


@given(
    kept=kept_lists,
    limit=st.integers(1, 10),
    later=st.dictionaries(
        st.integers(0, 40), st.lists(st.integers(0, 40), unique=True, max_size=3)
    ),
    excluded=st.sets(st.integers(0, 40)),
    first_pairs=st.sets(st.tuples(st.integers(0, 40), st.integers(0, 40))),
    outranked=st.booleans(),
)
def test_both_rankers_place_an_update_by_the_two_rules_in_turn(
    *,
    kept: list[int],
    limit: int,
    later: dict[int, list[int]],
    excluded: set[int],
    first_pairs: set[tuple[int, int]],
    outranked: bool,
) -> None:
    # updates_placed is said_update_first (the note's update among those kept moves first
    # where it goes first) and then with_update (an update not kept placed beside the note)
    def versions(doc: int) -> list[int]:
        return later.get(doc, [])

    def goes_first(note: int, update: int) -> bool:
        return (note, update) in first_pairs

    out = updates_placed(
        kept,
        limit,
        later=versions,
        excluded=excluded.__contains__,
        goes_first=goes_first,
        outranked=outranked,
    )
    expected = list(kept)
    if expected and not outranked:
        note = expected[0]
        newest = next(iter(versions(note)), None)
        expected = said_update_first(expected, newest, lambda u: goes_first(note, u))
    if expected:
        note = expected[0]
        newer = next((d for d in versions(note) if d not in expected and d not in excluded), None)
        if newer is not None:
            before = outranked or goes_first(note, newer)
            rest = [newer, *expected] if before else [expected[0], newer, *expected[1:]]
            expected = rest[:limit]
    assert out == expected


@given(
    fast=st.lists(st.integers(0, 40), unique=True, max_size=3),
    limit=st.integers(2, 3),
    later=st.dictionaries(
        st.integers(0, 40), st.lists(st.integers(0, 40), unique=True, max_size=3)
    ),
    excluded=st.sets(st.integers(0, 40)),
    first=st.booleans(),
    words=st.booleans(),
)
def test_the_fast_result_never_holds_a_note_without_the_update_that_goes_before_it(
    *,
    fast: list[int],
    limit: int,
    later: dict[int, list[int]],
    excluded: set[int],
    first: bool,
    words: bool,
) -> None:
    fast = fast[:limit]
    asked: list[tuple[int, int]] = []

    def versions(doc: int) -> list[int]:
        return [d for d in later.get(doc, []) if d != doc]  # never a document's own

    def goes_first(note: int, update: int) -> bool:
        asked.append((note, update))
        return first

    out = fast_with_update(
        fast,
        limit,
        later=versions,
        excluded=excluded.__contains__,
        goes_first=goes_first,
        matched=lambda doc: words,
    )
    assert len(out) <= limit
    if not fast:
        assert out == []
        assert not asked
        return
    note = fast[0]
    update = next((d for d in versions(note) if d not in excluded), None)
    # only the first document's newest update not yet delivered, matched by the words, is
    # weighed
    weighed = update is not None and words
    assert asked == ([(note, update)] if weighed else [])
    if not weighed or not first:
        assert out == fast
        return
    # the update first, its note beside it, then what else fits, in its order
    assert out[:2] == [update, note]
    assert out == [update, *(d for d in fast if d != update)][:limit]
    assert not excluded & set(out) - set(fast)  # nothing delivered already is added
