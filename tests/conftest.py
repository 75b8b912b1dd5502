"""Shared test configuration: Hypothesis profiles, and a private home for every test.

Profiles (``HYPOTHESIS_PROFILE=NAME`` selects one; otherwise ``ci`` when ``CI`` is
set, as in our CI, else ``dev``):

- ``dev`` (the default) and ``ci`` are derandomized: the same examples on every
  run, so the suite cannot fail by chance. ``ci`` also keeps no example database.
- ``nightly`` is randomised and deep (many more examples): ``just sim`` and the
  nightly run use it to look for what the fixed examples miss.

Every test runs with ``HOME``, ``XDG_CACHE_HOME`` and ``XDG_DATA_HOME`` pointing
into its own temporary directory, so nothing a test does (a catalog file, a
feature store) lands in the user's real home.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Literal

import pytest
from hypothesis import HealthCheck, settings

from memrecall.sources.embedding_cache import KEEP_ENVIRONMENT
from memrecall.sources.turn_reader import ENVIRONMENT, default_turns, e5_embedder, remembering

settings.register_profile("dev", max_examples=60, deadline=None, derandomize=True)
settings.register_profile(
    "ci",
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "nightly",
    max_examples=2000,
    deadline=None,
    derandomize=False,
    suppress_health_check=[HealthCheck.too_slow],
)


def chosen_profile(environ: Mapping[str, str]) -> str:
    """The Hypothesis profile this environment asks for."""
    named = environ.get("HYPOTHESIS_PROFILE")
    if named:
        return named
    return "ci" if environ.get("CI") else "dev"


settings.load_profile(chosen_profile(os.environ))


os.environ.setdefault(ENVIRONMENT, "lexical")
"""The suite ranks with the lexical turn model unless a test asks for the semantic reader
(:func:`semantic_turns`, ``MEMRECALL_TURNS=auto`` for every test): most tests are about the
runtime's timing and bookkeeping, and an embedding per turn would cost them minutes."""


def _semantic() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENVIRONMENT, "auto")
        default_turns.cache_clear()
        try:
            yield
        finally:
            default_turns.cache_clear()


@pytest.fixture(scope="module")
def semantic_turns() -> Iterator[None]:
    """The runtime's default turn reader, the semantic one, for a module's tests (the
    measured figures of the blind sets are the semantic reader's). Once a test asks for it,
    every later test of the module runs with it: where the module's other tests do not
    want it, ask for :func:`semantic_reader` instead."""
    yield from _semantic()


@pytest.fixture
def semantic_reader() -> Iterator[None]:
    """:func:`semantic_turns` for one test alone."""
    yield from _semantic()


FIXTURES = Path(__file__).parent / "fixtures"

REPLAYS = ("test_blind_sets.py", "test_one_language_pools.py")
"""The modules that replay the blind sets (thousands of texts to embed on a first run)."""

_PREFETCH = pytest.StashKey[list[str]]()
"""The blind sets the session's replays ask for (file names), in their tests' order."""

PREFETCH_ENVIRONMENT = "MEMRECALL_PREFETCH"
"""``off``: embed nothing ahead (:func:`remembered_embeddings`)."""


@pytest.hookimpl(trylast=True)  # after -k and -m have deselected what they do
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The blind sets' replays run last (in their own order), so that their embeddings can
    be computed ahead while the rest of the suite runs (:func:`remembered_embeddings`);
    only where other tests run too (the replays alone embed faster on every core than
    beside a thread that embeds the same texts)."""
    replays = [item for item in items if item.path.name in REPLAYS]
    others = [item for item in items if item.path.name not in REPLAYS]
    items[:] = others + replays
    wanted: list[str] = []
    for item in replays if others else ():
        params = getattr(item, "callspec", None)
        named = [params.params["measured"]] if params and "measured" in params.params else []
        if item.path.name == "test_one_language_pools.py":
            from tests.test_one_language_pools import SETS

            named = [f"set-{n}.json" for n in SETS]
        wanted.extend(name for name in named if name not in wanted)
    config.stash[_PREFETCH] = wanted


def replayed_texts(names: list[str]) -> Iterator[tuple[Literal["query", "passage"], str]]:
    """What the replays of blind sets ``names`` (in their tests' order) embed: the corpus
    first (other tests replay it too), then each set in the opposite order (the tests,
    once they start, embed what is still missing from their first set on, and the two meet
    without embedding a text twice), its memories' passages (the index is built before any
    case is ranked), then its turns (the whole turn for the reader, and its start where a
    paste is ranked without it)."""
    from memrecall.engine.scoring.features import passage_of
    from memrecall.engine.scoring.passages import NEAREST_CHARS
    from memrecall.tooling.evaluation import load_corpus

    corpus = FIXTURES / "recall-eval.json"
    every = sorted((FIXTURES / "blind").glob("set-*.json"), key=lambda path: path.name)
    joined = load_corpus(corpus, extra=every)
    sets = [FIXTURES / "blind" / name for name in reversed(names)]
    documents = dict(zip(joined.ids, joined.documents, strict=True))
    for path in (corpus, *sets):
        written = json.loads(path.read_text(encoding="utf-8"))
        for document in written.get("documents", []):
            yield "passage", passage_of(documents[document["id"]])
        for case in written["cases"]:
            yield "query", case["query"]
            if len(case["query"]) > NEAREST_CHARS:
                yield "query", case["query"][:NEAREST_CHARS]


class Prefetch:
    """The suite's prefetch thread (:func:`remembered_embeddings`), which a test can hold
    still (:func:`no_prefetch`): it then waits between two embeddings."""

    def __init__(self) -> None:
        self._state = threading.Condition()
        self._held = False
        self._waiting = False
        self._running = False
        self.stop = threading.Event()

    def texts(
        self, texts: Iterator[tuple[Literal["query", "passage"], str]]
    ) -> Iterator[tuple[Literal["query", "passage"], str]]:
        """``texts``, each read and given only while the prefetch is not held."""
        while True:
            with self._state:
                self._waiting = True
                self._state.notify_all()
                self._state.wait_for(lambda: not self._held or self.stop.is_set())
                self._waiting = False
            text = next(texts, None)
            if text is None:
                return
            yield text

    def run(self, target: Callable[[], object]) -> None:
        """Run ``target`` (the prefetch) in this thread, and say when it is over."""
        with self._state:
            self._running = True
        try:
            target()
        finally:
            with self._state:
                self._running = False
                self._state.notify_all()

    def finish(self) -> None:
        """Stop the prefetch: it embeds nothing more, held or not."""
        with self._state:
            self.stop.set()
            self._state.notify_all()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Inside, the prefetch embeds nothing and allocates nothing."""
        with self._state:
            self._held = True
            self._state.wait_for(lambda: self._waiting or not self._running)
        try:
            yield
        finally:
            with self._state:
                self._held = False
                self._state.notify_all()


_PREFETCH_THREAD = Prefetch()


@pytest.fixture
def no_prefetch() -> Iterator[None]:
    """The suite's prefetch held still during one test (a test that counts what the
    process allocates would count its embeddings)."""
    with _PREFETCH_THREAD.held():
        yield


@pytest.fixture(autouse=True, scope="session")
def remembered_embeddings(pytestconfig: pytest.Config) -> Iterator[None]:
    """The suite replays the same fixture queries and memories in many tests: their
    embeddings (by the semantic turn reader, memrecall.sources.turn_reader) are computed
    once per session, and kept in pytest's cache folder for the next run on this machine
    (memrecall.sources.embedding_cache: a file another machine or engine wrote is embedded
    again). The vectors are the same; only the time differs. ``-p no:cacheprovider`` or
    ``MEMRECALL_KEEP_EMBEDDINGS=`` (empty) keeps nothing between runs.

    Where the session runs the blind sets' replays (last: :func:`pytest_collection_modifyitems`),
    a thread embeds what they will ask for from the start, on one engine thread
    (:meth:`~memrecall.sources.turn_reader.E5Embedder.prefetch`): on a first run most of
    their embeddings are then made while the other tests run. It stops when the session
    ends, before the embeddings are written. ``MEMRECALL_PREFETCH=off`` embeds nothing
    ahead."""
    cache = getattr(pytestconfig, "cache", None)
    keep = None
    if cache is not None and os.environ.get(KEEP_ENVIRONMENT, "-"):
        keep = cache.mkdir("memrecall") / "embeddings"
    with remembering(keep):
        embed = e5_embedder()
        wanted = pytestconfig.stash.get(_PREFETCH, [])
        prefetch = _PREFETCH_THREAD
        worker = None
        if embed is not None and wanted and os.environ.get(PREFETCH_ENVIRONMENT) != "off":
            texts = prefetch.texts(replayed_texts(wanted))
            worker = threading.Thread(
                target=prefetch.run,
                args=(functools.partial(embed.prefetch, texts, prefetch.stop),),
                name="prefetch",
                daemon=True,
            )
            worker.start()
        try:
            yield
        finally:
            prefetch.finish()
            if worker is not None:
                worker.join()


SCRIPTS = Path(__file__).parent.parent / "scripts"


def _import_script(name: str) -> ModuleType:
    sys.path.insert(0, str(SCRIPTS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(SCRIPTS))


@pytest.fixture(scope="session")
def import_script() -> Callable[[str], ModuleType]:
    """Import one of the repository's ``scripts/`` by module name (they are not a package),
    leaving ``sys.path`` as it was."""
    return _import_script


@pytest.fixture(autouse=True)
def private_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point HOME and the XDG cache and data directories at a fresh temporary directory."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    return home
