"""Precision and recall of the write-time secret screen on a labelled list.

The list format (one case a line, ``#`` comments and blank lines ignored)::

    <label> <TAB> <origin> <TAB> <text>

``label`` is a :class:`~.sensitive.SecretKind` value (the text must be refused with that
kind) or ``ok`` (it must pass); ``origin`` is a :class:`~.sensitive.WriteOrigin` value.
The text may hold ``<<NAME>>`` placeholders, filled by the caller from a table of fakes, so
no secret-shaped literal has to sit in the repository; ``\\n`` stands for a line break.

Pure: the caller reads the file (``python -m tests.governance.detector_report``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs
import regex

from memrecall.governance.sensitive import SecretKind, WriteOrigin, screen_write

__all__ = ["LabelledCase", "ScreenScore", "parse_cases", "score_screen"]

OK = "ok"
_PLACEHOLDER = regex.compile(r"<<([A-Z][A-Z0-9_]*)>>")


@attrs.frozen
class LabelledCase:
    """One labelled line: the expected kind (None: must pass), the origin and the text."""

    line: int
    expected: SecretKind | None
    origin: WriteOrigin
    text: str = attrs.field(repr=False)


def parse_cases(text: str, fakes: Mapping[str, str]) -> list[LabelledCase]:
    """Parse a labelled list; raise ``ValueError`` naming the line of a malformed case."""
    cases = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.startswith("#"):
            continue
        parts = raw.split("\t", 2)
        if len(parts) != 3:
            raise ValueError(f"line {number}: expected label<TAB>origin<TAB>text")
        label, origin, body = parts
        try:
            expected = None if label == OK else SecretKind(label)
            case_origin = WriteOrigin(origin)
            filled = _PLACEHOLDER.sub(lambda m: fakes[m.group(1)], body.replace("\\n", "\n"))
        except (ValueError, KeyError) as exc:
            raise ValueError(f"line {number}: {exc}") from None
        cases.append(LabelledCase(number, expected, case_origin, filled))
    return cases


@attrs.frozen
class ScreenScore:
    """The screen's score: refusal precision and recall, per-kind recall, misses by line."""

    cases: int
    positives: int
    true_positives: int
    false_positives: int
    precision: float
    recall: float
    kind_correct: int
    recall_by_kind: Mapping[SecretKind, float]
    missed_lines: tuple[int, ...]
    false_positive_lines: tuple[int, ...]


def score_screen(cases: Iterable[LabelledCase]) -> ScreenScore:
    """Run :func:`~.sensitive.screen_write` on every case and score refusals."""
    tp = fp = kind_ok = 0
    missed: list[int] = []
    false_pos: list[int] = []
    seen: dict[SecretKind, list[bool]] = {}
    total = 0
    for case in cases:
        total += 1
        refusal = screen_write(case.origin, case.text)
        if case.expected is None:
            if refusal is not None:
                fp += 1
                false_pos.append(case.line)
            continue
        hit = refusal is not None
        seen.setdefault(case.expected, []).append(hit)
        if hit:
            tp += 1
            kind_ok += refusal is not None and refusal.kind is case.expected
        else:
            missed.append(case.line)
    positives = sum(len(v) for v in seen.values())
    return ScreenScore(
        cases=total,
        positives=positives,
        true_positives=tp,
        false_positives=fp,
        precision=tp / (tp + fp) if tp + fp else 1.0,
        recall=tp / positives if positives else 1.0,
        kind_correct=kind_ok,
        recall_by_kind={k: sum(v) / len(v) for k, v in sorted(seen.items())},
        missed_lines=tuple(missed),
        false_positive_lines=tuple(false_pos),
    )
