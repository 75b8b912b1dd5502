"""The catalog's files: one entry per topic file, and the scorer's index over their documents.

:class:`CatalogEntries` is the per-file half of
:class:`~memrecall.sources.catalog.source.CatalogSource` (which owns the
listings, the inotify watches and the cache file): for every topic file the
scanner's result and ``stat`` signature (:class:`~memrecall.sources.catalog.store.CachedFile`);
each document's slot in the active scorer's index, kept current file by file
(the ``fielded`` :class:`~memrecall.engine.scoring.fielded.FieldedPool`, or the
``reference`` word index); the recall order; and the type and path maps handed
to published indexes. It reads files but never lists directories: the catalog
tells it which files to read, validate or drop, then asks it to
:meth:`~CatalogEntries.publish`.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import cast

import msgspec

from memrecall.engine.scoring.catalog_index import (
    CatalogIndex,
    FieldTexts,
    IndexBuilder,
    Slots,
    field_texts,
)
from memrecall.engine.scoring.features import passage_of
from memrecall.engine.scoring.fielded import DocumentFeatures, FieldedIndex, FieldedPool
from memrecall.engine.scoring.reference import DocumentFields
from memrecall.events.documents import MemoryDocument, MemoryType, Scope
from memrecall.sources import pacing
from memrecall.sources.catalog.documents import (
    Held,
    LoadedDocuments,
    StoredDocuments,
    encode_document,
    read_from_tree,
)
from memrecall.sources.catalog.listing import Signature, recent, signature_of, stored_diagnostic
from memrecall.sources.catalog.listing import diagnostic_of as _diagnostic
from memrecall.sources.catalog.order import SLOT, Lookups, OrderKey, apply, recency_key
from memrecall.sources.catalog.stats import CatalogStats
from memrecall.sources.catalog.store import (
    CachedFile,
    StoredCatalog,
    StoredPostings,
)
from memrecall.sources.scanner import (
    Diagnostic,
    DiagnosticKind,
    Root,
    TopicFile,
    duplicate_link_diagnostic,
    read_topic_file,
)
from memrecall.sources.source import ScorerName, Snapshot
from memrecall.sources.turn_reader import background_passage_embedder, default_turns

__all__ = ["CatalogEntries"]

log = logging.getLogger("memrecall.catalog")

_SCOPE_RANK = {Scope.PROJECT: 0, Scope.USER: 1}

_ADOPT_CHUNK = 512
"""Loaded documents added to the scorer's pool between two pacing checkpoints."""

Key = tuple[int, str]
"""An entry's key: ``(root index, path)``."""

_GENERATIONS = itertools.count()
"""Each analysis of a document that leaves its passage to embed takes the next number (for
the whole process: a catalog that starts again never reuses one)."""


def _postings(stored: StoredPostings) -> dict[str, Slots]:
    """A loaded column: each word's slots are a view into the one blob (no copies)."""
    if len(stored.words) != len(stored.counts) or sum(stored.counts) * 4 != len(stored.slots):
        raise ValueError("postings do not add up")
    blob = memoryview(stored.slots).cast("I")
    ends = list(itertools.accumulate(stored.counts))
    starts = [0, *ends[:-1]]
    return dict(zip(stored.words, map(blob.__getitem__, map(slice, starts, ends)), strict=True))


def _trusted(entry: CachedFile, info: os.stat_result) -> bool:
    """The cached result still holds for a file that now ``stat``-s as ``info``."""
    signature = entry.signature
    if signature is None or signature != signature_of(info):
        return False
    return not recent(signature[3], signature[4], entry.read_ns)


class CatalogEntries:
    """Every topic file the catalog knows, and the scorer's index over their documents.

    ``scorer`` picks the per-document data kept (see the module doc); ``clock``
    gives wall-clock nanoseconds (when a file was read); ``stats`` is the
    catalog's counters (reads, ``stat`` calls, loaded and stale entries).
    Not thread-safe: the catalog calls it under its lock.
    """

    def __init__(
        self,
        scorer: ScorerName,
        clock: Callable[[], int],
        stats: CatalogStats,
        scopes: Sequence[Scope],
    ) -> None:
        self.scorer: ScorerName = scorer
        self._scopes = list(scopes)
        self._scope_ranks = [_SCOPE_RANK[scope] for scope in scopes]
        """Each root's place in the recall order (project before user)."""
        self.stats = stats
        self._clock = clock
        self.entries: dict[Key, CachedFile] = {}
        self.linked: set[Key] = set()
        """Entries whose file has more than one hard link (validated on every refresh)."""
        self.demoted: set[Key] = set()
        """Hard links recalled under another path (a ``duplicate_link`` diagnostic, no document)."""
        self._with_problems: set[Key] = set()
        self._order: list[OrderKey] = []
        self._order_add: set[OrderKey] = set()
        self._order_del: set[OrderKey] = set()
        self._recency: list[OrderKey] = []  # fielded only: mtime first (see recency_key)
        self._docs: list[Held | None] = []
        """Each slot's document, or (loaded and not read since) its slot in ``_stored``."""
        self._stored: StoredDocuments | None = None
        """The documents of the file this catalog was loaded from."""
        self._loaded_owners: list[CachedFile | None] = []
        """The loaded entry of each slot (never changed: a slot still holding a stored
        document is still owned by the entry it was loaded with)."""
        self._fields: list[FieldTexts | None] = []
        self._free: list[int] = []
        self._builder = IndexBuilder()
        self._pool = FieldedPool()
        self._pending: dict[int, tuple[FieldTexts | None, FieldTexts | None]] = {}
        self._released: set[int] = set()
        """Slots whose document left since the last flush (free after it)."""
        self._by_type: dict[MemoryType, set[int]] = {kind: set() for kind in MemoryType}
        self._by_path: dict[str, tuple[int, ...]] = {}
        self._maps_shared = False
        self._loaded_keys: set[Key] = set()
        self._reread_keys: set[Key] = set()
        self._unembedded: dict[int, int] = {}
        """Slots whose document's passage is still to be embedded (``fielded`` with a
        passage embedder), each with the generation of its analysis."""

    def stored(self) -> StoredCatalog:
        """The entries, documents and scorer's index as the file keeps them (the caller
        adds the roots, listings and settings)."""
        self.flush_index()
        fielded = self.scorer == "fielded"
        postings = [
            StoredPostings(
                words=list(column),
                counts=[len(slots) for slots in column.values()],
                slots=b"".join(slots.tobytes() for slots in column.values()),
            )
            for column in (() if fielded else self._builder.postings())
        ]
        # in recall order, so that a new process's first sort finds them sorted
        with_documents = [self.entries[key] for key in self._entry_keys_in_order()]
        return StoredCatalog(
            roots=[],
            entries=with_documents + [e for e in self.entries.values() if e.slot < 0],
            listings=[],
            documents=[self._encoded(value) for value in self._docs],
            fields=[] if fielded else list(self._fields),
            postings=postings,
            pool=self._pool.image() if fielded else None,
            recency=list(map(SLOT, self._recency)) if fielded else [],
            unembedded=sorted(self._unembedded),
        )

    def _entry_keys_in_order(self) -> list[Key]:
        by_slot = {e.slot: (e.root_index, e.path) for e in self.entries.values() if e.slot >= 0}
        return [by_slot[SLOT(key)] for key in self._sorted_order()]

    def _order_key(self, entry: CachedFile) -> OrderKey:
        return (
            self._scope_ranks[entry.root_index],
            -entry.mtime,
            entry.relative_path,
            entry.root_index,
            entry.slot,
        )

    def document(self, slot: int) -> MemoryDocument:
        """The document in ``slot`` (decoded, and kept decoded, if it was still encoded)."""
        value = self._docs[slot]
        assert value is not None
        if isinstance(value, int):
            assert self._stored is not None
            value = self._docs[slot] = self._stored.read_or_reread(value, self._reread)
        return value

    def _encoded(self, value: Held | None) -> bytes | None:
        if value is None:
            return None
        if isinstance(value, int):
            assert self._stored is not None
            return self._stored.record(value)  # CorruptRecord: the save fails, the file stays
        return encode_document(value)

    @property
    def damaged(self) -> bool:
        """True once a document of the file this catalog was loaded from did not verify."""
        return self._stored is not None and self._stored.failed

    def read_documents_from(self, written: StoredDocuments) -> None:
        """Read the documents not decoded yet from the file just written (same slots),
        so the old file can be closed once no snapshot uses it."""
        if self._stored is not None:
            self._stored = written

    def _reread(self, slot: int) -> MemoryDocument:
        """The document of a loaded slot, read from its topic file (a stored one is bad)."""
        owner = self._loaded_owners[slot]
        assert owner is not None
        return read_from_tree(owner, self._scopes[owner.root_index])

    def validate(self, topic: TopicFile, entry: CachedFile) -> bool:
        self.stats.stats += 1
        if self.stats.stats % 256 == 0:
            pacing.checkpoint()
        try:
            info = os.stat(topic.path)
        except OSError:
            return self.read(topic, entry)
        if _trusted(entry, info):
            return False
        return self.read(topic, entry)

    def sync(
        self,
        index: int,
        topics: Sequence[TopicFile],
        *,
        reread: Collection[Key],
        force: bool,
        revalidate: Collection[str],
    ) -> bool:
        """Bring root ``index``'s entries in line with its listed ``topics``: read the new
        ones and those in ``reread``; :meth:`validate` the others when ``force`` is set,
        when they have several links or when their directory is in ``revalidate``. True
        if any document or diagnostic changed."""
        entries = self.entries
        dirname = os.path.dirname
        changed = False
        for topic in topics:
            key = (index, topic.path)
            entry = entries.get(key)
            if entry is None or key in reread:
                changed |= self.read(topic, entry)
                continue
            if not (force or entry.nlink > 1 or dirname(topic.path) in revalidate):
                continue
            changed |= self.validate(topic, entry)
        return changed

    def read(self, topic: TopicFile, old: CachedFile | None) -> bool:
        """Read ``topic`` again; True if its document or diagnostics changed."""
        self.stats.reads += 1
        pacing.checkpoint()  # once per file read: the loop may need the GIL
        seen = self._clock()
        try:
            info = os.stat(topic.path)
            signature: Signature | None = signature_of(info)
            nlink = info.st_nlink
        except OSError:
            signature, nlink = None, 1
        document, problems = read_topic_file(topic)
        diagnostics = tuple(stored_diagnostic(d) for d in problems)
        key = (topic.root_index, topic.path)
        if self._loaded_keys and old is not None:
            self._reread_keys.add(key)
        if (
            old is not None
            and (None if old.slot < 0 else self.document(old.slot)) == document
            and old.diagnostics == diagnostics
            and old.relative_path == topic.relative_path
        ):
            old.signature, old.read_ns, old.nlink = signature, seen, nlink
            if nlink > 1:
                self.linked.add(key)
            else:
                self.linked.discard(key)
            return False
        slot = -1
        if old is not None:
            slot = self._release(key, keep_slot=document is not None)
        entry = CachedFile(
            root_index=topic.root_index,
            path=topic.path,
            relative_path=topic.relative_path,
            signature=signature,
            read_ns=seen,
            nlink=nlink,
            diagnostics=diagnostics,
        )
        self.entries[key] = entry
        if diagnostics:
            self._with_problems.add(key)
        if nlink > 1:
            self.linked.add(key)
        if document is not None:
            entry.slot = slot if slot >= 0 else self._allocate()
            entry.kind, entry.mtime = document.type, document.mtime
            if self.scorer == "fielded":
                # the words now; the passage after the snapshot is out (passage_filler)
                features = DocumentFeatures.of(document, checkpoint=pacing.checkpoint)
                self._index_slot(entry.slot, None, features)
                if background_passage_embedder() is not None:
                    self._unembedded[entry.slot] = next(_GENERATIONS)
            else:
                self._index_slot(entry.slot, field_texts(DocumentFields.of(document)), None)
            self._docs[entry.slot] = document
            self._map_slot(entry.slot, entry.path, document.type, add=True)
            self._reorder(self._order_key(entry), add=True)
        return True

    def drop(self, key: Key) -> bool:
        """Forget a file that is no longer listed; True if there was one."""
        if key not in self.entries:
            return False
        self._release(key, keep_slot=False)
        return True

    def _release(self, key: Key, *, keep_slot: bool) -> int:
        """Remove an entry; returns its slot when kept for the entry replacing it, else -1."""
        entry = self.entries.pop(key)
        self._with_problems.discard(key)
        self.linked.discard(key)
        self.demoted.discard(key)
        if entry.slot < 0:
            return -1
        self._reorder(self._order_key(entry), add=False)
        assert entry.kind is not None
        self._map_slot(entry.slot, entry.path, entry.kind, add=False)
        self._docs[entry.slot] = None
        self._unembedded.pop(entry.slot, None)
        if keep_slot:
            return entry.slot
        self._index_slot(entry.slot, None, None)
        return -1

    def _reorder(self, key: OrderKey, *, add: bool) -> None:
        """Queue a change to the recall order; :meth:`_sorted_order` applies the batch."""
        if add:
            if key in self._order_del:
                self._order_del.discard(key)
            else:
                self._order_add.add(key)
        elif key in self._order_add:
            self._order_add.discard(key)
        else:
            self._order_del.add(key)

    def _sorted_order(self) -> list[OrderKey]:
        """The recall order with queued changes applied (bulk changes re-sort once)."""
        gone, new = self._order_del, self._order_add
        self._order = apply(self._order, gone, new)
        if self.scorer == "fielded":
            recency = recency_key
            self._recency = apply(self._recency, set(map(recency, gone)), set(map(recency, new)))
        self._order_add, self._order_del = set(), set()
        return self._order

    def _map_slot(self, slot: int, path: str, kind: MemoryType, *, add: bool) -> None:
        """Keep the path map (and for the word index the type map) handed to published
        indexes (copy on write)."""
        typed = self.scorer != "fielded"
        if self._maps_shared:
            if typed:
                self._by_type = {kind: set(members) for kind, members in self._by_type.items()}
            self._by_path = dict(self._by_path)
            self._maps_shared = False
        group = self._by_path.get(path, ())
        if typed:
            if add:
                self._by_type[kind].add(slot)
            else:
                self._by_type[kind].discard(slot)
        if add:
            self._by_path[path] = (*group, slot)
        else:
            rest = tuple(s for s in group if s != slot)
            if rest:
                self._by_path[path] = rest
            else:
                del self._by_path[path]

    def _index_slot(
        self, slot: int, fields: FieldTexts | None, features: DocumentFeatures | None
    ) -> None:
        """Index ``slot`` with this document data (``None``: not at all).

        The ``fielded`` pool changes at once (its published views are copy on
        write); the word index's change is queued for the next flush.
        """
        if features is None:
            self._pool.remove(slot)
        else:
            self._pool.add(slot, features)
        if features is None and fields is None:
            self._released.add(slot)
        else:
            self._released.discard(slot)
        before = self._pending[slot][0] if slot in self._pending else self._fields[slot]
        self._pending[slot] = (before, fields)
        self._fields[slot] = fields

    def _allocate(self) -> int:
        if self._free:
            return self._free.pop()
        self._docs.append(None)
        self._fields.append(None)
        return len(self._docs) - 1

    def flush_index(self) -> None:
        if not self._pending:
            return
        if self.scorer != "fielded":
            self._builder.apply(self._pending)
        # A slot freed in this batch is reusable only once the index no longer lists it.
        # (Freed means released: a ``fielded`` slot indexes no word-index fields at all.)
        self._free.extend(self._released)
        self._released = set()
        self._pending = {}

    def publish(self, listing_diagnostics: Iterable[Diagnostic]) -> Snapshot:
        """A snapshot of every document in recall order: the diagnostics of the listings,
        then those of the files (by root, then relative path), and the scorer's index."""
        self.flush_index()
        slots = list(map(SLOT, self._sorted_order()))
        held = cast("list[Held]", list(map(self._docs.__getitem__, slots)))
        documents = LoadedDocuments(held, self._stored, self._reread)
        diagnostics = list(listing_diagnostics)
        problem_entries = sorted(
            (self.entries[key] for key in self._with_problems),
            key=lambda e: (e.root_index, e.relative_path),
        )
        for entry in problem_entries:
            diagnostics.extend(_diagnostic(d) for d in entry.diagnostics)
        self._maps_shared = True
        if self.scorer == "fielded":
            view = FieldedIndex.over(
                self._pool,
                slots,
                checkpoint=pacing.checkpoint,
                turns=default_turns(),
                passages=background_passage_embedder() is not None,
            )
            recency = list(map(SLOT, self._recency))
            lookups = Lookups(slots, recency, self._by_path)
            return Snapshot(documents, view, tuple(diagnostics), order=lookups)
        index = CatalogIndex(
            documents,
            slots,
            list(self._fields),
            self._builder.freeze(),
            by_type=self._by_type,
            by_path=self._by_path,
        )
        return Snapshot(documents, index, tuple(diagnostics), preparer=index)

    @property
    def unembedded(self) -> int:
        """How many documents' passages are still to be embedded."""
        return len(self._unembedded)

    def passages_to_embed(self, limit: int) -> list[tuple[int, int, str]]:
        """Up to ``limit`` documents whose passage is still to be embedded, in the order they
        were read: ``(slot, generation, passage text)``. Costs what it returns, not a pass
        over the pool (it runs under the catalog's lock)."""
        todo = []
        for slot, generation in itertools.islice(self._unembedded.items(), limit):
            todo.append((slot, generation, passage_of(self.document(slot))))
        return todo

    def set_passages(self, embedded: Iterable[tuple[int, int, bytes]]) -> bool:
        """Store passages embedded from :meth:`passages_to_embed` (an empty one: the
        embedder failed, and the memory is ranked by its words). One whose document was
        analysed again since is dropped. True if any was stored."""
        stored = False
        for slot, generation, passage in embedded:
            if self._unembedded.get(slot) != generation:
                continue
            del self._unembedded[slot]
            stored |= self._pool.set_passage(slot, passage)
        return stored

    def settle_links(self, roots: Sequence[Root]) -> bool:
        """Hard links, as the scanner treats them: of the entries sharing a ``(device, inode)``,
        the first by root and relative path keeps its document; the others hold only a
        ``duplicate_link`` diagnostic. An entry no longer shadowed is read again."""
        groups: dict[tuple[int, int], list[Key]] = {}
        for key in self.linked:
            signature = self.entries[key].signature
            if signature is not None:
                groups.setdefault((signature[0], signature[1]), []).append(key)
        shadowed: dict[Key, str] = {}
        for keys in groups.values():
            if len(keys) > 1:
                keys.sort(key=lambda k: (k[0], self.entries[k].relative_path))
                shadowed.update((key, keys[0][1]) for key in keys[1:])
        changed = False
        for key in self.demoted - shadowed.keys():
            self.demoted.discard(key)
            entry = self.entries[key]
            topic = TopicFile(key[0], roots[key[0]].scope, key[1], entry.relative_path)
            changed |= self.read(topic, entry)
        for key, first in shadowed.items():
            entry = self.entries[key]
            wanted = (stored_diagnostic(duplicate_link_diagnostic(key[1], first)),)
            if key in self.demoted and entry.diagnostics == wanted:
                continue
            self._release(key, keep_slot=False)
            self.entries[key] = msgspec.structs.replace(
                entry, diagnostics=wanted, slot=-1, kind=None, mtime=0.0
            )
            self._with_problems.add(key)
            self.linked.add(key)
            self.demoted.add(key)
            changed = True
        return changed

    def report_stale(self) -> None:
        """Count and log the loaded entries that the first validation found out of date."""
        entries = self.entries
        stale = self._loaded_keys - entries.keys()
        stale.update(k for k in self._reread_keys if k in self._loaded_keys and k in entries)
        self.stats.stale_on_load = len(stale)
        self._loaded_keys = set()
        self._reread_keys = set()
        if stale:
            log.info(
                "catalog: %d of %d cached files changed since the file was saved; re-read",
                len(stale),
                self.stats.loaded,
            )

    def adopt(self, stored: StoredCatalog) -> None:
        """Take over a verified file's entries, documents and index; raises ValueError if
        they are inconsistent. Every adopted entry is still to be validated against the tree.

        Nothing is decoded here that a recall may not need: documents stay encoded
        until read, and a ``fielded`` pool is loaded from its image
        (:meth:`FieldedPool.from_image`) rather than built posting by posting.
        """
        fielded = self.scorer == "fielded"
        if (stored.pool is not None) != fielded or len(stored.postings) != (0 if fielded else 3):
            raise ValueError("the file's index is not the one of this catalog's scorer")
        stored_docs = stored.stored
        if stored_docs is None:
            raise ValueError("a loaded catalog without its documents")
        capacity = len(stored_docs)
        if not fielded and len(stored.fields) != capacity:
            raise ValueError("the word index needs the fields of every slot")
        docs: list[Held | None] = [None] * capacity
        owners: list[CachedFile | None] = [None] * capacity
        used: list[int] = []
        order = self._order
        entries = self.entries
        ranks = self._scope_ranks
        by_path = self._by_path
        by_type = None if fielded else self._by_type  # (only the word index reads it)
        for entry in stored.entries:
            key = (entry.root_index, entry.path)
            entries[key] = entry
            if entry.diagnostics:
                self._with_problems.add(key)
                if any(d[1] == DiagnosticKind.DUPLICATE_LINK for d in entry.diagnostics):
                    self.demoted.add(key)
            if entry.nlink > 1:
                self.linked.add(key)
            slot = entry.slot
            if slot < 0:
                continue
            if slot >= capacity or owners[slot] is not None or entry.kind is None:
                raise ValueError("document slots are not unique")
            owners[slot] = entry
            used.append(slot)
            order.append((ranks[key[0]], -entry.mtime, entry.relative_path, key[0], slot))
            group = by_path.get(key[1])
            by_path[key[1]] = (slot,) if group is None else (*group, slot)
            if by_type is not None:
                by_type[entry.kind].add(slot)
        for slot in used:
            docs[slot] = slot
        if stored_docs.count() != len(used):
            raise ValueError("the file's documents are not the entries' documents")
        if len(entries) != len(stored.entries):
            raise ValueError("two entries for one file")
        self._docs = docs
        self._stored = stored_docs
        self._loaded_owners = owners
        pacing.checkpoint()
        if fielded:
            assert stored.pool is not None
            self._pool = FieldedPool.from_image(stored.pool)
            if len(self._pool) != len(used) or not all(map(self._pool.__contains__, used)):
                raise ValueError("the pool does not hold exactly the documents")
            self._fields = [None] * capacity
        else:
            self._fields = list(stored.fields)
            self._builder = IndexBuilder.from_postings([_postings(c) for c in stored.postings])
        self._order.sort()
        if fielded:
            self._recency = sorted(map(recency_key, self._order))
        self._free = [slot for slot in range(capacity) if docs[slot] is None]
        if any(not 0 <= slot < capacity or docs[slot] is None for slot in stored.unembedded):
            raise ValueError("a passage to embed for a slot without a document")
        self._unembedded = {slot: next(_GENERATIONS) for slot in stored.unembedded}
        self.stats.loaded = len(self.entries)
        self._loaded_keys = set(self.entries)
