"""Defaults of the tool contract and their configuration override.

Every number the recall contract uses is a field of :class:`ScoreConfig`; the
module constants are its defaults. The configuration section ``score`` uses
camelCase keys (``scaleA``, ``weakThreshold``, ``contentTokenMin``,
``gateMargin``, ``calibrationDriftRel``, ...), as the seed names them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import msgspec

from memrecall.engine.scoring.tokens import MAX_QUERY_TOKENS

__all__ = [
    "ACTIVATION_THRESHOLD",
    "BM25_B",
    "BM25_K1",
    "CALIBRATION_DATE",
    "CALIBRATION_DRIFT_ABS",
    "CALIBRATION_DRIFT_REL",
    "CALIBRATION_RECORDS",
    "CONTENT_TOKEN_MIN",
    "DIVERSITY_BETA",
    "DIVERSITY_MIN_CANDIDATES",
    "GATE_MARGIN",
    "GRAPH_BONUS_CAP",
    "GRAPH_GAMMA",
    "GRAPH_RHO",
    "HEADER_CONST_MAX_CHARS",
    "HEADER_MAX_CHARS",
    "KINDS",
    "LIMIT_DEFAULT",
    "LIMIT_MAX",
    "NOVELTY_THRESHOLD",
    "PRUNE_HALF_LIFE_DAYS",
    "RECALL_COLUMNS",
    "RECORD_FRACTION",
    "SCALE_A",
    "SCALE_B",
    "SCOPE_MAX",
    "STRONG_THRESHOLD",
    "TAGS_MAX",
    "TAG_MAX_CHARS",
    "TITLE_MAX",
    "TITLE_MIN",
    "WEAK_THRESHOLD",
    "ConfigError",
    "ScoreConfig",
    "load_score_config",
]

# --- write protocol (seed 003 §2, §3, §8)
KINDS = ("fact", "lesson", "preference", "pointer")
TITLE_MIN = 8
TITLE_MAX = 120
TAGS_MAX = 12
TAG_MAX_CHARS = 32
SCOPE_MAX = 64
RECORD_FRACTION = 0.1
"""One record may take at most this share of the store's byte cap."""

# --- the printed index (§4, §7)
RECALL_COLUMNS = ("id", "kind", "title", "tags", "graph", "via", "rel", "cov", "match", "score")
LIMIT_DEFAULT = 5
LIMIT_MAX = 50

# --- scoring constants (§6), calibrated on a 204-record store on 2026-10-09
SCALE_A = 0.0199
SCALE_B = 0.3666
WEAK_THRESHOLD = 0.0382
STRONG_THRESHOLD = 0.1507
GRAPH_BONUS_CAP = 0.018
CONTENT_TOKEN_MIN = 2
GATE_MARGIN = 2.0
CALIBRATION_RECORDS = 204
CALIBRATION_DATE = "2026-10-09"
CALIBRATION_DRIFT_REL = 0.2
CALIBRATION_DRIFT_ABS = 100

# --- diversity (§5), triage and low confidence (§9)
DIVERSITY_BETA = 0.3
DIVERSITY_MIN_CANDIDATES = 5
"""The diversity factor applies only when there are more candidates than this."""
NOVELTY_THRESHOLD = 0.5
ACTIVATION_THRESHOLD = 0.05

# --- choices the seed leaves open (ours; see docs/tools.md)
BM25_K1 = 1.2
BM25_B = 0.75
GRAPH_GAMMA = 0.1
"""Graph bonus = GRAPH_GAMMA x tag activation, then capped at GRAPH_BONUS_CAP."""
GRAPH_RHO = 0.5
"""Activation kept across one co-occurrence hop (tag to neighbouring tag)."""
PRUNE_HALF_LIFE_DAYS = 30.0

# --- the header (§10)
HEADER_MAX_CHARS = 448
HEADER_CONST_MAX_CHARS = 9


class ConfigError(ValueError):
    """A ``score`` configuration value is out of range; the message names the key."""


class ScoreConfig(
    msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True
):
    """Every tunable of the recall contract (configuration section ``score``)."""

    scale_a: float = SCALE_A
    scale_b: float = SCALE_B
    weak_threshold: float = WEAK_THRESHOLD
    strong_threshold: float = STRONG_THRESHOLD
    graph_bonus_cap: float = GRAPH_BONUS_CAP
    content_token_min: int = CONTENT_TOKEN_MIN
    gate_margin: float = GATE_MARGIN
    calibration_records: int = CALIBRATION_RECORDS
    calibration_date: str = CALIBRATION_DATE
    calibration_drift_rel: float = CALIBRATION_DRIFT_REL
    calibration_drift_abs: int = CALIBRATION_DRIFT_ABS
    diversity_beta: float = DIVERSITY_BETA
    diversity_min_candidates: int = DIVERSITY_MIN_CANDIDATES
    novelty_threshold: float = NOVELTY_THRESHOLD
    activation_threshold: float = ACTIVATION_THRESHOLD
    bm25_k1: float = BM25_K1
    bm25_b: float = BM25_B
    graph_gamma: float = GRAPH_GAMMA
    graph_rho: float = GRAPH_RHO
    prune_half_life_days: float = PRUNE_HALF_LIFE_DAYS

    def __post_init__(self) -> None:
        for name in self.__struct_fields__:
            value = getattr(self, name)
            if isinstance(value, float) and not math.isfinite(value):
                raise ConfigError(f"score.{_camel(name)} must be a finite number, got {value}")
        if self.scale_b <= self.scale_a:
            raise ConfigError("score.scaleB must be greater than score.scaleA")
        if not 0 <= self.weak_threshold <= self.strong_threshold:
            raise ConfigError("score needs 0 <= weakThreshold <= strongThreshold")
        checks = {
            "graphBonusCap": self.graph_bonus_cap >= 0,
            "contentTokenMin": 0 <= self.content_token_min <= MAX_QUERY_TOKENS + 1,
            "gateMargin": self.gate_margin >= 0,
            "calibrationRecords": self.calibration_records >= 0,
            "calibrationDriftRel": self.calibration_drift_rel >= 0,
            "calibrationDriftAbs": self.calibration_drift_abs >= 0,
            "diversityBeta": 0 <= self.diversity_beta <= 1,
            "diversityMinCandidates": self.diversity_min_candidates >= 0,
            "bm25K1": self.bm25_k1 > 0,
            "bm25B": 0 <= self.bm25_b <= 1,
            "graphGamma": self.graph_gamma >= 0,
            "graphRho": 0 <= self.graph_rho <= 1,
            "pruneHalfLifeDays": self.prune_half_life_days > 0,
            "calibrationDate": 0 < len(self.calibration_date) <= 10
            and self.calibration_date.isprintable(),
        }
        for key, ok in checks.items():
            if not ok:
                raise ConfigError(f"score.{key} is out of range")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def load_score_config(section: Mapping[str, Any] | None) -> ScoreConfig:
    """The configuration's ``score`` section as a :class:`ScoreConfig` (defaults for absent keys).

    Raises :class:`ConfigError` naming the offending key on an unknown key, a
    wrong type or an out-of-range value.
    """
    try:
        return msgspec.convert(dict(section or {}), ScoreConfig)
    except msgspec.ValidationError as error:
        raise ConfigError(f"score: {error}") from error
