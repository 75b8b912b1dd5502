"""The management page in a real headless browser: what a person does on it, end to end.

Debian's Chromium (``/usr/bin/chromium``, installed by ``.ci/install-browser``; another path
with ``MEMRECALL_CHROMIUM``) is driven by Playwright's sync API against a real server on
loopback. The server runs in its own thread and trio run (``threaded_server``), so
Playwright's own asyncio loop in this thread never meets trio. Each test signs in on a new
tab and asserts on what the page shows, then on the store behind it.

Without a browser these tests skip, unless ``MEMRECALL_REQUIRE_BROWSER=1`` (CI) makes a
missing one a failure. ``MEMRECALL_SCREENSHOT=PATH`` writes the main view's screenshot to
PATH (``just screenshot`` regenerates ``docs/img/page.png``).
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Dialog, Locator, Page, expect, sync_playwright

from memrecall.governance import (
    CandidateStatus,
    ExecutionContext,
    MemorySettings,
    ScopeType,
    WriteOrigin,
)
from memrecall.store import MemoryRecord, MemoryScope, MemoryService, SQLiteStore, Status
from memrecall.store.governed import GovernedMemory, SaveKind, SaveResult
from memrecall.store.model import ChangeType, SourceType, WorkspaceType

from .conftest import ALICE_TOKEN, ThreadedServer, threaded_server

CHROMIUM = os.environ.get("MEMRECALL_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WAIT_MS = 20_000  # a bound for the page to show a result on a busy machine, not a sleep
GLOBAL = MemoryScope.global_()
ALICE = ExecutionContext("alice")

expect.set_options(timeout=WAIT_MS)


@pytest.fixture(scope="module")
def chromium() -> str:
    """The browser's path; skips without one (fails when CI requires it)."""
    if os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    message = f"no browser at {CHROMIUM} (run .ci/install-browser)"
    if os.environ.get("MEMRECALL_REQUIRE_BROWSER") == "1":
        pytest.fail(message + "; MEMRECALL_REQUIRE_BROWSER=1 requires it")
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser(chromium: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    """Headless Chromium with a fresh profile and a home of its own (never the user's), in
    UTC with a fixed locale so the page's times read the same everywhere."""
    root = tmp_path_factory.mktemp("chromium")
    env: dict[str, str | float | bool] = {
        **os.environ,
        "HOME": str(root / "home"),
        "XDG_CONFIG_HOME": str(root / "config"),
        "XDG_CACHE_HOME": str(root / "cache"),
    }
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            root / "profile",
            executable_path=chromium,
            headless=True,
            args=CHROMIUM_FLAGS,
            env=env,
            locale="en-GB",
            timezone_id="UTC",
            viewport={"width": 1100, "height": 900},
        )
        context.set_default_timeout(WAIT_MS)
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def live(tmp_path: Path) -> Iterator[ThreadedServer]:
    """A real server on loopback with alice and bob."""
    with threaded_server(tmp_path) as server:
        yield server


@pytest.fixture
def tab(browser: BrowserContext, live: ThreadedServer) -> Iterator[Page]:
    """A new tab (its own sessionStorage: nobody is signed in), closed before ``live``
    stops, so no request of the page's is cut off by the server going away."""
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    page.close()
    assert errors == [], f"the page's script failed: {errors}"


# ------------------------------------------------------------------ helpers


def sign_in(page: Page, server: ThreadedServer, token: str = ALICE_TOKEN) -> None:
    """Open the page and sign in with ``token``; waits until the page says so."""
    page.goto(server.url + "/")
    page.fill("#token", token)
    page.click("#signin-button")
    expect(page.locator("#status")).to_have_text("Signed in.")
    expect(page.locator("#main")).to_be_visible()


def memory(page: Page, memory_id: str) -> Locator:
    """The article showing one memory."""
    return page.locator(f'article.memory[data-memory-id="{memory_id}"]')


def save(server: ThreadedServer, key: str, content: str, user: str = "alice") -> MemoryRecord:
    """A global memory saved through the service (what the person already has)."""
    outcome = server.call(server.service.save, user, GLOBAL, key, content, "preference")
    return outcome.record


def find(server: ThreadedServer, key: str, scope: MemoryScope = GLOBAL) -> MemoryRecord | None:
    """Alice's memory under ``key`` as the store has it now."""
    return server.call(GovernedMemory(server.service).find_key, ALICE, scope, key)


def propose(server: ThreadedServer, key: str, content: str) -> str:
    """An agent infers a memory for alice: a pending candidate; returns its id."""
    result = server.call(
        functools.partial(
            GovernedMemory(server.service).save,
            ALICE,
            key,
            content,
            "preference",
            ScopeType.GLOBAL,
            origin=WriteOrigin.MODEL_INFERRED,
        )
    )
    assert isinstance(result, SaveResult)
    assert result.kind is SaveKind.PROPOSED
    assert result.candidate is not None
    return result.candidate.candidate_id


# ------------------------------------------------------------------ the stories


def test_a_wrong_token_is_refused_and_the_right_one_shows_only_my_memories(
    tab: Page, live: ThreadedServer
) -> None:
    mine = save(live, "editor", "uses vim")
    save(live, "editor", "uses emacs", user="bob")
    tab.goto(live.url + "/")
    tab.fill("#token", "not-a-token-0123456789")
    tab.click("#signin-button")
    expect(tab.locator("#status")).to_have_text("That token was not accepted.")
    expect(tab.locator("#main")).to_be_hidden()

    sign_in(tab, live)
    expect(tab.locator("#token")).to_have_value("")  # not left in the field
    expect(tab.locator("#token")).to_be_hidden()
    expect(tab.locator("article.memory")).to_have_count(1)
    article = memory(tab, mine.memory_id)
    expect(article.locator(".key")).to_have_text("editor")
    expect(article.locator(".content")).to_have_text("uses vim")
    expect(article.locator(".details")).to_contain_text("global · source: explicit · revision 1")
    assert "uses emacs" not in tab.locator("#main").inner_text()

    tab.click("#signout")
    expect(tab.locator("#main")).to_be_hidden()
    expect(tab.locator("#status")).to_have_text("Signed out.")
    expect(tab.locator("#token")).to_be_visible()


def test_remember_edit_and_a_conflict_shown_plainly(tab: Page, live: ThreadedServer) -> None:
    sign_in(tab, live)
    expect(tab.locator("#groups")).to_have_text("Nothing is remembered.")
    form = tab.locator("#new-memory")
    for key, content, scope in [("editor", "uses vim", "global"), ("lang", "Python", "learning")]:
        form.locator("[name=key]").fill(key)
        form.locator("[name=content]").fill(content)
        form.locator("[name=category]").fill("preference")
        form.locator("[name=scope]").select_option(scope)
        form.locator("button[type=submit]").click()
        expect(tab.locator("#status")).to_have_text("Remembered.")
        expect(tab.locator("#groups article.memory .key", has_text=key)).to_have_count(1)
    expect(tab.locator('#groups section[data-scope="global"] h3')).to_have_text("global (1)")
    learning = tab.locator('#groups section[data-scope="workspace: learning"]')
    expect(learning.locator("h3")).to_have_text("workspace: learning (1)")
    expect(learning.locator(".content")).to_have_text("Python")

    # other text under a taken key, and a secret: told why, and the typed text stays
    refusals = [
        ("editor", "uses emacs", "That key already holds other text: edit that memory instead."),
        ("db", "the database password is hunter2x9", "never saved"),
    ]
    for key, content, told in refusals:
        form.locator("[name=key]").fill(key)
        form.locator("[name=content]").fill(content)
        form.locator("[name=category]").fill("preference")
        form.locator("[name=scope]").select_option("global")
        form.locator("button[type=submit]").click()
        expect(tab.locator("#status")).to_contain_text(told)
        assert content not in tab.locator("#status").inner_text()
        expect(form.locator("[name=content]")).to_have_value(content)
    assert find(live, "db") is None
    expect(tab.locator("#groups article.memory")).to_have_count(2)

    record = find(live, "editor")
    assert record is not None
    assert (record.content, record.revision, record.source_type) == (
        "uses vim",
        1,
        SourceType.EXPLICIT,
    )
    in_workspace = find(live, "lang", MemoryScope.of_workspace(WorkspaceType.LEARNING))
    assert in_workspace is not None
    assert in_workspace.content == "Python"
    article = memory(tab, record.memory_id)

    article.locator("button.edit").click()
    editor = article.locator("form.editor")
    expect(editor.locator("[name=content]")).to_have_value("uses vim")
    editor.locator("[name=content]").fill("uses vim with tmux")
    editor.locator("button[type=submit]").click()
    expect(tab.locator("#status")).to_have_text("Saved.")
    expect(article.locator(".content")).to_have_text("uses vim with tmux")
    expect(article.locator(".details")).to_contain_text("revision 2")
    edited = find(live, "editor")
    assert edited is not None
    assert (edited.content, edited.revision) == ("uses vim with tmux", 2)

    # the person opens the editor; meanwhile another client changes the memory
    article.locator("button.edit").click()
    editor.locator("[name=content]").fill("uses neovim")
    live.call(
        functools.partial(
            live.service.update,
            "alice",
            record.memory_id,
            expected_revision=2,
            content="uses helix",
        )
    )
    editor.locator("button[type=submit]").click()
    conflict = editor.locator(".conflict")
    expect(conflict).to_be_visible()
    expect(conflict).to_contain_text("you edited revision 2, it is now revision 3")
    expect(conflict).to_contain_text("Your text was not saved")
    expect(editor.locator("[name=content]")).to_have_value("uses neovim")  # nothing typed is lost
    now = find(live, "editor")
    assert now is not None
    assert (now.content, now.revision) == ("uses helix", 3)
    versions = live.call(live.service.history, "alice", record.memory_id)
    assert "uses neovim" not in [v.content for v in versions]


def test_suppress_restore_and_bring_back_an_old_version(tab: Page, live: ThreadedServer) -> None:
    record = save(live, "editor", "uses vim")
    live.call(
        functools.partial(
            live.service.update, "alice", record.memory_id, expected_revision=1, content="uses ed"
        )
    )
    sign_in(tab, live)
    article = memory(tab, record.memory_id)
    toggle = article.locator("button.toggle")

    expect(toggle).to_have_text("Suppress")
    toggle.click()
    expect(tab.locator("#status")).to_have_text("Suppressed: agents no longer see it.")
    expect(article.locator(".status")).to_have_text("suppressed")
    expect(article).to_have_class("memory suppressed")
    stored = find(live, "editor")
    assert stored is not None
    assert stored.status is Status.SUPPRESSED
    expect(toggle).to_have_text("Restore")
    toggle.click()
    expect(tab.locator("#status")).to_have_text("Restored.")
    expect(article.locator(".status")).to_have_text("active")
    stored = find(live, "editor")
    assert stored is not None
    assert stored.status is Status.ACTIVE

    article.locator("button.history").click()
    versions = article.locator("ol.versions li")
    expect(versions).to_have_count(2)
    expect(versions.nth(0)).to_contain_text("revision 1 (create")
    expect(versions.nth(0)).to_contain_text("uses vim")
    expect(versions.nth(1).locator("button")).to_have_count(0)  # the current one
    # another client writes revision 3 while the page shows revision 2: refused, said plainly
    live.call(
        functools.partial(
            live.service.update, "alice", record.memory_id, expected_revision=2, content="uses ex"
        )
    )
    versions.nth(0).locator("button", has_text="Restore this version").click()
    expect(tab.locator("#status")).to_have_text(
        "This memory changed meanwhile (now revision 3); reload first."
    )
    assert len(live.call(live.service.history, "alice", record.memory_id)) == 3

    tab.reload()
    expect(article.locator(".details")).to_contain_text("revision 3")
    article.locator("button.history").click()
    expect(versions).to_have_count(3)
    versions.nth(0).locator("button", has_text="Restore this version").click()
    expect(tab.locator("#status")).to_have_text("Restored revision 1 as a new revision.")
    expect(article.locator(".content")).to_have_text("uses vim")
    expect(article.locator(".details")).to_contain_text("revision 4")
    history = live.call(live.service.history, "alice", record.memory_id)
    assert [(v.revision, v.content) for v in history] == [
        (1, "uses vim"),
        (2, "uses ed"),
        (3, "uses ex"),
        (4, "uses vim"),
    ]
    assert history[-1].change_type is ChangeType.RESTORE


def test_forget_asks_first_and_then_the_memory_is_gone(tab: Page, live: ThreadedServer) -> None:
    doomed = save(live, "editor", "uses vim")
    kept = save(live, "shell", "uses fish")
    sign_in(tab, live)
    messages: list[str] = []

    def answer(accept: bool) -> None:
        def handler(dialog: Dialog) -> None:
            messages.append(dialog.message)
            if accept:
                dialog.accept()
            else:
                dialog.dismiss()

        tab.once("dialog", handler)

    answer(accept=False)
    memory(tab, doomed.memory_id).locator("button.forget").click()
    expect(memory(tab, doomed.memory_id)).to_have_count(1)
    assert len(messages) == 1
    assert '"editor"' in messages[0]
    assert "cannot be undone" in messages[0]
    assert find(live, "editor") is not None

    answer(accept=True)
    memory(tab, doomed.memory_id).locator("button.forget").click()
    expect(tab.locator("#status")).to_have_text("Forgotten.")
    expect(memory(tab, doomed.memory_id)).to_have_count(0)
    expect(memory(tab, kept.memory_id)).to_have_count(1)
    expect(tab.locator('#groups section[data-scope="global"] h3')).to_have_text("global (1)")
    assert len(messages) == 2
    assert find(live, "editor") is None
    remaining = live.call(live.service.list_records, "alice")
    assert [r.memory_id for r in remaining] == [kept.memory_id]
    assert live.call(live.service.tombstone, "alice", doomed.memory_id) is not None

    tab.reload()  # still signed in (the tab's sessionStorage), and still gone
    expect(tab.locator("#status")).to_have_text("Signed in.")
    expect(memory(tab, kept.memory_id)).to_have_count(1)
    expect(memory(tab, doomed.memory_id)).to_have_count(0)


def test_the_inbox_accepts_an_edited_proposal_and_rejects_another(
    tab: Page, live: ThreadedServer
) -> None:
    accepted_id = propose(live, "timezone", "lives in Lisbon")
    rejected_id = propose(live, "editor", "likes emacs")
    sign_in(tab, live)
    expect(tab.locator("#inbox-count")).to_have_text("(2)")
    expect(tab.locator("#groups")).to_have_text("Nothing is remembered.")
    first = tab.locator(f'article.candidate[data-candidate-id="{accepted_id}"]')
    second = tab.locator(f'article.candidate[data-candidate-id="{rejected_id}"]')
    expect(first.locator("[name=content]")).to_have_value("lives in Lisbon")
    expect(first.locator(".details")).to_contain_text("create · global")

    first.locator("[name=content]").fill("lives in Porto")
    first.locator("button.accept").click()
    expect(tab.locator("#status")).to_have_text("Accepted.")
    expect(tab.locator("#inbox-count")).to_have_text("(1)")
    expect(first).to_have_count(0)
    shown = tab.locator("#groups article.memory")
    expect(shown).to_have_count(1)
    expect(shown.locator(".content")).to_have_text("lives in Porto")
    expect(shown.locator(".details")).to_contain_text("source: confirmed")
    record = find(live, "timezone")
    assert record is not None
    assert (record.content, record.source_type) == ("lives in Porto", SourceType.CONFIRMED)

    second.locator("button.reject").click()
    expect(tab.locator("#status")).to_have_text("Rejected: it will not be proposed again.")
    expect(tab.locator("#inbox-count")).to_have_text("(0)")
    assert find(live, "editor") is None
    decided = live.call(
        functools.partial(live.service.list_candidates, "alice", status=CandidateStatus.REJECTED)
    )
    assert [c.candidate_id for c in decided] == [rejected_id]


def test_the_settings_switches_are_saved(tab: Page, live: ThreadedServer) -> None:
    sign_in(tab, live)
    saved_box = tab.locator("#saved_memory_enabled")
    auto_box = tab.locator("#auto_extract_enabled")
    expect(saved_box).to_be_checked()
    expect(auto_box).to_be_checked()
    auto_box.uncheck()
    expect(tab.locator("#status")).to_have_text("Settings saved.")
    stored = live.call(live.service.get_settings, "alice")
    assert stored == MemorySettings(saved_memory_enabled=True, auto_extract_enabled=False)
    tab.reload()
    expect(tab.locator("#status")).to_have_text("Signed in.")
    expect(auto_box).not_to_be_checked()
    expect(saved_box).to_be_checked()


# ------------------------------------------------------------------ the screenshot in docs/

SCENE_TIME = datetime(2026, 11, 30, 9, 15, tzinfo=UTC)


def _scene_service(tmp: Path) -> MemoryService:
    """A fixed clock and numbered ids: the same picture on every run."""
    counter = itertools.count(1)
    return MemoryService(
        SQLiteStore(tmp / "memory.db"),
        clock=lambda: SCENE_TIME,
        ids=lambda: f"{next(counter):06x}",
    )


def _scene(server: ThreadedServer) -> None:
    """A person's memories as the docs show them: two scopes, a suppressed one, a proposal."""
    svc = server.service
    save(server, "editor", "Uses vim with tmux; prefers dark themes.")
    hidden = save(server, "coffee", "Drinks oat-milk flat whites.")
    server.call(functools.partial(svc.suppress, "alice", hidden.memory_id))
    server.call(
        functools.partial(
            svc.save,
            "alice",
            MemoryScope.of_workspace(WorkspaceType.LEARNING),
            "language_goal",
            "Learning Portuguese (European), aiming for B2 by summer.",
            "goal",
        )
    )
    propose(server, "timezone", "Lives in Lisbon (Europe/Lisbon).")


def test_main_view_screenshot(browser: BrowserContext, tmp_path: Path) -> None:
    """The main view with a scene in it; ``MEMRECALL_SCREENSHOT=PATH`` keeps the picture."""
    with threaded_server(tmp_path, _scene_service) as server:
        _scene(server)
        page = browser.new_page()
        try:
            sign_in(page, server)
            expect(page.locator("#inbox-count")).to_have_text("(1)")
            expect(page.locator("#groups section")).to_have_count(2)
            expect(page.locator("article.memory.suppressed")).to_have_count(1)
            png = page.screenshot(full_page=True)
        finally:
            page.close()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    target = os.environ.get("MEMRECALL_SCREENSHOT")
    if target:
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        Path(target).write_bytes(png)
