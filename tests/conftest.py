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

import importlib
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

from memrecall.sources.embedding_cache import KEEP_ENVIRONMENT
from memrecall.sources.turn_reader import ENVIRONMENT, default_turns, remembering

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


@pytest.fixture(autouse=True, scope="session")
def remembered_embeddings(pytestconfig: pytest.Config) -> Iterator[None]:
    """The suite replays the same fixture queries and memories in many tests: their
    embeddings (by the semantic turn reader, memrecall.sources.turn_reader) are computed
    once per session, and kept in pytest's cache folder for the next run on this machine
    (memrecall.sources.embedding_cache: a file another machine or engine wrote is embedded
    again). The vectors are the same; only the time differs. ``-p no:cacheprovider`` or
    ``MEMRECALL_KEEP_EMBEDDINGS=`` (empty) keeps nothing between runs."""
    cache = getattr(pytestconfig, "cache", None)
    keep = None
    if cache is not None and os.environ.get(KEEP_ENVIRONMENT, "-"):
        keep = cache.mkdir("memrecall") / "embeddings"
    with remembering(keep):
        yield


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
