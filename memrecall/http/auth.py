"""Bearer tokens for the management API: configured server-side, kept only as hashes.

A token table maps the SHA-256 of each token to the user id it authenticates. The plain
tokens are never kept: :meth:`TokenTable.user_for` hashes the presented token and compares it
with **every** stored hash using :func:`hmac.compare_digest`, without stopping at a match, so
the time taken does not say which entry (or how much of one) matched.

Tokens come from ``--token TOKEN=USER_ID`` (repeatable) or a token file holding one
``TOKEN=USER_ID`` per line (blank lines and lines starting with ``#`` are skipped).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from pathlib import Path

import attrs

__all__ = ["MIN_TOKEN_LENGTH", "TokenError", "TokenTable", "parse_token_spec"]

MIN_TOKEN_LENGTH = 16
_MAX_USER_ID = 128


class TokenError(ValueError):
    """A token specification the server refuses (the message says why, never the token)."""


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def parse_token_spec(spec: str) -> tuple[str, str]:
    """Split ``TOKEN=USER_ID`` and check both halves; returns ``(token, user_id)``."""
    token, sep, user_id = spec.strip().rpartition("=")
    if not sep:
        raise TokenError("a token is given as TOKEN=USER_ID")
    if len(token) < MIN_TOKEN_LENGTH:
        raise TokenError(f"a token needs at least {MIN_TOKEN_LENGTH} characters")
    if any(c.isspace() for c in token):
        raise TokenError("a token cannot contain whitespace")
    if not user_id or len(user_id) > _MAX_USER_ID or any(c.isspace() for c in user_id):
        raise TokenError(f"USER_ID must be 1 to {_MAX_USER_ID} characters without whitespace")
    return token, user_id


@attrs.frozen
class TokenTable:
    """Token hashes and the user each one authenticates (build with :meth:`from_specs`)."""

    entries: tuple[tuple[bytes, str], ...]

    @classmethod
    def from_specs(cls, specs: Iterable[str]) -> TokenTable:
        """A table from ``TOKEN=USER_ID`` strings; refuses an empty list and repeated tokens."""
        entries: list[tuple[bytes, str]] = []
        seen: set[bytes] = set()
        for spec in specs:
            token, user_id = parse_token_spec(spec)
            digest = _digest(token)
            if digest in seen:
                raise TokenError("the same token is given twice")
            seen.add(digest)
            entries.append((digest, user_id))
        if not entries:
            raise TokenError("no tokens: give --token TOKEN=USER_ID or --token-file FILE")
        return cls(tuple(entries))

    @classmethod
    def from_file(cls, path: str | Path) -> TokenTable:
        """A table from a token file (one ``TOKEN=USER_ID`` per line, ``#`` comments)."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise TokenError(f"cannot read the token file: {type(exc).__name__}") from None
        specs = []
        for number, line in enumerate(text.splitlines(), start=1):
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            try:
                parse_token_spec(stripped)
            except TokenError as exc:
                raise TokenError(f"token file line {number}: {exc}") from None
            specs.append(stripped)
        return cls.from_specs(specs)

    def user_for(self, token: str) -> str | None:
        """The user ``token`` authenticates, or None. Compares against every entry."""
        presented = _digest(token)
        found: str | None = None
        for digest, user_id in self.entries:
            if hmac.compare_digest(digest, presented):
                found = user_id
        return found
