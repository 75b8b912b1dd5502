"""Builders and Hypothesis strategies for the tool-contract tests."""

from __future__ import annotations

from hypothesis import strategies as st

from memrecall.tools.contract.records import MemoryRecord, StoreStamp, StoreView

WORDS = (
    "adb",
    "android",
    "emulator",
    "cache",
    "pipeline",
    "deploy",
    "freeze",
    "ledger",
    "ok",
    "ci",
    "b",
    "虚拟屏",
    "驱动",
    "快照",
    "门禁",
    "postgres",
    "retry",
    "flaky",
    "token",
    "snapshot",
)
TAGS = ("android", "ci", "cache", "deploy", "db", "test", "虚拟屏", "infra", "ops", "ui")
STAMP = StoreStamp(size=100, mtime_ms=5.0)


def record(
    rid: str,
    title: str = "a title long enough",
    body: str = "body text",
    tags: tuple[str, ...] = ("misc",),
    *,
    kind: str = "fact",
    scope: str = "global",
    hits: int = 0,
    updated_at: float = 0.0,
) -> MemoryRecord:
    """A record with defaults for everything the test does not care about."""
    return MemoryRecord(
        id=rid,
        kind=kind,
        title=title,
        body=body,
        tags=tags,
        source="session:t",
        scope=scope,
        hits=hits,
        created_at=updated_at,
        updated_at=updated_at,
    )


def view(*records: MemoryRecord, max_bytes: int = 1_000_000) -> StoreView:
    """A snapshot of the given records."""
    return StoreView(records=records, max_bytes=max_bytes, stamp=STAMP)


texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)


@st.composite
def records(draw: st.DrawFn, min_size: int = 0, max_size: int = 14) -> tuple[MemoryRecord, ...]:
    """Distinct-id records over a small shared vocabulary, so queries hit."""
    n = draw(st.integers(min_size, max_size))
    out = []
    for i in range(n):
        tags = tuple(draw(st.lists(st.sampled_from(TAGS), min_size=1, max_size=3, unique=True)))
        out.append(
            record(
                f"m{i}",
                draw(texts),
                draw(texts),
                tags,
                kind=draw(st.sampled_from(("fact", "lesson", "preference", "pointer"))),
                scope=draw(st.sampled_from(("global", "project:a", "project:b"))),
                hits=draw(st.integers(0, 5)),
                updated_at=float(draw(st.integers(0, 10**7))),
            )
        )
    return tuple(out)
