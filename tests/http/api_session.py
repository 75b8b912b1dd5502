"""The curl session in docs/api.md, produced by running curl against a real server.

``uv run python -m tests.http.api_session`` prints the session; ``--write`` puts it into
docs/api.md between the ``curl-session`` markers. ``test_api_doc.py`` fails when the file
differs from a fresh run. The server here has a fixed clock and numbered ids so the output
is the same on every run; a real server stamps the time and gives 32 random hex digits.
"""

from __future__ import annotations

import itertools
import os
import shlex
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from memrecall.governance import ExecutionContext, ScopeType, WriteOrigin
from memrecall.store import MemoryService, SQLiteStore
from memrecall.store.governed import GovernedMemory, SaveResult

from .conftest import ALICE_TOKEN, ThreadedServer, threaded_server

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
START = "<!-- curl-session:start -->"
END = "<!-- curl-session:end -->"
SHOWN_URL = "http://127.0.0.1:8765"
NOW = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)


def _service(tmp: Path) -> MemoryService:
    counter = itertools.count(1)
    return MemoryService(
        SQLiteStore(tmp / "memory.db"), clock=lambda: NOW, ids=lambda: f"{next(counter):06x}"
    )


def _curl(
    server: ThreadedServer, method: str, path: str, body: str | None, *, auth: bool
) -> list[str]:
    """Run one curl command; returns the lines shown in the doc (command, status, body)."""
    command = f"curl -s -w '\\n%{{http_code}}\\n' -X {method}"
    if auth:
        command += ' -H "Authorization: Bearer $TOKEN"'
    if body is not None:
        command += f" -H 'Content-Type: application/json' -d {shlex.quote(body)}"
    command += f" {shlex.quote(SHOWN_URL + path)}"
    real = command.replace(SHOWN_URL, server.url)
    env = {**os.environ, "TOKEN": ALICE_TOKEN}
    done = subprocess.run(
        ["bash", "-c", real], capture_output=True, text=True, env=env, timeout=60, check=True
    )
    *body_lines, status = done.stdout.rstrip("\n").split("\n")
    return [f"$ {command}", *body_lines, f"# HTTP {status}"]


async def _propose(service: MemoryService, key: str, content: str) -> str:
    result = await GovernedMemory(service).save(
        ExecutionContext("alice"),
        key,
        content,
        "preference",
        ScopeType.GLOBAL,
        origin=WriteOrigin.MODEL_INFERRED,
    )
    assert isinstance(result, SaveResult)
    assert result.candidate is not None
    return result.candidate.candidate_id


def session() -> str:
    """The whole session as Markdown (a bash code block per step, with a heading)."""
    out: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, threaded_server(Path(tmp), _service) as server:

        def step(
            title: str, method: str, path: str, body: str | None = None, *, auth: bool = True
        ) -> None:
            out.extend([f"#### {title}", "", "```console"])
            out.extend(_curl(server, method, path, body, auth=auth))
            out.extend(["```", ""])

        mem = "/me/core-memories"
        step(
            "Create a memory (201)",
            "POST",
            mem,
            '{"key":"Preferred Editor","content":"Uses vim","category":"preference"}',
        )
        step(
            "Create in a workspace scope",
            "POST",
            mem,
            '{"key":"citation style","content":"APA 7","category":"writing",'
            '"scope_type":"workspace","workspace_type":"research"}',
        )
        step(
            "The same content again: idempotent (200)",
            "POST",
            mem,
            '{"key":"preferred editor","content":"Uses vim","category":"preference"}',
        )
        step(
            "Other content under a taken key (409)",
            "POST",
            mem,
            '{"key":"preferred editor","content":"Uses emacs","category":"preference"}',
        )
        step("List (paginated: limit, cursor)", "GET", mem + "?limit=1")
        step("Next page", "GET", mem + "?limit=1&cursor=000001")
        step("One memory", "GET", mem + "/000001")
        step(
            "Update at expected_revision",
            "PATCH",
            mem + "/000001",
            '{"content":"Uses neovim","expected_revision":1}',
        )
        step(
            "A stale expected_revision (409 with current_revision)",
            "PATCH",
            mem + "/000001",
            '{"content":"Uses helix","expected_revision":1}',
        )
        step("Versions", "GET", mem + "/000001/versions")
        step(
            "Restore version 1 as a new revision",
            "POST",
            mem + "/000001/versions/1/restore",
            '{"expected_revision":2}',
        )
        step("Suppress (hidden from recall)", "POST", mem + "/000001/suppress")
        step("Restore", "POST", mem + "/000001/restore")
        step(
            "A secret is refused (403, not echoed)",
            "POST",
            mem,
            '{"key":"db","content":"the database password is hunter2x9","category":"ops"}',
        )
        step("Forget for good", "DELETE", mem + "/000002")
        step("Gone (404)", "GET", mem + "/000002")
        first = server.call(_propose, server.service, "tea", "Likes green tea")
        second = server.call(_propose, server.service, "music", "Listens to jazz")
        step("Candidates an agent proposed (pending by default)", "GET", "/me/memory-candidates")
        step(
            "Accept with edits",
            "POST",
            f"/me/memory-candidates/{first}/accept",
            '{"content":"Likes green tea, no sugar","category":"food"}',
        )
        step("Reject", "POST", f"/me/memory-candidates/{second}/reject")
        step("Settings", "GET", "/me/memory-settings")
        step("Change a setting", "PATCH", "/me/memory-settings", '{"auto_extract_enabled":false}')
        step(
            "Legacy: upsert a global memory",
            "PUT",
            "/me/memories",
            '{"memory_key":"timezone","content":"Europe/Berlin","category":"profile"}',
        )
        step("Legacy: global memories only, old fields", "GET", "/me/memories")
        step("Legacy: forget by key (global only)", "DELETE", "/me/memories/timezone")
        step("No token (401)", "GET", "/me/memories", auth=False)
    return "\n".join(out).rstrip("\n") + "\n"


def replace_block(text: str, block: str) -> str:
    """``text`` with the session block between the markers replaced by ``block``."""
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{block}{END}{tail}"


if __name__ == "__main__":
    generated = session()
    if "--write" in sys.argv:
        DOC.write_text(replace_block(DOC.read_text(encoding="utf-8"), generated), "utf-8")
    else:
        print(generated, end="")
