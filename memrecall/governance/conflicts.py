"""Deterministic conflict classification for a save under an existing key (seed 002 §9.3).

No model merges or decides. The rules, applied to :func:`normalise_content` of both texts:

``same``         the normalised texts are equal
``compatible``   the new text keeps the whole old text and only adds to it: the old
                 normalised text occurs in the new one on word boundaries
``conflicting``  anything else (a changed value, a removed detail, a rewrite): the rules
                 cannot tell a refinement from a contradiction, so the user decides

Normalisation: Unicode NFKC, case folding, every run of whitespace to one space, curly
quotes to straight ones, then surrounding spaces and trailing sentence punctuation
(``. ! ? ; : 。 ！ ？ ；``) removed. It is used only for comparison and fingerprints; stored
content is never altered.

:func:`plan_save` turns the class, whether the text is the user's and whether the user
asked to replace, into the one action the service carries out (:class:`SaveAction`).
"""

from __future__ import annotations

import enum
import hashlib
import unicodedata

import msgspec
import regex

__all__ = [
    "ConflictClass",
    "SaveAction",
    "classify",
    "content_fingerprint",
    "normalise_content",
    "plan_save",
]

_SPACE = regex.compile(r"\s+")
_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "「": '"', "」": '"'})
_TRAILING = regex.compile(r"[\s.!?;:。！？；：…]+$")


def normalise_content(text: str) -> str:
    """The comparison form of ``text`` (see the module docstring for the rules)."""
    for _ in range(4):  # NFKC and case folding reach a fixed point within a few rounds
        folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
        if folded == text:
            break
        text = folded
    text = _SPACE.sub(" ", text.translate(_QUOTES)).strip()
    result: str = _TRAILING.sub("", text)
    return result


class ConflictClass(enum.StrEnum):
    """How a new text relates to the current one under the same key."""

    SAME = "same"
    COMPATIBLE = "compatible"
    CONFLICTING = "conflicting"


def _contains_on_word_boundaries(haystack: str, needle: str) -> bool:
    if not needle:
        return True
    start = 0
    while (i := haystack.find(needle, start)) != -1:
        j = i + len(needle)
        before_ok = i == 0 or not (haystack[i - 1].isalnum() and needle[0].isalnum())
        after_ok = j == len(haystack) or not (haystack[j].isalnum() and needle[-1].isalnum())
        if before_ok and after_ok:
            return True
        start = i + 1
    return False


def classify(old: str, new: str) -> ConflictClass:
    """Classify ``new`` against the current content ``old`` of the same key."""
    a, b = normalise_content(old), normalise_content(new)
    if a == b:
        return ConflictClass.SAME
    if _contains_on_word_boundaries(b, a):
        return ConflictClass.COMPATIBLE
    return ConflictClass.CONFLICTING


class SaveAction(enum.StrEnum):
    """What the service does with a save."""

    CREATE = "create"  # no record under the key: write an active memory
    REFRESH = "refresh"  # same content from the user: idempotent, refresh last_confirmed_at
    NOTHING = "nothing"  # same content inferred by the model: nothing to propose
    UPDATE = "update"  # the user explicitly asked to replace: update, with an audit event
    PROPOSE_CREATE = "propose_create"  # pending candidate, operation create
    PROPOSE_UPDATE = "propose_update"  # pending candidate, operation update
    PROPOSE_REPLACE = "propose_replace"  # keep the old value; pending candidate, operation replace


def plan_save(
    existing: str | None, new: str, *, user_origin: bool, explicit_replace: bool = False
) -> SaveAction:
    """The action for saving ``new`` where ``existing`` is the current content (None: no record).

    ``user_origin``: the text is the user's explicit request or confirmation (else it can
    only become a candidate). ``explicit_replace``: the user asked to replace the value;
    it has no effect on a text that is not the user's.
    """
    if existing is None:
        return SaveAction.CREATE if user_origin else SaveAction.PROPOSE_CREATE
    kind = classify(existing, new)
    if kind is ConflictClass.SAME:
        return SaveAction.REFRESH if user_origin else SaveAction.NOTHING
    if user_origin and explicit_replace:
        return SaveAction.UPDATE
    if kind is ConflictClass.COMPATIBLE:
        return SaveAction.PROPOSE_UPDATE
    return SaveAction.PROPOSE_REPLACE


def content_fingerprint(user_id: str, scope_key: str, memory_key: str, content: str) -> str:
    """A SHA-256 fingerprint of the normalised content, bound to user, scope and key.

    ``scope_key`` is the scope's stable text (e.g. ``global`` or ``workspace:teaching``).
    Kept after a candidate is rejected (instead of its text) so the same candidate is not
    proposed again; it cannot be compared across users.
    """
    parts = (user_id, scope_key, normalise_content(memory_key), normalise_content(content))
    return hashlib.sha256(msgspec.json.encode(parts)).hexdigest()
