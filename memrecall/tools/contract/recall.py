"""``memory_recall`` over a snapshot: BM25 relevance on an absolute scale, the tag graph,
diversity, residual-pyramid triage and the structured answer.

Steps, for a query, a pool (the view's records, filtered by scope) and a limit:

1. **rel**: Okapi BM25 of a record (title, tags and body as one bag of
   :mod:`~memrecall.tools.contract.tokenize` tokens) divided by the query's own
   upper bound ``sum(idf(t) x (k1 + 1))`` over its distinct tokens, unseen ones
   included. It lies in ``[0, 1)`` and never depends on the other records returned.
2. **qTok**: the query's distinct tokens that occur in the pool; ``match`` is
   judged by :func:`~memrecall.tools.contract.scoring.judge_match` on ``rel`` as printed.
3. **graph**: records with ``rel > 0`` activate their tags (``rel x tagWeight``,
   hubs weigh less); activation crosses one co-occurrence hop scaled by ``rho``;
   a record's bonus is ``min(cap, gamma x`` the best activation of its tags from
   *another* record ``)``. ``via`` is ``direct`` when ``rel > 0``, else the tag.
4. **triage**: the top ``kBase = limit`` candidates' tag vectors (tag-idf space)
   are orthogonalised in rank order; the share of the query's tag vector they
   leave unexplained gives ``novelty = 0.7 x residual + 0.3 x sqrt(residual)``
   (the second term is the cosine between the query and its residual). At or
   over the threshold the internal budget doubles (``kUsed = 2 x kBase``).
5. **diversity**: over more than ``diversityMinCandidates`` candidates, rows are
   picked greedily by ``(rel + graph) x (1 - beta x maxSim)``, ``maxSim`` the
   largest tag Jaccard similarity to rows already picked. Rows never exceed ``limit``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import msgspec

from .constants import LIMIT_DEFAULT, LIMIT_MAX, ScoreConfig
from .records import GLOBAL_SCOPE, MemoryRecord, StoreView
from .render import render_recall
from .scoring import GateBranch, Match, disp, gate_branch, judge_match, printed
from .tokenize import query_token_list, token_counts
from .validate import sanitize_scope_for_recall

__all__ = [
    "RecallIndex",
    "RecallResult",
    "RecallRow",
    "Triage",
    "clamp_limit",
    "recall",
]

_ENERGY_EPSILON = 1e-12


class RecallRow(msgspec.Struct, frozen=True, kw_only=True):
    """One L1 row: the ten printed columns (in order), then ``scope`` and unprinted numbers."""

    id: str
    kind: str
    title: str
    tags: tuple[str, ...]
    graph: float
    via: str
    rel: float
    cov: float
    match: Match
    score: float
    scope: str
    rel_raw: float
    final: float


class Triage(msgspec.Struct, frozen=True, kw_only=True):
    """The residual-pyramid triage. Ratios are ``None`` when the query has no tag energy (0/0)."""

    k_base: int
    k_used: int
    expanded: bool
    novelty: float
    explained_ratio: float | None
    residual_ratio: float | None
    basis_size: int
    layers: tuple[float, ...]
    """Residual ratio after each orthogonal layer, in rank order."""


class RecallResult(msgspec.Struct, frozen=True, kw_only=True):
    """Everything ``memory_recall`` knows; ``text`` is what the model sees (header + rows)."""

    query: str
    scope: str
    total: int
    scope_records: int
    limit: int
    rows: tuple[RecallRow, ...]
    content_tokens: int
    query_tokens: int
    content_token_min: int
    gate_margin: float
    gate_branch: GateBranch
    weak_threshold: float
    strong_threshold: float
    scale_a: float
    scale_b: float
    graph_bonus_cap: float
    graph_gamma: float
    graph_rho: float
    graph_seeds: int
    graph_reached: int
    candidates: int
    diversity_applied: bool
    diversity_beta: float
    triage: Triage
    low_confidence: bool
    cov_max: float
    activation_threshold: float
    calibrated_at: str
    calibration_records: int
    calibration_drift: int
    calibration_drift_rel: float
    calibration_drift_abs: int
    calibration_drift_exceeded: bool
    header: str
    text: str


def clamp_limit(limit: int | None) -> int:
    """The row cap: default 5, clamped to 1..50."""
    if limit is None:
        return LIMIT_DEFAULT
    return max(1, min(LIMIT_MAX, int(limit)))


class RecallIndex:
    """BM25 statistics and the tag graph of one pool (build once, query many times)."""

    def __init__(self, records: Sequence[MemoryRecord], config: ScoreConfig) -> None:
        self.records = tuple(records)
        self.config = config
        self._bags = [
            token_counts("\n".join((r.title, " ".join(r.tags), r.body))) for r in self.records
        ]
        count = len(self._bags)
        self._count = count
        lengths = [sum(bag.values()) for bag in self._bags]
        average = max(1.0, sum(lengths) / max(1, count))
        k1, b = config.bm25_k1, config.bm25_b
        self._norms = [k1 * (1 - b + b * length / average) for length in lengths]
        df: Counter[str] = Counter()
        for bag in self._bags:
            df.update(bag.keys())
        self._df = df
        tag_df: Counter[str] = Counter()
        cooc: dict[str, Counter[str]] = {}
        for r in self.records:
            tag_df.update(set(r.tags))
            for tag in r.tags:
                row = cooc.setdefault(tag, Counter())
                row.update(t for t in r.tags if t != tag)
        self._tag_df = tag_df
        self._cooc = cooc
        self._tag_tokens = {tag: set(token_counts(tag)) for tag in tag_df}

    def idf(self, token: str) -> float:
        """``ln(1 + (N - df + 0.5) / (df + 0.5))`` over this pool (df 0 for an unseen token)."""
        n = self._df.get(token, 0)
        return math.log(1 + (self._count - n + 0.5) / (n + 0.5))

    def tag_idf(self, tag: str) -> float:
        """``ln(1 + N / df(tag))``: a tag on many records (a hub) weighs less."""
        return math.log(1 + self._count / max(1, self._tag_df.get(tag, 0)))

    def relevance(self, tokens: Sequence[str]) -> tuple[list[float], int]:
        """``rel`` of every record (BM25 over the query's upper bound) and ``qTok``."""
        k1 = self.config.bm25_k1
        bound = sum(self.idf(t) * (k1 + 1) for t in tokens)
        content = sum(1 for t in tokens if self._df.get(t, 0) > 0)
        rel = [0.0] * self._count
        if bound <= 0 or content == 0:
            return rel, content
        for index, bag in enumerate(self._bags):
            total = 0.0
            for token in tokens:
                tf = bag.get(token, 0)
                if tf:
                    total += self.idf(token) * tf * (k1 + 1) / (tf + self._norms[index])
            rel[index] = total / bound
        return rel, content

    def graph(self, rel: Sequence[float]) -> tuple[list[float], list[str], int]:
        """Graph bonus and source tag per record, and the number of seeds (records with rel > 0)."""
        cfg = self.config
        top_weight = math.log(1 + self._count) if self._count else 1.0
        # activation per tag: the two best (value, seed index) pairs, so a record can skip itself
        best: dict[str, list[tuple[float, int]]] = {}

        def offer(tag: str, value: float, seed: int) -> None:
            slots = best.setdefault(tag, [])
            if any(s == seed and v >= value for v, s in slots):
                return
            slots[:] = sorted([*(p for p in slots if p[1] != seed), (value, seed)], reverse=True)[
                :2
            ]

        seeds = [i for i, value in enumerate(rel) if value > 0]
        direct: dict[str, list[tuple[float, int]]] = {}
        for i in seeds:
            for tag in self.records[i].tags:
                value = rel[i] * self.tag_idf(tag) / top_weight
                offer(tag, value, i)
        direct = {tag: list(slots) for tag, slots in best.items()}
        for tag, slots in direct.items():
            for neighbour, shared in self._cooc.get(tag, Counter()).items():
                weight = shared / max(1, min(self._tag_df[tag], self._tag_df[neighbour]))
                for value, seed in slots:
                    offer(neighbour, cfg.graph_rho * value * weight, seed)
        bonus = [0.0] * self._count
        via_tag = [""] * self._count
        for index, r in enumerate(self.records):
            top, top_tag = 0.0, ""
            for tag in r.tags:
                for value, seed in best.get(tag, ()):
                    if seed != index and value > top:
                        top, top_tag = value, tag
                        break
            if top > 0:
                bonus[index] = min(cfg.graph_bonus_cap, cfg.graph_gamma * top)
                via_tag[index] = top_tag
        return bonus, via_tag, len(seeds)

    def coverage(self, record: MemoryRecord, query: set[str]) -> float:
        """Share of the record's tags that share a token with the query (diagnostic only)."""
        if not record.tags:
            return 0.0
        hit = sum(1 for tag in record.tags if self._tag_tokens.get(tag, set()) & query)
        return hit / len(record.tags)

    def triage(self, ranked: Sequence[int], query: set[str], k_base: int) -> Triage:
        """Residual pyramid over the top ``k_base`` candidates' tag vectors."""
        q = {tag: self.tag_idf(tag) for tag, tokens in self._tag_tokens.items() if tokens & query}
        energy = sum(v * v for v in q.values())
        if energy < _ENERGY_EPSILON:
            return Triage(
                k_base=k_base,
                k_used=k_base,
                expanded=False,
                novelty=0.0,
                explained_ratio=None,
                residual_ratio=None,
                basis_size=0,
                layers=(),
            )
        residual = dict(q)
        basis: list[dict[str, float]] = []
        layers: list[float] = []
        for index in ranked[:k_base]:
            vector = {tag: self.tag_idf(tag) for tag in self.records[index].tags}
            for unit in basis:
                dot = sum(vector.get(t, 0.0) * w for t, w in unit.items())
                for t, w in unit.items():
                    vector[t] = vector.get(t, 0.0) - dot * w
            norm = math.sqrt(sum(v * v for v in vector.values()))
            if norm < 1e-9:
                continue
            unit = {t: v / norm for t, v in vector.items() if v != 0.0}
            basis.append(unit)
            dot = sum(residual.get(t, 0.0) * w for t, w in unit.items())
            for t, w in unit.items():
                residual[t] = residual.get(t, 0.0) - dot * w
            layers.append(min(1.0, max(0.0, sum(v * v for v in residual.values()) / energy)))
        residual_ratio = layers[-1] if layers else 1.0
        novelty = 0.7 * residual_ratio + 0.3 * math.sqrt(residual_ratio)
        expanded = novelty >= self.config.novelty_threshold
        return Triage(
            k_base=k_base,
            k_used=2 * k_base if expanded else k_base,
            expanded=expanded,
            novelty=novelty,
            explained_ratio=1.0 - residual_ratio,
            residual_ratio=residual_ratio,
            basis_size=len(basis),
            layers=tuple(layers),
        )


def _jaccard(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    sa, sb = set(a), set(b)
    union = sa | sb
    return len(sa & sb) / len(union) if union else 0.0


def _in_scope(record: MemoryRecord, scope: str) -> bool:
    return not scope or record.scope in (scope, GLOBAL_SCOPE)


def recall(
    view: StoreView,
    query: str,
    *,
    limit: int | None = None,
    scope: str | None = None,
    config: ScoreConfig | None = None,
) -> RecallResult:
    """Answer ``memory_recall`` over a snapshot: L1 rows (never a body), header and diagnostics."""
    cfg = config or ScoreConfig()
    cap = clamp_limit(limit)
    wanted = sanitize_scope_for_recall(scope)
    pool = [r for r in view.records if _in_scope(r, wanted)]
    index = RecallIndex(pool, cfg)
    tokens = query_token_list(query)
    token_set = set(tokens)
    rel, content = index.relevance(tokens)
    bonus, via_tag, seeds = index.graph(rel)
    candidates = [i for i in range(len(pool)) if rel[i] > 0 or bonus[i] > 0]
    candidates.sort(key=lambda i: (-(rel[i] + bonus[i]), -pool[i].updated_at, pool[i].id))
    triage = index.triage(candidates, token_set, cap)
    budget = candidates[: max(triage.k_used, cap)]
    applied = len(budget) > cfg.diversity_min_candidates
    picked: list[tuple[int, float]] = []
    if applied:
        remaining = list(budget)
        while remaining and len(picked) < cap:
            best_pos, best_final = 0, -1.0
            for pos, i in enumerate(remaining):
                sim = max((_jaccard(pool[i].tags, pool[j].tags) for j, _ in picked), default=0.0)
                final = (rel[i] + bonus[i]) * (1 - cfg.diversity_beta * sim)
                if final > best_final:
                    best_pos, best_final = pos, final
            picked.append((remaining.pop(best_pos), best_final))
    else:
        picked = [(i, rel[i] + bonus[i]) for i in budget[:cap]]
    order = {i: n for n, (i, _) in enumerate(picked)}
    picked.sort(key=lambda p: (-p[1], order[p[0]]))
    rows = []
    for i, final in picked:
        r = pool[i]
        shown = printed(rel[i])
        rows.append(
            RecallRow(
                id=r.id,
                kind=r.kind,
                title=r.title,
                tags=r.tags,
                graph=bonus[i],
                via="direct" if rel[i] > 0 else f"tag:{via_tag[i]}",
                rel=shown,
                cov=index.coverage(r, token_set),
                match=judge_match(shown, content, cfg),
                score=disp(final, cfg),
                scope=r.scope,
                rel_raw=rel[i],
                final=final,
            )
        )
    cov_max = max((row.cov for row in rows), default=0.0)
    total = len(view.records)
    drift = total - cfg.calibration_records
    if cfg.calibration_records > 0:
        rel_exceeded = abs(drift) / cfg.calibration_records > cfg.calibration_drift_rel
    else:
        rel_exceeded = drift != 0
    reached = sum(1 for i in candidates if rel[i] == 0)
    draft = RecallResult(
        query=query,
        scope=wanted,
        total=total,
        scope_records=len(pool),
        limit=cap,
        rows=tuple(rows),
        content_tokens=content,
        query_tokens=len(tokens),
        content_token_min=cfg.content_token_min,
        gate_margin=cfg.gate_margin,
        gate_branch=gate_branch(content, [row.rel for row in rows], cfg),
        weak_threshold=cfg.weak_threshold,
        strong_threshold=cfg.strong_threshold,
        scale_a=cfg.scale_a,
        scale_b=cfg.scale_b,
        graph_bonus_cap=cfg.graph_bonus_cap,
        graph_gamma=cfg.graph_gamma,
        graph_rho=cfg.graph_rho,
        graph_seeds=seeds,
        graph_reached=reached,
        candidates=len(candidates),
        diversity_applied=applied,
        diversity_beta=cfg.diversity_beta,
        triage=triage,
        low_confidence=cov_max < cfg.activation_threshold,
        cov_max=cov_max,
        activation_threshold=cfg.activation_threshold,
        calibrated_at=cfg.calibration_date,
        calibration_records=cfg.calibration_records,
        calibration_drift=drift,
        calibration_drift_rel=cfg.calibration_drift_rel,
        calibration_drift_abs=cfg.calibration_drift_abs,
        calibration_drift_exceeded=rel_exceeded or abs(drift) > cfg.calibration_drift_abs,
        header="",
        text="",
    )
    header, text = render_recall(draft)
    return msgspec.structs.replace(draft, header=header, text=text)
