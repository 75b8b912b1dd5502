"""Timing tables: ``uv run python -m memrecall.tooling.bench [--json] [--section NAME ...]``.

Each section is a function ``(BenchOptions) -> Table`` registered in
:data:`SECTIONS`; ``main`` runs the requested ones (all by default) and prints
their tables, or one JSON document with ``--json``. New sections (scan
latency, actor throughput) are added the same way, here or in a sibling
module that registers itself.

``scoring``: the reference scorer's per-query cost. For each pool size a
synthetic multilingual pool (about 1 KB bodies) is indexed once per index
kind (``scan``, the default, and ``words``; the build time is reported), then
every query of a fixed mixed set is ranked with the candidate builder's
limit; the table shows p50 / p95 / max per query.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence

import attrs

from memrecall.argtypes import distinct_positive_ints, non_negative_int, positive_int
from memrecall.engine.scoring.reference import DocumentFields, ReferenceIndex
from memrecall.events.documents import MemoryDocument, MemoryType, Scope

__all__ = [
    "SECTIONS",
    "BenchOptions",
    "Table",
    "main",
    "percentile",
    "scoring_section",
    "synthetic_documents",
    "synthetic_queries",
]

DEFAULT_POOL_SIZES = (25, 200, 1_000, 10_000)
DEFAULT_QUERY_COUNT = 200
DEFAULT_SEED = 7040
DEFAULT_REPEATS = 2
"""Each query is timed this many times and its best time kept (filters scheduler noise)."""
RANK_LIMIT = 180
"""The candidate builder's lexical share: what one recall asks the ranker for."""


# --- framework ---------------------------------------------------------------------------------


@attrs.frozen
class BenchOptions:
    """Knobs shared by every section."""

    seed: int = DEFAULT_SEED
    pool_sizes: tuple[int, ...] = DEFAULT_POOL_SIZES
    queries: int = DEFAULT_QUERY_COUNT
    repeats: int = DEFAULT_REPEATS


@attrs.frozen
class Table:
    """One section's result: a titled table plus free-text notes."""

    name: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str | int | float, ...], ...]
    notes: tuple[str, ...] = ()

    def as_json(self) -> dict[str, object]:
        """Rows as column-keyed objects."""
        return {
            "title": self.title,
            "rows": [
                dict(zip((c.replace(" ", "_") for c in self.columns), row, strict=True))
                for row in self.rows
            ],
            "notes": list(self.notes),
        }

    def as_text(self) -> str:
        """A plain aligned table."""
        cells = [list(self.columns), *([_cell(v) for v in row] for row in self.rows)]
        widths = [max(len(row[i]) for row in cells) for i in range(len(self.columns))]
        lines = [self.title, ""]
        for n, row in enumerate(cells):
            lines.append("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))
            if n == 0:
                lines.append("  ".join("-" * w for w in widths))
        lines += ["", *self.notes] if self.notes else []
        return "\n".join(lines)


def _cell(value: str | int | float) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, int):
        return f"{value:,}"
    return value


Section = Callable[[BenchOptions], Table]


def percentile(samples: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (``fraction`` in 0..1) of non-empty ``samples``."""
    ordered = sorted(samples)
    rank = max(1, round(fraction * len(ordered) + 0.5 - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]


# --- synthetic data ------------------------------------------------------------------------------


def _vocab(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_WORDS: dict[str, tuple[str, ...]] = {
    "en": _vocab(
        "deploy release dashboard latency cache kafka consumer migration database backup "
        "rollback incident owner credential staging production terraform kubernetes grafana "
        "alert pager review style editor timezone oncall budget schema endpoint token quota "
        "retry timeout feature flag canary billing invoice search index replica shard queue "
        "worker cron secret vault certificate rotation webhook payload throttle pipeline"
    ),
    "zh": _vocab(
        "部署 发布 数据库 迁移 备份 回滚 监控 告警 缓存 延迟 生产环境 测试 配置 权限 日志 "
        "性能 接口 文档 负责人 故障 证书 队列 索引 分片 流水线 灰度 审批 值班 预算"
    ),
    "ja": _vocab(
        "リリース サーバー 監視 本番環境 データベース 手順 障害 設定 ログ キャッシュ デプロイ "
        "レビュー バックアップ 証明書 権限 アラート キュー 担当者 ロールバック"
    ),
    "ko": _vocab(
        "배포 데이터베이스 모니터링 장애 설정 캐시 로그 권한 검토 백업 인증서 알림 담당자 "
        "대기열 롤백 성능"
    ),
    "other": _vocab(
        "развертывание резервное копирование мониторинг сервер déploiement sauvegarde "
        "équipe surveillance αντίγραφα ασφαλείας διακομιστής"
    ),
}
_FILLER = _vocab(
    "the we should check before after when this that with for and not only also then "
    "because every team note keep use run make sure"
)
_CJK_FILLER = _vocab("的 了 在 是 和 に を は が で 이 가 는 을")
_LANGUAGES = ("en", "zh", "ja", "ko", "mixed", "other")
_LANGUAGE_WEIGHTS = (50, 15, 12, 10, 8, 5)
_TYPES = tuple(MemoryType)
_UNRELATED = (
    "what is the weather like on the moon today",
    "quantum chromodynamics lattice gauge",
    "明天天气怎么样",
    "ピアノの練習方法",
    "날씨 예보",
)


def _language(rng: random.Random) -> str:
    return rng.choices(_LANGUAGES, _LANGUAGE_WEIGHTS)[0]


def _references(rng: random.Random) -> str:
    """Identifiers that real notes carry (tickets, paths, versions): a growing vocabulary."""
    word = rng.choice(_WORDS["en"])
    return (
        f"Refs: {word.upper()}-{rng.randint(100, 9999)}, "
        f"src/{word}/{rng.choice(_WORDS['en'])}_{rng.randint(1, 99)}.py, "
        f"v{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 99)}"
    )


def _words(rng: random.Random, language: str, count: int) -> list[str]:
    if language == "mixed":
        pool = _WORDS["en"] + _WORDS[rng.choice(("zh", "ja", "ko"))]
    else:
        pool = _WORDS[language]
    return [rng.choice(pool) for _ in range(count)]


def _sentence(rng: random.Random, language: str) -> str:
    words = _words(rng, language, rng.randint(3, 6))
    if language in ("zh", "ja", "ko"):
        parts = [w + rng.choice(_CJK_FILLER) for w in words]
        return "".join(parts) + "。"
    mixed = [rng.choice(_FILLER) if rng.random() < 0.5 else w for w in words * 2]
    return " ".join(mixed).capitalize() + "."


def _body(rng: random.Random, language: str, size: int = 1_000) -> str:
    sentences: list[str] = []
    total = 0
    target = size // 3 if language in ("zh", "ja", "ko") else size  # ~1 KB of UTF-8 either way
    while total < target:
        sentence = _sentence(rng, language)
        sentences.append(sentence)
        total += len(sentence) + 1
    status = rng.choices(("", " ✅", " 🚀"), (90, 7, 3))[0]  # some astral text, as in real notes
    why = " ".join(sentences)
    return f"Summary line{status}\nWhy: {why}\nHow to apply: follow the steps.\n{_references(rng)}"


def synthetic_documents(count: int, seed: int) -> list[MemoryDocument]:
    """``count`` realistic-looking documents, project then user, each newest first."""
    rng = random.Random(seed)
    documents = []
    for i in range(count):
        language = _language(rng)
        kind = rng.choice(_TYPES)
        scope = Scope.PROJECT if i < count * 0.7 else Scope.USER
        title = " ".join(_words(rng, language, rng.randint(2, 4)))
        description = " ".join(_words(rng, language, rng.randint(6, 12)))
        relative = f"{kind.value}/topic-{i:05d}.md"
        documents.append(
            MemoryDocument(
                scope=scope,
                path=f"/bench/{scope.value}/memory/{relative}",
                relative_path=relative,
                type=kind,
                title=title,
                description=description,
                body=_body(rng, language),
                mtime=1_750_000_000.0 - i * 37.0,
            )
        )
    return documents


def synthetic_queries(count: int, seed: int) -> list[str]:
    """A fixed mix of short, medium, pasted-long and no-result queries in several languages."""
    rng = random.Random(seed + 1)
    queries = []
    for _ in range(count):
        roll = rng.random()
        language = _language(rng)
        if roll < 0.1:
            queries.append(rng.choice(_UNRELATED))
        elif roll < 0.15:
            # a pasted log: many tokens, exercises the 64-token bound
            queries.append(" ".join(_sentence(rng, language) for _ in range(25)))
        elif roll < 0.55:
            words = _words(rng, language, rng.randint(1, 3))
            sep = "" if language in ("zh", "ja", "ko") else " "
            queries.append(sep.join(words))
        else:
            queries.append(" ".join(_sentence(rng, language) for _ in range(rng.randint(1, 3))))
    return queries


# --- sections ----------------------------------------------------------------------------------


def _ms(ns: int) -> float:
    return ns / 1e6


def scoring_section(options: BenchOptions) -> Table:
    """Reference-scorer latency per query, after the index is built, per pool size and mode."""
    queries = synthetic_queries(options.queries, options.seed)
    ReferenceIndex.of(synthetic_documents(5, options.seed)).rank(queries[0], 1)  # warm caches
    rows = []
    for size in options.pool_sizes:
        documents = synthetic_documents(size, options.seed)
        started = time.perf_counter_ns()
        fields = [DocumentFields.of(d) for d in documents]
        normalise = time.perf_counter_ns() - started
        for mode, word_index in (("scan", False), ("words", True)):
            started = time.perf_counter_ns()
            index = ReferenceIndex(fields, word_index=word_index)
            build = normalise + time.perf_counter_ns() - started
            for query in queries[:10]:  # warm-up
                index.rank(query, RANK_LIMIT)
            samples = []
            matched = 0
            for query in queries:
                best = None
                for _ in range(max(options.repeats, 1)):
                    started = time.perf_counter_ns()
                    ranked = index.rank(query, RANK_LIMIT)
                    elapsed = time.perf_counter_ns() - started
                    best = elapsed if best is None else min(best, elapsed)
                assert best is not None
                samples.append(_ms(best))
                matched += bool(ranked)
            rows.append(
                (
                    size,
                    mode,
                    _ms(build),
                    percentile(samples, 0.5),
                    percentile(samples, 0.95),
                    max(samples),
                    statistics.fmean(samples),
                    matched,
                )
            )
    return Table(
        name="scoring",
        title=(
            f"Reference scorer: per-query rank (limit {RANK_LIMIT}), {len(queries)} queries, "
            f"best of {options.repeats}"
        ),
        columns=("docs", "index", "build ms", "p50 ms", "p95 ms", "max ms", "mean ms", "matched"),
        rows=tuple(rows),
        notes=(
            "build = normalising the pool and indexing it (ReferenceIndex(word_index=...)); "
            "per-query times exclude it.",
            "scan: cheapest build, for an index used once per recall; "
            "words: word vocabulary per field, for a long-lived index.",
        ),
    )


SECTIONS: dict[str, Section] = {"scoring": scoring_section}
"""Benchmark sections by name, in the order ``main`` runs them."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m memrecall.tooling.bench`` (exposed for tests)."""
    parser = argparse.ArgumentParser(
        prog="python -m memrecall.tooling.bench",
        description="memrecall timing tables. Sections: " + ", ".join(SECTIONS) + ".",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--section",
        action="append",
        choices=sorted(SECTIONS),
        help="run only this section (repeatable; default: all)",
    )
    parser.add_argument("--seed", type=non_negative_int, default=DEFAULT_SEED)
    parser.add_argument("--queries", type=positive_int, default=DEFAULT_QUERY_COUNT)
    parser.add_argument(
        "--repeats",
        type=positive_int,
        default=DEFAULT_REPEATS,
        help="time each query this many times, keep the best (default: %(default)s)",
    )
    parser.add_argument(
        "--sizes",
        type=distinct_positive_ints,
        default=DEFAULT_POOL_SIZES,
        help="comma-separated pool sizes (default: %(default)s)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the requested sections and print their tables (or JSON)."""
    args = build_parser().parse_args(argv)
    options = BenchOptions(
        seed=args.seed, pool_sizes=args.sizes, queries=args.queries, repeats=args.repeats
    )
    names = args.section or list(SECTIONS)
    tables = [SECTIONS[name](options) for name in names]
    if args.json:
        json.dump({t.name: t.as_json() for t in tables}, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("\n\n".join(t.as_text() for t in tables) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
