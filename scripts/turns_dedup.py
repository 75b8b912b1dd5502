"""Drop new labelled turns for the turn reader that repeat what the project holds (issue 18).

    uv run python scripts/turns_dedup.py NEW.jsonl [MORE ...] --out tests/fixtures/turns/x.jsonl

Training turns must not be the evaluation's questions in other clothes. A new turn is dropped
when, folded as ``blind_dedup.py`` folds it, it is close by character bigrams (Jaccard at least
:data:`NEAR_EVALUATION`) to a query of the evaluation corpus or of a blind set, or equal or
close (Jaccard at least ``blind_dedup.CLOSE``) to a labelled training or candidate turn or to an
earlier new turn. The kept turns are written in their order, and the counts printed per
language and label.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from blind_dedup import Seen, evaluation_queries, labelled_turns

NEAR_EVALUATION = 0.4
"""Closer than the bound between turns: a training turn half the words of an evaluation query
would teach the reader that query."""


def main(argv: list[str] | None = None) -> None:
    """Write the kept turns and print what was kept and dropped."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("new", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    evaluation = Seen(evaluation_queries(), close=NEAR_EVALUATION)
    seen = Seen(labelled_turns(args.out))
    kept, dropped = [], Counter[tuple[str, str]]()
    for path in args.new:
        for line in path.read_text("utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            key = (row["lang"], row["label"])
            known = evaluation.close(row["text"]) or seen.close(row["text"])
            if row["label"] not in ("talk", "memory") or known:
                dropped[key] += 1
            else:
                seen.add(row["text"])
                kept.append({"text": row["text"], "label": row["label"], "lang": row["lang"]})
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept), "utf-8")
    counts = Counter((r["lang"], r["label"]) for r in kept)
    for key in sorted(counts.keys() | dropped.keys()):
        print(f"{key[0]} {key[1]}: {counts[key]} kept, {dropped[key]} dropped")


if __name__ == "__main__":
    main()
