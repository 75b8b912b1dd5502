"""``just mutate``: mutmut over the plan machine, in a copy of the tree; print every survivor.

mutmut 3 copies the sources into ``mutants/`` under the directory it runs in and
reads its settings from ``setup.cfg``; to keep the working tree clean this script
copies the tree to a temporary directory, writes the settings there, runs
``mutmut run`` with the plan machine's tests, and prints the totals and the diff
of each mutant that survived (or that no test reached). docs/testing.md lists
each of them with the test that kills it or why it is equivalent.

    uv run python scripts/mutate.py                      # engine/plan.py
    uv run python scripts/mutate.py --target safety      # simulation/safety.py
    uv run python scripts/mutate.py --target judgement   # engine/scoring/judgement.py
    uv run python scripts/mutate.py --keep /tmp/mutmut   # keep the tree to inspect

Not part of CI: it takes minutes (`mutmut run` reports mutations per second).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "plan": ("memrecall/engine/plan.py", ("tests/test_plan_machine.py",)),
    "safety": ("memrecall/simulation/safety.py", ("tests/test_safety_rules.py",)),
    "judgement": (
        "memrecall/engine/scoring/judgement.py",
        ("tests/test_judgement.py", "tests/test_calibrate.py", "tests/test_default_scorer.py"),
    ),
}
"""What ``--target`` names: the file mutated, one at a time, and the tests run against it."""
# tests/test_docs.py (which checks transition_table() against docs/architecture.md) fails under
# mutmut's instrumentation even with no mutant planted: its trampolines stand in for the
# handlers whose docstrings the table is made of. transition_table's mutants reach no test here.
_LIST = "\n    "  # setup.cfg lists: one value a line


def settings(target: str, tests: tuple[str, ...]) -> str:
    """mutmut's ``setup.cfg`` for one file and its tests."""
    return f"""[mutmut]
source_paths=memrecall
only_mutate={target}
pytest_add_cli_args_test_selection={_LIST}{_LIST.join(tests)}
pytest_add_cli_args={_LIST}-p{_LIST}no:cacheprovider
"""


def main(argv: list[str]) -> int:
    """Run mutmut in a copy of the tree; 1 if a mutant survived or reached no test."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="run in this directory and keep it")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--target", choices=sorted(TARGETS), default="plan")
    args = parser.parse_args(argv)
    mutmut = Path(sys.executable).parent / "mutmut"
    with tempfile.TemporaryDirectory(prefix="memrecall-mutmut-") as tmp:
        tree = args.keep or Path(tmp) / "tree"
        if tree.exists():
            shutil.rmtree(tree)
        shutil.copytree(
            ROOT,
            tree,
            ignore=shutil.ignore_patterns(".venv", ".git", ".hypothesis", "__pycache__", "mutants"),
        )
        (tree / "setup.cfg").write_text(settings(*TARGETS[args.target]), encoding="utf-8")
        run = subprocess.run(
            [str(mutmut), "run", "--max-children", str(args.jobs)],
            cwd=tree,
            capture_output=True,
            text=True,
            check=False,
        )
        totals = run.stdout.replace("\r", "\n").strip().splitlines()
        if run.returncode != 0:
            print("\n".join(totals[-5:]), run.stderr[-3000:], sep="\n", file=sys.stderr)
            print("mutmut run failed (see above)", file=sys.stderr)
            return 2
        print("\n".join(line for line in totals[-2:] if line.strip()))
        results = subprocess.run(
            [str(mutmut), "results"], cwd=tree, capture_output=True, text=True, check=False
        ).stdout
        bad = [
            line.split(":")[0].strip()
            for line in results.splitlines()
            if line.strip().endswith(("survived", "no tests", "timeout", "suspicious"))
        ]
        for name in bad:
            shown = subprocess.run(
                [str(mutmut), "show", name], cwd=tree, capture_output=True, text=True, check=False
            ).stdout
            diff = [line for line in shown.splitlines() if line.startswith(("- ", "+ "))]
            print(f"\n{name}")
            print("\n".join(f"    {line}" for line in diff))
        print(f"\n{len(bad)} mutants survived or reached no test")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
