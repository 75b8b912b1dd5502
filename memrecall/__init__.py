"""memrecall: recall long-term memory into an agent's prompt, on time and exactly once.

The public API is importable from here (``from memrecall import open_engine,
MemoryTree``); ``__all__`` lists it and docs/public-api.md describes it. Names are
loaded on first use (PEP 562), so ``import memrecall`` imports nothing else: trio
comes with the first engine name, httpx only with :class:`OpenAICompatibleSelector`.
``__init__.pyi`` holds the same names as explicit re-exports for type checkers;
``tests/test_public_api.py`` keeps the two in step.
"""

__version__ = "0.1.0"

_PUBLIC: dict[str, str] = {  # not typing.Final: importing typing costs more than the rest
    # engine and sessions
    "open_engine": "memrecall.actors.engine",
    "Engine": "memrecall.actors.engine",
    "EngineStatistics": "memrecall.actors.engine",
    "Session": "memrecall.actors.session",
    "SessionClosedError": "memrecall.actors.session",
    "SessionMisuseError": "memrecall.actors.session",
    "SessionBusyError": "memrecall.actors.session",
    "MemoryBlock": "memrecall.actors.plan",
    # where memory comes from
    "MemoryTree": "memrecall.sources.scanner",
    "Diagnostic": "memrecall.sources.scanner",
    "DiagnosticKind": "memrecall.sources.scanner",
    "DocumentSource": "memrecall.sources.source",
    "StaticSource": "memrecall.sources.source",
    "MemoryDocument": "memrecall.events.documents",
    "MemoryType": "memrecall.events.documents",
    "Scope": "memrecall.events.documents",
    # selectors
    "Selector": "memrecall.actors.selector",
    "SelectorRequest": "memrecall.actors.selector",
    "SimulatedSelector": "memrecall.actors.selector",
    "OpenAICompatibleSelector": "memrecall.selectors.openai",
    "SelectorError": "memrecall.actors.selector",
    "SelectorHTTPError": "memrecall.actors.selector",
    "SelectorResponseError": "memrecall.actors.selector",
    "SelectorTimeoutError": "memrecall.actors.selector",
    "SelectorUnreachableError": "memrecall.actors.selector",
    "selector_instructions": "memrecall.actors.selector",
    "selector_user_message": "memrecall.actors.selector",
    # telemetry
    "TelemetrySink": "memrecall.telemetry.sinks",
    "CorrelatedSink": "memrecall.telemetry.sinks",
    "JsonlSink": "memrecall.telemetry.sinks",
    "MemorySink": "memrecall.telemetry.sinks",
    "TelemetryRecord": "memrecall.events.telemetry",
    "SelectionRecord": "memrecall.events.telemetry",
    "DeliveryRecord": "memrecall.events.telemetry",
    "Phase": "memrecall.events.telemetry",
    "DeliveryPoint": "memrecall.events.telemetry",
    "DiscardReason": "memrecall.events.telemetry",
    "Strategy": "memrecall.events.telemetry",
    "SelectorOutcome": "memrecall.events.telemetry",
}
"""Public name -> the module that defines it (what ``__getattr__`` imports on first use)."""

__all__ = ["__version__", *_PUBLIC]  # noqa: PLE0604


def __getattr__(name: str) -> object:
    """Load a public name from its module on first use (then it is a plain attribute)."""
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'memrecall' has no attribute {name!r}")
    # __import__ rather than importlib.import_module: importing importlib costs more than this file
    value: object = getattr(__import__(module, fromlist=[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's attributes, the not yet loaded public names included."""
    return sorted({*globals(), *_PUBLIC})
