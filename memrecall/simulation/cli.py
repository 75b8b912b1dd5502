"""``memrecall simulate`` (seeded runs of the real engine, checked and compared) and
``memrecall replay`` (a recorded event log, replayed and checked)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from memrecall.events.codec import LogDecodeError
from memrecall.progress import Progress
from memrecall.simulation.eventlog import eventlog_codec, replay
from memrecall.simulation.runner import options_for_seed, simulate
from memrecall.simulation.safety import check_log

__all__ = ["FAILURE_DIR", "replay_main", "simulate_main"]

FAILURE_DIR = Path("sim-failures")


def simulate_main(
    seed: int,
    runs: int,
    *,
    verbose: bool = False,
    log_path: str | None = None,
    progress: Progress | None = None,
) -> int:
    """Run seeds ``seed .. seed+runs-1``; on a failure write its log and print how to reproduce.

    ``log_path`` also writes the event log of the (last) run there, failed or not, so a
    successful run can be replayed too.
    """
    logging.getLogger("memrecall").setLevel(logging.DEBUG if verbose else logging.ERROR)
    failures = 0
    plans = 0
    bar = progress or Progress.off()
    for current in range(seed, seed + runs):
        options = options_for_seed(current)
        result = simulate(options)
        bar.advance(f"seed {current}")
        plans += result.plans
        status = "ok" if result.ok else "FAILED"
        print(f"seed {current}: {result.plans} plans, {len(result.log)} log bytes: {status}")
        if log_path is not None:
            try:
                Path(log_path).write_bytes(result.log)
            except OSError as exc:
                print(
                    f"memrecall simulate: cannot write {log_path}: {exc.strerror}", file=sys.stderr
                )
                return 2
            print(f"  event log written to {log_path}; replay: uv run memrecall replay {log_path}")
        if verbose or not result.ok:
            print(options.describe())
        if result.ok:
            continue
        failures += 1
        if not result.identical:
            print("  the two runs of this seed produced different logs (non-determinism)")
        for violation in result.violations:
            print(f"  {violation}")
        FAILURE_DIR.mkdir(exist_ok=True)
        path = FAILURE_DIR / f"seed-{current}.jsonl"
        path.write_bytes(result.log)
        print(f"  log written to {path}")
        print(f"  reproduce: uv run memrecall simulate --seed {current} --runs 1")
        print(f"  replay without the seed: uv run memrecall replay {path}")
    print(f"{runs} seeds, {plans} plans, {failures} failed")
    return 1 if failures else 0


def replay_main(path: str) -> int:
    """``memrecall replay LOG``: 0 reproduced and sound, 1 diverged or unsound, 2 unreadable."""
    try:
        data = Path(path).read_bytes()
        report = replay(data)
        _, numbered = eventlog_codec.decode_numbered(data)
    except OSError as exc:
        print(f"memrecall replay: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    except LogDecodeError as exc:
        print(f"memrecall replay: {path}: {exc}", file=sys.stderr)
        return 2
    print(f"{path}: {report.records} records, {report.plans} plans")
    status = 0
    if report.divergence is not None:
        print(f"DIVERGED: {report.divergence}")
        status = 1
    else:
        print("every recorded effect and telemetry record reproduced byte for byte")
    for problem in (*report.provenance, *report.protocol_errors):
        print(f"UNSOUND: {problem}")
        status = 1
    violations = check_log(numbered)
    for violation in violations:
        print(f"VIOLATION: {violation}")
        status = 1
    if not violations:
        print("every property of the catalogue holds")
    return status
