"""docs/mcp.md holds a transcript captured from a real session; it must stay current."""

from __future__ import annotations

from pathlib import Path

from memrecall.mcp.transcript import capture

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"


async def test_docs_transcript_matches_a_fresh_capture(tmp_path: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("<!-- transcript:start -->\n") + len("<!-- transcript:start -->\n")
    end = text.index("\n<!-- transcript:end -->")
    assert text[start:end] == await capture(tmp_path)
