"""Where a new process's first catalog snapshot goes, step by step (docs/catalog.md).

Writes the benchmark tree (``memrecall bench scan``'s, N topics), lets it settle,
builds and saves its ``fielded`` catalog, then in fresh processes times the steps
of ``CatalogSource.snapshot`` and prints one row per run (milliseconds)::

    uv run python scripts/catalog_start_steps.py --topics 10000 --runs 5

Steps: reading and checking the file's payload, making the entries, the whole
load; the quick start's walk (watches and listings), its pool load and view;
the quick start in total (the ``stat`` of every file is most of what the walk
does not account for), the garbage collections, and the snapshot in total.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.pool import FieldedPool
from memrecall.sources.catalog import quick, source, store
from memrecall.sources.catalog.listing import SUSPECT_NS
from memrecall.tooling.scanbench import _tree_of, build_tree

STEPS = {
    "read": (store, "read_cache_head"),
    "entries": (store, "from_columns"),
    "load": (source, "load_catalog"),
    "walk": (quick, "_walk"),
    "pool": (FieldedPool, "from_image"),
    "view": (FieldedIndex, "over"),
    "quick": (source, "quick_start"),
}


def _timed(times: dict[str, float], label: str, owner: Any, name: str) -> None:
    real: Callable[..., Any] = getattr(owner, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            times[label] = times.get(label, 0.0) + (time.perf_counter() - began) * 1000

    setattr(owner, name, timed)


def _one_start(root: Path, cache: Path) -> dict[str, float]:
    times: dict[str, float] = {}
    for label, (owner, name) in STEPS.items():
        _timed(times, label, owner, name)
    collections: list[float] = []
    began: list[float] = []

    def collected(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            began.append(time.perf_counter())
        else:
            collections.append((time.perf_counter() - began.pop()) * 1000)

    gc.callbacks.append(collected)
    catalog = source.CatalogSource(_tree_of(root), cache_path=cache, scorer="fielded")
    started = time.perf_counter()
    catalog.snapshot()
    times["snapshot"] = (time.perf_counter() - started) * 1000
    gc.callbacks.remove(collected)
    times["gc"] = sum(collections)
    times["quick start"] = float(catalog.stats.quick_start)
    catalog.close()
    return times


def main(argv: Sequence[str] | None = None) -> int:
    """Print the step table (see the module doc)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--probe", nargs=2, metavar=("ROOT", "CACHE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.probe:
        print(json.dumps(_one_start(Path(args.probe[0]), Path(args.probe[1]))))
        return 0
    with tempfile.TemporaryDirectory(prefix="catalog-steps-") as scratch:
        root = Path(scratch) / "tree"
        build_tree(root, args.topics)
        time.sleep(SUSPECT_NS / 1e9 + 0.1)  # let the new files settle, as any old tree has
        cache = Path(scratch) / "catalog.bin"
        catalog = source.CatalogSource(_tree_of(root), cache_path=cache, scorer="fielded")
        catalog.snapshot()
        catalog.close()
        labels = [*STEPS, "gc", "snapshot"]
        print(f"{args.topics} topics, ms per step of a new process's first snapshot")
        print("| run | " + " | ".join(labels) + " | quick start |")
        print("|---:|" + "---:|" * len(labels) + ":---:|")
        for run in range(1, args.runs + 1):
            done = subprocess.run(
                [sys.executable, __file__, "--probe", str(root), str(cache)],
                capture_output=True,
                text=True,
                check=True,
            )
            times = json.loads(done.stdout)
            cells = " | ".join(f"{times.get(label, 0.0):.1f}" for label in labels)
            print(f"| {run} | {cells} | {'yes' if times['quick start'] else 'no'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
