"""The management face: an HTTP API (seed 002 §15, §20; docs/api.md) over the memory store.

:func:`build_app` gives the ASGI app; :func:`serve` runs it on Hypercorn's trio worker in the
caller's trio run; ``memrecall serve`` (:mod:`memrecall.http.cli`) is the command line.

The names below load on first use: the ``memrecall`` command registers ``serve`` by importing
:mod:`memrecall.http.cli`, and every other subcommand should not pay for importing
Starlette and Hypercorn (about a quarter of a second).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .app import MAX_BODY_BYTES as MAX_BODY_BYTES
    from .app import build_app as build_app
    from .auth import TokenError as TokenError
    from .auth import TokenTable as TokenTable
    from .server import serve as serve

__all__ = ["MAX_BODY_BYTES", "TokenError", "TokenTable", "build_app", "serve"]

_HOMES = {
    "MAX_BODY_BYTES": "app",
    "build_app": "app",
    "TokenError": "auth",
    "TokenTable": "auth",
    "serve": "server",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
