"""Tool descriptions stay short, and docs/tools.md carries the reference they point to."""

from __future__ import annotations

import re
from pathlib import Path

from memrecall.tools.contract.constants import RECALL_COLUMNS
from memrecall.tools.contract.descriptions import (
    DESCRIPTION_MAX_CHARS,
    RECALL_REFERENCE,
    REFERENCE_DOC,
    TOOL_DESCRIPTIONS,
    reference_markdown,
)
from memrecall.tools.contract.instructions import MEMORY_INSTRUCTIONS

ROOT = Path(__file__).resolve().parents[2]


def test_the_four_descriptions_are_short_and_point_to_the_reference() -> None:
    assert set(TOOL_DESCRIPTIONS) == {
        "memory_remember",
        "memory_recall",
        "memory_expand",
        "memory_prune",
    }
    for text in TOOL_DESCRIPTIONS.values():
        assert len(text) <= DESCRIPTION_MAX_CHARS
        assert REFERENCE_DOC in text
    recall = TOOL_DESCRIPTIONS["memory_recall"]
    assert len(recall) <= 300
    assert "|".join(RECALL_COLUMNS) in recall
    assert "never the body" in recall
    assert "memory_expand" in recall


def test_the_reference_document_embeds_the_current_reference() -> None:
    text = (ROOT / REFERENCE_DOC).read_text(encoding="utf-8")
    block = re.search(
        r"<!-- tool-reference:start -->\n(.*)<!-- tool-reference:end -->", text, re.DOTALL
    )
    assert block is not None
    assert block.group(1) == reference_markdown(), "regenerate the block in docs/tools.md"
    for rule in RECALL_REFERENCE:
        assert f"- {rule}\n" in block.group(1)
    for description in TOOL_DESCRIPTIONS.values():
        assert description in block.group(1)


def test_the_instructions_cover_recall_remember_and_scope() -> None:
    for needle in ("memory_recall", "memory_remember", "memory_expand", "project:<name>", "global"):
        assert needle in MEMORY_INSTRUCTIONS
