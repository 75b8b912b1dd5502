"""Fake secrets with the right shape, built at run time so no secret-like literal is stored.

Each value is assembled from a prefix split in two and characters drawn from a seeded
generator: deterministic across runs, valid in format, worthless as a credential.
"""

from __future__ import annotations

import random
import string

__all__ = ["fake_card", "fakes"]

_UPPER_DIGITS = string.ascii_uppercase + string.digits
_ALNUM = string.ascii_letters + string.digits
_B64URL = _ALNUM + "-_"


def _draw(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _luhn_complete(body: str) -> str:
    """Append the check digit that makes ``body`` pass Luhn."""
    for check in "0123456789":
        digits = body + check
        total = 0
        for i, ch in enumerate(reversed(digits)):
            d = int(ch) * (2 if i % 2 else 1)
            total += d - 9 if d > 9 else d
        if total % 10 == 0:
            return digits
    raise AssertionError("unreachable: one check digit always fits")


def fake_card(rng: random.Random, prefix: str, length: int) -> str:
    """A Luhn-valid number of ``length`` digits starting with ``prefix``."""
    return _luhn_complete(
        prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    )


def _group(digits: str, sizes: tuple[int, ...], sep: str) -> str:
    out, i = [], 0
    for size in sizes:
        out.append(digits[i : i + size])
        i += size
    return sep.join(out)


def _broken_luhn(number: str) -> str:
    last = (int(number[-1]) + 1) % 10
    return number[:-1] + str(last)


def fakes(seed: int = 14) -> dict[str, str]:
    """The placeholder table for tests/governance/secret_cases.tsv."""
    rng = random.Random(seed)
    visa = fake_card(rng, "4", 16)
    mc = fake_card(rng, "5" + "4", 16)
    amex = fake_card(rng, "3" + "7", 15)
    unionpay = fake_card(rng, "6" + "2", 16)
    jwt_head = "ey" + "J" + _draw(rng, _B64URL, 30)
    return {
        "AWS_KEY_ID": "AK" + "IA" + _draw(rng, _UPPER_DIGITS, 16),
        "AWS_TEMP_KEY_ID": "AS" + "IA" + _draw(rng, _UPPER_DIGITS, 16),
        "AWS_SECRET": _draw(rng, _ALNUM + "/+", 40),
        "GOOGLE_KEY": "AI" + "za" + _draw(rng, _B64URL, 35),
        "GITHUB_PAT": "gh" + "p_" + _draw(rng, _ALNUM, 36),
        "GITHUB_OAUTH": "gh" + "o_" + _draw(rng, _ALNUM, 36),
        "GITHUB_FINE": "github" + "_pat_" + _draw(rng, _ALNUM + "_", 82),
        "GITLAB_PAT": "gl" + "pat-" + _draw(rng, _B64URL, 20),
        "OPENAI_KEY": "s" + "k-proj-" + _draw(rng, _B64URL, 48),
        "OPENAI_LEGACY": "s" + "k-" + _draw(rng, _ALNUM, 48),
        "ANTHROPIC_KEY": "s" + "k-ant-api03-" + _draw(rng, _B64URL, 93),
        "HF_TOKEN": "h" + "f_" + _draw(rng, _ALNUM, 34),
        "SLACK_BOT": "xo" + "xb-" + _draw(rng, string.digits, 11) + "-" + _draw(rng, _ALNUM, 24),
        "SLACK_USER": "xo" + "xp-" + _draw(rng, string.digits, 11) + "-" + _draw(rng, _ALNUM, 24),
        "SLACK_HOOK": "https://hooks.slack"
        + ".com/services/T"
        + _draw(rng, _UPPER_DIGITS, 8)
        + "/B"
        + _draw(rng, _UPPER_DIGITS, 8)
        + "/"
        + _draw(rng, _ALNUM, 24),
        "STRIPE_LIVE": "s" + "k_live_" + _draw(rng, _ALNUM, 24),
        "JWT": jwt_head
        + "."
        + "ey"
        + "J"
        + _draw(rng, _B64URL, 60)
        + "."
        + _draw(rng, _B64URL, 43),
        "BEARER": _draw(rng, _ALNUM, 40),
        "BASIC": _draw(rng, _ALNUM, 24) + "==",
        "GENERIC_KEY": _draw(rng, string.ascii_lowercase, 10)
        + _draw(rng, string.digits, 4)
        + _draw(rng, _ALNUM, 18),
        "SESSION_HEX": _draw(rng, "0123456789abcdef", 32),
        "COOKIE_VAL": _draw(rng, _ALNUM, 12)
        + _draw(rng, string.digits, 4)
        + _draw(rng, _ALNUM, 12),
        "PEM_BODY": _draw(rng, _ALNUM + "+/", 64),
        "PEM_RSA": "-----BEGIN RSA " + "PRIVATE KEY-----",
        "PEM_PLAIN": "-----BEGIN " + "PRIVATE KEY-----",
        "PEM_OPENSSH": "-----BEGIN OPENSSH " + "PRIVATE KEY-----",
        "PEM_EC": "-----BEGIN EC " + "PRIVATE KEY-----",
        "PEM_PGP": "-----BEGIN PGP " + "PRIVATE KEY BLOCK-----",
        "CARD_VISA": _group(visa, (4, 4, 4, 4), " "),
        "CARD_VISA_PLAIN": visa,
        "CARD_MC_DASH": _group(mc, (4, 4, 4, 4), "-"),
        "CARD_AMEX": _group(amex, (4, 6, 5), " "),
        "CARD_UNIONPAY": unionpay,
        "CARD_BAD_LUHN": _group(_broken_luhn(visa), (4, 4, 4, 4), " "),
        "CARD_BAD_LUHN_MC": _broken_luhn(mc),
    }
