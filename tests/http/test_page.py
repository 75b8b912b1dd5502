"""The management page's files: served with a strict policy, talking only to documented routes.

The page is plain HTML/JS. These check what can be checked without a browser; what a
person does on the page is driven in headless Chromium by ``test_browser_page.py``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from importlib import resources

import pytest

from memrecall.http.openapi import OPERATIONS
from memrecall.http.page import CSP

from .conftest import Server

APP_JS = (resources.files("memrecall.http") / "page" / "app.js").read_text(encoding="utf-8")


async def test_the_page_and_its_files_are_served_with_a_strict_policy(server: Server) -> None:
    page = await server.anonymous.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == CSP
    assert "script-src 'self'" in CSP
    assert "unsafe-inline" not in CSP
    assert page.headers["x-frame-options"] == "DENY"
    for src in re.findall(r'(?:src|href)="(/page/[^"]+)"', page.text):
        asset = await server.anonymous.get(src)
        assert asset.status_code == 200, src
        assert asset.headers["x-content-type-options"] == "nosniff"
    js = await server.anonymous.get("/page/app.js")
    assert js.headers["content-type"].startswith("text/javascript")
    assert "<script>" not in page.text  # no inline script: the policy would block it


def test_the_script_never_renders_user_text_as_html() -> None:
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in APP_JS, sink


def test_the_script_uses_only_documented_paths_and_every_formal_one() -> None:
    literals = re.findall(r"[`\"](/me/[^`\"?]*)", APP_JS)
    used = {re.sub(r"\$\{[^}]+\}", "{x}", path) for path in literals}
    documented = {re.sub(r"\{[a-z_]+\}", "{x}", op.path) for op in OPERATIONS}
    assert used <= documented, used - documented
    formal = {p for p in documented if not p.startswith("/me/memories")}
    assert formal <= used, formal - used


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_the_script_parses() -> None:
    path = resources.files("memrecall.http") / "page" / "app.js"
    subprocess.run(["node", "--check", str(path)], check=True, timeout=60)
