"""Input rules: key normalisation and the checks on content and category.

Key rules (the service applies them; callers may suggest any spelling):

1. Unicode NFKC, then full case folding (``str.casefold``).
2. Every maximal run of characters that are neither letters nor digits (spaces,
   punctuation, ``_``, ``-``, ``:``, ``/``, symbols, controls) becomes one ``_``;
   leading and trailing ``_`` are dropped.
3. The result must be 1 to :data:`MAX_KEY_CHARS` characters.

So ``Preferred Editor``, ``preferred-editor`` and ``PREFERRED_EDITOR`` are one key, and a
key cannot smuggle a scope or a project id in as ``research:project:…`` (it becomes a plain
word sequence; scopes live only in the scope columns).

Content and category are stored exactly as given (never altered); they are only checked.
"""

from __future__ import annotations

import unicodedata

import regex

from .model import InvalidInput

__all__ = [
    "MAX_CATEGORY_CHARS",
    "MAX_CONTENT_CHARS",
    "MAX_KEY_CHARS",
    "check_category",
    "check_content",
    "normalize_category",
    "normalize_key",
]

MAX_KEY_CHARS = 128
MAX_CONTENT_CHARS = 8000
MAX_CATEGORY_CHARS = 64

_SEPARATORS = regex.compile(r"[^\p{L}\p{M}\p{N}]+")


def normalize_key(key: str) -> str:
    """The service's form of a suggested key (rules in the module docstring)."""
    folded = unicodedata.normalize("NFKC", key).casefold()
    out: str = _SEPARATORS.sub("_", folded).strip("_")
    if not out:
        raise InvalidInput("key: needs at least one letter or digit")
    if len(out) > MAX_KEY_CHARS:
        raise InvalidInput(f"key: at most {MAX_KEY_CHARS} characters after normalisation")
    return out


def _check_text(name: str, text: str, limit: int) -> None:
    if not text.strip():
        raise InvalidInput(f"{name}: must not be empty")
    if len(text) > limit:
        raise InvalidInput(f"{name}: at most {limit} characters (got {len(text)})")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{name}: not valid Unicode text (lone surrogate)") from None
    if "\x00" in text:
        raise InvalidInput(f"{name}: contains a NUL character")


def check_content(content: str) -> None:
    """Refuse blank, oversized or unencodable content (stored verbatim otherwise)."""
    _check_text("content", content, MAX_CONTENT_CHARS)


def check_category(category: str) -> None:
    """Refuse a blank, oversized or unencodable category."""
    _check_text("category", category, MAX_CATEGORY_CHARS)


def normalize_category(category: str) -> str:
    """The form categories are compared in (filters): NFKC, case-folded, trimmed."""
    return unicodedata.normalize("NFKC", category).casefold().strip()
