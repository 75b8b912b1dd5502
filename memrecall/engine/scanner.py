"""Read a memory tree: every ``*.md`` below each root except ``MEMORY.md``.

The scanner does file I/O but no trio and no clock: it is called from a worker
thread by the actors, and directly by the CLI and the tests. Bad input never
stops a scan: each problem becomes a :class:`Diagnostic` (path + reason) and
the scan goes on. Files are opened read-only; nothing on disk is modified.

Order of the result: project documents by mtime descending, then user
documents by mtime descending; ties by relative path, then by root order.
There is no document cap.
"""

from __future__ import annotations

import enum
import errno
import os
import stat

import attrs

from memrecall.events.documents import MemoryDocument, Scope

from .frontmatter import ParseFailure, parse_topic

__all__ = [
    "INDEX_FILENAME",
    "MAX_FILE_BYTES",
    "Diagnostic",
    "DiagnosticKind",
    "MemoryTree",
    "Root",
    "ScanResult",
    "TopicFile",
    "list_topic_files",
    "read_topic_file",
    "scan_tree",
]

INDEX_FILENAME = "MEMORY.md"
"""The generated navigation index; recall never reads it (at any depth)."""

MAX_FILE_BYTES = 1024 * 1024
"""Topic files are about a kilobyte; anything past this cap is reported, not read."""


class DiagnosticKind(enum.StrEnum):
    """What went wrong with one path."""

    NO_FRONTMATTER = "no_frontmatter"
    MISSING_TYPE = "missing_type"
    UNKNOWN_TYPE = "unknown_type"
    INVALID_UTF8 = "invalid_utf8"
    TOO_LARGE = "too_large"
    UNREADABLE = "unreadable"
    VANISHED = "vanished"
    BROKEN_LINK = "broken_link"
    SYMLINK_LOOP = "symlink_loop"
    MISSING_ROOT = "missing_root"
    NOT_A_DIRECTORY = "not_a_directory"


@attrs.frozen
class Diagnostic:
    """One problem found while scanning. ``skipped`` is False when the file was still used."""

    path: str
    kind: DiagnosticKind
    detail: str
    skipped: bool = True

    def __str__(self) -> str:
        action = "skipped" if self.skipped else "used anyway"
        return f"{self.path}: {self.kind.value} ({self.detail}); {action}"


@attrs.frozen
class Root:
    """One scope root directory."""

    scope: Scope
    path: str


@attrs.frozen
class MemoryTree:
    """An ordered list of scope roots: project roots first, then user roots."""

    roots: tuple[Root, ...]

    @classmethod
    def of(cls, *, project: str | None = None, user: str | None = None) -> MemoryTree:
        """The usual tree: an optional project root and an optional user root."""
        roots = []
        if project is not None:
            roots.append(Root(Scope.PROJECT, os.path.abspath(project)))
        if user is not None:
            roots.append(Root(Scope.USER, os.path.abspath(user)))
        return cls(tuple(roots))


@attrs.frozen
class TopicFile:
    """A candidate topic file found by the listing."""

    root_index: int
    scope: Scope
    path: str
    relative_path: str


@attrs.frozen
class ScanResult:
    """Documents in recall order, and every diagnostic in listing order."""

    documents: tuple[MemoryDocument, ...]
    diagnostics: tuple[Diagnostic, ...]


_PARSE_DETAIL = {
    ParseFailure.NO_FRONTMATTER: "no '---' frontmatter block at the start of the file",
    ParseFailure.MISSING_TYPE: "frontmatter has no 'type:' line",
    ParseFailure.UNKNOWN_TYPE: "'type:' is not one of user, feedback, project, reference",
}


def _listing_error(path: str, exc: OSError) -> Diagnostic:
    if isinstance(exc, FileNotFoundError):
        return Diagnostic(path, DiagnosticKind.VANISHED, "disappeared during the scan")
    if exc.errno == errno.ELOOP:
        return Diagnostic(path, DiagnosticKind.SYMLINK_LOOP, "too many levels of symbolic links")
    return Diagnostic(path, DiagnosticKind.UNREADABLE, exc.strerror or type(exc).__name__)


def list_topic_files(tree: MemoryTree) -> tuple[list[TopicFile], list[Diagnostic]]:
    """Find every topic file below every root, sorted by relative path within a root."""
    files: list[TopicFile] = []
    diagnostics: list[Diagnostic] = []
    for index, root in enumerate(tree.roots):
        try:
            info = os.stat(root.path)
        except FileNotFoundError:
            diagnostics.append(
                Diagnostic(root.path, DiagnosticKind.MISSING_ROOT, f"{root.scope} root not found")
            )
            continue
        except OSError as exc:
            diagnostics.append(_listing_error(root.path, exc))
            continue
        if not stat.S_ISDIR(info.st_mode):
            diagnostics.append(
                Diagnostic(root.path, DiagnosticKind.NOT_A_DIRECTORY, f"{root.scope} root")
            )
            continue
        found: list[TopicFile] = []
        visited = {(info.st_dev, info.st_ino)}
        pending = [(root.path, "")]
        while pending:
            directory, prefix = pending.pop()
            try:
                with os.scandir(directory) as entries:
                    listing = list(entries)
            except OSError as exc:
                diagnostics.append(_listing_error(directory, exc))
                continue
            for entry in listing:
                relative = prefix + entry.name
                try:
                    is_dir = entry.is_dir()
                    is_file = not is_dir and entry.is_file()
                except OSError as exc:
                    diagnostics.append(_listing_error(entry.path, exc))
                    continue
                if is_dir:
                    try:
                        dir_info = entry.stat()
                    except OSError as exc:
                        diagnostics.append(_listing_error(entry.path, exc))
                        continue
                    key = (dir_info.st_dev, dir_info.st_ino)
                    if key in visited:
                        diagnostics.append(
                            Diagnostic(
                                entry.path,
                                DiagnosticKind.SYMLINK_LOOP,
                                "directory already scanned through another path",
                            )
                        )
                        continue
                    visited.add(key)
                    pending.append((entry.path, relative + "/"))
                elif entry.name.endswith(".md") and entry.name != INDEX_FILENAME:
                    if is_file:
                        found.append(TopicFile(index, root.scope, entry.path, relative))
                    elif entry.is_symlink():
                        diagnostics.append(
                            Diagnostic(
                                entry.path, DiagnosticKind.BROKEN_LINK, "symlink target missing"
                            )
                        )
        found.sort(key=lambda f: f.relative_path)
        files.extend(found)
    return files, diagnostics


def read_topic_file(
    topic: TopicFile, *, max_bytes: int = MAX_FILE_BYTES
) -> tuple[MemoryDocument | None, list[Diagnostic]]:
    """Read and parse one file; never raises for a bad file."""
    try:
        with open(topic.path, "rb") as handle:
            info = os.fstat(handle.fileno())
            if info.st_size > max_bytes:
                data = b""
                oversized = True
            else:
                data = handle.read(max_bytes + 1)
                oversized = len(data) > max_bytes
    except OSError as exc:
        return None, [_listing_error(topic.path, exc)]
    if oversized:
        detail = f"larger than the {max_bytes}-byte cap; not read"
        return None, [Diagnostic(topic.path, DiagnosticKind.TOO_LARGE, detail)]
    diagnostics: list[Diagnostic] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        detail = f"invalid UTF-8 at byte {exc.start}; bad bytes shown as U+FFFD, file untouched"
        diagnostics.append(Diagnostic(topic.path, DiagnosticKind.INVALID_UTF8, detail, False))
    parsed = parse_topic(text)
    if isinstance(parsed, ParseFailure):
        detail = _PARSE_DETAIL[parsed]
        if parsed is ParseFailure.NO_FRONTMATTER and text.startswith("\ufeff"):
            detail += " (the file starts with a byte-order mark)"
        diagnostics.append(Diagnostic(topic.path, DiagnosticKind(parsed.value), detail))
        return None, diagnostics
    document = MemoryDocument(
        scope=topic.scope,
        path=topic.path,
        relative_path=topic.relative_path,
        type=parsed.type,
        title=parsed.title,
        description=parsed.description,
        body=parsed.body,
        mtime=info.st_mtime,
    )
    return document, diagnostics


def recall_order(documents: list[tuple[int, MemoryDocument]]) -> list[MemoryDocument]:
    """Project before user; within a scope mtime descending, then relative path, then root."""
    scope_rank = {Scope.PROJECT: 0, Scope.USER: 1}
    documents.sort(
        key=lambda item: (scope_rank[item[1].scope], -item[1].mtime, item[1].relative_path, item[0])
    )
    return [document for _, document in documents]


def scan_tree(tree: MemoryTree, *, max_bytes: int = MAX_FILE_BYTES) -> ScanResult:
    """Scan every root of ``tree``; the result is in recall order."""
    files, diagnostics = list_topic_files(tree)
    read: list[tuple[int, MemoryDocument]] = []
    for topic in files:
        document, problems = read_topic_file(topic, max_bytes=max_bytes)
        diagnostics.extend(problems)
        if document is not None:
            read.append((topic.root_index, document))
    return ScanResult(tuple(recall_order(read)), tuple(diagnostics))
