"""One factory for the memory documents the tests build by hand."""

from __future__ import annotations

import itertools

from memrecall.events.documents import MemoryDocument, MemoryType, Scope

_serial = itertools.count()


def memory(
    title: str = "",
    description: str = "",
    body: str = "",
    *,
    name: str | None = None,
    relative_path: str | None = None,
    root: str = "/m",
    path: str | None = None,
    kind: MemoryType = MemoryType.PROJECT,
    scope: Scope = Scope.PROJECT,
    mtime: float = 0.0,
) -> MemoryDocument:
    """A document at ``root/relative_path``; ``relative_path`` defaults to ``<name>.md``
    (``name`` to the title), ``path`` overrides the absolute path."""
    relative = relative_path if relative_path is not None else f"{name or title}.md"
    return MemoryDocument(
        scope=scope,
        path=path if path is not None else f"{root}/{relative}",
        relative_path=relative,
        type=kind,
        title=title,
        description=description,
        body=body,
        mtime=mtime,
    )


def filed(
    title: str,
    description: str = "",
    body: str = "",
    *,
    kind: MemoryType = MemoryType.REFERENCE,
    mtime: float = 0.0,
    scope: Scope = Scope.PROJECT,
    relative_path: str | None = None,
) -> MemoryDocument:
    """A reference document filed under ``/memory/<scope>/<kind>/`` with a fresh unique name."""
    relative = relative_path if relative_path is not None else f"{kind.value}/n{next(_serial)}.md"
    return memory(
        title,
        description,
        body,
        relative_path=relative,
        root=f"/memory/{scope.value}",
        kind=kind,
        scope=scope,
        mtime=mtime,
    )


def filler(count: int) -> list[MemoryDocument]:
    """Unrelated memories, so that idf behaves as in a real tree."""
    topics = ["invoice", "backup", "grafana", "vault", "sentry", "kafka", "oncall", "budget"]
    return [
        memory(
            f"{topics[i % len(topics)]} note {i}",
            "",
            f"{topics[i % len(topics)]} details number {i}",
        )
        for i in range(count)
    ]
