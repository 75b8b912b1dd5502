"""docs/api.md's curl session is what curl gets from a real server today."""

from __future__ import annotations

import re
import shutil

import pytest

from .api_session import DOC, END, START, session


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_the_curl_session_in_docs_is_current() -> None:
    text = DOC.read_text(encoding="utf-8")
    current = text.split(START, 1)[1].split(END, 1)[0].lstrip("\n")
    assert current == session(), "run: uv run python -m tests.http.api_session --write"


def test_every_endpoint_has_a_curl_example() -> None:
    from memrecall.http.openapi import OPERATIONS

    lines = [
        line
        for line in DOC.read_text(encoding="utf-8").split(START, 1)[1].splitlines()
        if line.startswith("$ curl")
    ]
    for op in OPERATIONS:
        path = re.sub(r"\\{[a-z_]+\\}", "[^/?' ]+", re.escape(op.path))
        pattern = re.compile(f"-X {op.method.upper()} .*8765{path}(['? ]|$)")
        assert any(pattern.search(line) for line in lines), (op.method, op.path)
