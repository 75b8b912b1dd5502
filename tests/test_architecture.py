"""The package's shape, checked on its source: a pure engine, layer rules, no import cycles.

The layer table below is the one in docs/architecture.md; change both together. What the
built wheel holds (and that it runs the demo once installed) is checked by ``.ci/check-wheel``:
building needs the build backend, which may have to come from the network.
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "memrecall"

IO_MODULES = frozenset(
    {
        "os",
        "io",
        "pathlib",
        "threading",
        "ctypes",
        "tempfile",
        "trio",
        "time",
        "sqlite3",
        "subprocess",
    }
)
"""What nothing under ``memrecall/engine/`` may import (directly): the engine is sans-IO."""

ROOT = "memrecall"
"""The bare package (``__version__``): anyone may import it."""

FACES = ("memrecall.cli", "memrecall.demo", "memrecall.scanview", "memrecall.__main__")
CONSOLE = ("memrecall.argtypes", "memrecall.progress")
"""Console helpers of the faces that the measurement tools share."""

_BELOW_TOOLING = (
    ROOT,
    "memrecall.events",
    "memrecall.engine",
    "memrecall.sources",
    "memrecall.telemetry",
    "memrecall.actors",
    "memrecall.selectors",
    "memrecall.store",
    "memrecall.governance",
    "memrecall.tools",
    *CONSOLE,
)

LAYERS: dict[str, tuple[str, ...]] = {
    # layer (module prefix; the longest that matches applies): the prefixes its modules may import
    ROOT: (),
    "memrecall.events": ("memrecall.events",),
    "memrecall.engine": ("memrecall.events", "memrecall.engine"),
    "memrecall.sources": (ROOT, "memrecall.events", "memrecall.engine", "memrecall.sources"),
    "memrecall.telemetry": (ROOT, "memrecall.events", "memrecall.telemetry"),
    "memrecall.actors": (
        "memrecall.events",
        "memrecall.engine",
        "memrecall.sources",
        "memrecall.telemetry",
        "memrecall.actors",
    ),
    # ready-made selectors: they implement the contract in memrecall.actors.selector
    "memrecall.selectors": (
        "memrecall.events",
        "memrecall.engine",
        "memrecall.actors",
        "memrecall.selectors",
    ),
    "memrecall.governance": ("memrecall.events", "memrecall.governance"),
    "memrecall.tools": (
        ROOT,
        "memrecall.events",
        "memrecall.engine.scoring",
        "memrecall.governance",
        "memrecall.store",
        "memrecall.tools",
    ),
    "memrecall.tools.contract": ("memrecall.engine.scoring", "memrecall.tools.contract"),
    "memrecall.store": (
        ROOT,
        "memrecall.events",
        "memrecall.engine",
        "memrecall.sources",
        "memrecall.governance",
        "memrecall.store",
    ),
    # the asyncio host (trio guest mode) and the test-hooks factory: beside the actors
    "memrecall.aio": (
        "memrecall.events",
        "memrecall.engine",
        "memrecall.sources",
        "memrecall.telemetry",
        "memrecall.actors",
        "memrecall.selectors",
        "memrecall.aio",
    ),
    "memrecall.testing": (
        "memrecall.events",
        "memrecall.engine",
        "memrecall.sources",
        "memrecall.telemetry",
        "memrecall.actors",
        "memrecall.aio",
        "memrecall.testing",
    ),
    "memrecall.mcp": (*_BELOW_TOOLING, "memrecall.mcp"),  # the MCP server: a face
    "memrecall.http": (*_BELOW_TOOLING, "memrecall.http"),  # the management API: a face
    "memrecall.tooling": (*_BELOW_TOOLING, "memrecall.http", "memrecall.tooling"),
    "memrecall.simulation": (
        *_BELOW_TOOLING,
        "memrecall.testing",
        "memrecall.tooling",
        "memrecall.simulation",
    ),
    "memrecall.argtypes": (),
    "memrecall.progress": (),
    **dict.fromkeys(FACES, (ROOT + ".",)),  # a face may import anything of memrecall
}


def _module_name(path: Path, package: Path) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(package: Path = PACKAGE) -> dict[str, Path]:
    return {_module_name(p, package): p for p in sorted(package.rglob("*.py"))}


def _type_only(tree: ast.Module) -> set[ast.stmt]:
    """The statements under ``if TYPE_CHECKING:`` (they never run, so they make no cycle)."""
    return {
        statement
        for node in ast.walk(tree)
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name | ast.Attribute)
        and ast.unparse(node.test).endswith("TYPE_CHECKING")
        for child in node.body
        for statement in ast.walk(child)
        if isinstance(statement, ast.stmt)
    }


def _imports(
    module: str, path: Path, known: Mapping[str, Path], *, runtime: bool = False
) -> Iterator[tuple[str, int]]:
    """Every module ``module`` imports (absolute names), with the line, anywhere in the file
    (``runtime``: leaving out the imports under ``if TYPE_CHECKING:``)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_only(tree) if runtime else set()
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            for alias in node.names:
                # ``from pkg import mod`` imports the module pkg.mod
                sub = f"{source}.{alias.name}"
                yield (sub if sub in known else source), node.lineno


def _graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules of the package it imports when it runs."""
    known = _modules(package)
    return {
        module: {name for name, _ in _imports(module, path, known, runtime=True) if name in known}
        for module, path in known.items()
    }


def _cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module, or a self-import (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _matches(name: str, prefix: str) -> bool:
    """``name`` is ``prefix`` or in it (``memrecall`` matches only itself, ``memrecall.`` all)."""
    if prefix == ROOT:
        return name == ROOT
    return name == prefix or name.startswith(prefix if prefix.endswith(".") else prefix + ".")


def _layer(module: str) -> str | None:
    candidates = [layer for layer in LAYERS if _matches(module, layer)]
    return max(candidates, key=len) if candidates else None


def _engine_io_imports(package: Path = PACKAGE) -> list[str]:
    known = _modules(package)
    return [
        f"{path.relative_to(package.parent)}:{line} imports {name}"
        for module, path in known.items()
        if _matches(module, "memrecall.engine")
        for name, line in _imports(module, path, known)
        if name.split(".")[0] in IO_MODULES
    ]


def _layer_violations(package: Path = PACKAGE) -> list[str]:
    known = _modules(package)
    out = []
    for module, path in known.items():
        layer = _layer(module)
        if layer is None:
            out.append(f"{module} belongs to no layer: add it to the table in this test")
            continue
        for name, line in _imports(module, path, known):
            if not _matches(name, ROOT + ".") and name != ROOT:
                continue  # the standard library and third parties
            if not any(_matches(name, allowed) for allowed in LAYERS[layer]):
                out.append(f"{path.relative_to(package.parent)}:{line}: {layer} imports {name}")
    return out


def test_the_engine_does_no_io() -> None:
    assert _engine_io_imports() == []


def test_an_io_import_in_the_engine_is_caught(tmp_path: Path) -> None:
    planted = tmp_path / "memrecall"
    shutil.copytree(PACKAGE, planted, ignore=shutil.ignore_patterns("__pycache__", "examples"))
    render = planted / "engine" / "render.py"
    render.write_text("import os\n" + render.read_text(encoding="utf-8"), encoding="utf-8")
    assert _engine_io_imports(planted) == ["memrecall/engine/render.py:1 imports os"]


def test_no_import_cycles() -> None:
    cycles = _cycles(_graph())
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_a_planted_cycle_is_named(tmp_path: Path) -> None:
    planted = tmp_path / "memrecall"
    shutil.copytree(PACKAGE, planted, ignore=shutil.ignore_patterns("__pycache__", "examples"))
    text = planted / "engine" / "scoring" / "text.py"
    text.write_text(
        text.read_text(encoding="utf-8") + "\nfrom memrecall.engine.scoring import tokens\n",
        encoding="utf-8",
    )
    assert _cycles(_graph(planted)) == [
        ["memrecall.engine.scoring.text", "memrecall.engine.scoring.tokens"]
    ]


def test_every_layer_imports_only_what_its_rule_allows() -> None:
    assert _layer_violations() == []


def test_a_layer_breach_is_caught(tmp_path: Path) -> None:
    planted = tmp_path / "memrecall"
    shutil.copytree(PACKAGE, planted, ignore=shutil.ignore_patterns("__pycache__", "examples"))
    scanner = planted / "sources" / "scanner.py"
    scanner.write_text(
        scanner.read_text(encoding="utf-8") + "\nfrom memrecall.actors import plan\n",
        encoding="utf-8",
    )
    violations = _layer_violations(planted)
    assert len(violations) == 1
    assert "memrecall.sources imports memrecall.actors.plan" in violations[0]


def test_the_bundled_examples_and_thresholds_are_package_data() -> None:
    assert (PACKAGE / "examples" / "memory" / "project" / "MEMORY.md").is_file()
    assert (PACKAGE / "engine" / "scoring" / "thresholds.json").is_file()
    assert not (PACKAGE.parent / "simulations").exists()
