"""The catalog's recall order and the candidate pass's lookups over it.

Documents are kept sorted by :data:`OrderKey` (scope, mtime descending,
relative path, root, slot): the order a fresh scan gives. Changes are queued
and applied in batches (:func:`apply`). For the ``fielded`` scorer the catalog
also keeps the recency order (mtime first) the same way, so a snapshot's
:class:`Lookups` need no sort.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import overload

__all__ = ["BULK", "SLOT", "Lookups", "OrderKey", "apply", "recency_key"]

OrderKey = tuple[int, float, str, int, int]
"""Recall order: scope, mtime descending, relative path, root, then the slot (unique)."""

BULK = 64
"""Past this many queued changes, a batch re-sorts once instead of inserting one by one."""

SLOT = operator.itemgetter(4)
"""The slot of an :data:`OrderKey` (last in both orders)."""


def recency_key(key: OrderKey) -> OrderKey:
    """Recency order (mtime descending, then recall order): mtime first, then the rest."""
    return (key[1], key[0], key[2], key[3], key[4])  # type: ignore[return-value]


def apply(order: list[OrderKey], gone: set[OrderKey], new: set[OrderKey]) -> list[OrderKey]:
    """``order`` (sorted) without ``gone`` and with ``new`` (bulk changes re-sort once)."""
    if len(gone) > BULK:
        order = [key for key in order if key not in gone]
    else:
        for key in gone:
            del order[bisect.bisect_left(order, key)]
    if len(new) > BULK:
        order.extend(new)
        order.sort()
    else:
        for key in new:
            bisect.insort(order, key)
    return order


class Lookups:
    """The candidate pass's per-pool lookups, from what the catalog keeps anyway.

    Pool positions are computed on first use (most recalls read a few entries
    of the recency order and look up a handful of paths).
    """

    def __init__(
        self,
        slots: list[int],
        recency: list[int],
        by_path: Mapping[str, tuple[int, ...]] | Callable[[], Mapping[str, tuple[int, ...]]],
    ) -> None:
        self._slots = slots
        self._recency = recency
        self._by_path = by_path
        """Path -> slots, or a function making it (called on the first lookup)."""
        self._positions: dict[int, int] | None = None

    def _position(self) -> dict[int, int]:
        if self._positions is None:
            self._positions = dict(zip(self._slots, range(len(self._slots)), strict=True))
        return self._positions

    @property
    def by_recency(self) -> Sequence[int]:
        """Pool positions, mtime descending, recall order for ties."""
        return Mapped(self._recency, self._position())

    def indices_of(self, path: str) -> Iterable[int]:
        """Pool positions of the documents at ``path``."""
        if callable(self._by_path):
            self._by_path = self._by_path()
        slots = self._by_path.get(path, ())
        return [self._position()[slot] for slot in slots] if slots else ()


class Mapped(Sequence[int]):
    """``[position[slot] for slot in slots]``, mapped as it is read."""

    def __init__(self, slots: list[int], position: dict[int, int]) -> None:
        self._slots = slots
        self._position = position

    def __len__(self) -> int:
        return len(self._slots)

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[int]: ...
    def __getitem__(self, index: int | slice) -> int | Sequence[int]:
        if isinstance(index, slice):
            return [self._position[slot] for slot in self._slots[index]]
        return self._position[self._slots[index]]

    def __iter__(self) -> Iterator[int]:
        return map(self._position.__getitem__, self._slots)
