"""Text helpers shared by the scorer, the manifest and the renderer.

Upstream runs on JavaScript strings, so lengths and cuts are in UTF-16 code
units. These helpers reproduce that on Python strings (code points).
"""

from __future__ import annotations

import unicodedata

import regex

__all__ = [
    "EMPTY_BODY_PLACEHOLDER",
    "body_text",
    "js_trim",
    "normalize",
    "utf16_len",
    "utf16_prefix",
]

EMPTY_BODY_PLACEHOLDER = "_No entries yet._"
"""Body of the per-type topic files that older scaffolds created; treated as empty."""

_ASTRAL = regex.compile(r"[\U00010000-\U0010FFFF]")

# JavaScript's notion of whitespace (String.prototype.trim), so values match upstream exactly.
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim(text: str) -> str:
    """Trim like JavaScript's ``String.prototype.trim``."""
    return text.strip(_JS_WHITESPACE)


def normalize(text: str) -> str:
    """NFKC, then full Unicode lower-casing (the scorer's view of any text)."""
    return unicodedata.normalize("NFKC", text).lower()


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units (JavaScript's ``length``)."""
    if text.isascii():
        return len(text)
    return len(text) + len(_ASTRAL.findall(text))


def utf16_prefix(text: str, units: int) -> str:
    """The longest prefix of at most ``units`` UTF-16 code units.

    A cut through a surrogate pair drops the whole character (upstream drops
    the dangling high surrogate, which is the same text).
    """
    if units <= 0:
        return ""
    head = text[:units]
    if head.isascii():
        return head
    total = len(head) + len(_ASTRAL.findall(head))
    end = len(head)
    while total > units:
        end -= 1
        total -= 2 if ord(head[end]) > 0xFFFF else 1
    return head[:end]


def body_text(body: str) -> str:
    """The body as scored and rendered: trimmed, with the empty placeholder mapped to ''."""
    trimmed = js_trim(body)
    return "" if trimmed == EMPTY_BODY_PLACEHOLDER else trimmed
