"""Issue 18's ranking rules cost less than they did, and give exactly what they gave.

``FieldedIndex`` applies the common-only rule to the documents whose score the
common words and katakana pieces alone could reach (:meth:`FieldedIndex._common_only`),
reads each term's values once when it recounts runs of CJK bigrams
(:func:`~memrecall.engine.scoring.fielded.count_runs`), and walks postings it has
already merged when a query asks for enough documents
(:meth:`FieldedIndex._add_where_matched`). The oracle index below applies the rules
as first written (every candidate, each term's values read per use, per-document
lookups); every result must be equal, bit for bit.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memrecall.engine.scoring import fielded
from memrecall.engine.scoring.fielded import FieldedIndex, MatchedTerm, common_only
from memrecall.events.documents import MemoryDocument
from tests.factories import memory

# Katakana words sharing bigrams (ラーメン / メンション), CJK words inside longer ones
# (服务 / 服务器, 系统 / 系统里), Korean, common words of several languages, and
# English topical words with inflections, so that every rule has something to decide.
_WORDS = [
    "ラーメン", "メンション", "キャッシュ", "キャッシュ設定", "ロールバック", "バック",
    "服务器", "服务", "系统里", "系统", "日志", "方法", "手順", "확인한다", "확인", "방법",
    "deploy", "deploys", "deployment", "update", "time", "help", "again", "day", "CI",
    "cache", "pivot", "table", "weather", "Wetter", "tiempo",
]  # fmt: skip


@st.composite
def _pools(draw: st.DrawFn) -> list[MemoryDocument]:
    words = st.lists(st.sampled_from(_WORDS), max_size=6).map(" ".join)
    size = draw(st.integers(1, 25))
    return [
        memory(
            draw(words),
            draw(words),
            draw(words),
            name=f"d{i}",
            mtime=float(draw(st.integers(0, 3)) * 86_400 * 60),
        )
        for i in range(size)
    ]


_queries = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4).map(
    lambda words: "".join(words) if words[0][0] > "\u3000" else " ".join(words)
)


def _runs_as_first_written(
    order: dict[int, float],
    terms: Sequence[MatchedTerm],
    among: Collection[int],
    index: FieldedIndex,
) -> bool:
    """The run rule as issue 18 first wrote it: each term's values read per use."""

    def values(term: str, kind: str, where: set[int]) -> dict[int, float]:
        found: dict[int, float] = {}
        index._add_where_matched(term, kind, 1.0, where, found)
        return found

    runs = [t for t in terms if t.follows]
    changed = False
    known = {t.term for t in terms}
    where = set(among)
    for t in runs:
        before = [f for f in t.follows if f in known]
        if not before:
            continue
        own = values(t.term, t.kind, where)
        if not own:
            continue
        held: set[int] = set()
        for f in before:
            held.update(values(f, "cjk", set(own)))
        for doc in held:
            order[doc] -= (1.0 - fielded.RUN_CREDIT) * t.weight * own[doc] * index._prior[doc]
            changed = True
    return changed


def _as_first_written(pool: list[MemoryDocument]) -> FieldedIndex:
    index = FieldedIndex.of(pool)

    def every_candidate(own: dict[int, float], terms: Sequence[MatchedTerm]) -> set[int]:
        return common_only(
            own,
            terms,
            lambda term, kind: index._credited(term, kind)[0],
            lambda t: sum(index._df.get(key, 0) for key, _ in index._keys(t.term, t.kind)),
        )

    def runs(order: dict[int, float], terms: Sequence[MatchedTerm], among: Collection[int]) -> bool:
        return _runs_as_first_written(order, terms, among, index)

    index._common_only = every_candidate  # type: ignore[method-assign]
    index._count_runs = runs  # type: ignore[method-assign]
    return index


@contextmanager
def _lookups_per_document() -> Iterator[None]:
    """Merged postings are never walked for a few documents (as issue 18 first had it)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fielded, "_WALK_STEPS", 0)
        yield


def _results(index: FieldedIndex, queries: list[str], limit: int) -> list[object]:
    out: list[object] = []
    for query in queries * 2:  # the second round is served from the caches
        out.append(index.matches(query, limit=limit))
        out.append(index.matches(query))
        out.append(index._ranked(query, (), limit, floor=True))
        out.append(index.rank_and_fast(query, limit))
        out.append(index.judge(query, limit))
        out.append(index.fast(query))
    return out


@settings(max_examples=150, deadline=None)
@given(pool=_pools(), queries=st.lists(_queries, min_size=1, max_size=4), limit=st.integers(1, 8))
def test_results_equal_the_rules_as_first_written(
    pool: list[MemoryDocument], queries: list[str], limit: int
) -> None:
    with _lookups_per_document():
        expected = _results(_as_first_written(pool), queries, limit)
    assert _results(FieldedIndex.of(pool), queries, limit) == expected


def test_only_documents_the_common_words_could_carry_are_checked() -> None:
    # "again" is common; "deploy" is topical and its documents score above anything
    # "again" alone can give, so only the document that "again" alone matches is looked at
    pool = [
        memory(f"Deploy {i}", "deploy notes", "the deploy runbook", name=f"d{i}") for i in range(6)
    ]
    pool.append(memory("Again", "", "again and again", name="again"))
    pool += [memory(f"Other {i}", "kafka", "grafana", name=f"o{i}") for i in range(6)]
    index = FieldedIndex.of(pool)
    seen: list[list[int]] = []
    real = fielded.common_only

    def spy(candidates: list[int], *args: object, **kwargs: object) -> set[int]:
        seen.append(list(candidates))
        return real(candidates, *args, **kwargs)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fielded, "common_only", spy)
        matches = index.matches("deploy again")
    assert seen == [[6]]
    assert [m.judgement.name for m in matches if m.index == 6] == ["NONE"]
    assert _as_first_written(pool).matches("deploy again") == matches


def test_postings_already_merged_are_walked_for_a_few_documents() -> None:
    pool = [
        memory(f"Note {i}", "history note", "history of the notes", name=f"d{i}") for i in range(40)
    ]
    index = FieldedIndex.of(pool)
    docs, values = index._credited("history", "word")  # merged by an earlier query
    where = set(range(0, 40, 8))  # five: a lookup each would cost more than the walk
    found: dict[int, float] = {}

    def no_lookup(*args: object) -> object:
        raise AssertionError("looked up per document")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fielded, "rows_of", no_lookup)
        assert index._add_where_matched("history", "word", 1.0, where, found)
    assert found == {d: v for d, v in zip(docs, values, strict=True) if d in where}
