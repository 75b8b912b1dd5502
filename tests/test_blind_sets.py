"""The blind sets of issue 18 (tests/fixtures/blind/): questions, small talk and update
pairs written by someone who saw only the corpus's memories, measured once before anyone
read them (docs/evaluation.md). Each file joins the corpus with ``--extra``; the figures
below are those measured since, kept as floors (ceilings for outdated deliveries), with the
runtime's turn reader: the semantic one (memrecall.sources.turn_reader), which the project's
dependencies install on Linux x86-64."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from memrecall.engine.scoring.features import Params
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.passages import CLOSE_DEPTH, passage_text
from memrecall.sources.turn_reader import e5_embedder
from memrecall.tooling.evaluation import Corpus, Report, evaluate_many, load_corpus

FIXTURES = Path(__file__).parent / "fixtures"

# slice -> (Recall@5, top-1, no-result recall, fast outdated) of fielded; None: not asked
FLOORS: dict[str, dict[str, tuple[float | None, float | None, float | None, float | None]]] = {
    "set-5.json": {
        "small-talk-heldout-5": (None, None, 43 / 48, None),
        "answerable-heldout-5": (0.9, 25 / 30, None, None),
        # 0.625 until the weak evidence threshold moved with the common Thai words (rh-23
        # lost its older version in fifth place to a memory now judged weak)
        "recency-heldout": (13 / 20, 7 / 20, None, 3 / 20),
    },
    "set-6.json": {
        "small-talk-heldout-6": (None, None, 36 / 40, None),
        "answerable-heldout-6": (22 / 24, 21 / 24, None, None),
        "recency-heldout-2": (19 / 24, 12 / 24, None, 6 / 24),
    },
    "set-7.json": {"recency-heldout-3": (43 / 48, 16 / 24, None, 2 / 24)},
    "set-8.json": {"recency-heldout-4": (39 / 48, 3 / 4, None, 0.0)},
    "set-9.json": {
        "long-query-heldout": (1.0, 23 / 28, None, 0.0),
        "small-talk-heldout-9": (None, None, 27 / 30, None),
    },
    "set-10.json": {
        "small-talk-heldout-10": (None, None, 48 / 48, None),
        "answerable-heldout-10": (0.9375, 34 / 40, None, 1 / 29),
    },
    "set-11.json": {
        "small-talk-heldout-11": (None, None, 48 / 50, None),
        "answerable-heldout-11": (0.84, 33 / 50, None, 3 / 39),
    },
    "set-12.json": {
        "small-talk-heldout-12": (None, None, 48 / 50, None),
        "answerable-heldout-12": (0.97, 47 / 50, None, 1 / 39),
    },
    "set-13.json": {
        "small-talk-heldout-13": (None, None, 40 / 45, None),
        "answerable-heldout-13": (1.0, 40 / 45, None, 4 / 33),
    },
    "set-14.json": {
        "small-talk-heldout-14": (None, None, 65 / 70, None),
        "answerable-heldout-14": (41.5 / 50, 40 / 50, None, 1 / 7),
        "recency-heldout-14": (47 / 48, 21 / 24, None, 3 / 24),
    },
    "set-15.json": {
        "small-talk-heldout-15": (None, None, 59 / 66, None),
        "answerable-heldout-15": (48 / 50, 43 / 50, None, 1 / 12),
    },
    "set-16.json": {
        "small-talk-heldout-16": (None, None, 74 / 80, None),
        "answerable-heldout-16": (46 / 50, 45 / 50, None, 0.0),
    },
    "set-17.json": {
        "small-talk-heldout-17": (None, None, 81 / 90, None),
        "answerable-heldout-17": (56 / 60, 49 / 60, None, 4 / 34),
    },
    "set-18.json": {
        "small-talk-heldout-18": (None, None, 93 / 100, None),
        "answerable-heldout-18": (57 / 60, 49 / 60, None, 4 / 35),
    },
    "set-19.json": {
        "small-talk-heldout-19": (None, None, 87 / 100, None),
        "answerable-heldout-19": (56.5 / 60, 51 / 60, None, 2 / 29),
    },
    "set-20.json": {
        "small-talk-heldout-20": (None, None, 107 / 120, None),
        "answerable-heldout-20": (78.5 / 80, 68 / 80, None, 2 / 31),
    },
    "set-21.json": {
        "small-talk-heldout-21": (None, None, 105 / 117, None),
        "answerable-heldout-21": (78.5 / 80, 70 / 80, None, 1.0),
    },
    "set-22.json": {
        "small-talk-heldout-22": (None, None, 101 / 111, None),
        "answerable-heldout-22": ((64 + 5 / 6) / 78, 63 / 76, None, 0.0),
    },
    "set-23.json": {
        "small-talk-heldout-23": (None, None, 103 / 118, None),
        "answerable-heldout-23": (60.5 / 80, 52 / 79, None, 1 / 15),
    },
    "set-24.json": {
        "small-talk-heldout-24": (None, None, 109 / 113, None),
        "answerable-heldout-24": (70.5 / 80, 59 / 78, None, 0.0),
    },
    "set-25.json": {
        "small-talk-heldout-25": (None, None, 87 / 92, None),
        "answerable-heldout-25": (55 / 80, 45 / 80, None, 0.0),
    },
    "set-26.json": {
        # 266 before the reader's bound for a silent turn's nearest memory moved from 0.1 to
        # 0.15 (Params.clear_talk): one request answered, a question gained its first memory
        "small-talk-heldout-26": (None, None, 264 / 295, None),
        "answerable-heldout-26": (160 / 199, 146 / 199, None, 2 / 37),
    },
    "set-27.json": {
        # 220 before a question in the first person got its nearest memory without a lead
        # (first_person.speaks_of_self): two first-person requests answered, one question
        # gained; 219 once a hobby project and one's own home were private life
        "small-talk-heldout-27": (None, None, 219 / 257, None),
        "answerable-heldout-27": (138 / 184, 120 / 184, None, 0.0),
    },
    "set-28.json": {
        "small-talk-heldout-28": (None, None, 209 / 249, None),
        "answerable-heldout-28": (126.75 / 175, 107 / 175, None, 3 / 52),
    },
    "set-29.json": {  # version pairs, and records that are not versions (written last)
        "recency-heldout-29": (37 / 48, 22 / 48, None, 12 / 48),
        "pairs-heldout-29": (31 / 32, 30 / 32, None, None),
    },
    "set-30.json": {  # versions asked in the older note's words, in twelve languages
        "recency-heldout-30": (36.5 / 48, 15 / 48, None, 18 / 48),
        "pairs-heldout-30": (32 / 32, 27 / 32, None, None),
    },
    "set-39.json": {  # versions whose update says so, and neighbours and series that say "now"
        "recency-heldout-39": (31.5 / 54, 24 / 54, None, 8 / 54),
        "pairs-heldout-39": (15 / 35, 5 / 35, None, None),
    },
    "set-40.json": {  # updates that never say so, records, neighbours and generic titles
        "recency-heldout-40": (47.5 / 54, 38 / 54, None, 10 / 54),
        "pairs-heldout-40": (47 / 54, 43 / 54, None, None),
    },
    "set-31.json": {  # small talk and questions in twelve languages, most across languages
        "small-talk-heldout-31": (None, None, 246 / 278, None),
        "answerable-heldout-31": (123.5 / 173, 111 / 173, None, None),
    },
    "set-32.json": {  # the same in twelve languages (sv and tr new), written last
        "small-talk-heldout-32": (None, None, 190 / 217, None),
        "answerable-heldout-32": (124 / 158, 111 / 158, None, None),
    },
    "set-33.json": {  # the same in twelve languages (cs, hi, id and uk new)
        "small-talk-heldout-33": (None, None, 208 / 238, None),
        # ans-33b-207 lost its fifth place when the weak evidence threshold moved; three
        # silent questions gained a memory that stands out (Params.clear_near)
        "answerable-heldout-33": (119.75 / 169, 105 / 169, None, None),
    },
    "set-34.json": {  # eight languages, each with sixteen memories of its own in it
        "small-talk-heldout-34": (None, None, 112 / 139, None),
        "answerable-heldout-34": (114.5 / 123, 98 / 123, None, None),
    },
    "set-35.json": {  # the same protocol in eight languages (vi and it new to it)
        "small-talk-heldout-35": (None, None, 86 / 112, None),
        "answerable-heldout-35": (120.5 / 128, 104 / 128, None, None),
    },
    "set-36.json": {  # the same in en, hi, ja, de, ko, es, zh, th, written after the rule
        "small-talk-heldout-36": (None, None, 78 / 101, None),
        "answerable-heldout-36": (117 / 126, 105 / 126, None, None),
    },
    "set-37.json": {  # the same in en, pt, de, ja, fr, zh, es, th, ru, ko; measured once
        "small-talk-heldout-37": (None, None, 106 / 138, None),
        "answerable-heldout-37": (144.5 / 157, 126 / 157, None, None),
    },
    "set-38.json": {  # two German trees, an Italian and a Hindi one
        "small-talk-heldout-38": (None, None, 37 / 49, None),
        # ans-38a-039 lost its first memory when the passage decided between close
        # memories (Params.passage_ratio): it asks what Merve looks after and when she is
        # away, and her leave note, nearer the turn, comes before the one labelled first;
        # ans-38a-147, silent before, gets the memory that stands out (Params.clear_near)
        "answerable-heldout-38": (55.5 / 60, 43 / 60, None, None),
    },
}

_SETS_5_TO_9 = ["set-5.json", "set-6.json", "set-7.json", "set-8.json", "set-9.json"]
JOINED = {
    "set-9.json": _SETS_5_TO_9,
    **{
        f"set-{last}.json": [*_SETS_5_TO_9, *(f"set-{n}.json" for n in range(10, last + 1))]
        for last in range(10, 24)
    },
}
"""Files joined to the corpus for a set, where it is not that set alone: the cases of sets 9
to 23 were written over the memories of the corpus and of sets 5 to 8 (set 24 over the
corpus's alone, and sets 25 to 40 too; sets 29, 30 and 34 to 40 bring memories of their own)."""


def _corpus(name: str) -> Corpus:
    """The corpus with blind set ``name`` joined as its test joins it."""
    joined = JOINED.get(name, [name])
    return load_corpus(
        FIXTURES / "recall-eval.json", extra=[FIXTURES / "blind" / f for f in joined]
    )


def _own_cases(name: str) -> Corpus:
    """The pool of blind set ``name`` joined as its test joins it, with that set's own cases
    only (the corpus's and the other sets' are measured in their own pools)."""
    corpus = _corpus(name)
    written = json.loads((FIXTURES / "blind" / name).read_text(encoding="utf-8"))
    own = {case["id"] for case in written["cases"]}
    return attrs.evolve(corpus, cases=tuple(c for c in corpus.cases if c.id in own))


Measured = tuple[str, Corpus, dict[str, Report]]
"""A blind set's name, its pool with its own cases, and the reports of its scorers."""


@pytest.fixture(scope="module", params=sorted(FLOORS))
def measured(request: pytest.FixtureRequest, semantic_turns: None) -> Measured:
    name: str = request.param
    corpus = _own_cases(name)
    assert {c.slice for c in corpus.cases} >= set(FLOORS[name])
    ids = [c.id for c in corpus.cases if c.slice in FLOORS[name]]
    assert all(int(i.rsplit("-", 1)[1][-2:]) % 2 == 1 for i in ids)  # odd: out of any fit
    return name, corpus, evaluate_many(corpus, ["fielded", "bm25", "words"])


ONE_CASE = 1
"""How many of a slice's cases its Recall@5, top-1 and small-talk floors leave to the
machine: the bundled model's vectors can differ in their last digits from one processor
and C library to another (its 8-bit activations turn a last-bit difference in ``expf`` or
``erff`` into one of up to 3e-3 in a vector), and a case whose passages sit that close to
a cutoff or to each other is decided either way. Measured: the floors, reached on the
machine that set them and in CI, were each missed by one case in six slices on an Intel
Xeon with AVX-512 (sets 26, 27, 30, 31, 32, 37), with the same code and packages
(docs/evaluation.md, "Figures that depend on the machine"; ``just other-libm`` runs these
tests with ``expf`` and ``erff`` rounded another way). A change that loses a single case in
a slice passes unseen: ``scripts/blind_sets_table.py --compare`` shows changes case by
case."""


def test_each_blind_set_stays_at_its_measured_figures(
    measured: Measured,
) -> None:
    name, _, reports = measured
    for slice_name, (recall, top1, silent, outdated) in FLOORS[name].items():
        m = reports["fielded"].slices[slice_name]
        slack = ONE_CASE / m.cases + 1e-9
        if recall is not None:
            assert m.recall_at_5 is not None
            assert m.recall_at_5 >= recall - slack
        if top1 is not None:
            assert m.top1 is not None
            assert m.top1 >= top1 - slack
        if silent is not None:
            assert m.no_result_recall is not None
            assert m.no_result_recall >= silent - slack
            assert m.no_result_precision == 1.0
        if outdated is not None:
            assert m.fast_outdated is not None
            assert m.fast_outdated <= outdated + 1e-9


BEHIND_BM25_AT_TOP1 = {"answerable-heldout-35"}
"""Slices whose first memory ``bm25`` gets right more often (docs/evaluation.md, blind set
35: memories whose subject is in the body, under a generic title, lose to one whose title
shares a word with the question). Checked to stay behind, so that closing the gap shows."""


BEHIND_BM25_AT_FAST = {"pairs-heldout-39"}
"""Slices whose fast result ``bm25`` gets right about as often (docs/evaluation.md, blind set
39: questions about one of two neighbouring notes or records, most asked in another language
than both, where a date or a name the question shares with some third note decides the
words). Checked to stay at or under it, so that closing the gap shows."""


def test_fielded_is_ahead_of_bm25_where_the_blind_sets_ask(
    measured: Measured,
) -> None:
    name, _, reports = measured
    for slice_name in FLOORS[name]:
        ours, theirs = reports["fielded"].slices[slice_name], reports["bm25"].slices[slice_name]
        if ours.top1 is not None and theirs.top1 is not None:
            if slice_name in BEHIND_BM25_AT_TOP1:
                assert ours.top1 < theirs.top1  # the known gap: update the docs when it closes
            else:
                assert ours.top1 >= theirs.top1
        if ours.no_result_recall is not None and theirs.no_result_recall is not None:
            assert ours.no_result_recall > theirs.no_result_recall
        if ours.recall_at_5 is not None:
            assert ours.fast_precision is not None
            assert theirs.fast_precision is not None
            if slice_name in BEHIND_BM25_AT_FAST:
                assert ours.fast_precision <= theirs.fast_precision  # the known gap
            else:
                assert ours.fast_precision > theirs.fast_precision
        else:  # small talk: fewer turns get a memory put in the prompt
            cases = {r.id for r in reports["bm25"].results if r.id.startswith("talk-")}
            fast = {
                s: sum(1 for r in reports[s].results if r.id in cases and r.fast) for s in reports
            }
            assert fast["fielded"] < fast["bm25"]


PASSAGE_FLOORS = {
    "answerable-heldout-27": 136.5 / 184,
    "answerable-heldout-28": 121 / 175,
}
"""Recall@5 of ``fielded`` with every memory's passage embedded, measured on the
freshest sets, which no choice of that scorer looked at: set 27 written before it existed,
set 28 after, each measured once (docs/evaluation.md)."""


def test_passages_complete_answers_and_move_first_only_what_they_may(
    measured: Measured,
) -> None:
    """The passage embeddings (on by default: ``fielded`` ranks as the catalog does once they
    are in) reorder and complete the words' answer after its first memory, and may put first
    a newer note on the first one's subject that says it in other words
    (``Params.subject_cosine``), or another of the words' first memories where its passage is
    nearer the turn (``Params.passage_ratio``); a turn the words leave silent gets at most
    the one memory whose passage stands out near it (``Params.clear_near``); where the
    first memory changes it is newer than the words' first or was among its first memories,
    and the words' first stays among the five; the fast result changes only where the two
    first memories are such a pair, and holds nothing else; no slice gets more outdated fast
    results; Recall@5 only rises (every blind set, as measured)."""
    name, corpus, reports = measured
    _passages_change_only_what_they_may(corpus, reports["fielded"], reports["words"])
    for slice_name in FLOORS[name]:
        ours, theirs = reports["fielded"].slices[slice_name], reports["words"].slices[slice_name]
        if ours.fast_outdated is not None and theirs.fast_outdated is not None:
            assert ours.fast_outdated <= theirs.fast_outdated + 1e-9
        if ours.recall_at_5 is not None and theirs.recall_at_5 is not None:
            assert ours.recall_at_5 >= theirs.recall_at_5 - 1e-9
            assert ours.recall_at_5 >= PASSAGE_FLOORS.get(slice_name, 0.0) - 1e-9


def test_passages_change_on_the_corpus_alone_only_what_they_may(semantic_turns: None) -> None:
    """The same case-by-case bounds on the corpus's own cases in its own pool (the blind sets'
    test measures each set's cases only)."""
    corpus = load_corpus(FIXTURES / "recall-eval.json")
    reports = evaluate_many(corpus, ["fielded", "words"])
    _passages_change_only_what_they_may(corpus, reports["fielded"], reports["words"])


def _passages_change_only_what_they_may(corpus: Corpus, fielded: Report, words: Report) -> None:
    """What the words answer stays answered; where they are silent, the passages give at
    most two memories (one that stands out, or two that stand out together; a third where
    the first one's update joins it) and never a fast result (``passages.clearly_nearest``);
    a new first
    memory is newer than the words' first, or was among the words' first memories
    (``passages.CLOSE_DEPTH``), or is the memory whose passage is the pool's nearest the
    turn, by ``Params.thin_lead`` over the words' first, which the words matched by one query
    term (``passages.nearest_over_thin``); the words' first stays among the five; the fast
    result changes only where the first two are a pair."""
    mtime = {d: doc.mtime for d, doc in zip(corpus.ids, corpus.documents, strict=True)}
    thin = _thin_hold(corpus)
    alone_of = {r.id: r for r in words.results}
    assert alone_of.keys() == {r.id for r in fielded.results}
    for result in fielded.results:
        alone = alone_of[result.id]
        if not alone.selected:
            # one memory that stands out, or two together; a third only where the first
            # one's update joined it, as the words' ranking places one (written at least
            # Params.subject_gap days apart, the two first)
            assert len(result.selected) <= 3
            if len(result.selected) == 3:
                note, update = sorted(mtime[d] for d in result.selected[:2])
                assert update - note >= Params().subject_gap * 86_400
            assert result.fast == ()
            continue
        assert result.selected
        if result.selected[:1] != alone.selected[:1]:
            nearer = result.selected[0] in alone.selected[1:CLOSE_DEPTH]
            newer = mtime[result.selected[0]] > mtime[alone.selected[0]]
            assert nearer or newer or thin(result.id, alone.selected[0], result.selected[0])
            assert alone.selected[0] in result.selected
        if result.fast != alone.fast:  # a version pair the words missed: no other change
            first, second = alone.selected[:2], result.selected[:2]
            assert set(result.fast) <= set(first) | set(second)
            assert set(first) == set(second) or result.selected[:1] != alone.selected[:1]


def _thin_hold(corpus: Corpus) -> Callable[[str, str, str], bool]:
    """``(case id, words' first, new first)``: whether the words matched their first memory
    by one query term and the new first memory's passage is the nearest the turn of the
    whole pool (the case's exclusions left out), by at least ``Params.thin_lead`` over the
    words' first (cosines computed here from the model's vectors)."""
    cases = {c.id: c for c in corpus.cases}
    position = {d: i for i, d in enumerate(corpus.ids)}
    words: list[FieldedIndex] = []  # built once, when a case needs it

    def hold(case_id: str, first: str, new: str) -> bool:
        embed = e5_embedder()
        assert embed is not None  # only passages move a first memory
        if not words:
            words.append(FieldedIndex.of(corpus.documents))
        case = cases[case_id]
        if words[0].terms_matching(case.query, position[first]) != 1:
            return False
        turn = embed(case.query)
        near = {
            d: math.fsum(
                a * b
                for a, b in zip(
                    turn,
                    embed.passage(passage_text(doc.title, doc.description, doc.body)),
                    strict=True,
                )
            )
            for d, doc in zip(corpus.ids, corpus.documents, strict=True)
            if d not in case.exclude
        }
        nearest = max(near, key=lambda d: near[d])
        return nearest == new and near[new] - near[first] >= Params().thin_lead - 1e-6

    return hold
