"""Key normalisation rules and input checks (memrecall.store.keys)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memrecall.store import InvalidInput, KeyConflict, MemoryService, normalize_key
from memrecall.store.keys import MAX_KEY_CHARS, check_content

from .helpers import GLOBAL


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Preferred Editor", "preferred_editor"),
        ("preferred-editor", "preferred_editor"),
        ("  PREFERRED__EDITOR!! ", "preferred_editor"),
        ("research:project-42:goal", "research_project_42_goal"),
        ("Straße", "strasse"),
        ("ＦＵＬＬ width", "full_width"),
        ("饮食 偏好", "饮食_偏好"),
    ],
)
def test_examples(raw: str, expected: str) -> None:
    assert normalize_key(raw) == expected


@pytest.mark.parametrize("raw", ["", "   ", "__--::", "x" * (MAX_KEY_CHARS + 1)])
def test_refused(raw: str) -> None:
    with pytest.raises(InvalidInput):
        normalize_key(raw)


@given(st.text(min_size=1, max_size=40))
def test_normal_form_is_stable(raw: str) -> None:
    try:
        key = normalize_key(raw)
    except InvalidInput:
        return
    assert normalize_key(key) == key
    assert not key.startswith("_")
    assert not key.endswith("_")
    assert "__" not in key
    assert key == key.casefold()


def test_content_checks() -> None:
    for bad in ("", "  \n", "a\x00b", "\ud800", "x" * 9000):
        with pytest.raises(InvalidInput):
            check_content(bad)
    check_content("  kept exactly, with spaces  ")


async def test_service_applies_the_rules(service: MemoryService) -> None:
    first = await service.save("u1", GLOBAL, "Preferred Editor", "  vim, always  ", "tools")
    assert first.record.key == "preferred_editor"
    assert first.record.content == "  vim, always  "  # stored as written
    same = await service.save("u1", GLOBAL, "preferred-editor", "  vim, always  ", "tools")
    assert not same.created
    with pytest.raises(KeyConflict):
        await service.save("u1", GLOBAL, "PREFERRED_EDITOR", "emacs", "tools")
    with pytest.raises(InvalidInput):
        await service.save("", GLOBAL, "k", "c", "tools")
    with pytest.raises(InvalidInput):
        await service.save("u1", GLOBAL, "k", "c", "")
