"""The measurement reports' cells and Markdown tables (eval, calibrate, simulate delivery)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["markdown_table", "percent"]


def percent(value: float | None) -> str:
    """A share as a percentage with one decimal, or ``n/a`` when undefined."""
    return "n/a" if value is None else f"{value * 100:.1f}%"


def markdown_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], *, text_columns: int = 1
) -> list[str]:
    """A Markdown table's lines: the first ``text_columns`` left-aligned, the rest right-aligned."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        padded = [
            cell.ljust(width) if i < text_columns else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    rule = "|".join(
        "-" * (w + 1) + (":" if i >= text_columns else "-") for i, w in enumerate(widths)
    )
    return [line(header), "|" + rule + "|", *(line(row) for row in rows)]
