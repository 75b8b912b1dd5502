"""Write-time refusal of what must never be stored: secrets and untrusted instructions.

Seed 002 §15. Every check here is a pure function of the text and the write's
:class:`WriteOrigin`; nothing is logged and nothing is returned that repeats the
secret: a :class:`SecretFinding` holds the kind and a character span, a
:class:`ContentRefusal` holds the kind and a fixed message.

Two families of rules:

* **Shaped secrets**, recognised by their format alone: cloud-provider keys, source-host
  tokens, model-provider keys, service tokens, JWTs, bearer headers, private key blocks and
  payment card numbers (issuer prefix, length and Luhn checksum all required).
* **Contextual secrets**, recognised by a label next to a value: ``password is``, ``OTP``,
  ``session id``, ``Cookie:`` and ``api key =``. The value must look like a value (a code
  has 4–8 digits, a session id has a digit, a password is not an ordinary prose word), so
  sentences *about* passwords pass.

Instructions to remember something are refused only when the text came from tool output or
web content (:data:`UNTRUSTED_ORIGINS`): the user's own "remember to buy milk" is a
request, the same words inside a fetched page are a prompt injection.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

import attrs
import regex

__all__ = [
    "UNTRUSTED_ORIGINS",
    "USER_ORIGINS",
    "ContentRefusal",
    "SecretFinding",
    "SecretKind",
    "WriteOrigin",
    "find_secrets",
    "luhn_valid",
    "screen_write",
]


class SecretKind(enum.StrEnum):
    """What kind of forbidden content a write held (the refusal names it, never the value)."""

    PASSWORD = "password"
    ONE_TIME_CODE = "one_time_code"
    SESSION_ID = "session_id"
    COOKIE = "cookie"
    CLOUD_KEY = "cloud_key"
    SOURCE_HOST_TOKEN = "source_host_token"
    BEARER_TOKEN = "bearer_token"
    MODEL_PROVIDER_KEY = "model_provider_key"
    API_KEY = "api_key"
    PRIVATE_KEY = "private_key"
    PAYMENT_CARD = "payment_card"
    MEMORY_INSTRUCTION = "memory_instruction"


class WriteOrigin(enum.StrEnum):
    """Where the text of a write came from; set by the runtime, never by the model.

    Only :data:`USER_ORIGINS` may create or change an active memory. ``model_inferred``,
    ``tool_output`` and ``web_content`` can at most become a pending candidate, and the
    last two are refused outright when they ask the agent to remember something.
    """

    USER_EXPLICIT = "user_explicit"
    USER_CONFIRMED = "user_confirmed"
    MODEL_INFERRED = "model_inferred"
    TOOL_OUTPUT = "tool_output"
    WEB_CONTENT = "web_content"


USER_ORIGINS = frozenset({WriteOrigin.USER_EXPLICIT, WriteOrigin.USER_CONFIRMED})
UNTRUSTED_ORIGINS = frozenset({WriteOrigin.TOOL_OUTPUT, WriteOrigin.WEB_CONTENT})


@attrs.frozen
class SecretFinding:
    """One match: the kind and the span ``text[start:end]`` (the caller must not echo it)."""

    kind: SecretKind
    start: int
    end: int


_MESSAGES = {
    SecretKind.PASSWORD: "looks like a password or credential",
    SecretKind.ONE_TIME_CODE: "looks like a one-time or verification code",
    SecretKind.SESSION_ID: "looks like a session id",
    SecretKind.COOKIE: "looks like a cookie value",
    SecretKind.CLOUD_KEY: "looks like a cloud-provider access key",
    SecretKind.SOURCE_HOST_TOKEN: "looks like a source-host access token",
    SecretKind.BEARER_TOKEN: "looks like a bearer token or JWT",
    SecretKind.MODEL_PROVIDER_KEY: "looks like a model-provider API key",
    SecretKind.API_KEY: "looks like an API key or service token",
    SecretKind.PRIVATE_KEY: "contains a private key block",
    SecretKind.PAYMENT_CARD: "looks like a payment card number",
    SecretKind.MEMORY_INSTRUCTION: (
        "is an instruction to remember something found in tool output or web content"
    ),
}


@attrs.frozen
class ContentRefusal:
    """Why a write was refused: the kind and a fixed message that never repeats the content."""

    kind: SecretKind
    message: str

    @classmethod
    def of(cls, kind: SecretKind) -> ContentRefusal:
        """The refusal for ``kind``."""
        return cls(kind, f"not stored: the text {_MESSAGES[kind]}; such content is never saved")


# --------------------------------------------------------------------------- shaped secrets

_I = regex.IGNORECASE
_SHAPED: tuple[tuple[SecretKind, regex.Pattern[str]], ...] = (
    (
        SecretKind.PRIVATE_KEY,
        regex.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d+:"
        ),
    ),
    (SecretKind.CLOUD_KEY, regex.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b")),
    (
        SecretKind.CLOUD_KEY,
        regex.compile(r"\baws_?secret_?access_?key\b\W{0,4}[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])", _I),
    ),
    (SecretKind.CLOUD_KEY, regex.compile(r"\bAIza[0-9A-Za-z_\-]{35}(?![\w-])")),
    (SecretKind.SOURCE_HOST_TOKEN, regex.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b")),
    (SecretKind.SOURCE_HOST_TOKEN, regex.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}")),
    (SecretKind.SOURCE_HOST_TOKEN, regex.compile(r"\bgl(?:pat|ptt|dt|rt)-[A-Za-z0-9_\-]{20,}")),
    (
        SecretKind.MODEL_PROVIDER_KEY,
        regex.compile(r"\bsk-(?:ant-(?:api|admin)\d\d-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ),
    (SecretKind.MODEL_PROVIDER_KEY, regex.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    (SecretKind.API_KEY, regex.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    (SecretKind.API_KEY, regex.compile(r"\bxapp-\d-[A-Za-z0-9\-]{10,}")),
    (
        SecretKind.API_KEY,
        regex.compile(r"hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}"),
    ),
    (SecretKind.API_KEY, regex.compile(r"\b(?:sk|rk|pk)_live_[A-Za-z0-9]{16,}")),
    (SecretKind.API_KEY, regex.compile(r"\b(?:sk|rk)_test_[A-Za-z0-9]{16,}")),
    (
        SecretKind.BEARER_TOKEN,
        regex.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ),
    (SecretKind.BEARER_TOKEN, regex.compile(r"\bBearer\s+[A-Za-z0-9\-._~+/]{16,}=*", _I)),
    (SecretKind.BEARER_TOKEN, regex.compile(r"\bBasic\s+[A-Za-z0-9+/]{12,}={0,2}(?![\w+/])")),
)

# --------------------------------------------------------------------------- payment cards

_CARD_CANDIDATE = regex.compile(r"(?<![\d.\-])\d(?:[ \-]?\d){12,18}(?![\d\-]|\.\d)")


def luhn_valid(digits: str) -> bool:
    """True when the digit string passes the Luhn checksum."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _issuer_length_ok(digits: str) -> bool:
    """Whether ``digits`` starts with a card issuer's prefix and has that issuer's length."""
    n = len(digits)
    p2, p3, p4 = int(digits[:2]), int(digits[:3]), int(digits[:4])
    if digits[0] == "4":
        return n in (13, 16, 19)  # Visa
    if 51 <= p2 <= 55 or 2221 <= p4 <= 2720:
        return n == 16  # Mastercard
    if p2 in (34, 37):
        return n == 15  # American Express
    if p4 == 6011 or p2 == 65 or 644 <= p3 <= 649:
        return 16 <= n <= 19  # Discover
    if 3528 <= p4 <= 3589:
        return 16 <= n <= 19  # JCB
    if 300 <= p3 <= 305 or p2 in (36, 38, 39):
        return 14 <= n <= 19  # Diners Club
    if p2 == 62:
        return 16 <= n <= 19  # UnionPay
    if p4 in (5018, 5020, 5038, 6304, 6759, 6761, 6762, 6763):
        return 12 <= n <= 19  # Maestro
    return False


def _cards(text: str) -> list[SecretFinding]:
    found = []
    for m in _CARD_CANDIDATE.finditer(text):
        raw = m.group()
        seps = {c for c in raw if not c.isdigit()}
        if len(seps) > 1:
            continue  # "1234 5678-..." mixes separators: not how a card is written
        digits = "".join(c for c in raw if c.isdigit())
        if _issuer_length_ok(digits) and luhn_valid(digits):
            found.append(SecretFinding(SecretKind.PAYMENT_CARD, m.start(), m.end()))
    return found


# --------------------------------------------------------------------------- contextual secrets

# Words that follow "password is" in a sentence *about* a password, not in one that gives it.
_PROSE_VALUES = frozenset(
    """a an the my your his her our their its this that these those not no too very so also
    weak strong long short good bad secure insecure safe unsafe easy hard simple complex
    complicated random unique different same similar old new stored saved kept written managed
    hidden encrypted hashed salted required needed mandatory optional expired expiring reset
    changed updated rotated set unset wrong incorrect correct invalid valid case sensitive
    being still now always never only just in on at for from with without of by under
    somewhere something nothing empty blank missing lost forgotten known unknown shared
    protected compromised leaked generated sent due stale ok okay fine enough used
    automatically manually probably definitely actually please""".split()
)
_MASKED = regex.compile(r"[*•x.\-_#]+|<[^>]*>|\$\{?[A-Z_][A-Z0-9_]*\}?|\{\{[^}]*\}\}|%[A-Z_]+%", _I)


def _looks_like_password(value: str) -> bool:
    value = value.strip(".,;:!?)]}\"'`")
    if len(value) < 3 or value.casefold() in _PROSE_VALUES:
        return False
    return not _MASKED.fullmatch(value)


_PASSWORD = regex.compile(
    r"\b(?:password|passwd|pwd|passphrase|passcode|pin(?:\s+code)?|wi-?fi\s+key)\b"
    r"(?:\s+(?:for|to|of|on|at)\s+[\w.@\-]+(?:\s+[\w.@\-]+){0,3})?"
    r"\s*(?:is|was|=|:|：|->)\s*[\"'`]?(?P<v>[^\s\"'`]+)",
    _I,
)
# "password Winter2023!": a label right before a value, no "is"; the value must mix
# letters with digits or symbols, so "password reset" and "password manager" pass.
_PASSWORD_BARE = regex.compile(
    r"\b(?:password|passwd|pwd|passphrase)\s+[\"'`]?(?P<v>[^\s\"'`]{6,})", _I
)
_PASSWORD_ZH = regex.compile(
    r"(?:密码|口令|支付密码|PIN码)\s*(?:是|为|:|：)\s*(?P<v>[^\s，。,]{3,})"
)
_URL_CREDENTIAL = regex.compile(r"\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:(?P<v>[^\s@/]{3,})@[^\s/]+", _I)

_CODE_LABEL = (
    r"(?:otp|one[- ]time\s+(?:pass(?:word|code)|code|pin)|verification\s+code|security\s+code|"
    r"confirmation\s+code|log[- ]?in\s+code|sign[- ]?in\s+code|2fa(?:\s+code)?|mfa(?:\s+code)?|"
    r"auth(?:entication|enticator)?\s+code|sms\s+code|backup\s+code|recovery\s+code)"
)
_OTP = regex.compile(
    rf"\b{_CODE_LABEL}\b[^\d\n]{{0,24}}(?<![\w])(?P<v>\d{{3,4}}[ \-]?\d{{2,4}})(?!\w)", _I
)
_OTP_AFTER = regex.compile(
    r"(?<![\w])(?P<v>\d{3,4}[ \-]?\d{2,4})(?!\w)\s+(?:is|as)\s+(?:your|the)\s+"
    r"(?:[\w\-]+\s+){0,3}(?:code|otp|pin|passcode|password)\b",
    _I,
)
_OTP_ZH = regex.compile(r"(?:验证码|动态码|校验码)\D{0,8}(?P<v>\d{4,8})(?!\d)")

_SESSION = regex.compile(
    r"\b(?:session[\s_\-]?(?:id|token|key)|sessionid|sid|phpsessid|jsessionid|"
    r"asp\.net_sessionid|connect\.sid)\b\s*(?:is|=|:)\s*[\"']?(?P<v>[A-Za-z0-9%_\-.:]{12,})",
    _I,
)
_COOKIE = regex.compile(
    r"(?:^|\n)\s*(?:set-)?cookie\s*:\s*(?P<v>[^=\s;]+=[^;\s]{8,})"
    r"|\bcookie\b(?:\s+value)?\s*(?:is|=|:)\s*[\"']?(?P<v>[^\s\"';]{12,})",
    _I,
)
_API_KEY = regex.compile(
    r"\b(?:api[\s_\-]?key|api[\s_\-]?secret|api[\s_\-]?token|access[\s_\-]?token|"
    r"auth[\s_\-]?token|secret[\s_\-]?key|client[\s_\-]?secret|private[\s_\-]?token|token)\b"
    r"\s*(?:is|was|=|:)\s*[\"']?(?P<v>[A-Za-z0-9_\-./+=]{16,})",
    _I,
)


def _has_digit_and_letter(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _mixed_value(value: str) -> bool:
    value = value.rstrip(".,;:)]}")
    has_letter = any(c.isalpha() for c in value)
    has_other = any(c.isdigit() or not c.isalnum() for c in value)
    return has_letter and has_other and _looks_like_password(value)


def _has_digit(value: str) -> bool:
    return any(c.isdigit() for c in value)


_CONTEXTUAL: tuple[tuple[SecretKind, regex.Pattern[str], Callable[[str], bool]], ...] = (
    (SecretKind.PASSWORD, _PASSWORD, _looks_like_password),
    (SecretKind.PASSWORD, _PASSWORD_BARE, _mixed_value),
    (SecretKind.PASSWORD, _PASSWORD_ZH, _looks_like_password),
    (SecretKind.PASSWORD, _URL_CREDENTIAL, _looks_like_password),
    (SecretKind.ONE_TIME_CODE, _OTP, lambda v: 4 <= sum(c.isdigit() for c in v) <= 8),
    (SecretKind.ONE_TIME_CODE, _OTP_AFTER, lambda v: 4 <= sum(c.isdigit() for c in v) <= 8),
    (SecretKind.ONE_TIME_CODE, _OTP_ZH, _has_digit),
    (SecretKind.SESSION_ID, _SESSION, _has_digit),
    (SecretKind.COOKIE, _COOKIE, lambda v: True),
    (SecretKind.API_KEY, _API_KEY, _has_digit_and_letter),
)

# --------------------------------------------------------------------------- instructions

_REMEMBER_INSTRUCTION = regex.compile(
    r"\b(?:remember|memori[sz]e|memorise|note\s+down|make\s+a\s+note|keep\s+in\s+mind)\b"
    r"|\b(?:save|store|add|write|record|put|keep|update)\b[^.\n]{0,40}\b(?:memory|memories)\b"
    r"|\bfrom\s+now\s+on\b|\bin\s+(?:all\s+)?future\s+(?:conversations|sessions|chats|answers)\b"
    r"|\bignore\s+(?:all\s+)?(?:previous|prior|above)\s+instructions\b"
    r"|记住|记下|牢记|保存到记忆|写入记忆|从现在起|以后都",
    _I,
)


def _ranked(text: str) -> list[tuple[int, SecretFinding]]:
    """Findings with a rank: 0 for a shaped secret (its format names the kind), 1 for a
    contextual one (a label next to a value)."""
    found: list[tuple[int, SecretFinding]] = []
    for kind, pattern in _SHAPED:
        found.extend((0, SecretFinding(kind, m.start(), m.end())) for m in pattern.finditer(text))
    found.extend((0, f) for f in _cards(text))
    for kind, pattern, accept in _CONTEXTUAL:
        for m in pattern.finditer(text):
            if accept(m.group("v")):
                found.append((1, SecretFinding(kind, m.start(), m.end())))
    return found


def find_secrets(text: str) -> tuple[SecretFinding, ...]:
    """Every secret-shaped span in ``text``, in order of position (empty when none)."""
    return tuple(sorted((f for _, f in _ranked(text)), key=lambda f: (f.start, -f.end)))


def screen_write(origin: WriteOrigin, *texts: str) -> ContentRefusal | None:
    """Refuse a write whose ``texts`` (key, content, category...) hold a secret or instruction.

    Returns ``None`` when the write may proceed (as an active memory or a candidate, which
    the policy decides from ``origin``), else the refusal for the first shaped finding, or
    failing that the first contextual one (a format names its kind better than a label).
    """
    for text in texts:
        ranked = _ranked(text)
        if ranked:
            _, first = min(ranked, key=lambda rf: (rf[0], rf[1].start))
            return ContentRefusal.of(first.kind)
    if origin in UNTRUSTED_ORIGINS:
        for text in texts:
            if _REMEMBER_INSTRUCTION.search(text):
                return ContentRefusal.of(SecretKind.MEMORY_INSTRUCTION)
    return None
