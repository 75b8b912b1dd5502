"""The stable instruction text for a model that has the memory tools.

It never changes with the store's contents, so a runtime can put it in a
cached system prompt (and an MCP server can serve it as a prompt).
"""

from __future__ import annotations

__all__ = ["MEMORY_INSTRUCTIONS"]

MEMORY_INSTRUCTIONS = """\
You have a long-term memory that outlives this conversation.

When to recall: before you investigate a problem, change a project's setup, or answer a
question about the user, their preferences or earlier work, call memory_recall with a few
specific words. Read the match column: strong means a memory is about your query, weak means
it may be, none means it is not. Call memory_expand with the ids you need; recall never
returns bodies.

When to remember: after you learn something that will matter in a later conversation (a fact
about the project, a lesson from a mistake, a preference the user stated, where to find
something), call memory_remember once, with a specific one-line title, the full detail in
body, a few reusable lower-case tags and the source. Do not store secrets, credentials or
anything the user asked you to forget. If a write is refused, follow the fix it gives.

How to choose a scope: a memory that only holds in one project gets scope project:<name>;
one that holds everywhere (a user preference, a general lesson) gets no scope, which means
global. When recalling inside a project, pass the same scope: you get that project's
memories plus the global ones.
"""
