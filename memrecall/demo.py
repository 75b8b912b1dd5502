"""``memrecall demo``: a scripted walk through the engine on the bundled tree."""

from __future__ import annotations

from memrecall.engine.scanner import MemoryTree, scan_tree

__all__ = ["run_demo"]


def run_demo(tree: MemoryTree) -> int:
    """Scan the tree and print what recall would see."""
    from memrecall.cli import print_scan

    print_scan(scan_tree(tree))
    return 0
