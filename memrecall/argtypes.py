"""Argument types shared by every command line of the package.

Each function takes the option's text and returns the parsed value, or raises
:class:`argparse.ArgumentTypeError` with a one-line reason; passed as an
argparse ``type=``, a bad value becomes a usage error (exit status 2) naming
the option, never a traceback or a silent run.
"""

from __future__ import annotations

import argparse
import math

__all__ = [
    "distinct_positive_ints",
    "fraction",
    "non_negative_int",
    "nonempty_path",
    "positive_int",
]


def _int(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def positive_int(text: str) -> int:
    """A whole number ≥ 1 (a count: runs, repeats, queries)."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def non_negative_int(text: str) -> int:
    """A whole number ≥ 0 (a seed)."""
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} must not be negative")
    return value


def distinct_positive_ints(text: str) -> tuple[int, ...]:
    """A comma-separated list of distinct whole numbers ≥ 1, in the order given (sizes)."""
    parts = [part for part in text.split(",") if part.strip()]
    if not parts:
        raise argparse.ArgumentTypeError(f"{text!r} names no numbers (e.g. 200,500,1000)")
    values = tuple(positive_int(part) for part in parts)
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        listed = ", ".join(map(str, repeated))
        raise argparse.ArgumentTypeError(f"{listed} given more than once")
    return values


def fraction(text: str) -> float:
    """A number in (0, 1] (a share or a precision target)."""
    try:
        value = float(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text.strip()} is not in (0, 1]")
    return value


def probability(text: str) -> float:
    """A number in [0, 1] (a rate that may be zero)."""
    try:
        value = float(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text.strip()} is not in [0, 1]")
    return value


def nonempty_path(text: str) -> str:
    """A path that is not the empty string (``""`` would silently mean the current directory)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path names no directory")
    return text
