"""Docs that are generated from code or that show runnable code stay true."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memrecall.engine.plan import transition_table

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_architecture_embeds_the_current_transition_table() -> None:
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    block = re.search(
        r"<!-- transition-table:start -->\n(.*)<!-- transition-table:end -->", text, re.DOTALL
    )
    assert block is not None
    assert block.group(1) == transition_table(), "regenerate the table in docs/architecture.md"


def test_the_embedding_example_runs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (DOCS / "embedding.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.DOTALL)
    assert code is not None
    monkeypatch.chdir(DOCS.parent)
    exec(compile(code.group(1), "docs/embedding.md", "exec"), {"__name__": "__main__"})
    out = capsys.readouterr().out
    assert "append after the tool output" in out
    assert "phase=<Phase.REFINED" in out
