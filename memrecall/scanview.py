"""How a scan result is shown: the readable table and the JSON object of ``memrecall scan``."""

from __future__ import annotations

import unicodedata

import msgspec

from memrecall.sources.scanner import ScanResult

__all__ = ["print_scan", "scan_json"]


def scan_json(result: ScanResult) -> bytes:
    """The scan as one JSON object (``memrecall scan --json``)."""
    payload = {
        "documents": [
            {
                "scope": d.scope.value,
                "path": d.path,
                "relative_path": d.relative_path,
                "type": d.type.value,
                "title": d.title,
                "description": d.description,
                "body_chars": len(d.body),
                "mtime": d.mtime,
            }
            for d in result.documents
        ],
        "diagnostics": [
            {"path": g.path, "kind": g.kind.value, "detail": g.detail, "skipped": g.skipped}
            for g in result.diagnostics
        ],
    }
    return msgspec.json.encode(payload)


def _cell_width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _pad(text: str, width: int) -> str:
    """Clip and pad to ``width`` terminal cells (CJK characters take two)."""
    out = ""
    for char in text:
        if _cell_width(out + char) > width - (1 if len(out) < len(text) - 1 else 0):
            out += "…"
            break
        out += char
    return out + " " * max(0, width - _cell_width(out))


def print_scan(result: ScanResult) -> None:
    """Print the documents and diagnostics of a scan as a readable table."""
    print(f"{len(result.documents)} documents")
    print(f"  {'scope':<8} {'type':<10} {'title':<40} path")
    for d in result.documents:
        print(f"  {d.scope.value:<8} {d.type.value:<10} {_pad(d.title, 40)} {d.relative_path}")
    print(f"{len(result.diagnostics)} diagnostics")
    for diagnostic in result.diagnostics:
        print(f"  {diagnostic}")
