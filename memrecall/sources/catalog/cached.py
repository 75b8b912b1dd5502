"""One topic file as the catalog knows it (:class:`CachedFile`), and how the file stores many.

In memory a catalog holds a :class:`CachedFile` per topic file. The catalog
file stores them by column instead (:class:`EntryColumns`): the paths as two
lists of strings and every number in a flat array, so a new process decodes
10,000 entries in about 3 ms instead of 11 ms for as many structs, and makes
the in-memory entries in one loop (:func:`from_columns`).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from typing import Literal

import msgspec

from memrecall.events.documents import MemoryType

__all__ = [
    "ENTRY_CHUNK",
    "CachedFile",
    "EntryColumns",
    "EntryView",
    "StoredDiagnostic",
    "from_columns",
    "to_columns",
]

StoredDiagnostic = tuple[str, str, str, bool]
"""``(path, kind, detail, skipped)``."""

_KINDS = tuple(MemoryType)
_KIND_CODES: dict[MemoryType | None, int] = {kind: code for code, kind in enumerate(_KINDS)}
ENTRY_CHUNK = 512
"""Entries made between two pacing checkpoints."""


class CachedFile(msgspec.Struct, array_like=True, gc=False):
    """One topic file as the catalog knows it.

    ``signature`` is ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)``
    taken just before the file was read at ``read_ns`` (wall clock); ``slot``
    is the document's place in the scorer's index and in the file's documents
    (-1 without a document). ``kind`` and ``mtime`` are the document's type
    and mtime: all the recall order and the type map need, so a loaded
    document is decoded only when it is used. Instances form no reference
    cycles, so the garbage collector skips them.
    """

    root_index: int
    path: str
    relative_path: str
    signature: tuple[int, int, int, int, int] | None
    read_ns: int
    nlink: int
    diagnostics: tuple[StoredDiagnostic, ...]
    slot: int = -1
    kind: MemoryType | None = None
    mtime: float = 0.0


class EntryColumns(msgspec.Struct, array_like=True):
    """Entries by column: ``array`` bytes (machine order) unless named otherwise."""

    roots: bytes
    """Root index per entry (``H``)."""
    paths: list[str]
    relative_paths: list[str]
    signatures: bytes
    """Five ``q`` per entry (zeros for an entry without a signature)."""
    unsigned: list[int]
    """Entries without a signature (a file that could not be ``stat``-ed)."""
    read_ns: bytes
    """``q`` per entry."""
    nlinks: bytes
    """``Q`` per entry."""
    slots: bytes
    """``q`` per entry (-1: no document)."""
    kinds: bytes
    """``b`` per entry: the document type's place in :class:`MemoryType` (-1: none)."""
    mtimes: bytes
    """``d`` per entry."""
    diagnostics: list[tuple[int, tuple[StoredDiagnostic, ...]]]
    """``(entry, diagnostics)`` of the entries that have any."""


def to_columns(entries: Sequence[CachedFile]) -> EntryColumns:
    """``entries`` by column (in the same order)."""
    signatures = array("q")
    unsigned = []
    for i, entry in enumerate(entries):
        if entry.signature is None:
            unsigned.append(i)
            signatures.extend((0, 0, 0, 0, 0))
        else:
            signatures.extend(entry.signature)
    return EntryColumns(
        roots=array("H", [e.root_index for e in entries]).tobytes(),
        paths=[e.path for e in entries],
        relative_paths=[e.relative_path for e in entries],
        signatures=signatures.tobytes(),
        unsigned=unsigned,
        read_ns=array("q", [e.read_ns for e in entries]).tobytes(),
        nlinks=array("Q", [e.nlink for e in entries]).tobytes(),
        slots=array("q", [e.slot for e in entries]).tobytes(),
        kinds=array("b", [_KIND_CODES.get(e.kind, -1) for e in entries]).tobytes(),
        mtimes=array("d", [e.mtime for e in entries]).tobytes(),
        diagnostics=[(i, e.diagnostics) for i, e in enumerate(entries) if e.diagnostics],
    )


def _checked(data: bytes, size: int, itemsize: int) -> memoryview[int]:
    view = memoryview(data)
    if len(view) != size * itemsize:
        raise ValueError("the entry columns have different lengths")
    return view


def _ints(data: bytes, code: Literal["H", "q", "Q", "b"], size: int) -> memoryview[int]:
    return _checked(data, size, array(code).itemsize).cast(code)


def _floats(data: bytes, size: int) -> memoryview[float]:
    return _checked(data, size, 8).cast("d")


class EntryView:
    """Checked read access to :class:`EntryColumns` without making an entry per file: what
    a quick start compares against the tree (:mod:`~memrecall.sources.catalog.quick`).
    Raises ``ValueError`` when the columns do not fit together."""

    def __init__(self, columns: EntryColumns) -> None:
        size = self.size = len(columns.paths)
        if len(columns.relative_paths) != size:
            raise ValueError("the entry columns have different lengths")
        self.columns = columns
        self.paths = columns.paths
        self.relative_paths = columns.relative_paths
        self.roots = _ints(columns.roots, "H", size)
        self.flat_signatures = _ints(columns.signatures, "q", size * 5)
        self.read_ns = _ints(columns.read_ns, "q", size)
        self.nlinks = _ints(columns.nlinks, "Q", size)
        self.slots = _ints(columns.slots, "q", size)
        self.codes = _ints(columns.kinds, "b", size)
        self.mtimes = _floats(columns.mtimes, size)
        if max(self.codes, default=-1) >= len(_KINDS):
            raise ValueError("an entry has an unknown document type")
        if any(not 0 <= i < size for i in columns.unsigned) or any(
            not 0 <= i < size for i, _ in columns.diagnostics
        ):
            raise ValueError("an entry column names an entry that is not there")

    def signatures(self) -> list[tuple[int, int, int, int, int] | None]:
        """Every entry's signature, in order."""
        flat = self.flat_signatures
        signatures: list[tuple[int, int, int, int, int] | None] = list(
            zip(flat[0::5], flat[1::5], flat[2::5], flat[3::5], flat[4::5], strict=True)
        )
        for i in self.columns.unsigned:
            signatures[i] = None
        return signatures

    def diagnostics(self) -> list[tuple[StoredDiagnostic, ...]]:
        """Every entry's diagnostics, in order."""
        found: list[tuple[StoredDiagnostic, ...]] = [()] * self.size
        for i, diagnostics in self.columns.diagnostics:
            found[i] = diagnostics
        return found

    def entry(self, i: int) -> CachedFile:
        """Entry ``i``, made."""
        flat = self.flat_signatures[5 * i : 5 * i + 5]
        code = self.codes[i]
        return CachedFile(
            self.roots[i],
            self.paths[i],
            self.relative_paths[i],
            None if i in self.columns.unsigned else (flat[0], flat[1], flat[2], flat[3], flat[4]),
            self.read_ns[i],
            self.nlinks[i],
            dict(self.columns.diagnostics).get(i, ()),
            self.slots[i],
            None if code < 0 else _KINDS[code],
            self.mtimes[i],
        )


def from_columns(
    columns: EntryColumns | EntryView, checkpoint: Callable[[], None]
) -> list[CachedFile]:
    """The entries ``columns`` holds; ``ValueError`` if the columns do not fit together.

    Calls ``checkpoint`` every few hundred entries.
    """
    view = columns if isinstance(columns, EntryView) else EntryView(columns)
    size = view.size
    signatures = view.signatures()
    kinds = [None if code < 0 else _KINDS[code] for code in view.codes]
    diagnostics = view.diagnostics()
    entries: list[CachedFile] = []
    for start in range(0, size, ENTRY_CHUNK):
        checkpoint()
        end = min(size, start + ENTRY_CHUNK)
        entries.extend(
            map(
                CachedFile,
                view.roots[start:end],
                view.paths[start:end],
                view.relative_paths[start:end],
                signatures[start:end],
                view.read_ns[start:end],
                view.nlinks[start:end],
                diagnostics[start:end],
                view.slots[start:end],
                kinds[start:end],
                view.mtimes[start:end],
            )
        )
    return entries
