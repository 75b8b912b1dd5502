"""The memory block put into the prompt (reference §9)."""

from __future__ import annotations

import pytest

from memrecall.engine.render import HEADER, age_days, age_text, render_block
from memrecall.engine.text import EMPTY_BODY_PLACEHOLDER
from memrecall.events.documents import MemoryDocument, MemoryType, Scope

DAY = 86_400.0
NOW = 1_750_000_000.0


def doc(
    title: str = "Deploy checklist",
    description: str = "Steps before a release",
    body: str = "Run the smoke tests first.",
    *,
    age: float = 0.0,
    relative_path: str = "project/deploy.md",
    path: str = "/memory/project/deploy.md",
) -> MemoryDocument:
    return MemoryDocument(
        scope=Scope.PROJECT,
        path=path,
        relative_path=relative_path,
        type=MemoryType.PROJECT,
        title=title,
        description=description,
        body=body,
        mtime=NOW - age,
    )


def document_lines(block: str) -> list[str]:
    """The lines after the header and usage note."""
    lines = block.split("\n")
    assert lines[0] == HEADER
    assert lines[1] == ""
    assert lines[2]  # the usage note
    assert lines[3] == ""
    return lines[4:]


def test_no_documents_render_nothing() -> None:
    assert render_block([], NOW) == ""


def test_header_and_fresh_document_layout() -> None:
    block = render_block([doc()], NOW)
    assert HEADER == "## Relevant memory"
    assert block.startswith("## Relevant memory\n\n")
    assert document_lines(block) == [
        "### Deploy checklist (project/deploy.md)",
        "Saved today.",
        "Steps before a release",
        "",
        "Run the smoke tests first.",
        "",
    ]


def test_heading_falls_back_to_the_basename() -> None:
    block = render_block([doc(relative_path="", path="/home/me/.qwen/memories/user/tz.md")], NOW)
    assert "### Deploy checklist (tz.md)" in block.split("\n")


def test_documents_keep_their_order() -> None:
    first = doc("First", relative_path="a.md")
    second = doc("Second", relative_path="b.md")
    headings = [
        line for line in render_block([second, first], NOW).split("\n") if line.startswith("###")
    ]
    assert headings == ["### Second (b.md)", "### First (a.md)"]


@pytest.mark.parametrize(
    ("age", "days", "text"),
    [
        (0.0, 0, "today"),
        (DAY - 1, 0, "today"),
        (-5 * DAY, 0, "today"),  # a future mtime is clamped
        (DAY, 1, "yesterday"),
        (2 * DAY - 0.001, 1, "yesterday"),
        (2 * DAY, 2, "2 days ago"),
        (30.9 * DAY, 30, "30 days ago"),
    ],
)
def test_age(age: float, days: int, text: str) -> None:
    assert age_days(NOW - age, NOW) == days
    assert age_text(days) == text
    assert f"Saved {text}." in render_block([doc(age=age)], NOW).split("\n")


def note_lines(block: str) -> list[str]:
    return [line for line in block.split("\n") if line.startswith("> NOTE:")]


@pytest.mark.parametrize("age", [0.0, DAY, 2 * DAY - 1])
def test_no_staleness_note_up_to_one_day(age: float) -> None:
    assert note_lines(render_block([doc(age=age)], NOW)) == []


def test_staleness_note_past_one_day() -> None:
    lines = document_lines(render_block([doc(age=3 * DAY + 5)], NOW))
    assert lines[:5] == [
        "### Deploy checklist (project/deploy.md)",
        "Saved 3 days ago.",
        "Steps before a release",
        "",
        "Run the smoke tests first.",
    ]
    assert lines[5] == ""
    assert lines[6].startswith("> NOTE:")
    assert "3 days" in lines[6]
    assert lines[7:] == [""]


def test_long_bodies_are_truncated_with_a_note() -> None:
    body = "a" * 1190 + " " * 20 + "tail"
    lines = document_lines(render_block([doc(body=body)], NOW))
    assert lines[4] == "a" * 1190  # first 1,200 units, right-trimmed
    assert lines[5] == ""
    assert lines[6].startswith("> NOTE:")
    assert lines[7:] == [""]
    assert "tail" not in "\n".join(lines)


def test_truncation_and_staleness_notes_both_appear() -> None:
    lines = document_lines(render_block([doc(body="b" * 1300, age=10 * DAY)], NOW))
    assert lines[4] == "b" * 1200
    assert [line for line in lines if line.startswith("> NOTE:")] == [lines[6], lines[8]]
    assert "10 days" in lines[8]


def test_body_of_exactly_the_window_is_not_truncated() -> None:
    lines = document_lines(render_block([doc(body="c" * 1200)], NOW))
    assert lines[4] == "c" * 1200
    assert lines[5:] == [""]


def test_truncation_counts_utf16_units() -> None:
    body = "a" * 1199 + "😀" + "b"
    lines = document_lines(render_block([doc(body=body)], NOW))
    assert lines[4] == "a" * 1199
    assert lines[6].startswith("> NOTE:")
    fitting = document_lines(render_block([doc(body="a" * 1198 + "😀")], NOW))
    assert fitting[4:] == ["a" * 1198 + "😀", ""]


@pytest.mark.parametrize(
    "body", ["", "   \n ", EMPTY_BODY_PLACEHOLDER, f" {EMPTY_BODY_PLACEHOLDER}\n"]
)
def test_empty_bodies_get_the_empty_text(body: str) -> None:
    lines = document_lines(render_block([doc(body=body)], NOW))
    assert lines[4] == "_No detailed entries yet._"
    assert EMPTY_BODY_PLACEHOLDER not in lines


def test_body_is_trimmed_and_empty_description_keeps_its_line() -> None:
    lines = document_lines(render_block([doc(description="", body="\n  kept  \n")], NOW))
    assert lines == ["### Deploy checklist (project/deploy.md)", "Saved today.", "", "", "kept", ""]


def test_two_documents_join_with_a_blank_line() -> None:
    block = render_block([doc("One"), doc("Two", age=5 * DAY)], NOW)
    lines = document_lines(block)
    second = lines.index("### Two (project/deploy.md)")
    assert lines[second - 1] == ""
    assert lines[:second] == [
        "### One (project/deploy.md)",
        "Saved today.",
        "Steps before a release",
        "",
        "Run the smoke tests first.",
        "",
    ]
    assert len(note_lines(block)) == 1
