from __future__ import annotations

import pytest

from memrecall.events import MemoryType
from memrecall.sources.frontmatter import ParsedTopic, ParseFailure, parse_topic


def topic(front: str, body: str = "Body text.") -> str:
    return f"---\n{front}\n---\n\n{body}\n"


def test_all_fields() -> None:
    parsed = parse_topic(topic("name: Deploy\ndescription: How we ship\ntype: project"))
    assert parsed == ParsedTopic(MemoryType.PROJECT, "Deploy", "How we ship", "Body text.")


def test_title_falls_back_to_title_key_then_type() -> None:
    by_title = parse_topic(topic("title: From title\ntype: user"))
    assert isinstance(by_title, ParsedTopic)
    assert by_title.title == "From title"
    bare = parse_topic(topic("type: reference"))
    assert isinstance(bare, ParsedTopic)
    assert bare.title == "reference"
    assert bare.description == ""


def test_name_wins_over_title_and_empty_name_falls_back() -> None:
    both = parse_topic(topic("title: T\nname: N\ntype: user"))
    assert isinstance(both, ParsedTopic)
    assert both.title == "N"
    blank = parse_topic(topic("name:   \ntitle: T\ntype: user"))
    assert isinstance(blank, ParsedTopic)
    assert blank.title == "T"


def test_crlf_is_tolerated() -> None:
    text = "---\r\nname: Win\r\ntype: feedback\r\n---\r\nLine one\r\nLine two\r\n"
    parsed = parse_topic(text)
    assert isinstance(parsed, ParsedTopic)
    assert parsed.title == "Win"
    assert parsed.body == "Line one\nLine two"


def test_values_are_literal_no_yaml() -> None:
    parsed = parse_topic(topic('name: "Quoted: yes"\ndescription: a # not a comment\ntype: user'))
    assert isinstance(parsed, ParsedTopic)
    assert parsed.title == '"Quoted: yes"'
    assert parsed.description == "a # not a comment"


def test_first_matching_line_wins_and_key_must_start_line() -> None:
    parsed = parse_topic(topic(" name: indented\nname: first\nname: second\ntype: user"))
    assert isinstance(parsed, ParsedTopic)
    assert parsed.title == "first"


def test_value_never_crosses_a_newline() -> None:
    parsed = parse_topic(topic("name:\ndescription: d\ntype: user"))
    assert isinstance(parsed, ParsedTopic)
    assert parsed.title == "user"


def test_type_surrounding_space_is_trimmed() -> None:
    parsed = parse_topic(topic("type:   feedback  "))
    assert isinstance(parsed, ParsedTopic)
    assert parsed.type is MemoryType.FEEDBACK


@pytest.mark.parametrize(
    ("text", "failure"),
    [
        ("just a note\n", ParseFailure.NO_FRONTMATTER),
        ("---\nname: x\ntype: user\n", ParseFailure.NO_FRONTMATTER),
        ("\ufeff---\nname: x\ntype: user\n---\nbody", ParseFailure.NO_FRONTMATTER),
        (" ---\ntype: user\n---\nbody", ParseFailure.NO_FRONTMATTER),
        ("---\nname: x\n---\nbody", ParseFailure.MISSING_TYPE),
        ("---\ntype: User\n---\nbody", ParseFailure.UNKNOWN_TYPE),
        ("---\ntype: team\n---\nbody", ParseFailure.UNKNOWN_TYPE),
        ("---\ntypes: user\n---\nbody", ParseFailure.MISSING_TYPE),
    ],
)
def test_failures(text: str, failure: ParseFailure) -> None:
    assert parse_topic(text) is failure


def test_frontmatter_ends_at_first_closing_marker_and_body_is_trimmed() -> None:
    parsed = parse_topic("---\ntype: user\n---\n\n  body\n---\nname: not front\n\n")
    assert isinstance(parsed, ParsedTopic)
    assert parsed.title == "user"
    assert parsed.body == "body\n---\nname: not front"


def test_closing_marker_without_newline_and_empty_body() -> None:
    parsed = parse_topic("---\ntype: user\n---")
    assert isinstance(parsed, ParsedTopic)
    assert parsed.body == ""
