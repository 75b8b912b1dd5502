"""Embedding the catalog's passages after its snapshot is out (recall across languages).

The catalog analyses a memory's words when it reads the file, but not its passage
embedding (:mod:`memrecall.engine.scoring.passages`): that costs tens to hundreds of
milliseconds a memory, and a recall waits for the catalog, so the first catalog of a tree of
a few hundred memories would take a minute. The catalog publishes the snapshot of the words
first; a :class:`PassageFiller` (one worker thread per catalog, started when a snapshot
leaves passages to embed) then embeds them in the order they were read, a batch at a time
(16, or a hundredth of a large tree), and the catalog publishes again after each batch.
Until a memory's passage is in, it is ranked by its words alone, as it was before passages
existed: the passages never decide silence, and change the first memory only through a
version pair the words missed (``Params.subject_cosine``).

The worker steps aside for recall: it runs inside :func:`~memrecall.sources.pacing.worker`
and passes a :func:`~memrecall.sources.pacing.checkpoint` before each passage, and a turn
waiting for the model goes before the next passage
(:meth:`~memrecall.sources.turn_reader.E5Embedder.passage`). :meth:`PassageFiller.settle`
waits until nothing is left (tests, and tools that want the steady state);
:meth:`PassageFiller.close` stops the worker.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from memrecall.engine.scoring.passages import PassageEmbedder, pack
from memrecall.sources import pacing

__all__ = ["BATCH", "Embedded", "PassageFiller", "ToEmbed"]

BATCH = 16
"""Passages embedded between two publications of the catalog (a few seconds), at least; the
catalog asks for a hundredth of its files when that is more."""

ToEmbed = tuple[int, int, str]
"""A passage to embed: ``(slot, generation, text)``."""

Embedded = tuple[int, int, bytes]
"""An embedded passage: ``(slot, generation, packed vector)``; empty when embedding failed."""


class PassageFiller:
    """Embeds the passages a catalog still lacks, in a worker thread (see the module doc).

    ``work(limit)`` returns up to ``limit`` passages still to embed (empty: nothing left),
    ``store(embedded)`` hands them back; both take the catalog's lock themselves.
    ``embedder()`` gives what embeds a passage (None: the passages are stored empty, and
    those memories are ranked by their words). ``name`` says whose passages they are in the
    log (the catalog's, or the store's: :mod:`memrecall.store.source`)."""

    def __init__(
        self,
        work: Callable[[int], Sequence[ToEmbed]],
        store: Callable[[Sequence[Embedded]], None],
        embedder: Callable[[], PassageEmbedder | None],
        name: str = "catalog",
    ) -> None:
        self._log = logging.getLogger(f"memrecall.{name}")
        self._name = name
        self._work = work
        self._store = store
        self._embedder = embedder
        self._state = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None
        self._wanted = False
        """Woken since the worker last asked for work."""
        self._closed = False
        self._failed = False

    def wake(self) -> None:
        """There may be passages to embed: start the worker unless it runs (or closed)."""
        with self._state:
            if self._closed:
                return
            self._wanted = True
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="memrecall-passages", daemon=True
                )
                self._thread.start()

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until the worker has nothing left to do; False if ``timeout`` (seconds)
        passed first."""
        with self._state:
            return self._state.wait_for(lambda: self._thread is None, timeout)

    def close(self) -> None:
        """Stop the worker after the passage it is embedding, and wait for it (idempotent).
        Call it without holding the catalog's lock: the worker may be waiting for it."""
        with self._state:
            self._closed = True
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        try:
            with pacing.worker():
                while self._next_round():
                    todo = self._work(BATCH)
                    if not todo:
                        if self._finished():
                            return
                        continue
                    self._store(self._embedded(todo))
        except Exception:
            self._log.exception("%s: embedding passages failed; memories rank by words", self._name)
        finally:
            with self._state:
                if self._thread is threading.current_thread():
                    self._thread = None
                self._state.notify_all()

    def _next_round(self) -> bool:
        with self._state:
            self._wanted = False
            return not self._closed

    def _finished(self) -> bool:
        """Nothing was left: stop, unless woken meanwhile (then look again)."""
        with self._state:
            if self._wanted and not self._closed:
                return False
            self._thread = None
            self._state.notify_all()
            return True

    def _embedded(self, todo: Sequence[ToEmbed]) -> list[Embedded]:
        embed = self._embedder()
        done: list[Embedded] = []
        for slot, generation, text in todo:
            if self._closed:
                break
            pacing.checkpoint()
            vector = b""
            if embed is not None:
                try:
                    vector = pack(embed(text))
                except Exception:  # the embedder is the host's code (a C engine)
                    if not self._failed:
                        self._failed = True
                        self._log.exception("%s: a passage did not embed", self._name)
            done.append((slot, generation, vector))
        return done
