"""The seed-003 fields a memory record lacks, kept beside it (docs/tools.md, "Mapping").

The store's ``memories`` row holds ``content`` (the body), ``category`` (the kind) and the
scope the store understands. The memory tools also need a title, ordered tags, a source, a
named project scope and a hit counter: those live in one side row per memory
(``contract_fields``), deleted with the memory by forget. A memory written by another face
has no side row; the tools then derive the fields from the record.
"""

from __future__ import annotations

import attrs

__all__ = ["ContractFields"]


@attrs.frozen
class ContractFields:
    """The side row of one memory. ``None`` means "derive it from the record".

    Invariant: ``hits >= 0``; ``tags`` keeps the order it was written in.
    """

    title: str | None = None
    tags: tuple[str, ...] | None = None
    source: str | None = None
    scope: str | None = None
    """``global`` or ``project:<name>`` (the tool contract's scope text)."""
    hits: int = 0
