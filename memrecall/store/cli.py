"""``memrecall memory``: manage one user's stored memories from the command line.

Every subcommand takes ``--db PATH`` or ``--db postgresql://...`` (default
:func:`~memrecall.store.sqlite.default_db_path`) and ``--user ID`` (``migrate`` takes
``--from PATH --to postgresql://...`` instead); ``--workspace TYPE`` where a scope applies
(omitted: global); ``--json`` prints exactly one JSON object on stdout. Errors are one line
on stderr (and, with ``--json``, one ``{"error": ...}`` object on stdout). Exit status: 0
done, 2 usage or invalid input, 3 conflict (stale ``--expected-revision``, a key stored
with other content, an import with problems), 4 not found (including forgotten). Every
write is one transaction: a failed command writes nothing.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import trio

from .model import (
    InvalidInput,
    KeyConflict,
    MemoryRecord,
    MemoryScope,
    MemoryVersion,
    NotFound,
    RevisionConflict,
    StoreError,
    WorkspaceType,
)
from .retrieval import SearchHit
from .service import MAX_SEARCH_LIMIT, MemoryService

__all__ = ["add_parser", "run"]

EXIT_USAGE = 2
EXIT_CONFLICT = 3
EXIT_NOT_FOUND = 4

Handler = Callable[[MemoryService, argparse.Namespace], Awaitable[dict[str, Any]]]


class CommandError(Exception):
    """A failure with its exit status and JSON payload."""

    def __init__(self, status: int, message: str, payload: dict[str, Any]) -> None:
        super().__init__(message)
        self.status = status
        self.payload = payload


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _scope(scope: MemoryScope) -> str:
    return "global" if scope.workspace is None else scope.workspace.value


def _record(record: MemoryRecord) -> dict[str, Any]:
    return {
        "memory_id": record.memory_id,
        "key": record.key,
        "content": record.content,
        "category": record.category,
        "scope": _scope(record.scope),
        "status": record.status.value,
        "source_type": record.source_type.value,
        "revision": record.revision,
        "created_at": _time(record.created_at),
        "updated_at": _time(record.updated_at),
        "last_confirmed_at": _time(record.last_confirmed_at),
        "review_after": _time(record.review_after),
        "expires_at": _time(record.expires_at),
    }


def _hit(hit: SearchHit) -> dict[str, Any]:
    return {
        "memory_id": hit.memory_id,
        "key": hit.key,
        "content": hit.content,
        "category": hit.category,
        "scope": _scope(hit.scope),
        "updated_at": _time(hit.updated_at),
        "truncated": hit.truncated,
        "exact_key": hit.exact_key,
        "review_due": hit.review_due,
    }


def _version(version: MemoryVersion) -> dict[str, Any]:
    return {
        "revision": version.revision,
        "content": version.content,
        "category": version.category,
        "scope": _scope(version.scope),
        "change_type": version.change_type.value,
        "changed_via": version.changed_via.value,
        "created_at": _time(version.created_at),
    }


def _scope_of(args: argparse.Namespace) -> MemoryScope:
    workspace: WorkspaceType | None = getattr(args, "workspace", None)
    return MemoryScope.global_() if workspace is None else MemoryScope.of_workspace(workspace)


# ---------------------------------------------------------------------- subcommands


async def _save(service: MemoryService, args: argparse.Namespace) -> dict[str, Any]:
    outcome = await service.save(args.user, _scope_of(args), args.key, args.content, args.category)
    record = outcome.record
    return {
        "memory_id": record.memory_id,
        "revision": record.revision,
        "status": record.status.value,
        "created": outcome.created,
        "key": record.key,
        "scope": _scope(record.scope),
    }


async def _search(service: MemoryService, args: argparse.Namespace) -> dict[str, Any]:
    result = await service.search(args.user, args.workspace, args.query, limit=args.limit)
    return {
        "results": [_hit(h) for h in result.hits],
        "memory_revision": result.memory_revision,
    }


async def _list(service: MemoryService, args: argparse.Namespace) -> dict[str, Any]:
    records: list[MemoryRecord] = []
    after: str | None = None
    while True:
        page = await service.list_records(
            args.user, scopes=[_scope_of(args)], after=after, limit=1000
        )
        records.extend(page)
        if len(page) < 1000:
            break
        after = page[-1].memory_id
    return {"records": [_record(r) for r in records]}


async def _show(service: MemoryService, args: argparse.Namespace) -> dict[str, Any]:
    return {"record": _record(await service.get(args.user, args.memory_id))}


async def _history(service: MemoryService, args: argparse.Namespace) -> dict[str, Any]:
    versions = await service.history(args.user, args.memory_id)
    return {"memory_id": args.memory_id, "versions": [_version(v) for v in versions]}


def _changed(record: MemoryRecord) -> dict[str, Any]:
    return {
        "memory_id": record.memory_id,
        "revision": record.revision,
        "status": record.status.value,
    }


async def _restore_version(service: MemoryService, args: argparse.Namespace) -> dict[str, Any]:
    record = await service.restore_version(
        args.user, args.memory_id, args.revision, expected_revision=args.expected_revision
    )
    return _changed(record)


async def _update(service: MemoryService, args: argparse.Namespace) -> dict[str, Any]:
    if args.content is None and args.category is None:
        raise InvalidInput("update: give --content and/or --category")
    record = await service.update(
        args.user,
        args.memory_id,
        expected_revision=args.expected_revision,
        content=args.content,
        category=args.category,
    )
    return _changed(record)


async def _suppress(service: MemoryService, args: argparse.Namespace) -> dict[str, Any]:
    return _changed(await service.suppress(args.user, args.memory_id))


async def _restore(service: MemoryService, args: argparse.Namespace) -> dict[str, Any]:
    return _changed(await service.restore(args.user, args.memory_id))


async def _forget(service: MemoryService, args: argparse.Namespace) -> dict[str, Any]:
    result = await service.forget(args.user, args.memory_id)
    return {
        "memory_id": args.memory_id,
        "forgotten": True,
        "final_revision": result.tombstone.final_revision,
        "scrubbed": result.scrubbed,
    }


async def _import_tree(service: MemoryService, args: argparse.Namespace) -> dict[str, Any]:
    from .treeio import import_tree

    result = await import_tree(
        service, args.user, _scope_of(args), Path(args.directory), skip_invalid=args.skip_invalid
    )
    payload = {
        "imported": result.imported,
        "unchanged": result.unchanged,
        "written": result.written,
        "diagnostics": [{"file": d.file, "reason": d.reason} for d in result.diagnostics],
    }
    if not result.written:
        count = len(result.diagnostics)
        raise CommandError(
            EXIT_CONFLICT,
            f"import-tree: {count} file(s) cannot be imported; nothing written "
            "(--skip-invalid imports the others)",
            {"error": "import_rejected", **payload},
        )
    return payload


async def _export_tree(service: MemoryService, args: argparse.Namespace) -> dict[str, Any]:
    from .treeio import export_tree

    result = await export_tree(service, args.user, _scope_of(args), Path(args.directory))
    return {
        "exported": result.exported,
        "directory": args.directory,
        "warnings": [{"file": w.file, "reason": w.reason} for w in result.warnings],
    }


# ---------------------------------------------------------------------- text output


def _text(command: str, payload: dict[str, Any]) -> str:
    if command == "search":
        lines = [
            f"{h['memory_id']}  {h['scope']}/{h['key']}  [{h['category']}]  {h['content']}"
            for h in payload["results"]
        ]
        return "\n".join(lines) if lines else "no memories matched"
    if command == "list":
        lines = [
            f"{r['memory_id']}  {r['scope']}/{r['key']}  r{r['revision']} {r['status']}"
            f"  {r['content'].splitlines()[0] if r['content'] else ''}"
            for r in payload["records"]
        ]
        return "\n".join(lines) if lines else "no memories"
    if command == "show":
        return "\n".join(f"{k}: {v}" for k, v in payload["record"].items())
    if command == "history":
        return "\n".join(
            f"r{v['revision']}  {v['change_type']}  {v['created_at']}  {v['content']}"
            for v in payload["versions"]
        )
    if command in ("import-tree", "export-tree"):
        lines = [f"{k}: {v}" for k, v in payload.items() if not isinstance(v, list)]
        for item in payload.get("diagnostics", []) + payload.get("warnings", []):
            lines.append(f"{item['file']}: {item['reason']}")
        return "\n".join(lines)
    return "  ".join(f"{k}={v}" for k, v in payload.items())


# ---------------------------------------------------------------------- wiring

_HANDLERS: dict[str, Handler] = {
    "save": _save,
    "search": _search,
    "list": _list,
    "show": _show,
    "history": _history,
    "restore-version": _restore_version,
    "update": _update,
    "suppress": _suppress,
    "restore": _restore,
    "forget": _forget,
    "import-tree": _import_tree,
    "export-tree": _export_tree,
}


def positive_int(text: str) -> int:
    """A whole number ≥ 1 (the package's argtypes rule; the store may not import the faces')."""
    try:
        value = int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def nonempty_path(text: str) -> str:
    """A path that is not empty (``""`` would silently mean the current directory)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path names no file or directory")
    return text


def _workspace(text: str) -> WorkspaceType:
    try:
        return WorkspaceType(text.strip().lower())
    except ValueError:
        names = ", ".join(w.value for w in WorkspaceType)
        raise argparse.ArgumentTypeError(f"{text!r} is not a workspace type ({names})") from None


def _text_arg(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def _limit(text: str) -> int:
    value = positive_int(text)
    if value > MAX_SEARCH_LIMIT:
        raise argparse.ArgumentTypeError(f"{value} is more than {MAX_SEARCH_LIMIT}")
    return value


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``memory`` and its subcommands on the top-level parser."""
    memory = sub.add_parser(
        "memory",
        help="manage stored memories (save, search, history, forget, import/export a tree)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = memory.add_subparsers(dest="memory_command", required=True)

    def command(name: str, help_text: str, *, scoped: bool = False) -> argparse.ArgumentParser:
        parser = commands.add_parser(name, help=help_text)
        parser.add_argument(
            "--db",
            type=nonempty_path,
            default=None,
            help="database file or postgresql:// URI (default: XDG data file)",
        )
        parser.add_argument("--user", required=True, type=_text_arg, help="the user id")
        if scoped:
            parser.add_argument(
                "--workspace",
                type=_workspace,
                default=None,
                help="workspace type (learning, teaching, research); omitted: global",
            )
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.set_defaults(func=run)
        return parser

    save = command("save", "save a memory", scoped=True)
    save.add_argument("--key", required=True, type=_text_arg)
    save.add_argument("--content", required=True, type=_text_arg)
    save.add_argument("--category", required=True, type=_text_arg)

    search = command("search", "retrieve memories (global, plus --workspace's)", scoped=True)
    search.add_argument("query", metavar="QUERY")
    search.add_argument("--limit", type=_limit, default=None, help="at most N hits (1-50)")

    command("list", "list the memories of one scope (any status)", scoped=True)
    for name, help_text in (
        ("show", "show one memory"),
        ("history", "every version of one memory"),
        ("suppress", "hide a memory from retrieval (restorable)"),
        ("restore", "make a suppressed memory active again"),
        ("forget", "delete a memory and its history for good"),
    ):
        command(name, help_text).add_argument("memory_id", metavar="ID")

    restore_version = command("restore-version", "copy an old version as a new revision")
    restore_version.add_argument("memory_id", metavar="ID")
    restore_version.add_argument("revision", metavar="REVISION", type=positive_int)
    restore_version.add_argument("--expected-revision", required=True, type=positive_int)

    update = command("update", "write a new revision")
    update.add_argument("memory_id", metavar="ID")
    update.add_argument("--content", type=_text_arg, default=None)
    update.add_argument("--category", type=_text_arg, default=None)
    update.add_argument("--expected-revision", required=True, type=positive_int)

    importer = command("import-tree", "import a memory tree's topic files", scoped=True)
    importer.add_argument("directory", metavar="DIR", type=nonempty_path)
    importer.add_argument(
        "--skip-invalid", action="store_true", help="import the good files, report the bad"
    )
    exporter = command("export-tree", "write one scope as a memory tree", scoped=True)
    exporter.add_argument("directory", metavar="DIR", type=nonempty_path)

    migrate = commands.add_parser(
        "migrate", help="copy a SQLite store into an empty PostgreSQL store, verified"
    )
    migrate.add_argument("--from", dest="source", required=True, metavar="PATH")
    migrate.add_argument("--to", dest="target", required=True, metavar="URI")
    migrate.add_argument("--json", action="store_true", help="print one JSON object")
    migrate.set_defaults(func=_migrate)


def _migrate(args: argparse.Namespace) -> int:
    """``memrecall memory migrate`` (:mod:`memrecall.store.postgres.copy`)."""
    from .postgres.copy import migrate_command

    return migrate_command(args.source, args.target, as_json=args.json)


def _failure(exc: BaseException) -> CommandError:
    if isinstance(exc, CommandError):
        return exc
    if isinstance(exc, RevisionConflict):
        return CommandError(
            EXIT_CONFLICT,
            f"revision conflict: expected {exc.expected}, the memory is at {exc.current_revision}",
            {"error": "revision_conflict", "current_revision": exc.current_revision},
        )
    if isinstance(exc, KeyConflict):
        return CommandError(
            EXIT_CONFLICT,
            f"key conflict: memory {exc.memory_id} (revision {exc.current_revision}) holds "
            "this key with other content; update it by id",
            {
                "error": "key_conflict",
                "memory_id": exc.memory_id,
                "current_revision": exc.current_revision,
            },
        )
    if isinstance(exc, NotFound):
        reason = "forgotten" if exc.forgotten else "not found"
        return CommandError(
            EXIT_NOT_FOUND,
            f"memory {exc.memory_id}: {reason}",
            {"error": "not_found", "memory_id": exc.memory_id, "forgotten": exc.forgotten},
        )
    if isinstance(exc, InvalidInput):
        return CommandError(EXIT_USAGE, str(exc), {"error": "invalid_input", "message": str(exc)})
    if isinstance(exc, StoreError):
        return CommandError(EXIT_USAGE, str(exc), {"error": "store_error", "message": str(exc)})
    raise exc


def run(args: argparse.Namespace) -> int:
    """Run one parsed ``memrecall memory`` subcommand; returns the exit status."""
    handler = _HANDLERS[args.memory_command]

    async def main() -> dict[str, Any]:
        service = MemoryService.open(args.db)
        try:
            return await handler(service, args)
        finally:
            service.close()

    try:
        payload = trio.run(main)
    except (StoreError, CommandError) as exc:
        failure = _failure(exc)
        print(f"memrecall memory {args.memory_command}: {failure}", file=sys.stderr)
        if args.json:
            print(json.dumps(failure.payload, ensure_ascii=False))
        return failure.status
    except (OSError, sqlite3.Error) as exc:
        print(f"memrecall memory {args.memory_command}: {exc}", file=sys.stderr)
        if args.json:
            print(json.dumps({"error": "os_error", "message": str(exc)}))
        return EXIT_USAGE
    if args.json:
        print(json.dumps(payload, ensure_ascii=False))
    else:
        print(_text(args.memory_command, payload))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``memrecall memory ...`` on its own (tests; the package CLI registers :func:`add_parser`)."""
    parser = argparse.ArgumentParser(prog="memrecall")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    args = parser.parse_args(argv)
    status: int = args.func(args)
    return status
