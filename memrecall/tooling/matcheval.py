"""Score the ``match`` judgement against a labelled corpus (the eval-corpus contract).

Every (case, document) pair of a corpus gets a gold class and a predicted one:

* gold: ``strong`` for the case's ``top`` document (or, without a ``top``, every
  relevant document); ``weak`` for the other relevant documents; ``none`` for
  the rest of the pool;
* predicted: the ``match`` that recall judges for that document (computed for
  every document in the pool, not only the printed rows).

Documents become records: ``user`` -> preference, ``feedback`` -> lesson,
``project`` -> fact, ``reference`` -> pointer; body = description + body; one
tag, the document type. Each case's ``exclude`` is removed from its pool.

:func:`fit_constants` refits the seed-003 constants on such a corpus
(``memrecall calibrate --contract``); see its docstring and docs/tools.md ("Calibration").
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs
import msgspec

from memrecall.tooling.evaluation import Corpus, load_corpus
from memrecall.tools.contract.constants import ScoreConfig
from memrecall.tools.contract.recall import RecallIndex
from memrecall.tools.contract.records import MemoryRecord
from memrecall.tools.contract.scoring import Match, judge_match, printed
from memrecall.tools.contract.tokenize import query_token_list

__all__ = [
    "FOUND_RECALL_TARGET",
    "ClassScore",
    "ConstantsFit",
    "FitFigures",
    "MatchReport",
    "MatchSample",
    "corpus_records",
    "fit_constants",
    "fit_constants_main",
    "fit_thresholds",
    "format_fit",
    "format_report",
    "found_recall",
    "match_samples",
    "objective",
    "score_match",
    "score_match_file",
]

_KIND_OF_TYPE = {
    "user": "preference",
    "feedback": "lesson",
    "project": "fact",
    "reference": "pointer",
}


class ClassScore(msgspec.Struct, frozen=True, kw_only=True):
    """Precision and recall of one class (``None`` when nothing was predicted / labelled)."""

    precision: float | None
    recall: float | None
    gold: int
    predicted: int
    correct: int


class MatchReport(msgspec.Struct, frozen=True, kw_only=True):
    """Per-class scores over every (case, document) pair, and the confusion counts."""

    corpus: str
    pairs: int
    classes: dict[str, ClassScore]
    confusion: dict[str, dict[str, int]]
    """``confusion[gold][predicted]``."""


def corpus_records(corpus: Corpus) -> list[MemoryRecord]:
    """The corpus documents as records, in pool order."""
    return [
        MemoryRecord(
            id=doc_id,
            kind=_KIND_OF_TYPE[doc.type.value],
            title=doc.title,
            body=f"{doc.description}\n{doc.body}",
            tags=(doc.type.value,),
            source=f"file:{doc.relative_path}",
            created_at=doc.mtime,
            updated_at=doc.mtime,
        )
        for doc_id, doc in zip(corpus.ids, corpus.documents, strict=True)
    ]


class MatchSample(msgspec.Struct, frozen=True, array_like=True):
    """One (case, document) pair: the case, ``rel`` as printed, ``qTok`` and the gold class."""

    case: str
    rel: float
    content: int
    gold: Match


def _gold(record_id: str, relevant: set[str], top: str | None) -> Match:
    if record_id not in relevant:
        return Match.NONE
    return Match.STRONG if top in (None, record_id) else Match.WEAK


def match_samples(corpus: Corpus, config: ScoreConfig | None = None) -> list[MatchSample]:
    """Every (case, document) pair of the corpus with its printed ``rel``, ``qTok`` and gold class.

    ``rel`` and ``qTok`` depend only on the BM25 parameters of ``config``, never on the
    thresholds, the gate or the scales, so one pass serves every candidate constant.
    """
    cfg = config or ScoreConfig()
    records = corpus_records(corpus)
    shared = RecallIndex(records, cfg)
    out = []
    for case in corpus.cases:
        if case.exclude:
            excluded = set(case.exclude)
            index = RecallIndex([r for r in records if r.id not in excluded], cfg)
        else:
            index = shared
        rel, content = index.relevance(query_token_list(case.query))
        relevant = set(case.relevant)
        for record, value in zip(index.records, rel, strict=True):
            out.append(
                MatchSample(
                    case=case.id,
                    rel=printed(value),
                    content=content,
                    gold=_gold(record.id, relevant, case.top),
                )
            )
    return out


def _report(name: str, samples: Iterable[MatchSample], config: ScoreConfig) -> MatchReport:
    labels = [m.value for m in Match]
    confusion = {g: dict.fromkeys(labels, 0) for g in labels}
    pairs = 0
    for sample in samples:
        predicted = judge_match(sample.rel, sample.content, config)
        confusion[sample.gold.value][predicted.value] += 1
        pairs += 1
    classes = {}
    for label in labels:
        correct = confusion[label][label]
        gold_n = sum(confusion[label].values())
        predicted_n = sum(confusion[g][label] for g in labels)
        classes[label] = ClassScore(
            precision=correct / predicted_n if predicted_n else None,
            recall=correct / gold_n if gold_n else None,
            gold=gold_n,
            predicted=predicted_n,
            correct=correct,
        )
    return MatchReport(corpus=name, pairs=pairs, classes=classes, confusion=confusion)


def score_match(corpus: Corpus, config: ScoreConfig | None = None) -> MatchReport:
    """Precision and recall of strong/weak/none over the corpus (see the module docstring)."""
    cfg = config or ScoreConfig()
    return _report(corpus.name, match_samples(corpus, cfg), cfg)


def score_match_file(path: str | Path, config: ScoreConfig | None = None) -> MatchReport:
    """:func:`score_match` on a corpus file (raises ``CorpusError`` for a bad file)."""
    return score_match(load_corpus(path), config)


def format_report(report: MatchReport) -> str:
    """A readable table of the per-class scores."""

    def pct(value: float | None) -> str:
        return "   n/a" if value is None else f"{value:6.1%}"

    lines = [f"corpus {report.corpus}: {report.pairs} (case, document) pairs"]
    lines.append("class   precision  recall   gold  predicted")
    for label, score in report.classes.items():
        lines.append(
            f"{label:<7} {pct(score.precision):>9}  {pct(score.recall):>6} {score.gold:>6}"
            f" {score.predicted:>10}"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------- refitting the constants

FITTED_KEYS = (
    "scaleA",
    "scaleB",
    "weakThreshold",
    "strongThreshold",
    "graphBonusCap",
    "contentTokenMin",
    "gateMargin",
    "calibrationRecords",
    "calibrationDate",
)
"""The ``score`` keys a constants file from :func:`fit_constants` holds, in order."""

FOUND_RECALL_TARGET = 0.95
"""The weak threshold is the highest that still lets this share of labelled documents with
lexical evidence through (judged weak or strong, not none): ``none`` should hide little."""
CONTENT_TOKEN_MIN_GRID = (1, 2, 3, 4)
"""Gate thresholds tried (1 switches the gate off: ``qTok = 0`` is none anyway)."""
GATE_MARGIN_GRID = (0.0, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0)
"""Gate margins tried (0 never caps)."""
THRESHOLD_GRID = 64
"""About this many candidate thresholds (midpoints between observed ``rel`` values)."""
SCALE_A_PERCENTILE = 0.50
"""``scaleA`` is this percentile of the noise: ``rel`` of unlabelled documents that matched."""
SCALE_B_PERCENTILE = 0.95
"""``scaleB`` is this percentile of ``rel`` over the labelled documents that matched."""
_TIE = 1e-12


def _f1(tp: int, fp: int, fn: int) -> float:
    """F1; 1.0 when there is nothing to find and nothing was predicted."""
    return 1.0 if tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn)


def _strong_counts(samples: Sequence[MatchSample], config: ScoreConfig) -> tuple[int, int, int]:
    tp = fp = fn = 0
    for sample in samples:
        gold = sample.gold is Match.STRONG
        said = judge_match(sample.rel, sample.content, config) is Match.STRONG
        tp += gold and said
        fp += said and not gold
        fn += gold and not said
    return tp, fp, fn


def objective(samples: Sequence[MatchSample], config: ScoreConfig) -> float:
    """What :func:`fit_constants` maximises: F1 of ``strong`` over the (case, document) pairs.

    Predicted ``strong`` (recall's own :func:`~memrecall.tools.contract.scoring.judge_match` on
    the printed ``rel``) against gold ``strong`` (the answer to the case). The fit's search
    counts the same thing faster; this is the plain definition the tests hold it to.
    """
    return _f1(*_strong_counts(samples, config))


def found_recall(samples: Sequence[MatchSample], config: ScoreConfig) -> float | None:
    """Share of labelled documents with lexical evidence (gold strong/weak, ``rel > 0``) that
    ``match`` does not call ``none``: the floor :data:`FOUND_RECALL_TARGET` the weak threshold
    keeps (``None`` without such documents)."""
    found = [s for s in samples if s.gold is not Match.NONE and s.rel > 0]
    if not found:
        return None
    kept = sum(1 for s in found if judge_match(s.rel, s.content, config) is not Match.NONE)
    return kept / len(found)


def _thresholds(values: Iterable[float], keep: float) -> list[float]:
    """``keep`` and the midpoints between neighbouring distinct positive values (rounded to 5
    decimals: still strictly between two printed 4-decimal values), thinned, ascending."""
    distinct = sorted({v for v in values if v > 0})
    mids = [round((a + b) / 2, 5) for a, b in itertools.pairwise(distinct)]
    if len(mids) > THRESHOLD_GRID:
        step = len(mids) / THRESHOLD_GRID
        mids = [mids[int(i * step)] for i in range(THRESHOLD_GRID)]
    return sorted({keep, *mids})


def _at_least(ordered: Sequence[float], threshold: float) -> int:
    return len(ordered) - bisect.bisect_left(ordered, threshold)


def _percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of a non-empty sequence."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * fraction // 1))
    return ordered[int(rank) - 1]


class _Counts:
    """Sorted ``rel`` lists that answer "how many pairs at or above a threshold" by bisection."""

    def __init__(self, samples: Sequence[MatchSample]) -> None:
        self.gold_strong = sum(1 for s in samples if s.gold is Match.STRONG)
        self.found = sorted(s.rel for s in samples if s.gold is not Match.NONE and s.rel > 0)
        self._samples = [s for s in samples if s.rel > 0]
        self._by_gate: dict[int, tuple[list[float], list[float], list[float], list[float]]] = {}

    def found_recall(self, weak: float) -> float | None:
        return _at_least(self.found, weak) / len(self.found) if self.found else None

    def strong_f1(self, strong: float, minimum: int, margin: float) -> float:
        if minimum not in self._by_gate:
            lists: tuple[list[float], ...] = ([], [], [], [])
            for s in self._samples:
                lists[2 * (s.content < minimum) + (s.gold is not Match.STRONG)].append(s.rel)
            for part in lists:
                part.sort()
            self._by_gate[minimum] = (lists[0], lists[1], lists[2], lists[3])
        hi_gold, hi_other, lo_gold, lo_other = self._by_gate[minimum]
        # below the gate, strong needs rel >= strong and not rel < margin x strong
        lo_bar = max(strong, margin * strong)
        tp = _at_least(hi_gold, strong) + _at_least(lo_gold, lo_bar)
        fp = _at_least(hi_other, strong) + _at_least(lo_other, lo_bar)
        return _f1(tp, fp, self.gold_strong - tp)


def fit_thresholds(samples: Sequence[MatchSample], start: ScoreConfig) -> ScoreConfig:
    """The strong threshold and gate that maximise :func:`objective` on ``samples``, then the
    highest weak threshold (not above strong) that keeps :data:`FOUND_RECALL_TARGET`.

    Exhaustive over the grids (each holds ``start``'s own value); a candidate replaces the
    best so far only if strictly better, and ``start`` is tried first, so ties keep it.
    """
    counts = _Counts(samples)
    rels = [s.rel for s in samples]
    minimums = sorted({start.content_token_min, *CONTENT_TOKEN_MIN_GRID})
    margins = sorted({start.gate_margin, *GATE_MARGIN_GRID})
    best = counts.strong_f1(start.strong_threshold, start.content_token_min, start.gate_margin)
    chosen = (start.strong_threshold, start.content_token_min, start.gate_margin)
    grid = _thresholds(rels, start.strong_threshold)
    for minimum, margin, strong in itertools.product(minimums, margins, grid):
        value = counts.strong_f1(strong, minimum, margin)
        if value > best + _TIE:
            best, chosen = value, (strong, minimum, margin)
    strong, minimum, margin = chosen
    weak = min(start.weak_threshold, strong)
    if counts.found:
        lowest = round(counts.found[0] / 2, 5)
        candidates = [w for w in _thresholds(rels, lowest) if w <= strong]
        enough = [w for w in candidates if (counts.found_recall(w) or 0.0) >= FOUND_RECALL_TARGET]
        if enough:
            weak = enough[-1]
    return msgspec.structs.replace(
        start,
        weak_threshold=weak,
        strong_threshold=strong,
        content_token_min=minimum,
        gate_margin=margin,
    )


def _scales(samples: Sequence[MatchSample], start: ScoreConfig) -> tuple[float, float]:
    """``scaleA`` = p50 of the noise's ``rel``, ``scaleB`` = p95 of the labelled documents'
    ``rel`` (both over pairs that matched, ``rel > 0``); ``start``'s pair if either side is
    empty or the two do not rise."""
    noise = [s.rel for s in samples if s.gold is Match.NONE and s.rel > 0]
    found = [s.rel for s in samples if s.gold is not Match.NONE and s.rel > 0]
    if not noise or not found:
        return start.scale_a, start.scale_b
    a, b = _percentile(noise, SCALE_A_PERCENTILE), _percentile(found, SCALE_B_PERCENTILE)
    return (a, b) if b > a else (start.scale_a, start.scale_b)


class FitFigures(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """What one set of constants gives on some cases: the objective and the found-recall floor."""

    cases: int
    strong_f1: float
    found_recall: float | None


def _figures(samples: Sequence[MatchSample], config: ScoreConfig) -> FitFigures:
    return FitFigures(
        cases=len({s.case for s in samples}),
        strong_f1=objective(samples, config),
        found_recall=found_recall(samples, config),
    )


@attrs.frozen
class ConstantsFit:
    """The refit constants, what they replace and what both give on the corpus."""

    before: ScoreConfig
    after: ScoreConfig
    corpus: str
    documents: int
    figures: dict[str, tuple[FitFigures, FitFigures]]
    """(before, after) on ``fitted``, ``held out`` (with a hold-out) and ``all`` cases."""
    report_before: MatchReport
    """``memrecall eval --match`` figures on every pair, with the old constants."""
    report_after: MatchReport
    note: str
    command: str

    def score_section(self) -> dict[str, Any]:
        """The ``score`` section of the constants file (the fitted keys, in order)."""
        encoded = msgspec.to_builtins(self.after)
        return {key: encoded[key] for key in FITTED_KEYS}

    def fit_section(self) -> dict[str, Any]:
        """The ``fit`` section: where the constants come from and what they gave (for people)."""
        section: dict[str, Any] = {
            "corpus": self.corpus,
            "documents": self.documents,
            "note": self.note,
            "objective": "strong F1 over (case, document) pairs",
            "foundRecallTarget": FOUND_RECALL_TARGET,
            "graphBonusCap": "kept, not fitted (docs/tools.md, Calibration)",
            "figures": {
                name: {"before": msgspec.to_builtins(old), "after": msgspec.to_builtins(new)}
                for name, (old, new) in self.figures.items()
            },
        }
        if self.command:
            section["command"] = self.command
        return section


def fit_constants(
    corpus: Corpus,
    *,
    start: ScoreConfig | None = None,
    holdout: bool = True,
    date: str | None = None,
    command: str = "",
) -> ConstantsFit:
    """Refit ``strongThreshold``, ``contentTokenMin``, ``gateMargin``, ``weakThreshold``,
    ``scaleA`` and ``scaleB`` on a labelled corpus; record its size as ``calibrationRecords``.

    * The strong threshold and the gate maximise :func:`objective` (strong F1) over a grid
      (candidate thresholds are midpoints between observed printed ``rel`` values, plus the
      current value); the current constants are a candidate and win ties, so the objective on
      the fitted cases never goes down.
    * The weak threshold is then the highest (not above strong) that still judges
      :data:`FOUND_RECALL_TARGET` of the labelled documents with lexical evidence weak or strong.
    * The display scales follow the seed's definitions: ``scaleA`` the median ``rel`` of
      matching noise, ``scaleB`` the 95th percentile over matching labelled documents.
    * ``graphBonusCap`` is kept: the corpus's records carry one tag each (their type), so the
      tag graph has nothing there to measure, and the cap never changes ``match``.

    With ``holdout`` the fit sees only the cases :func:`~memrecall.tooling.calibration.split`
    fits on (even-numbered), and the odd ones give an honest figure. Deterministic: the same
    corpus and ``start`` give the same constants (``date``, default today in UTC, is a label).
    """
    from memrecall.tooling.calibration import is_held_out

    before = start or ScoreConfig()
    samples = match_samples(corpus, before)
    held_ids = {
        case.id for n, case in enumerate(corpus.cases) if holdout and is_held_out(case.id, n)
    }
    fit_on = [s for s in samples if s.case not in held_ids]
    held = [s for s in samples if s.case in held_ids]
    fitted = fit_thresholds(fit_on, before)
    scale_a, scale_b = _scales(fit_on, before)
    after = msgspec.structs.replace(
        fitted,
        scale_a=scale_a,
        scale_b=scale_b,
        calibration_records=len(corpus.documents),
        calibration_date=date or dt.datetime.now(dt.UTC).date().isoformat(),
    )
    groups = {"fitted": fit_on, "held out": held, "all": samples}
    return ConstantsFit(
        before=before,
        after=after,
        corpus=corpus.name,
        documents=len(corpus.documents),
        figures={
            name: (_figures(group, before), _figures(group, after))
            for name, group in groups.items()
            if group and (name != "fitted" or held)
        },
        report_before=_report(corpus.name, samples, before),
        report_after=_report(corpus.name, samples, after),
        note=(
            "fitted on the cases whose id ends in an even number; the odd ones were held out"
            if holdout
            else "fitted on every case"
        ),
        command=command,
    )


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def format_fit(result: ConstantsFit) -> str:
    """The constants before and after, the objective, and both match reports, as text."""
    old, new = msgspec.to_builtins(result.before), msgspec.to_builtins(result.after)
    lines = [
        f"seed-003 constants on corpus {result.corpus} ({result.documents} documents);"
        f" {result.note}",
        "",
        f"{'constant':<20} {'before':>12} {'after':>12}",
    ]
    for key in FITTED_KEYS:
        lines.append(f"{key:<20} {old[key]!s:>12} {new[key]!s:>12}")
    lines += [
        "",
        f"objective strong F1; weak keeps found recall >= {FOUND_RECALL_TARGET:.0%}"
        " (labelled documents with rel > 0 not judged none); before -> after:",
    ]
    for name, (b, a) in result.figures.items():
        lines.append(
            f"  {name:<9} {b.cases:>4} cases  strong F1 {b.strong_f1:.4f} -> {a.strong_f1:.4f}"
            f"  found recall {_pct(b.found_recall)} -> {_pct(a.found_recall)}"
        )
    lines += [
        "",
        "before: " + format_report(result.report_before),
        "",
        "after:  " + format_report(result.report_after),
        "",
        "graphBonusCap kept (the corpus's records carry one tag each; the cap never changes match)",
    ]
    return "\n".join(lines)


def fit_constants_main(
    corpus_path: str,
    *,
    output: str | None,
    as_json: bool,
    holdout: bool,
    command: str,
) -> int:
    """``memrecall calibrate --contract``: refit, print, optionally write the constants file."""
    import sys

    from memrecall.tooling.evaluation import CorpusError
    from memrecall.tools.constants_file import dump_constants

    try:
        corpus = load_corpus(corpus_path)
    except CorpusError as exc:
        print(f"memrecall calibrate: error: {exc}", file=sys.stderr)
        return 2
    result = fit_constants(corpus, holdout=holdout, command=command)
    data = dump_constants(result.score_section(), result.fit_section())
    if output is not None:
        try:
            Path(output).write_bytes(data)
        except OSError as exc:
            print(f"memrecall calibrate: cannot write {output}: {exc.strerror}", file=sys.stderr)
            return 2
    if as_json:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        print(format_fit(result))
        if output is not None:
            print(f"\nwritten to {output} (load it with memrecall mcp --constants {output})")
    return 0
