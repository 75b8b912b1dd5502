"""What the model sees from ``memory_recall``: one header line, then one line per row.

The header is a single line of at most ``HEADER_MAX_CHARS`` (448) UTF-16 code
units, whatever the query, the constants or the store size:

* numbers are echoed at a fixed width (:func:`format_header_constant`, at most
  9 characters; a value that does not fit is shown rounded and marked ``≈``,
  the exact value stays in the structured result);
* the scope echo takes what is left after the fixed part, or is left out;
* the query echo gets the rest: the query is cut by code points first, then
  escaped (:func:`escape_echo`), and marked ``…(cut)`` when shortened.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

from memrecall.engine.scoring.text import utf16_len

from .constants import HEADER_CONST_MAX_CHARS, HEADER_MAX_CHARS, RECALL_COLUMNS
from .scoring import GateBranch

if TYPE_CHECKING:
    from .recall import RecallResult, RecallRow

__all__ = [
    "CUT_MARK",
    "escape_echo",
    "format_header_constant",
    "gate_text",
    "render_recall",
    "render_row",
]

CUT_MARK = "…(cut)"
_ESCAPED_CATEGORIES = frozenset(("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"))
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def format_header_constant(value: float, width: int = HEADER_CONST_MAX_CHARS) -> str:
    """A number in at most ``width`` characters: exact when it fits, else ``≈`` and fewer digits."""
    exact = str(value) if isinstance(value, int) else repr(float(value))
    if exact.endswith(".0") and isinstance(value, float) and len(exact) > 2:
        exact = exact[:-2]
    if len(exact) <= width:
        return exact
    for digits in range(width, 0, -1):
        approx = "≈" + f"{float(value):.{digits}g}"
        if len(approx) <= width:
            return approx
    return "≈"  # unreachable for width >= 8; keeps the bound total


def escape_echo(text: str) -> str:
    """``text`` on one safe line: quotes, backslashes, invisible and line-breaking chars escaped."""
    out: list[str] = []
    for char in text:
        short = _SHORT_ESCAPES.get(char)
        if short is not None:
            out.append(short)
        elif unicodedata.category(char) in _ESCAPED_CATEGORIES:
            code = ord(char)
            if code > 0xFFFF:
                code -= 0x10000
                out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
            else:
                out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return "".join(out)


def _flat(text: str) -> str:
    return "".join(
        " " if unicodedata.category(char) in ("Cc", "Zl", "Zp") else char for char in text
    )


def render_row(row: RecallRow) -> str:
    """One L1 line: the ten columns in order, separated by `` | ``."""
    cells = (
        _flat(row.id),
        row.kind,
        _flat(row.title),
        _flat(",".join(row.tags)),
        f"{row.graph:.4f}",
        _flat(row.via),
        f"{row.rel:.4f}",
        f"{row.cov:.2f}",
        str(row.match),
        f"{row.score:.4f}",
    )
    return " | ".join(cells)


def gate_text(branch: GateBranch, content_tokens: int, minimum: int, margin: float) -> str:
    """The header's statement of the content-token gate, worded per branch."""
    n, least = format_header_constant(content_tokens), format_header_constant(minimum)
    m = format_header_constant(margin)
    if branch is GateBranch.INACTIVE:
        return f"gate qTok={n}≥{least}:inactive"
    if branch is GateBranch.CAPPED:
        return f"gate qTok={n}<{least}:rel<{m}×strong capped to weak"
    return f"gate qTok={n}<{least}:strong needs rel≥{m}×strong"


def _fixed_segments(result: RecallResult) -> list[str]:
    c = format_header_constant
    triage = result.triage
    nov = "0/0" if triage.explained_ratio is None else f"{triage.novelty:.2f}"
    a, b = c(result.scale_a), c(result.scale_b)
    diversity = "β on(>5):score inexact" if result.diversity_applied else "β off(≤5)"
    segments = [
        f"rows={c(len(result.rows))}/{c(result.limit)}(hard max),"
        f"pool={c(result.scope_records)}/{c(result.total)}",
        "cols " + "|".join(RECALL_COLUMNS),
        "rel=bm25/max",
        f"match:strong≥{c(result.strong_threshold)},weak≥{c(result.weak_threshold)},qTok=0⇒none",
        gate_text(
            result.gate_branch, result.content_tokens, result.content_token_min, result.gate_margin
        ),
        f"score=clip((f-{a})/({b}-{a})),f=(rel+graph)×(1-β·maxSim)",
        diversity,
        f"triage nov={nov},k {c(triage.k_base)}→{c(triage.k_used)}",
        f"lowConf={'yes' if result.low_confidence else 'no'}",
        f"graph≤{c(result.graph_bonus_cap)} reached={c(result.graph_reached)}",
    ]
    if result.calibration_drift_exceeded:
        segments.append(f"recalibrate({c(result.calibration_records)}@{result.calibrated_at})")
    return segments


def _fit_echo(prefix: str, text: str, budget: int) -> str:
    """``prefix"<text>"``, cut by code points until it fits ``budget``; ``""`` if nothing fits."""
    whole = f'{prefix}"{escape_echo(text)}"'
    if utf16_len(whole) <= budget:
        return whole
    for keep in range(min(len(text), budget), -1, -1):
        cut = f'{prefix}"{escape_echo(text[:keep])}"{CUT_MARK}'
        if utf16_len(cut) <= budget:
            return cut
    return ""


QUERY_RESERVE = 40
"""Room kept for the query echo before the scope echo may use the rest."""


def render_header(result: RecallResult) -> str:
    """The single header line (at most ``HEADER_MAX_CHARS`` UTF-16 code units)."""
    sep = ";"
    line = sep.join(_fixed_segments(result))
    query_whole = utf16_len(f'query="{escape_echo(result.query)}"')
    if result.scope:
        room = HEADER_MAX_CHARS - utf16_len(line) - 2 * len(sep) - min(query_whole, QUERY_RESERVE)
        scope = _fit_echo("scope=", result.scope, room)
        if scope:
            line += sep + scope
    query = _fit_echo("query=", result.query, HEADER_MAX_CHARS - utf16_len(line) - len(sep))
    if query:
        line += sep + query
    return line


def render_recall(result: RecallResult) -> tuple[str, str]:
    """The header and the full text the model sees (header, then one line per row)."""
    header = render_header(result)
    return header, "\n".join([header, *(render_row(row) for row in result.rows)])
