"""What the turn rules (engine/scoring/turn_words.py) cost per query, over the corpus's queries.

    uv run python scripts/turn_rules_cost.py

Prints the time of ``query_words`` alone and of ``query_words`` plus the turn rules
(``strong_only`` and ``private_phrases``), in microseconds per query, best of five runs.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from memrecall.engine.scoring.analysis import query_words
from memrecall.engine.scoring.turn_words import private_phrases, strong_only

CORPUS = Path(__file__).parent.parent / "tests" / "fixtures" / "recall-eval.json"


def _best(run: object, queries: list[str]) -> float:
    assert callable(run)
    times = []
    for _ in range(5):
        started = time.perf_counter()
        for query in queries:
            run(query)
        times.append((time.perf_counter() - started) / len(queries) * 1e6)
    return min(times)


def _with_rules(query: str) -> None:
    words = query_words(query)
    strong_only(query, words, lambda term, kind: True)
    private_phrases(words)


def main() -> None:
    """Print the table."""
    queries = [case["query"] for case in json.loads(CORPUS.read_text("utf-8"))["cases"]]
    alone = _best(query_words, queries)
    ruled = _best(_with_rules, queries)
    print(f"{len(queries)} queries, microseconds per query (best of 5)")
    print("| step | µs |")
    print("|---|--:|")
    print(f"| query_words | {alone:.1f} |")
    print(f"| query_words + turn rules | {ruled:.1f} |")
    print(f"| turn rules alone | {ruled - alone:.1f} |")


if __name__ == "__main__":
    main()
