"""Print the secret screen's precision and recall on the labelled list.

Run: ``uv run python -m tests.governance.detector_report`` (docs/governance.md quotes it).
"""

from __future__ import annotations

from pathlib import Path

from memrecall.governance.detector_score import LabelledCase, ScreenScore, parse_cases, score_screen
from tests.governance.fakes import fakes

HERE = Path(__file__).parent
CASE_FILES = ("secret_cases.tsv", "secret_cases_holdout.tsv")


def load_cases(name: str = CASE_FILES[0]) -> list[LabelledCase]:
    """The labelled cases of ``name`` (in this directory) with their placeholders filled."""
    return parse_cases((HERE / name).read_text(encoding="utf-8"), fakes())


def report(score: ScreenScore) -> str:
    """The score as a few lines of text."""
    lines = [
        f"cases {score.cases}  secret cases {score.positives}  "
        f"ordinary cases {score.cases - score.positives}",
        f"precision {score.precision:.3f}  recall {score.recall:.3f}  "
        f"(tp {score.true_positives}, fp {score.false_positives})",
        f"kind named correctly on {score.kind_correct} of {score.true_positives} refusals",
    ]
    lines += [f"  recall {kind.value:<20} {r:.3f}" for kind, r in score.recall_by_kind.items()]
    if score.missed_lines:
        lines.append(f"missed lines: {list(score.missed_lines)}")
    if score.false_positive_lines:
        lines.append(f"false-positive lines: {list(score.false_positive_lines)}")
    return "\n".join(lines)


if __name__ == "__main__":
    for name in CASE_FILES:
        print(f"== tests/governance/{name}")
        print(report(score_screen(load_cases(name))))
