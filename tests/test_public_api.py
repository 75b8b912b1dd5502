"""The public API: ``from memrecall import ...`` gives every documented runtime name, typed and
documented, nothing private or test-only, and ``import memrecall`` alone stays cheap.

``memrecall/__init__.py`` loads names on first use from a table; ``memrecall/__init__.pyi``
re-exports the same names for type checkers. These tests keep the two in step.
"""

from __future__ import annotations

import ast
import enum
import inspect
import itertools
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path

import pytest

import memrecall

PACKAGE = Path(memrecall.__file__).resolve().parent

TEST_ONLY = frozenset({"PlanObserver", "StepFunction", "step", "OneShot", "PlanActor"})
"""Hooks for tests and simulations (observer, step function, actor internals): never public."""

INTERNAL_PREFIXES = (
    "memrecall.testing",
    "memrecall.tooling",
    "memrecall.simulation",
    "memrecall.engine",
)
"""Where no public object may come from (test hooks, measurement tools, the pure core)."""


def _defining_module(name: str) -> str:
    """Where the run-time table says ``name`` comes from (``_PUBLIC`` is not in the stub)."""
    table: dict[str, str] = vars(memrecall)["_PUBLIC"]
    return table[name]


def _public_names() -> list[str]:
    return [name for name in memrecall.__all__ if name != "__version__"]


def _stub_reexports() -> dict[str, str]:
    """``name -> module`` for every ``from module import name as name`` in the stub."""
    tree = ast.parse((PACKAGE / "__init__.pyi").read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("memrecall"):
            for alias in node.names:
                assert alias.asname == alias.name, f"{alias.name} is not re-exported as itself"
                found[alias.name] = node.module
    return found


def _stub_all() -> list[str]:
    tree = ast.parse((PACKAGE / "__init__.pyi").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__":
            value = ast.literal_eval(node.value)
            assert isinstance(value, list)
            return [str(v) for v in value]
    raise AssertionError("the stub has no __all__")


def _attribute_docstring(module: types.ModuleType, name: str) -> str | None:
    """The string literal right after ``name = ...`` at the top of ``module`` (if any)."""
    tree = ast.parse(inspect.getsource(module))
    body = tree.body
    for node, after in itertools.pairwise(body):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(ast.unparse(t) == name for t in targets) and (
            isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            return after.value.value
    return None


def test_the_stub_and_the_runtime_table_name_the_same_objects() -> None:
    stub = _stub_reexports()
    assert sorted(_stub_all()) == sorted(memrecall.__all__)
    assert len(set(memrecall.__all__)) == len(memrecall.__all__)
    assert set(stub) == set(_public_names())
    for name in _public_names():
        module = sys.modules.get(stub[name]) or __import__(stub[name], fromlist=[name])
        assert getattr(memrecall, name) is getattr(module, name), name


def test_every_name_in_all_imports_and_star_import_gives_them_all() -> None:
    namespace: dict[str, object] = {}
    exec("from memrecall import *", namespace)
    assert set(memrecall.__all__) <= set(namespace)
    assert set(memrecall.__all__) <= set(dir(memrecall))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = memrecall.no_such_name  # type: ignore[attr-defined]


def test_nothing_private_or_test_only_is_public() -> None:
    for name in _public_names():
        assert not name.startswith("_"), name
        assert name not in TEST_ONLY, name
        value = getattr(memrecall, name)
        module = getattr(value, "__module__", None) or _defining_module(name)
        assert not module.startswith(INTERNAL_PREFIXES), f"{name} comes from {module}"
        assert not any(part.startswith("_") for part in module.split(".")), (name, module)


def test_every_public_name_is_documented() -> None:
    for name in _public_names():
        value = getattr(memrecall, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            # a class's own docstring, not one inherited (a function's is always its own)
            doc = value.__dict__.get("__doc__") if inspect.isclass(value) else value.__doc__
            assert isinstance(doc, str), f"{name} has no docstring"
            assert doc.strip(), f"{name} has an empty docstring"
        else:  # a type alias or a constant: an attribute docstring where it is defined
            module = sys.modules[_defining_module(name)]
            assert _attribute_docstring(module, name), f"{name} has no attribute docstring"


def _unannotated(function: Callable[..., object], owner: str) -> list[str]:
    signature = inspect.signature(function)
    missing = [
        f"{owner}({parameter.name})"
        for parameter in signature.parameters.values()
        if parameter.name not in ("self", "cls") and parameter.annotation is inspect.Parameter.empty
    ]
    if signature.return_annotation is inspect.Signature.empty:
        missing.append(f"{owner} -> ?")
    return missing


def test_every_public_function_and_method_is_annotated() -> None:
    missing: list[str] = []
    for name in _public_names():
        value = getattr(memrecall, name)
        if inspect.isfunction(value):
            missing += _unannotated(value, name)
        elif inspect.isclass(value) and not issubclass(value, enum.Enum):
            for attribute, member in vars(value).items():
                if attribute.startswith("_") and attribute != "__init__":
                    continue
                function = member.fget if isinstance(member, property) else member
                if isinstance(function, staticmethod | classmethod):
                    function = function.__func__
                if inspect.isfunction(function) and function.__module__.startswith("memrecall"):
                    missing += _unannotated(function, f"{name}.{attribute}")
    assert missing == []


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sys.modules))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return set(out.split())


HEAVY = ("trio", "httpx", "mcp", "msgspec", "attrs", "starlette", "hypercorn", "opentelemetry")


def test_importing_memrecall_imports_nothing_heavy() -> None:
    loaded = _modules_after("import memrecall")
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY)
    assert heavy == []
    assert sorted(m for m in loaded if m.startswith("memrecall.")) == []


def test_the_engine_names_do_not_pull_in_the_http_selector() -> None:
    loaded = _modules_after(
        "from memrecall import open_engine, MemoryTree, JsonlSink, SimulatedSelector"
    )
    assert "trio" in loaded  # the engine itself was loaded
    assert "httpx" not in loaded
    assert "memrecall.selectors.openai" not in loaded
    assert "httpx" in _modules_after("from memrecall import OpenAICompatibleSelector")
