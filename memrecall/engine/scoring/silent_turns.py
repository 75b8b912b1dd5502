"""What a turn the words leave silent gets, in both rankers (issue 18): the memory the
passages find near it, where the semantic turn reader is sure it asks something.

:class:`~memrecall.engine.scoring.fielded.FieldedIndex` and the store's ranker
(:class:`memrecall.store.source.StoreRanker`) both call :func:`answer_silent` when the words'
ranking is empty, so that a question asked in other words than its memory's, or in another
language, is answered alike in a catalog and in the store.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from memrecall.engine.scoring.analysis import QueryTerm
from memrecall.engine.scoring.features import Params
from memrecall.engine.scoring.first_person import speaks_of_self
from memrecall.engine.scoring.passages import PassageMatrix, clearly_nearest
from memrecall.engine.scoring.turn_semantic import OnceEmbedded, SemanticTurns, TurnReader

__all__ = ["answer_silent"]


def answer_silent(
    query: str,
    *,
    limit: int,
    reader: TurnReader | None,
    once: OnceEmbedded | None,
    query_terms: Callable[[str], tuple[list[QueryTerm], float, bool]],
    matrix: Callable[[], PassageMatrix],
    exclude: Collection[int],
    params: Params,
) -> list[int]:
    """What a turn the words leave silent gets, in both rankers (this index and the
    store's): the memory whose passage stands out near it (or the two that stand out
    together), at most ``limit``, when the semantic ``reader`` is
    sure it asks something (:func:`~memrecall.engine.scoring.passages.clearly_nearest`,
    :attr:`Params.clear_near`). A turn in the first person
    (:func:`~memrecall.engine.scoring.first_person.speaks_of_self`: "who's my manager
    again?") asks about the person the memories describe: it gets its nearest memory at
    :attr:`Params.clear_near` even where that one does not stand out by
    :attr:`Params.clear_lead`. Only where the passages take part: ``once`` is the call's
    embedder (None without passages), so the turn is embedded once for the reader and the
    passages, and ``reader`` the semantic reader over it. Never for a paste (by the pool's
    ``query_terms``); ``matrix`` gives the pool's passages."""
    if limit < 1 or once is None or not isinstance(reader, SemanticTurns):
        return []
    if query_terms(query)[2]:
        return []

    def nearest(lead: float) -> list[int]:
        return clearly_nearest(
            query,
            matrix(),
            talk=reader.probability,
            plainly_talk=reader.lexical_model.is_talk,
            turn=lambda: once.turn(query),
            exclude=exclude,
            cosine=params.clear_near,
            lead=lead,
            below=params.clear_talk,
        )[:limit]

    found = nearest(params.clear_lead)
    if not found and speaks_of_self(query):
        found = nearest(0.0)  # a question about the asker: the nearest memory, not standing out
    return found
