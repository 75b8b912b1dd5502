"""The absolute judgement of a recall row: ``match`` and the display score ``disp``.

Both are pure functions of printed numbers and configuration, so anyone holding
the rendered row and header can recompute ``match``.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from .constants import ScoreConfig

__all__ = [
    "GateBranch",
    "Match",
    "disp",
    "gate_branch",
    "is_capped",
    "judge_match",
    "printed",
]

REL_DECIMALS = 4


class Match(StrEnum):
    """The absolute judgement printed in the ``match`` column."""

    NONE = "none"
    WEAK = "weak"
    STRONG = "strong"


class GateBranch(StrEnum):
    """Which of the three content-token gate branches the header reports."""

    CAPPED = "capped"
    """Few content tokens, and at least one strong row below the margin was capped at weak."""
    EXEMPT = "exempt"
    """Few content tokens, but no row was downgraded (none was strong below the margin)."""
    INACTIVE = "inactive"
    """Enough content tokens: the gate does nothing."""


def printed(value: float) -> float:
    """A score as printed (4 decimals), the value ``match`` is judged on."""
    return float(f"{value:.{REL_DECIMALS}f}")


def _base(rel: float, config: ScoreConfig) -> Match:
    if rel >= config.strong_threshold:
        return Match.STRONG
    if rel >= config.weak_threshold:
        return Match.WEAK
    return Match.NONE


def judge_match(rel: float, content_tokens: int, config: ScoreConfig) -> Match:
    """``match`` from ``rel`` (as printed), ``qTok`` and the thresholds (seed 003 §5).

    No content token: none. Fewer than ``contentTokenMin``: a strong verdict
    with ``rel < gateMargin x strong`` is capped at weak (``gateMargin`` 0 never
    caps). Otherwise the two absolute thresholds decide.
    """
    if content_tokens == 0:
        return Match.NONE
    base = _base(rel, config)
    if (
        content_tokens < config.content_token_min
        and base is Match.STRONG
        and rel < config.gate_margin * config.strong_threshold
    ):
        return Match.WEAK
    return base


def is_capped(rel: float, content_tokens: int, config: ScoreConfig) -> bool:
    """Whether the gate turned this row's strong into weak."""
    return (
        content_tokens > 0
        and _base(rel, config) is Match.STRONG
        and judge_match(rel, content_tokens, config) is Match.WEAK
    )


def gate_branch(content_tokens: int, rels: Sequence[float], config: ScoreConfig) -> GateBranch:
    """The branch the header states for an answer whose printed ``rel`` values are ``rels``.

    Inactive with enough content tokens; capped when at least one row was
    capped; exempt otherwise (few content tokens, but no row was downgraded).
    """
    if content_tokens >= config.content_token_min:
        return GateBranch.INACTIVE
    if any(is_capped(rel, content_tokens, config) for rel in rels):
        return GateBranch.CAPPED
    return GateBranch.EXEMPT


def disp(raw: float, config: ScoreConfig) -> float:
    """The display score: ``clip((raw - scaleA) / (scaleB - scaleA), 0, 1)``."""
    value = (raw - config.scale_a) / (config.scale_b - config.scale_a)
    return min(1.0, max(0.0, value))
