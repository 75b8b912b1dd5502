"""Plant the hand-made mutants of docs/testing.md one at a time; run the tests that must kill them.

Each mutant is one textual replacement in one file. The script copies the
working tree to a temporary directory (the real tree is never touched), plants
each mutant there alone, runs the named tests with this interpreter, and
reports ``killed`` (the tests failed) or ``SURVIVED``. It exits 1 if any
mutant survived, or if a mutant's text no longer matches the code (the list
must follow the code).

    uv run python scripts/mutants.py            # every mutant, the dev profile
    uv run python scripts/mutants.py M4 A1      # only these
    HYPOTHESIS_PROFILE=ci uv run python scripts/mutants.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent


class Mutant(NamedTuple):
    """One planted bug: where, what it replaces, and the tests that must fail."""

    name: str
    what: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


PLAN = "memrecall/engine/plan.py"
MACHINE = ("tests/test_plan_machine.py",)
ACTORS = ("tests/test_actor_properties.py",)
RULES = ("tests/test_safety_rules.py",)

MUTANTS = (
    Mutant(
        "M1",
        "refined delivery repeats fast documents",
        PLAN,
        "remaining = tuple(d for d in result.selected if d.path not in already)",
        "remaining = tuple(result.selected)",
        MACHINE,
    ),
    Mutant(
        "M2",
        "abort recorded as reset",
        PLAN,
        "Abort: _cancel(DiscardReason.ABORT)",
        "Abort: _cancel(DiscardReason.RESET)",
        MACHINE,
    ),
    Mutant(
        "M3",
        "the turn-end tools flag flipped",
        PLAN,
        "    if event.tools_requested:\n",
        "    if not event.tools_requested:\n",
        MACHINE,
    ),
    Mutant(
        "M4",
        "a 0.150 s window instead of 0.100 s",
        PLAN,
        "INITIAL_WAIT = 0.100",
        "INITIAL_WAIT = 0.150",
        MACHINE,
    ),
    Mutant(
        "M5",
        "duplicate delivery: the fast phase forgets what it delivered",
        PLAN,
        "state=PlanState.SELECTING_LATE, fast_delivered=paths, fast_held=()",
        "state=PlanState.SELECTING_LATE, fast_delivered=(), fast_held=()",
        MACHINE,
    ),
    Mutant(
        "M6",
        "a scan finishing after the window still delivers the fast result",
        PLAN,
        "if plan.state is PlanState.SCANNING_LATE:",
        "if plan.state is PlanState.SCANNING_LATE and not fast:",
        (*MACHINE, *ACTORS, *RULES),
    ),
    Mutant(
        "M7",
        "a scan failure emits a selection record",
        PLAN,
        "return _settle(plan, _NOTHING, now, record_selection=False)",
        "return _settle(plan, _NOTHING, now, record_selection=True)",
        MACHINE,
    ),
    Mutant(
        "M8",
        "a selector answer while scanning is ignored, not refused",
        PLAN,
        '_STALE_SELECTOR = _impossible("no selector call is running in this state")',
        '_STALE_SELECTOR = _ignore("no selector call is running in this state")',
        MACHINE,
    ),
    Mutant(
        "M9",
        "a scan of another query's text is accepted",
        PLAN,
        "    if event.query_digest != plan.options.query_digest:\n",
        "    if False:\n",
        MACHINE,
    ),
    Mutant(
        "M10",
        "a cancelled plan does not release the initial wait",
        PLAN,
        "    if plan.window_open:\n        effects.append(ReleaseInitialWait())\n",
        "",
        MACHINE,
    ),
    Mutant(
        "M11",
        "a plan ending while its selector runs does not record cancelled",
        PLAN,
        "plan = attrs.evolve(plan, selector_outcome=SelectorOutcome.CANCELLED)",
        "pass",
        MACHINE,
    ),
    Mutant(
        "M12",
        "a selector call drops the manifest ids (replay no longer sees what the selector saw)",
        PLAN,
        "candidates=event.candidates, ids=event.ids, manifest_digest=event.manifest_digest",
        "candidates=event.candidates, manifest_digest=event.manifest_digest",
        (*MACHINE, *RULES),
    ),
    Mutant(
        "A1",
        "a new plan recalls with the previous query's text (session actor)",
        "memrecall/actors/session.py",
        '        return PlanActor(\n            plan_id=f"{self.session_id}/{query.query_id}",\n'
        "            query=query,",
        "        previous, self._previous = getattr(self, '_previous', query), query\n"
        "        query = UserQuery(query_id=query.query_id, text=previous.text)\n"
        '        return PlanActor(\n            plan_id=f"{self.session_id}/{query.query_id}",\n'
        "            query=query,",
        (*ACTORS, *RULES),
    ),
    Mutant(
        "A3",
        "the plan actor leaves its workers running when the plan ends",
        "memrecall/actors/plan.py",
        "                self.initial.set(None)\n                for scope in self._work_scopes:\n"
        "                    scope.cancel()\n",
        "                self.initial.set(None)\n",
        ("tests/test_lifecycle.py",),
    ),
    Mutant(
        "A4",
        "the selector worker calls the selector whatever manifest the plan named",
        "memrecall/actors/plan.py",
        "        if manifest.ids != ids or text_digest(manifest.text) != digest:\n",
        "        if False:\n",
        ("tests/test_lifecycle.py",),
    ),
    Mutant(
        "A2",
        "the plan actor recalls with a stale text (its first query's)",
        "memrecall/actors/plan.py",
        "        text = self.query.text\n",
        "        text = 'deploy rollback'\n",
        (*ACTORS, *RULES),
    ),
    Mutant(
        "A5",
        "the session takes the surfaced messages without updating its set",
        "memrecall/actors/session.py",
        "            self._surfaced.update(message.paths)\n",
        "",
        (*ACTORS, *RULES),
    ),
    Mutant(
        "S1",
        "folding drops ß -> ss",
        "memrecall/engine/scoring/analysis.py",
        '"ß": "ss", ',
        "",
        ("tests/test_tokens.py",),
    ),
    Mutant(
        "S2",
        "the weak floor takes the min of its two bounds",
        "memrecall/engine/scoring/fielded.py",
        "return max(t.weak_coverage * mass, t.weak_evidence * self._idf_max)",
        "return min(t.weak_coverage * mass, t.weak_evidence * self._idf_max)",
        ("tests/test_judgement.py",),
    ),
    Mutant(
        "S3",
        "BM25's k1 is 1.5",
        "memrecall/engine/scoring/bm25.py",
        "K1 = 1.2\n",
        "K1 = 1.5\n",
        ("tests/test_bm25.py",),
    ),
    Mutant(
        "S4",
        "the fielded scorer's k1 is 1.5",
        "memrecall/engine/scoring/fielded.py",
        "    k1: float = 1.2\n",
        "    k1: float = 1.5\n",
        ("tests/test_bm25.py",),
    ),
    Mutant(
        "S5",
        "a document exactly at the strong coverage threshold is not strong",
        "memrecall/engine/scoring/judgement.py",
        "if coverage >= self.strong_coverage and",
        "if coverage > self.strong_coverage and",
        ("tests/test_judgement.py",),
    ),
)


def run(mutant: Mutant, tree: Path) -> str:
    """Plant ``mutant`` in ``tree``, run its tests, restore; return the verdict."""
    target = tree / mutant.path
    original = target.read_text(encoding="utf-8")
    if mutant.old not in original:
        return "STALE (its text is no longer in the code)"
    target.write_text(original.replace(mutant.old, mutant.new, 1), encoding="utf-8")
    try:
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *mutant.tests],
            cwd=tree,
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
    finally:
        target.write_text(original, encoding="utf-8")
    if result.returncode == 0:
        return "SURVIVED"
    failed = [
        line.removeprefix("FAILED ").split(" - ")[0].split("::", 1)[-1]
        for line in result.stdout.splitlines()
        if line.startswith("FAILED")
    ]
    return "killed by " + (", ".join(failed) if failed else "an error (see pytest)")


def main(argv: list[str]) -> int:
    """Run the chosen mutants (all by default); 1 if any survived or went stale."""
    chosen = [m for m in MUTANTS if not argv or m.name in argv]
    bad = 0
    with tempfile.TemporaryDirectory(prefix="memrecall-mutants-") as tmp:
        tree = Path(tmp) / "tree"
        shutil.copytree(
            ROOT,
            tree,
            ignore=shutil.ignore_patterns(".venv", ".git", ".hypothesis", "__pycache__"),
        )
        for mutant in chosen:
            verdict = run(mutant, tree)
            bad += not verdict.startswith("killed")
            print(f"{mutant.name:<4} {mutant.what}: {verdict}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
