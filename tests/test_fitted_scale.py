"""A small tree is judged on the scale its thresholds were fitted on (Params.fitted_pool),
and ranked by what is rare in it (issue 18)."""

from __future__ import annotations

import json
from pathlib import Path

from memrecall.engine.scoring.fielded import FieldedIndex, Params
from memrecall.engine.scoring.judgement import Judgement, default_thresholds
from memrecall.events.documents import MemoryDocument
from memrecall.tooling.evaluation import load_corpus, parse_corpus

CORPUS = Path(__file__).parent / "fixtures" / "recall-eval.json"

BLIND = Path(__file__).parent / "fixtures" / "blind" / "set-34.json"


def _german_tree() -> tuple[MemoryDocument, ...]:
    """Set 34's sixteen German memories, alone in their pool (one person's tree)."""
    data = json.loads(BLIND.read_text("utf-8"))
    data["documents"] = [d for d in data["documents"] if "-de-" in d["id"]]
    data["cases"] = [c for c in data["cases"] if c.get("lang") == "de"]
    return parse_corpus({"name": "set-34 de", **data}).documents


TREE = _german_tree()


def _path(doc_id: str) -> str:
    return next(d.path for d in TREE if doc_id in d.path)


# its question ans-34c-109 ("how detailed should your answers be for me?"), which the
# memory m34c-de-01 answers
ASKED = "Wie ausführlich sollen deine Antworten für mich sein?"


def test_the_fitted_pool_is_the_calibration_corpus_size() -> None:
    shipped = default_thresholds().provenance
    assert shipped is not None
    assert Params().fitted_pool == shipped.documents
    assert len(load_corpus(CORPUS).documents) == shipped.documents


def test_a_question_in_a_small_tree_is_judged_as_in_the_calibration_corpus() -> None:
    index = FieldedIndex.of(TREE)
    assert len(TREE) < Params().fitted_pool
    assert [TREE[i].path for i in index.rank(ASKED, 5)[:1]] == [_path("m34c-de-01")]
    # judged on the tree's own scale, the same match falls under the thresholds
    own_scale = FieldedIndex.of(TREE, params=Params(fitted_pool=len(TREE)))
    assert own_scale.rank(ASKED, 5) == []
    # the scale moves the judgement, never the score
    fitted = {m.index: m for m in index.matches(ASKED)}
    own = {m.index: m for m in own_scale.matches(ASKED)}
    assert {i: m.score for i, m in fitted.items()} == {i: m.score for i, m in own.items()}
    first = index.rank(ASKED, 1)[0]
    assert fitted[first].coverage > own[first].coverage
    assert fitted[first].evidence > own[first].evidence
    assert fitted[first].judgement is not Judgement.NONE
    assert own[first].judgement is Judgement.NONE


def test_a_tree_as_large_as_the_calibration_corpus_is_judged_on_its_own_scale() -> None:
    documents = load_corpus(CORPUS).documents
    index = FieldedIndex.of(documents)
    plain = FieldedIndex.of(documents, params=Params(fitted_pool=1))
    for query in (ASKED, "who approves a hotfix during the freeze?", "今日はいい天気ですね"):
        assert index.matches(query) == plain.matches(query)


def test_small_talk_in_a_small_tree_stays_silent() -> None:
    index = FieldedIndex.of(TREE)
    for talk in ("Wie wird das Wetter am Wochenende in Hamburg?", "Danke dir!", "Datenbank"):
        assert index.rank(talk, 5) == [], talk
