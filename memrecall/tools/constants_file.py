"""The constants file: the recall contract's ``score`` configuration as a JSON file.

``memrecall calibrate --contract --output FILE`` writes one; ``memrecall mcp --constants FILE``
(or ``MEMRECALL_CONSTANTS``) loads it. The file is one JSON object::

    {"score": {"scaleA": 0.02, "weakThreshold": 0.04, ...}, "fit": {...}}

``score`` holds :class:`~memrecall.tools.contract.ScoreConfig` keys (camelCase; absent keys
keep their defaults; an unknown key, a wrong type or an out-of-range value is an error).
``fit`` is optional and free-form: what the calibration measured, for people; nothing reads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from .contract import ConfigError, ScoreConfig, load_score_config

__all__ = ["ConstantsFileError", "dump_constants", "load_constants", "parse_constants"]

_MAX_FILE_BYTES = 1_000_000


class ConstantsFileError(ValueError):
    """The constants file cannot be used; the message says why (and names the key)."""


class _ConstantsFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    score: dict[str, Any]
    fit: dict[str, Any] | None = None


def parse_constants(data: bytes) -> ScoreConfig:
    """The :class:`ScoreConfig` a constants file's bytes describe.

    Raises :class:`ConstantsFileError` for invalid JSON, a missing ``score`` object, an
    unknown top-level or ``score`` key, or a value out of range.
    """
    try:
        parsed = msgspec.json.decode(data, type=_ConstantsFile)
    except msgspec.ValidationError as error:
        raise ConstantsFileError(f"not a constants file: {error}") from error
    except msgspec.DecodeError as error:
        raise ConstantsFileError(f"invalid JSON: {error}") from error
    try:
        return load_score_config(parsed.score)
    except ConfigError as error:
        raise ConstantsFileError(str(error)) from error


def load_constants(path: str | Path) -> ScoreConfig:
    """:func:`parse_constants` on a file (unreadable or over 1 MB: :class:`ConstantsFileError`)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_FILE_BYTES + 1)
    except OSError as error:
        raise ConstantsFileError(f"cannot read: {error.strerror or error}") from error
    if len(data) > _MAX_FILE_BYTES:
        raise ConstantsFileError(f"larger than {_MAX_FILE_BYTES} bytes")
    return parse_constants(data)


def dump_constants(score: dict[str, Any], fit: dict[str, Any] | None = None) -> bytes:
    """A constants file (indented JSON, keys in a fixed order) for ``score`` and ``fit``.

    ``score`` is checked first (:class:`ConstantsFileError`), so what is written loads back.
    """
    body: dict[str, Any] = {"score": score}
    if fit is not None:
        body["fit"] = fit
    data = msgspec.json.format(msgspec.json.encode(body), indent=2) + b"\n"
    parse_constants(data)
    return data
