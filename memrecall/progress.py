"""Progress lines for long commands (``bench scan``, ``simulate``, ``calibrate``).

A :class:`Progress` draws a tqdm bar on stderr, and only when stderr is a
terminal and the command was not asked for machine output (``--json``): piped,
redirected or captured output never gets a bar. The bar is removed when the
command ends, so only the command's own output stays on the screen.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any, TextIO

from tqdm import tqdm  # type: ignore[import-untyped]

__all__ = ["Progress"]


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class Progress:
    """Counts the steps of a long command on ``stream`` (default: ``sys.stderr``).

    ``quiet`` (e.g. ``--json``) or a stream that is not a terminal turns it off;
    :attr:`shown` says which. Use it as a context manager, or call :meth:`close`.
    """

    def __init__(
        self, total: int, description: str, *, quiet: bool = False, stream: TextIO | None = None
    ) -> None:
        target = sys.stderr if stream is None else stream
        self.shown = not quiet and _is_terminal(target)
        self._bar: Any = None
        if self.shown:
            self._bar = tqdm(
                total=total,
                desc=description,
                file=target,
                leave=False,
                unit="step",
                mininterval=0.2,
            )

    @classmethod
    def off(cls) -> Progress:
        """A progress that draws nothing (for callers that were not given one)."""
        return cls(0, "", quiet=True)

    def advance(self, note: str = "") -> None:
        """One step done; ``note`` names it (a seed, a size)."""
        if self._bar is not None:
            if note:
                self._bar.set_postfix_str(note, refresh=False)
            self._bar.update(1)

    def note(self, text: str) -> None:
        """Say what the current step is doing, without counting a step."""
        if self._bar is not None:
            self._bar.set_postfix_str(text)

    def close(self) -> None:
        """Remove the bar (idempotent)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
