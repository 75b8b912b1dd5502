"""Keeping CPU-bound worker threads out of the event loop's way near a deadline.

A recall's scan and scoring run in a worker thread while the trio loop waits
for the 100 ms initial deadline. Both need the GIL. A worker busy in Python
code keeps it for up to the interpreter's switch interval (5 ms) every time
the loop asks for it, and the loop asks once per hop between its tasks (the
deadline timer, the plan actor, the caller's ``user_query``): a few hops
turned a 100 ms wait into 130 ms and more.

The loop therefore *holds* the process-wide :data:`PACER` for the short window
just before a deadline until the caller has its answer (:meth:`Pacer.hold`).
While it is held:

* a worker thread that reaches :func:`checkpoint` waits (without the GIL)
  until the hold is released, or at most :data:`MAX_PAUSE` seconds. Only
  threads inside :func:`worker` pause; the loop's own thread never does.
  Long-running worker code calls :func:`checkpoint` between small chunks of
  work (per document, every few hundred postings) so it steps aside promptly;
* the switch interval is lowered to :data:`HELD_SWITCH_INTERVAL`, so a worker
  between checkpoints (or in code that has none) hands the GIL over within a
  fraction of a millisecond. The previous interval is restored when the last
  hold ends.

The pacer is process-wide on purpose: the GIL is, so every engine's workers
must step aside for any engine's deadline. Nothing here reads a clock; the
caller decides when to hold and release.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator

import attrs

__all__ = [
    "HELD_SWITCH_INTERVAL",
    "MAX_PAUSE",
    "PACER",
    "Hold",
    "Pacer",
    "PacerStatistics",
    "checkpoint",
    "worker",
]

MAX_PAUSE = 0.25
"""The longest one :func:`checkpoint` waits (seconds): a safety net, never the normal exit."""

HELD_SWITCH_INTERVAL = 0.0005
"""The interpreter's switch interval while a hold is active (seconds)."""

_local = threading.local()


@attrs.frozen
class PacerStatistics:
    """A snapshot of the pacer: active holds, and pauses taken by workers so far."""

    holds: int
    pauses: int


class Hold:
    """One active hold on a :class:`Pacer`; :meth:`release` it (idempotent)."""

    __slots__ = ("_pacer", "_released")

    def __init__(self, pacer: Pacer) -> None:
        self._pacer = pacer
        self._released = False

    @property
    def released(self) -> bool:
        """True once released."""
        return self._released

    def release(self) -> None:
        """End this hold; workers resume when no hold is left. Not a checkpoint."""
        if not self._released:
            self._released = True
            self._pacer._drop()


class Pacer:
    """Counts holds; worker threads pause at checkpoints while any is active."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._clear = threading.Event()
        self._clear.set()
        # invariant: _clear is set exactly when _holds == 0
        self._holds = 0
        self._pauses = 0
        self._saved_interval: float | None = None

    def hold(self) -> Hold:
        """Make workers step aside until the returned hold is released."""
        with self._lock:
            self._holds += 1
            if self._holds == 1:
                self._clear.clear()
                self._saved_interval = sys.getswitchinterval()
                if self._saved_interval > HELD_SWITCH_INTERVAL:
                    sys.setswitchinterval(HELD_SWITCH_INTERVAL)
        return Hold(self)

    def _drop(self) -> None:
        with self._lock:
            self._holds -= 1
            if self._holds == 0:
                saved = self._saved_interval
                self._saved_interval = None
                if saved is not None and sys.getswitchinterval() == min(
                    saved, HELD_SWITCH_INTERVAL
                ):
                    sys.setswitchinterval(saved)  # unless someone else changed it meanwhile
                self._clear.set()

    @property
    def held(self) -> bool:
        """True while at least one hold is active."""
        return not self._clear.is_set()

    def statistics(self) -> PacerStatistics:
        """Active holds and the number of pauses taken so far."""
        with self._lock:
            return PacerStatistics(holds=self._holds, pauses=self._pauses)

    def checkpoint(self, timeout: float = MAX_PAUSE) -> bool:
        """In a :func:`worker` thread, wait while a hold is active; True if it paused."""
        if self._clear.is_set() or not getattr(_local, "worker", False):
            return False
        with self._lock:
            self._pauses += 1
        self._clear.wait(timeout)
        return True


PACER = Pacer()
"""The process-wide pacer (see the module doc)."""


def checkpoint() -> None:
    """Let the event loop have the GIL if it is near a deadline (cheap when it is not)."""
    if not PACER._clear.is_set():
        PACER.checkpoint()


@contextlib.contextmanager
def worker() -> Iterator[None]:
    """Mark the current thread as a worker for the duration (it may pause at checkpoints)."""
    previous = getattr(_local, "worker", False)
    _local.worker = True
    try:
        yield
    finally:
        _local.worker = previous
