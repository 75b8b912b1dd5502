"""Import and export between the store and a memory tree (the Qwen Code / Claude Code
markdown format the scanner reads: :mod:`memrecall.sources.frontmatter`).

One tree holds one scope (global, or one workspace type). Each active, unexpired record
becomes ``<key>.md``::

    ---
    name: <key>
    description: <first line of the content, at most 200 characters>
    type: <user | feedback | project | reference, from the category>
    category: <category>
    ---
    <content>

``category`` is an extra frontmatter line (the scanner ignores it) so a round trip keeps
the category; a category that is not one plain line is written JSON-quoted. ``MEMORY.md``
indexes the files, as upstream trees do. Suppressed and expired records are not exported
(a tree has no way to say "hidden"), and the tree format trims bodies and turns CRLF into
LF, so content with surrounding whitespace or CR characters is reported as changed by the
round trip (``warnings``).

Import reads every ``*.md`` below the directory except ``MEMORY.md``: key from ``name``
(else ``title``, else the file name), content from the body, category from ``category``
(else the type). Every file is parsed and checked before the first write; a bad file
(not UTF-8, too large, no frontmatter, bad type, empty body, a key another file also
uses, a key the store holds with different content) is a per-file diagnostic, and with
any diagnostic nothing is written unless the caller skips bad files explicitly. Each memory
is then one transaction (``changed_via=migration``); identical content already stored is
``unchanged`` (idempotent), so an import interrupted by a crash or another writer is
finished by running it again.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import attrs
import trio

from memrecall.engine.scoring.text import js_trim
from memrecall.sources.frontmatter import ParseFailure, parse_topic
from memrecall.sources.scanner import INDEX_FILENAME, MAX_FILE_BYTES

from .keys import check_category, check_content, normalize_key
from .model import ChangedVia, InvalidInput, KeyConflict, MemoryRecord, MemoryScope, Status
from .service import MemoryService
from .source import record_document

__all__ = [
    "ExportResult",
    "FileDiagnostic",
    "ImportPlan",
    "ImportResult",
    "PlannedMemory",
    "export_tree",
    "import_tree",
    "plan_import",
    "topic_text",
    "write_tree",
]

_CATEGORY = re.compile(r"(?:^|(?<=[\n\r\u2028\u2029]))category:[ \t]*([^\n\r\u2028\u2029]+)")
_LINE_BREAKS = frozenset("\n\r\u2028\u2029\x85\x0b\x0c")


@attrs.frozen
class FileDiagnostic:
    """Why one file (relative path) was not imported."""

    file: str
    reason: str


@attrs.frozen
class PlannedMemory:
    """One memory an import will save."""

    file: str
    key: str
    content: str
    category: str


@attrs.frozen
class ImportPlan:
    """The checked memories and the files that failed."""

    memories: tuple[PlannedMemory, ...]
    diagnostics: tuple[FileDiagnostic, ...]


@attrs.frozen
class ImportResult:
    """What an import did."""

    imported: int
    unchanged: int
    diagnostics: tuple[FileDiagnostic, ...]
    written: bool


@attrs.frozen
class ExportResult:
    """What an export wrote."""

    exported: int
    warnings: tuple[FileDiagnostic, ...]


def _plain(value: str) -> bool:
    return (
        value == value.strip()
        and bool(value)
        and not value.startswith('"')
        and not any(c in _LINE_BREAKS for c in value)
    )


def _file_name(key: str) -> str:
    name = f"{key}.md"
    return f"{key}_.md" if name.casefold() == INDEX_FILENAME.casefold() else name


def topic_text(record: MemoryRecord) -> str:
    """A record as a topic file (module docstring)."""
    document = record_document(record)
    description = " ".join(document.description.split())
    category = record.category if _plain(record.category) else json.dumps(record.category)
    return (
        f"---\nname: {record.key}\ndescription: {description}\ntype: {document.type.value}\n"
        f"category: {category}\n---\n{record.content}\n"
    )


def _check_target(directory: Path) -> None:
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise InvalidInput(f"export: {directory} exists and is not an empty directory")


def write_tree(records: list[MemoryRecord], directory: Path) -> tuple[FileDiagnostic, ...]:
    """Write ``records`` as a tree at ``directory`` (missing or empty): into a temporary
    sibling first, then renamed into place, so a failed export leaves nothing behind."""
    _check_target(directory)
    warnings = []
    parent = directory.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".memrecall-export-", dir=parent))
    try:
        index = ["# Memory index", ""]
        for record in records:
            name = _file_name(record.key)
            (staging / name).write_text(topic_text(record), encoding="utf-8", newline="\n")
            if record.content != js_trim(record.content.replace("\r\n", "\n")):
                warnings.append(FileDiagnostic(name, "content_changes_on_import"))
            description = " ".join(record_document(record).description.split())
            index.append(f"- [{record.key}]({name}): {description}")
        (staging / INDEX_FILENAME).write_text("\n".join(index) + "\n", encoding="utf-8")
        if directory.exists():
            directory.rmdir()
        os.replace(staging, directory)
    except BaseException:
        for path in staging.glob("*"):
            path.unlink()
        staging.rmdir()
        raise
    return tuple(warnings)


async def export_tree(
    service: MemoryService, user_id: str, scope: MemoryScope, directory: Path
) -> ExportResult:
    """Write the scope's active, unexpired records as a tree at ``directory``, which must
    not exist or be empty (:func:`write_tree`)."""
    await trio.to_thread.run_sync(_check_target, directory)
    records: list[MemoryRecord] = []
    after: str | None = None
    while True:
        page = await service.list_records(
            user_id, scopes=[scope], status=Status.ACTIVE, after=after, limit=1000
        )
        records.extend(page)
        if len(page) < 1000:
            break
        after = page[-1].memory_id
    now = service._now()
    records = sorted((r for r in records if not r.expired(now)), key=lambda r: r.key)
    warnings = await trio.to_thread.run_sync(write_tree, records, directory)
    return ExportResult(len(records), warnings)


def _topic_files(directory: Path) -> Iterator[tuple[str, Path | None, str | None]]:
    """``(relative path, path or None, problem or None)`` for each candidate file."""
    for root, dirs, files in os.walk(directory, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".md") or name == INDEX_FILENAME:
                continue
            path = Path(root) / name
            relative = path.relative_to(directory).as_posix()
            if path.is_symlink():
                yield relative, None, "symlink_not_followed"
            else:
                yield relative, path, None


def _read(path: Path) -> str:
    with path.open("rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise InvalidInput("too_large")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("not_utf8") from None


def _category(text: str, fallback: str) -> str:
    head = text.replace("\r\n", "\n").split("\n---", 1)[0]
    found = _CATEGORY.search(head)
    if found is None:
        return fallback
    value = js_trim(found.group(1))
    if value.startswith('"'):
        try:
            decoded = json.loads(value)
        except ValueError:
            return value
        if isinstance(decoded, str):
            return decoded
    return value


def plan_import(directory: Path) -> ImportPlan:
    """Parse and check every topic file below ``directory`` (no store access)."""
    if not directory.is_dir():
        raise InvalidInput(f"import: {directory} is not a directory")
    memories: list[PlannedMemory] = []
    diagnostics: list[FileDiagnostic] = []
    owners: dict[str, str] = {}
    for relative, path, problem in _topic_files(directory):
        if problem is not None or path is None:
            diagnostics.append(FileDiagnostic(relative, problem or "unreadable"))
            continue
        try:
            text = _read(path)
        except InvalidInput as exc:
            diagnostics.append(FileDiagnostic(relative, str(exc)))
            continue
        except OSError as exc:
            diagnostics.append(FileDiagnostic(relative, f"unreadable: {exc.strerror}"))
            continue
        parsed = parse_topic(text)
        if isinstance(parsed, ParseFailure):
            diagnostics.append(FileDiagnostic(relative, parsed.value))
            continue
        try:
            name = parsed.title if parsed.title != parsed.type.value else Path(relative).stem
            key = normalize_key(name)
            check_content(parsed.body)
            category = _category(text, parsed.type.value)
            check_category(category)
        except InvalidInput as exc:
            diagnostics.append(FileDiagnostic(relative, str(exc)))
            continue
        if key in owners:
            diagnostics.append(FileDiagnostic(relative, f"duplicate_key: also in {owners[key]}"))
            continue
        owners[key] = relative
        memories.append(PlannedMemory(relative, key, parsed.body, category))
    return ImportPlan(tuple(memories), tuple(diagnostics))


async def import_tree(
    service: MemoryService,
    user_id: str,
    scope: MemoryScope,
    directory: Path,
    *,
    skip_invalid: bool = False,
) -> ImportResult:
    """Import a tree into ``scope`` (module docstring). With diagnostics and without
    ``skip_invalid``, nothing is written (``written`` False)."""
    plan = await trio.to_thread.run_sync(plan_import, directory)
    diagnostics = list(plan.diagnostics)
    ready: list[PlannedMemory] = []
    for memory in plan.memories:
        existing = await trio.to_thread.run_sync(service.store.find_key, user_id, scope, memory.key)
        if existing is not None and (
            existing.content != memory.content or existing.category != memory.category
        ):
            diagnostics.append(FileDiagnostic(memory.file, "key_conflict: stored differently"))
            continue
        ready.append(memory)
    if diagnostics and not skip_invalid:
        return ImportResult(0, 0, tuple(diagnostics), written=False)
    imported = unchanged = 0
    for memory in ready:
        try:
            outcome = await service.save(
                user_id,
                scope,
                memory.key,
                memory.content,
                memory.category,
                changed_via=ChangedVia.MIGRATION,
            )
        except KeyConflict:
            diagnostics.append(FileDiagnostic(memory.file, "key_conflict: stored differently"))
            continue
        except InvalidInput as exc:
            diagnostics.append(FileDiagnostic(memory.file, str(exc)))
            continue
        if outcome.created:
            imported += 1
        else:
            unchanged += 1
    return ImportResult(imported, unchanged, tuple(diagnostics), written=True)
