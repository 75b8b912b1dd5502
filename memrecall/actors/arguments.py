"""Checks for the arguments of the public trio API, run in the caller's task.

Every public call validates what it was given before anything reaches an
actor: a wrong type raises :class:`TypeError`, a wrong value
:class:`ValueError`, both naming the argument. A caller's mistake therefore
stays in the caller's task; the engine and every other session carry on.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

__all__ = [
    "check_bool",
    "check_callable",
    "check_has_methods",
    "check_id",
    "check_nonnegative",
    "check_text",
    "check_tool_names",
]

MAX_ID_LENGTH = 200
"""Session and query ids are short labels (they appear in plan ids and logs)."""


def _kind(value: object) -> str:
    return type(value).__name__


def check_text(name: str, value: object) -> str:
    """``value`` must be a ``str`` (any length, possibly empty) encodable as UTF-8."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {_kind(value)}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{name} contains a lone surrogate (not valid Unicode text)") from None
    return value


def check_id(name: str, value: object) -> str | None:
    """``value`` must be ``None`` or a non-empty printable ``str`` of at most 200 characters."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str or None, not {_kind(value)}")
    if not value:
        raise ValueError(f"{name} must not be empty (pass None for a generated id)")
    if len(value) > MAX_ID_LENGTH:
        raise ValueError(f"{name} is longer than {MAX_ID_LENGTH} characters")
    if not value.isprintable():
        raise ValueError(f"{name} must be printable (no control characters or newlines)")
    return value


def check_bool(name: str, value: object) -> bool:
    """``value`` must be exactly ``True`` or ``False`` (not 0/1, not a string)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, not {_kind(value)}")
    return value


def check_tool_names(name: str, value: object) -> tuple[str, ...]:
    """``value`` must be an iterable of ``str`` tool names (a lone ``str`` is refused)."""
    if isinstance(value, str | bytes | bytearray):
        raise TypeError(f"{name} must be a sequence of tool names, not a single {_kind(value)}")
    if not isinstance(value, Iterable):
        raise TypeError(f"{name} must be a sequence of tool names, not {_kind(value)}")
    names = tuple(value)
    for item in names:
        if not isinstance(item, str):
            raise TypeError(f"{name} must hold str tool names, not {_kind(item)}")
        check_text(name, item)
    return names


def check_callable(name: str, value: object) -> None:
    """``value`` must be callable."""
    if not callable(value):
        raise TypeError(f"{name} must be callable, not {_kind(value)}")


def check_has_methods(name: str, value: object, *methods: str) -> None:
    """``value`` must have each of ``methods`` as a callable attribute."""
    for method in methods:
        if not callable(getattr(value, method, None)):
            raise TypeError(f"{name} must have a {method}() method ({_kind(value)} has none)")


def check_nonnegative(name: str, value: Any) -> float:
    """``value`` must be a finite real number >= 0 (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number, not {_kind(value)}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)
