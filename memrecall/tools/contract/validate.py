"""The write protocol of ``memory_remember``: six field checks and two fail-closed gates.

Fields are checked in the order kind -> title -> body -> tags -> source ->
scope and only the first failure is reported, as a :class:`Refusal` whose
``message`` tells the model exactly what to change. The gates
(:func:`check_gates`) run after the fields, over the current store view; a
refusal from either means nothing is written and nothing is evicted.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence

import msgspec

from .constants import (
    KINDS,
    RECORD_FRACTION,
    SCOPE_MAX,
    TAG_MAX_CHARS,
    TAGS_MAX,
    TITLE_MAX,
    TITLE_MIN,
)
from .records import GLOBAL_SCOPE, MemoryRecord, StoreStamp, record_bytes

__all__ = [
    "LINE_BREAKS",
    "SOURCE_PREFIXES",
    "Refusal",
    "RememberResult",
    "ValidRemember",
    "check_gates",
    "has_line_break",
    "neutralise_braces",
    "sanitize_scope_for_recall",
    "validate_remember",
]

LINE_BREAKS = frozenset("\n\r\u2028\u2029")
SOURCE_PREFIXES = ("session:", "file:", "url:https://")


class Refusal(msgspec.Struct, frozen=True, kw_only=True):
    """A refused write: a stable ``code``, the ``field`` at fault and a fix-it ``message``.

    The gate refusals also carry the numbers they compared: the record size and
    the per-record limit, or the store stamps seen by the writer and found now.
    """

    code: str
    field: str
    message: str
    record_bytes: int | None = None
    limit_bytes: int | None = None
    seen: StoreStamp | None = None
    current: StoreStamp | None = None


class ValidRemember(msgspec.Struct, frozen=True, kw_only=True):
    """A write that passed the six checks, its fields normalised (trimmed title, clean tags)."""

    kind: str
    title: str
    body: str
    tags: tuple[str, ...]
    source: str
    scope: str

    def record(self, record_id: str, now: float) -> MemoryRecord:
        """The record this write creates (``hits`` 0, both times ``now``)."""
        return MemoryRecord(
            id=record_id,
            kind=self.kind,
            title=self.title,
            body=self.body,
            tags=self.tags,
            source=self.source,
            scope=self.scope,
            created_at=now,
            updated_at=now,
        )


class RememberResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a successful ``memory_remember`` returns; the store integration fills it."""

    id: str
    records: int
    bytes_used: int


def has_line_break(text: str) -> bool:
    """Whether ``text`` holds ``\\n``, ``\\r``, U+2028 or U+2029."""
    return any(char in LINE_BREAKS for char in text)


def _has_control(text: str) -> bool:
    return any(unicodedata.category(char) in ("Cc", "Zl", "Zp") for char in text)


def neutralise_braces(text: str) -> str:
    """Turn every ``{{`` into ``{`` and ``}}`` into ``}`` until none is left."""
    while "{{" in text or "}}" in text:
        text = text.replace("{{", "{").replace("}}", "}")
    return text


def _refuse(code: str, field: str, message: str) -> Refusal:
    return Refusal(code=code, field=field, message=message)


def _check_kind(kind: object) -> Refusal | None:
    if kind in KINDS:
        return None
    return _refuse(
        "invalid-kind",
        "kind",
        f"kind must be one of {', '.join(KINDS)}: use fact for a stable truth, lesson for "
        "something learnt from a mistake, preference for how the user wants things done, "
        "pointer for where to find something.",
    )


def _check_title(title: object) -> tuple[str | None, Refusal | None]:
    if not isinstance(title, str):
        return None, _refuse("invalid-title", "title", "title must be a string of one line.")
    trimmed = title.strip()
    if has_line_break(trimmed):
        return None, _refuse(
            "invalid-title",
            "title",
            "title must be one line: remove the line breaks (\\n, \\r, U+2028, U+2029) and "
            "move the detail into body.",
        )
    if not TITLE_MIN <= len(trimmed) <= TITLE_MAX:
        return None, _refuse(
            "invalid-title",
            "title",
            f"title must be {TITLE_MIN}..{TITLE_MAX} characters after trimming (it has "
            f"{len(trimmed)}): write a short specific summary, details go in body.",
        )
    return trimmed, None


def _check_body(body: object) -> Refusal | None:
    if isinstance(body, str) and body.strip():
        return None
    return _refuse(
        "invalid-body",
        "body",
        "body must be non-empty text: put the full memory there (it is returned only by "
        "memory_expand).",
    )


def _check_tags(tags: object) -> tuple[tuple[str, ...] | None, Refusal | None]:
    def bad(message: str) -> tuple[None, Refusal]:
        return None, _refuse("invalid-tags", "tags", message)

    if isinstance(tags, str) or not isinstance(tags, Sequence):
        return bad(f'tags must be a list of 1..{TAGS_MAX} short labels, e.g. ["build", "ci"].')
    if not 1 <= len(tags) <= TAGS_MAX:
        return bad(f"tags must hold 1..{TAGS_MAX} labels (it has {len(tags)}).")
    clean: list[str] = []
    for index, tag in enumerate(tags):
        if not isinstance(tag, str):
            return bad(f"tags[{index}] must be a string.")
        label = tag.strip().lower()
        if not 1 <= len(label) <= TAG_MAX_CHARS:
            return bad(
                f"tags[{index}] must be 1..{TAG_MAX_CHARS} characters after trimming (it has "
                f"{len(label)}): shorten it or reuse an existing tag."
            )
        if _has_control(label) or "," in label:
            return bad(f"tags[{index}] must not contain commas, line breaks or control characters.")
        if label in clean:
            return bad(
                f"tags[{index}] repeats {label!r} (tags are compared trimmed and "
                "lower-cased): drop the repeat."
            )
        clean.append(label)
    return tuple(clean), None


def _check_source(source: object) -> tuple[str | None, Refusal | None]:
    fix = (
        "source must say where the memory comes from: session:<session id>, file:<path> or "
        "url:https://<address>, on one line."
    )
    if not isinstance(source, str):
        return None, _refuse("invalid-source", "source", fix)
    trimmed = source.strip()
    for prefix in SOURCE_PREFIXES:
        if (
            trimmed.startswith(prefix)
            and trimmed[len(prefix) :].strip()
            and not _has_control(trimmed)
        ):
            return trimmed, None
    return None, _refuse("invalid-source", "source", fix)


def _check_scope(scope: object) -> tuple[str | None, Refusal | None]:
    if scope is None:
        return GLOBAL_SCOPE, None
    fix = (
        "scope must be project:<name> on one line (at most 64 characters) for a memory that "
        "only holds in one project; omit it for a memory that holds everywhere."
    )
    if not isinstance(scope, str):
        return None, _refuse("invalid-scope", "scope", fix)
    value = neutralise_braces(scope.strip())
    if not value or has_line_break(value) or _has_control(value) or len(value) > SCOPE_MAX:
        return None, _refuse("invalid-scope", "scope", fix)
    if value == GLOBAL_SCOPE:
        return value, None
    if not value.startswith("project:") or not value[len("project:") :].strip():
        return None, _refuse("invalid-scope", "scope", fix)
    return value, None


def sanitize_scope_for_recall(scope: str | None) -> str:
    """The lenient read-side scope: line breaks removed, braces neutralised, trimmed, cut to 64.

    ``None`` or an empty result means no filter (returned as ``""``).
    """
    if scope is None:
        return ""
    text = "".join(" " if char in LINE_BREAKS else char for char in scope)
    text = "".join(char for char in text if unicodedata.category(char) != "Cc")
    return neutralise_braces(text.strip())[:SCOPE_MAX].strip()


def validate_remember(
    *, kind: object, title: object, body: object, tags: object, source: object, scope: object = None
) -> ValidRemember | Refusal:
    """Check a write in the order kind -> title -> body -> tags -> source -> scope.

    Returns the normalised write, or the first failure. Arguments are ``object``
    because they come straight from a tool call.
    """
    refusal = _check_kind(kind)
    if refusal is not None:
        return refusal
    clean_title, refusal = _check_title(title)
    if refusal is not None:
        return refusal
    refusal = _check_body(body)
    if refusal is not None:
        return refusal
    clean_tags, refusal = _check_tags(tags)
    if refusal is not None:
        return refusal
    clean_source, refusal = _check_source(source)
    if refusal is not None:
        return refusal
    clean_scope, refusal = _check_scope(scope)
    if refusal is not None:
        return refusal
    assert clean_title is not None
    assert clean_tags is not None
    assert clean_source is not None
    assert clean_scope is not None
    assert isinstance(kind, str)
    assert isinstance(body, str)
    return ValidRemember(
        kind=kind,
        title=clean_title,
        body=body,
        tags=clean_tags,
        source=clean_source,
        scope=clean_scope,
    )


def check_gates(
    record: MemoryRecord,
    *,
    max_bytes: int,
    seen: StoreStamp,
    current: StoreStamp,
    fraction: float = RECORD_FRACTION,
    size: int | None = None,
) -> Refusal | None:
    """The two fail-closed gates of a write, checked before anything is written or evicted.

    * ``record-too-large``: the record's serialised size (``size``, default
      :func:`record_bytes`) is over ``floor(max_bytes x fraction)``;
    * ``store-changed-externally``: the store's stamp now (``current``) differs
      from the stamp of the view the writer loaded (``seen``); both are reported.
    """
    size = record_bytes(record) if size is None else size
    limit = math.floor(max_bytes * fraction)
    if size > limit:
        return Refusal(
            code="record-too-large",
            field="body",
            message=(
                f"the record is {size} bytes, over the per-record limit of {limit} bytes "
                f"({fraction:.0%} of the store cap): shorten body, or split it into several "
                "memories. Nothing was written."
            ),
            record_bytes=size,
            limit_bytes=limit,
        )
    if seen != current:
        return Refusal(
            code="store-changed-externally",
            field="store",
            message=(
                f"the store changed since it was loaded (loaded size={seen.size} "
                f"mtimeMs={seen.mtime_ms:g}, now size={current.size} "
                f"mtimeMs={current.mtime_ms:g}): "
                "recall again to see the current memories, then retry. Nothing was written."
            ),
            seen=seen,
            current=current,
        )
    return None
