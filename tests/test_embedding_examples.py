"""The trio and asyncio examples in docs/embedding.md run as written, each in a fresh process.

Each block between ``<!-- example:NAME:start -->`` and ``<!-- example:NAME:end -->`` is
written to a file and run with this interpreter from the repository root, with ``HOME`` and
the XDG directories pointing into the test's temporary directory: the examples use the
default catalog cache, which must land there and nowhere else.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EMBEDDING = ROOT / "docs" / "embedding.md"


def example(name: str) -> str:
    """The code of the ``python`` block between the example's markers."""
    text = EMBEDDING.read_text(encoding="utf-8")
    found = re.search(
        rf"<!-- example:{name}:start -->\n```python\n(.*?)```\n<!-- example:{name}:end -->",
        text,
        re.DOTALL,
    )
    assert found is not None, f"docs/embedding.md has no example:{name} block"
    return found.group(1)


def run_example(name: str, tmp_path: Path) -> str:
    """Run the example in a fresh interpreter with a private home; return its stdout."""
    script = tmp_path / f"{name}_example.py"
    script.write_text(example(name), encoding="utf-8")
    home = tmp_path / "home"
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
    }
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    caches = list((home / ".cache" / "memrecall").glob("catalog-*.bin"))
    assert len(caches) == 1, "the default catalog cache goes to $XDG_CACHE_HOME/memrecall/"
    return done.stdout


@pytest.mark.parametrize(
    ("name", "delivered"),
    [("trio", "append after the tool output:"), ("asyncio", "appended to the tool result:")],
)
def test_the_embedding_example_runs(name: str, delivered: str, tmp_path: Path) -> None:
    out = run_example(name, tmp_path)
    assert delivered in out  # the model's pick went after the tool output
    assert "phase=<Phase.REFINED" in out
    assert "delivery_point=<DeliveryPoint.TOOL_RESULT" in out
