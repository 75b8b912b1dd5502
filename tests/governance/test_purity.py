"""The governance package stays pure: no I/O modules, no clock reads, no randomness."""

from __future__ import annotations

import ast
from pathlib import Path

import memrecall.governance

PACKAGE = Path(memrecall.governance.__file__).parent
FORBIDDEN_MODULES = {"os", "io", "sqlite3", "trio", "time", "pathlib", "random", "socket", "shutil"}
FORBIDDEN_CALLS = {"now", "utcnow", "today", "open", "time", "monotonic"}


def test_no_module_imports_io_or_reads_the_clock() -> None:
    for path in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                names = {(node.module or "").split(".")[0]}
            else:
                names = set()
            assert not names & FORBIDDEN_MODULES, (path.name, names)
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                assert name not in FORBIDDEN_CALLS, (path.name, name, node.lineno)
