"""Offline evaluation of a scorer on a labelled corpus (``memrecall eval``).

A corpus is one JSON file of memory documents and labelled queries; its
format and the report's JSON shape are a public contract
(``shared/contracts/eval-corpus.md``). This module loads and validates a
corpus, runs every case through a named scorer (at most five documents per
case, as the deterministic recall path does) and computes the metrics per
slice, over all cases, and over the ``lexical`` aggregate, which leaves out
the queries no substring scorer can answer.

Beside the contract's figures, each group carries the fast path's figures
(optional extra keys): what the deterministic fast result (at most two
documents) would deliver on a tool-free turn. A scorer with a ``fast`` method
(an absolute judgement) delivers what that returns; any other scorer delivers
its top two.

Everything here is pure apart from :func:`load_corpus` (reads the file) and
the per-case latency timing in :func:`evaluate`.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, NoReturn, Protocol

import attrs
import msgspec

from memrecall.engine.scoring.baselines import FrozenIndex, RandomIndex
from memrecall.engine.scoring.bm25 import BM25Index
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.reference import ReferenceIndex
from memrecall.events.documents import MemoryDocument, MemoryType, Scope
from memrecall.sources.turn_reader import (
    background_passage_embedder,
    default_turns,
    describe,
    passage_embedder,
    remembering,
)
from memrecall.tooling.tables import markdown_table, percent

__all__ = [
    "BASELINES",
    "DEFAULT_SCORER",
    "FAST_LIMIT",
    "LIMIT",
    "SCORERS",
    "SEMANTIC_SLICE",
    "Case",
    "CaseResult",
    "Corpus",
    "CorpusError",
    "Metrics",
    "Ranker",
    "Report",
    "ScorerFactory",
    "compute_metrics",
    "evaluate",
    "evaluate_many",
    "format_comparison",
    "format_report",
    "format_side_by_side",
    "load_corpus",
    "parse_corpus",
    "random_floor",
]

LIMIT = 5
"""Documents the deterministic path returns per query, and the k of Recall@k."""

FAST_LIMIT = 2
"""Documents in the deterministic fast result, at most."""

SEMANTIC_SLICE = "semantic-no-lexical"
"""The slice left out of the ``lexical`` aggregate: answerable, but with no shared words."""


class Ranker(Protocol):
    """What the evaluation needs from a scorer: indices into the pool, best first."""

    def rank(self, query: str, limit: int, *, exclude: Collection[int] = ()) -> list[int]:
        """The best ``limit`` pool indices for ``query``, leaving out ``exclude``."""
        ...


ScorerFactory = Callable[[Sequence[MemoryDocument]], Ranker]
"""Builds a scorer over a pool of documents (input order = pool order)."""

SCORERS: dict[str, ScorerFactory] = {
    # as the catalog ranks once its passages are in (MEMRECALL_PASSAGES unset)
    "fielded": lambda documents: FieldedIndex.of(
        documents, turns=default_turns(), passage=background_passage_embedder()
    ),
    # fielded with every memory's passage embedded, whatever MEMRECALL_PASSAGES says
    "passages": lambda documents: FieldedIndex.of(
        documents, turns=default_turns(), passage=passage_embedder(wanted=True)
    ),
    # fielded by the words alone (MEMRECALL_PASSAGES=off, or no semantic reader)
    "words": lambda documents: FieldedIndex.of(documents, turns=default_turns()),
    "reference": ReferenceIndex.of,
    "bm25": BM25Index.of,
    "frozen": FrozenIndex,
    "random": RandomIndex,
}
"""The scorers ``memrecall eval --scorer`` knows, by name; add new ones here."""

DEFAULT_SCORER = "fielded"
"""BM25F with an absolute judgement (:mod:`memrecall.engine.scoring.fielded`)."""

BASELINES = ("frozen", "reference", "bm25")
"""What ``memrecall eval --side-by-side`` shows before the chosen scorer."""


class CorpusError(ValueError):
    """An unreadable or invalid corpus file; ``str()`` is a one-line reason."""


# --------------------------------------------------------------------------- corpus


@attrs.frozen
class Case:
    """One labelled query. ``relevant`` empty means: the right answer is nothing."""

    id: str
    query: str
    relevant: tuple[str, ...]
    top: str | None
    slice: str
    exclude: tuple[str, ...] = ()


@attrs.frozen
class Corpus:
    """A validated corpus; ``documents`` and ``ids`` are in pool order (project, then user)."""

    name: str
    documents: tuple[MemoryDocument, ...]
    ids: tuple[str, ...]
    cases: tuple[Case, ...]


def _fail(reason: str) -> NoReturn:
    raise CorpusError(reason)


def _show(value: object) -> str:
    """A short one-line rendering of a bad value for an error message."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


class _Document(msgspec.Struct):
    """One pool document as the corpus file gives it (unknown fields are ignored)."""

    id: str
    type: MemoryType
    title: str
    description: str
    body: str
    scope: Scope = Scope.PROJECT
    mtime: float = 0.0


class _Case(msgspec.Struct):
    """One labelled query as the corpus file gives it."""

    id: str
    query: str
    relevant: list[str]
    slice: str
    top: str | None = None
    exclude: list[str] = msgspec.field(default_factory=list)


class _Corpus(msgspec.Struct):
    """The corpus file's top level."""

    name: str
    documents: list[_Document]
    cases: list[_Case]


_KINDS = {
    "str": "a string",
    "int": "a number",
    "float": "a number",
    "bool": "a boolean",
    "null": "null",
    "array": "an array",
    "object": "an object",
}
_CHOICES = {"type": tuple(t.value for t in MemoryType), "scope": tuple(s.value for s in Scope)}
_ERROR = re.compile(r"(?P<what>.*?)(?: - at `\$(?P<path>.*)`)?", re.DOTALL)
_MISSING = re.compile(r"Object missing required field `(?P<field>.*)`")
_EXPECTED = re.compile(r"Expected `(?P<want>[^`|]*)[^`]*`, got `(?P<got>[^`]*)`")
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def _at(data: object, path: str) -> object:
    """The value at a msgspec error path (``.documents[2].type``) of the decoded JSON."""
    for key, index in _STEP.findall(path):
        if key:
            assert isinstance(data, dict)
            data = data[key]
        else:
            assert isinstance(data, list)
            data = data[int(index)]
    return data


def _reason(exc: msgspec.ValidationError, data: object) -> str:
    """msgspec's message, in the corpus contract's words (``where: what``)."""
    error = _ERROR.fullmatch(str(exc))
    assert error is not None  # the pattern matches any text
    path = error["path"] or ""
    where = path.lstrip(".") or "corpus"
    what = error["what"]
    missing = _MISSING.fullmatch(what)
    if missing:
        return f"{where}: missing field {missing['field']!r}"
    allowed = _CHOICES.get(where.rsplit(".", 1)[-1]) if where.startswith("documents[") else None
    if allowed is not None:
        return f"{where}: expected one of {', '.join(allowed)}, got {_show(_at(data, path))}"
    expected = _EXPECTED.fullmatch(what)
    if expected:
        want, got = expected["want"].strip(), expected["got"]
        return f"{where}: expected {_KINDS.get(want, want)}, got {_KINDS.get(got, got)}"
    return f"{where}: {what}"


def _doc_ids(ids: list[str], where: str, known: Collection[str]) -> tuple[str, ...]:
    for i, doc_id in enumerate(ids):
        if doc_id not in known:
            _fail(f"{where}[{i}]: unknown document id {_show(doc_id)}")
        if doc_id in ids[:i]:
            _fail(f"{where}[{i}]: document id {_show(doc_id)} is listed twice")
    return tuple(ids)


def _document(raw: _Document, where: str) -> MemoryDocument:
    if not raw.id:
        _fail(f"{where}.id: must not be empty")
    if not math.isfinite(raw.mtime):
        _fail(f"{where}.mtime: must be a finite number")
    return MemoryDocument(
        scope=raw.scope,
        path=f"/corpus/{raw.scope.value}/{raw.id}.md",
        relative_path=f"{raw.id}.md",
        type=raw.type,
        title=raw.title,
        description=raw.description,
        body=raw.body,
        mtime=raw.mtime,
    )


def _case(raw: _Case, where: str, known: Collection[str]) -> Case:
    if not raw.id:
        _fail(f"{where}.id: must not be empty")
    relevant = _doc_ids(raw.relevant, f"{where}.relevant", known)
    if not raw.slice:
        _fail(f"{where}.slice: must not be empty")
    if raw.top is not None and raw.top not in relevant:
        _fail(f"{where}.top: {_show(raw.top)} is not one of the case's relevant documents")
    exclude = _doc_ids(raw.exclude, f"{where}.exclude", known)
    for doc_id in relevant:
        if doc_id in exclude:
            _fail(f"{where}.exclude: relevant document {_show(doc_id)} is excluded")
    return Case(
        id=raw.id, query=raw.query, relevant=relevant, top=raw.top, slice=raw.slice, exclude=exclude
    )


def parse_corpus(data: object) -> Corpus:
    """Validate decoded corpus JSON and build the pool; raises :class:`CorpusError`.

    The shape is checked by msgspec (:class:`_Corpus`; its messages are put in
    the contract's words), the rest here. Unknown fields are ignored. A
    document's ``scope`` defaults to ``project`` and its ``mtime`` to 0. The
    pool holds project documents, then user documents, each group in file order.
    """
    try:
        raw = msgspec.convert(data, _Corpus)
    except msgspec.ValidationError as exc:
        raise CorpusError(_reason(exc, data)) from None
    if not raw.documents:
        _fail("documents: the corpus has no documents")
    if not raw.cases:
        _fail("cases: the corpus has no cases")

    parsed: dict[str, MemoryDocument] = {}
    for i, raw_document in enumerate(raw.documents):
        document = _document(raw_document, f"documents[{i}]")
        if raw_document.id in parsed:
            _fail(f"documents[{i}].id: duplicate document id {_show(raw_document.id)}")
        parsed[raw_document.id] = document
    order = [i for i in parsed if parsed[i].scope is Scope.PROJECT]
    order += [i for i in parsed if parsed[i].scope is Scope.USER]

    cases: list[Case] = []
    seen: set[str] = set()
    for i, raw_case in enumerate(raw.cases):
        case = _case(raw_case, f"cases[{i}]", parsed)
        if case.id in seen:
            _fail(f"cases[{i}].id: duplicate case id {_show(case.id)}")
        seen.add(case.id)
        cases.append(case)
    return Corpus(
        name=raw.name,
        documents=tuple(parsed[i] for i in order),
        ids=tuple(order),
        cases=tuple(cases),
    )


def _reject_constant(name: str) -> NoReturn:
    raise CorpusError(f"invalid JSON: {name} is not a JSON value")


def load_corpus(path: str | Path, *, extra: Sequence[str | Path] = ()) -> Corpus:
    """Read, decode and validate a corpus file; raises :class:`CorpusError` with a reason.

    Each ``extra`` file (a JSON object with ``documents`` and ``cases`` lists, either
    may be empty) adds its documents to the pool and its cases to the evaluation: a set
    of questions written against the corpus's memories, and the memories it brings
    (tests/fixtures/blind/). The joined corpus is validated as one.
    """
    data = _read_json(path)
    for more in extra:
        data = _joined(data, _read_json(more), more)
    return parse_corpus(data)


def _joined(data: object, added: object, path: str | Path) -> object:
    """``data`` with the documents and cases of ``added`` (read from ``path``) appended."""
    if not isinstance(added, dict):
        raise CorpusError(f"{path}: an extra file is a JSON object")
    lists = {key: added.get(key, []) for key in ("documents", "cases")}
    for key, value in lists.items():
        if not isinstance(value, list):
            raise CorpusError(f"{path}: {key} is a list")
    if not isinstance(data, dict):
        return data  # parse_corpus says what is wrong with the corpus itself
    joined = dict(data)
    for key, value in lists.items():
        base = joined.get(key, [])
        joined[key] = [*base, *value] if isinstance(base, list) else base
    return joined


def _read_json(path: str | Path) -> object:
    """A corpus (or extra) file's decoded JSON; raises :class:`CorpusError` with a reason."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise CorpusError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{path} is not UTF-8 (byte {exc.start})") from None
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise CorpusError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise CorpusError("invalid JSON: nested too deeply") from None
    return data


# --------------------------------------------------------------------------- metrics


@attrs.frozen
class Metrics:
    """The contract's figures over a group of cases; ``None`` where no case is eligible."""

    cases: int
    recall_at_5: float | None
    top1: float | None
    no_result_precision: float | None
    no_result_recall: float | None
    max_selected: int | None
    fast_precision: float | None = None
    """Of the documents the fast result delivered, the share that are relevant."""
    fast_hit: float | None = None
    """Of the cases with relevant documents, the share whose fast result holds one."""
    fast_outdated: float | None = None
    """Of the cases that label the current one (``top``) of several relevant documents (an
    older note and its update), the share whose fast result delivers a relevant document
    without the current one: an outdated fact alone in the prompt."""

    def to_json(self) -> dict[str, Any]:
        """The contract's object (keys in contract order), then the optional fast-path keys."""
        return {
            "cases": self.cases,
            "recall_at_5": self.recall_at_5,
            "top1": self.top1,
            "no_result_precision": self.no_result_precision,
            "no_result_recall": self.no_result_recall,
            "max_selected": self.max_selected,
            "fast_precision": self.fast_precision,
            "fast_hit": self.fast_hit,
            "fast_outdated": self.fast_outdated,
        }


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def compute_metrics(
    cases: Sequence[Case],
    selections: Sequence[Sequence[str]],
    fast: Sequence[Sequence[str]] | None = None,
) -> Metrics:
    """Metrics of ``cases`` given what was selected for each (same order, best first).

    Recall@5 averages |relevant ∩ first 5 selected| / |relevant| over cases
    with relevant documents; top-1 is the share of cases with a ``top`` whose
    first selection is it; no-result precision is the share of silent answers
    that were right to be silent; no-result recall the share of no-result
    cases answered with silence. With ``fast`` (the fast result per case),
    fast-path precision is the share of all fast-delivered documents that are
    relevant to their case, fast hit the share of cases with relevant
    documents whose fast result holds at least one, and fast outdated the share
    of cases naming a current document among several relevant ones whose fast
    result holds a relevant one but not the current one.
    """
    if len(cases) != len(selections):
        raise ValueError("one selection per case")
    if fast is not None and len(fast) != len(cases):
        raise ValueError("one fast result per case")
    recalls: list[float] = []
    tops: list[float] = []
    silent_right: list[float] = []
    empty_silent: list[float] = []
    for case, selected in zip(cases, selections, strict=True):
        if case.relevant:
            hits = set(case.relevant) & set(selected[:LIMIT])
            recalls.append(len(hits) / len(set(case.relevant)))
        else:
            empty_silent.append(1.0 if not selected else 0.0)
        if case.top is not None:
            tops.append(1.0 if selected and selected[0] == case.top else 0.0)
        if not selected:
            silent_right.append(0.0 if case.relevant else 1.0)
    delivered: list[float] = []
    fast_hits: list[float] = []
    outdated: list[float] = []
    for case, sent in zip(cases, fast or (), strict=False):
        relevant = set(case.relevant)
        delivered.extend(1.0 if doc_id in relevant else 0.0 for doc_id in sent)
        if relevant:
            fast_hits.append(1.0 if relevant & set(sent) else 0.0)
        if case.top is not None and len(relevant) > 1:
            stale = bool(relevant & set(sent)) and case.top not in sent
            outdated.append(1.0 if stale else 0.0)
    return Metrics(
        cases=len(cases),
        recall_at_5=_mean(recalls),
        top1=_mean(tops),
        no_result_precision=_mean(silent_right),
        no_result_recall=_mean(empty_silent),
        max_selected=max((len(s) for s in selections), default=None),
        fast_precision=_mean(delivered),
        fast_hit=_mean(fast_hits) if fast is not None else None,
        fast_outdated=_mean(outdated) if fast is not None else None,
    )


def random_floor(documents: int) -> float:
    """Recall@5 of a query-blind scorer: min(1, 5 / number of documents)."""
    if documents <= 0:
        raise ValueError("a corpus has at least one document")
    return min(1.0, LIMIT / documents)


def _percentile(values: Sequence[float], percent: float) -> float:
    """Nearest-rank percentile of a non-empty sample."""
    ordered = sorted(values)
    rank = max(1, math.ceil(percent / 100 * len(ordered)))
    return ordered[rank - 1]


# --------------------------------------------------------------------------- runs


@attrs.frozen
class CaseResult:
    """What the scorer selected for one case (document ids, best first), and its fast result."""

    id: str
    selected: tuple[str, ...]
    fast: tuple[str, ...] = ()


@attrs.frozen
class Report:
    """One scorer's evaluation on one corpus."""

    corpus: str
    documents: int
    scorer: str
    random_floor: float
    overall: Metrics
    lexical: Metrics
    slices: dict[str, Metrics]
    latency_p50_ms: float
    latency_p95_ms: float
    results: tuple[CaseResult, ...]

    def to_json(self) -> dict[str, Any]:
        """The object ``memrecall eval --json`` prints (the public contract's shape)."""
        return {
            "corpus": self.corpus,
            "documents": self.documents,
            "cases": self.overall.cases,
            "scorer": self.scorer,
            "random_floor": self.random_floor,
            "overall": self.overall.to_json(),
            "lexical": self.lexical.to_json(),
            "slices": {name: m.to_json() for name, m in self.slices.items()},
            "latency_ms": {"p50": self.latency_p50_ms, "p95": self.latency_p95_ms},
            "results": [{"id": r.id, "selected": list(r.selected)} for r in self.results],
        }


def evaluate(corpus: Corpus, scorer: str = DEFAULT_SCORER) -> Report:
    """Run every case of ``corpus`` through the named scorer and compute the report.

    Each case ranks the whole pool minus its ``exclude``, limit 5. Latency is
    the wall time of each case's ranking call (building the index is not
    counted). The fast result is the scorer's ``fast(query, exclude=...)``
    where it has one, else its top two. Raises ``KeyError`` for an unknown
    scorer name.
    """
    if scorer not in SCORERS:
        raise KeyError(f"unknown scorer {scorer!r} (known: {', '.join(sorted(SCORERS))})")
    ranker = SCORERS[scorer](corpus.documents)
    fast_of: Callable[..., list[int]] | None = getattr(ranker, "fast", None)
    position = {doc_id: i for i, doc_id in enumerate(corpus.ids)}
    selections: list[tuple[str, ...]] = []
    fast: list[tuple[str, ...]] = []
    latencies: list[float] = []
    with remembering():  # the fast result reads each query's embedding again
        for case in corpus.cases:
            exclude = {position[doc_id] for doc_id in case.exclude}
            started = time.perf_counter()
            ranked = ranker.rank(case.query, LIMIT, exclude=exclude)
            latencies.append((time.perf_counter() - started) * 1000)
            selections.append(tuple(corpus.ids[i] for i in ranked[:LIMIT]))
            sent = ranked[:FAST_LIMIT] if fast_of is None else fast_of(case.query, exclude=exclude)
            fast.append(tuple(corpus.ids[i] for i in sent[:FAST_LIMIT]))

    def over(keep: Callable[[Case], bool]) -> Metrics:
        picked = [i for i, c in enumerate(corpus.cases) if keep(c)]
        return compute_metrics(
            [corpus.cases[i] for i in picked],
            [selections[i] for i in picked],
            [fast[i] for i in picked],
        )

    slice_names = list(dict.fromkeys(c.slice for c in corpus.cases))
    return Report(
        corpus=corpus.name,
        documents=len(corpus.documents),
        scorer=scorer,
        random_floor=random_floor(len(corpus.documents)),
        overall=over(lambda c: True),
        lexical=over(lambda c: c.slice != SEMANTIC_SLICE),
        slices={name: over(_in_slice(name)) for name in slice_names},
        latency_p50_ms=round(_percentile(latencies, 50), 4),
        latency_p95_ms=round(_percentile(latencies, 95), 4),
        results=tuple(
            CaseResult(id=c.id, selected=s, fast=f)
            for c, s, f in zip(corpus.cases, selections, fast, strict=True)
        ),
    )


def _in_slice(name: str) -> Callable[[Case], bool]:
    return lambda case: case.slice == name


def evaluate_many(corpus: Corpus, scorers: Sequence[str]) -> dict[str, Report]:
    """One report per named scorer, in the order given (for before/after tables)."""
    return {name: evaluate(corpus, name) for name in scorers}


# --------------------------------------------------------------------------- tables


def _count(value: int | None) -> str:
    return "n/a" if value is None else str(value)


def _groups(report: Report) -> list[tuple[str, Metrics]]:
    return [("overall", report.overall), ("lexical", report.lexical), *report.slices.items()]


def format_report(report: Report) -> str:
    """The figures of one report as a readable table (``memrecall eval`` without ``--json``)."""
    header = [
        "slice",
        "cases",
        "Recall@5",
        "top-1",
        "no-result precision",
        "no-result recall",
        "max selected",
        "fast precision",
        "fast hit",
        "fast outdated",
    ]
    rows = [
        [
            name,
            str(m.cases),
            percent(m.recall_at_5),
            percent(m.top1),
            percent(m.no_result_precision),
            percent(m.no_result_recall),
            _count(m.max_selected),
            percent(m.fast_precision),
            percent(m.fast_hit),
            percent(m.fast_outdated),
        ]
        for name, m in _groups(report)
    ]
    lines = [
        f"corpus {report.corpus}: {report.documents} documents, {report.overall.cases} cases,"
        f" scorer {report.scorer}"
        + (f", turn reader {describe(default_turns())}" if report.scorer == "fielded" else ""),
        f"random floor (Recall@5 of a query-blind scorer): {percent(report.random_floor)}",
        "",
        *markdown_table(header, rows),
        "",
        f"latency per case: p50 {report.latency_p50_ms:.3f} ms, p95 {report.latency_p95_ms:.3f} ms",
        "fast precision: share of fast-delivered documents (at most 2) that are relevant;"
        " fast hit: share of answerable cases whose fast result holds a relevant one;"
        " fast outdated: share of cases naming the current of several relevant documents"
        " whose fast result holds an older one without it",
    ]
    return "\n".join(lines)


def format_comparison(before: Report, after: Report) -> str:
    """A before → after table of the four quality metrics, per slice."""
    header = ["slice", "cases", "Recall@5", "top-1", "no-result precision", "no-result recall"]
    after_groups = dict(_groups(after))
    rows = []
    for name, b in _groups(before):
        a = after_groups[name]
        rows.append(
            [
                name,
                str(b.cases),
                *(
                    f"{percent(x)} → {percent(y)}"
                    for x, y in (
                        (b.recall_at_5, a.recall_at_5),
                        (b.top1, a.top1),
                        (b.no_result_precision, a.no_result_precision),
                        (b.no_result_recall, a.no_result_recall),
                    )
                ),
            ]
        )
    lines = [
        f"corpus {before.corpus}: {before.documents} documents, {before.overall.cases} cases;"
        f" {before.scorer} → {after.scorer}",
        f"random floor (Recall@5 of a query-blind scorer): {percent(before.random_floor)}",
        "",
        *markdown_table(header, rows),
    ]
    return "\n".join(lines)


_SIDE_BY_SIDE = (
    ("Recall@5", "recall_at_5"),
    ("top-1", "top1"),
    ("no-result precision", "no_result_precision"),
    ("no-result recall", "no_result_recall"),
    ("fast precision", "fast_precision"),
    ("fast outdated", "fast_outdated"),
)


def _bare(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}"


def format_side_by_side(reports: Sequence[Report]) -> str:
    """Several scorers on one corpus, per slice: each cell is ``a / b / ...`` in percent."""
    if not reports:
        raise ValueError("at least one report")
    first = reports[0]
    names = " / ".join(r.scorer for r in reports)
    header = ["slice", "cases", *(label for label, _ in _SIDE_BY_SIDE)]
    groups = [dict(_groups(r)) for r in reports]
    rows = []
    for name, m in _groups(first):
        rows.append(
            [
                name,
                str(m.cases),
                *(
                    " / ".join(_bare(getattr(g[name], key)) for g in groups)
                    for _, key in _SIDE_BY_SIDE
                ),
            ]
        )
    lines = [
        f"corpus {first.corpus}: {first.documents} documents, {first.overall.cases} cases;"
        f" each cell: {names} (percent)",
        f"random floor (Recall@5 of a query-blind scorer): {percent(first.random_floor)}",
        "fast precision: share of fast-delivered documents (at most 2) that are relevant;"
        " fast outdated: share of update questions whose fast result gives an older note"
        " without the current one",
        "",
        *markdown_table(header, rows),
        "",
        "latency per case (p50 / p95 ms): "
        + "; ".join(f"{r.scorer} {r.latency_p50_ms:.3f} / {r.latency_p95_ms:.3f}" for r in reports),
    ]
    return "\n".join(lines)
