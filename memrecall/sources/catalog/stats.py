"""The catalog's counters (for tests, benchmarks and logs)."""

from __future__ import annotations

import attrs

__all__ = ["CatalogStats"]


@attrs.define
class CatalogStats:
    """Counters for tests, benchmarks and logs (cumulative since the catalog opened)."""

    mode: str = "new"
    refreshes: int = 0
    reads: int = 0
    stats: int = 0
    listings: int = 0
    resyncs: int = 0
    overflows: int = 0
    loaded: int = 0
    stale_on_load: int = 0
    load_problem: str | None = None
    embedded: int = 0
    """Passages embedded after a snapshot (:mod:`~memrecall.sources.catalog.passage_filler`)."""
    quick_start: bool = False
    """The first snapshot came straight from the catalog file (nothing had changed)."""
