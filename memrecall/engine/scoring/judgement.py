"""The absolute match judgement (strong / weak / none) and its calibrated thresholds.

A document's judgement for a query depends on two figures of that document
alone (see :class:`~memrecall.engine.scoring.fielded.Match`):

* **coverage**: how much of the query's weight the document explains (0 to 1);
* **evidence**: how much rare matching text it has, in units of the rarest
  term the pool can hold.

``strong`` needs both at or above the strong thresholds, ``weak`` both at or
above the weak ones; anything else is ``none``. One threshold is about the query
instead: a query whose best document explains less than
:attr:`Thresholds.answer_coverage` of it is not about the memories at all, and gets
nothing (it names something no memory knows, and shares a word or two in passing).
The fast path delivers only strong documents; the ranking keeps weak ones for the
selector and the fallback; ``none`` is dropped.

The thresholds ship in ``thresholds.json`` beside this module, with their
provenance (corpus, date, command). ``memrecall calibrate --corpus FILE``
recomputes them for another labelled corpus (:mod:`memrecall.tooling.calibration`).
"""

from __future__ import annotations

import enum
import functools
import json
from importlib import resources
from typing import Any

import attrs
import msgspec

__all__ = ["THRESHOLDS_FILE", "Judgement", "Provenance", "Thresholds", "default_thresholds"]

THRESHOLDS_FILE = "thresholds.json"
"""The shipped thresholds, a package resource of :mod:`memrecall.engine`."""


class Judgement(enum.Enum):
    """How well one document matches a query, on an absolute scale."""

    NONE = "none"
    WEAK = "weak"
    STRONG = "strong"


@attrs.frozen
class Provenance:
    """Where a set of thresholds came from."""

    corpus: str
    date: str
    command: str
    documents: int
    cases: int
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        """As stored in a thresholds file."""
        return attrs.asdict(self)


@attrs.frozen
class Thresholds:
    """The calibrated figures (and where they came from)."""

    weak_coverage: float
    weak_evidence: float
    strong_coverage: float
    strong_evidence: float
    provenance: Provenance | None = None
    answer_coverage: float = 0.0
    """The least coverage the best document of a query (not a paste) must have for the
    query to be answered at all (0 in a thresholds file written before it)."""

    def judge(self, coverage: float, evidence: float) -> Judgement:
        """The judgement of a document with these two figures."""
        if coverage >= self.strong_coverage and evidence >= self.strong_evidence:
            return Judgement.STRONG
        if coverage >= self.weak_coverage and evidence >= self.weak_evidence:
            return Judgement.WEAK
        return Judgement.NONE

    def to_json(self) -> dict[str, Any]:
        """The thresholds file's object."""
        out: dict[str, Any] = {
            "weak": {"coverage": self.weak_coverage, "evidence": self.weak_evidence},
            "strong": {"coverage": self.strong_coverage, "evidence": self.strong_evidence},
            "answer": {"coverage": self.answer_coverage},
        }
        if self.provenance is not None:
            out["provenance"] = self.provenance.to_json()
        return out

    @classmethod
    def from_json(cls, data: Any) -> Thresholds:
        """Read a thresholds object (``ValueError`` when malformed)."""
        try:
            file = msgspec.convert(data, _ThresholdsFile)
        except msgspec.ValidationError as exc:
            raise ValueError(f"not a thresholds object: {exc}") from None
        return cls(
            weak_coverage=file.weak.coverage,
            weak_evidence=file.weak.evidence,
            strong_coverage=file.strong.coverage,
            strong_evidence=file.strong.evidence,
            provenance=file.provenance,
            answer_coverage=0.0 if file.answer is None else file.answer.coverage,
        )


class _Figures(msgspec.Struct, frozen=True):
    coverage: float
    evidence: float


class _Answer(msgspec.Struct, frozen=True):
    coverage: float


class _ThresholdsFile(msgspec.Struct, frozen=True):
    """A thresholds file's shape (unknown fields are ignored)."""

    weak: _Figures
    strong: _Figures
    provenance: Provenance | None = None
    answer: _Answer | None = None


@functools.cache
def default_thresholds() -> Thresholds:
    """The shipped thresholds (``thresholds.json`` in this package)."""
    text = resources.files("memrecall.engine.scoring").joinpath(THRESHOLDS_FILE).read_text("utf-8")
    return Thresholds.from_json(json.loads(text))
