"""Tool descriptions (short, sent with every request) and the reference they point to.

The descriptions carry only what the model needs on every call; every other
rule is in :data:`RECALL_REFERENCE`, which ``docs/tools.md`` embeds verbatim
between ``<!-- tool-reference:start -->`` and ``<!-- tool-reference:end -->``
(:func:`reference_markdown`); a test keeps the two in sync.
"""

from __future__ import annotations

from .constants import GATE_MARGIN, LIMIT_DEFAULT, LIMIT_MAX

__all__ = [
    "DESCRIPTION_MAX_CHARS",
    "RECALL_REFERENCE",
    "REFERENCE_DOC",
    "TOOL_DESCRIPTIONS",
    "reference_markdown",
]

REFERENCE_DOC = "docs/tools.md"
DESCRIPTION_MAX_CHARS = 300
"""Seed 003 bounds memory_recall's description at 300 characters; we hold all four to it."""

TOOL_DESCRIPTIONS: dict[str, str] = {
    "memory_remember": (
        "Save one long-term memory. kind: fact|lesson|preference|pointer; title: one line, "
        "8-120 chars; body: full text; tags: 1-12 labels; source: session:…, file:… or "
        "url:https://…; scope: project:<name>, omit for global. A refusal says what to fix. "
        f"See {REFERENCE_DOC}"
    ),
    "memory_recall": (
        "Search long-term memory. One line per memory (index only, never the body): "
        "id|kind|title|tags|graph|via|rel|cov|match|score. match (none/weak/strong) is "
        "judged from rel; score only orders rows. limit (default 5, max 50) caps rows. "
        f"Bodies: memory_expand. See {REFERENCE_DOC}"
    ),
    "memory_expand": (
        "Fetch the full bodies of memories by id (ids from memory_recall). Unknown ids are "
        f"listed under missing. See {REFERENCE_DOC}"
    ),
    "memory_prune": (
        "Merge duplicate memories (same kind and title) and evict the least valuable until "
        "the store fits its cap. dryRun defaults to true and only reports; dryRun=false "
        f"deletes. See {REFERENCE_DOC}"
    ),
}

RECALL_REFERENCE: tuple[str, ...] = (
    "`score = disp(final)` maps to 0..1 for ordering and display; rows are sorted by it, and "
    "it is never normalised per batch.",
    "`final = (rel + graph) × (1 − β·maxSim)`, β = 0.3 by default, `maxSim` the largest tag "
    "Jaccard similarity between the row and the rows picked before it.",
    "The diversity factor applies only with more than 5 candidates; the structured field "
    "`diversity_applied` says whether it did, and the header prints `β on` or `β off`.",
    "With diversity on, `score` cannot be recomputed from the printed rel and graph (β and "
    "maxSim are not printed); `match` can always be recomputed from the printed rel, the two "
    "thresholds and the gate inputs (`qTok`, the minimum and the margin) in the header.",
    "Content-token gate: `qTok` is the number of distinct query tokens found anywhere in the "
    "searched records. qTok = 0 gives none; qTok below `contentTokenMin` (default 2) turns a "
    f"strong row with rel below `gateMargin` × strong (default {GATE_MARGIN}) into weak; "
    "weak and none never change and rows are always returned. gateMargin 0 never caps.",
    "The header states which gate branch applied: `capped` (some strong row was capped), "
    "`exempt` (few content tokens, nothing downgraded) or `inactive` (enough content tokens); "
    "only the capped branch uses the word capped.",
    "`graph` is a bonus from the tag co-occurrence graph, capped at `graphBonusCap`; it never "
    "outweighs lexical relevance and never removes a row.",
    "`via` is `direct` for a lexical hit or `tag:<tag>` for a row reached through the tag graph.",
    "`cov` is the share of the row's tags that share a token with the query: diagnostic only, "
    "it gates nothing.",
    "Without lexical evidence `rel = 0`; a row reached only through the graph has `graph > 0`, "
    "`via = tag:<tag>`, `match = none`, and a score that depends on the scale constants.",
    f"`limit` (default {LIMIT_DEFAULT}, max {LIMIT_MAX}) is a hard row cap: widening the "
    "internal budget (kBase → kUsed) never adds rows.",
    "A query with no tag energy is not triaged: novelty 0, not widened, kUsed = kBase, and the "
    "explained/residual ratios are reported as undefined (0/0).",
    "`lowConfidence` is only reported: it never empties or vetoes the answer.",
)


def reference_markdown() -> str:
    """The block ``docs/tools.md`` embeds: the four descriptions, then the recall reference."""
    lines = ["#### Tool descriptions (as sent to the model)", ""]
    for name, text in TOOL_DESCRIPTIONS.items():
        lines += [f"- `{name}` ({len(text)} chars): {text}"]
    lines += ["", "#### Recall rules the descriptions point to", ""]
    lines += [f"- {rule}" for rule in RECALL_REFERENCE]
    return "\n".join(lines) + "\n"
