"""Type information for :mod:`memrecall`: the public API as explicit re-exports.

At run time ``__init__.py`` loads each name on first use; this stub names the same
objects for type checkers (``tests/test_public_api.py`` keeps the two in step).
"""

from typing import Final

from memrecall.actors.engine import Engine as Engine
from memrecall.actors.engine import EngineStatistics as EngineStatistics
from memrecall.actors.engine import open_engine as open_engine
from memrecall.actors.plan import MemoryBlock as MemoryBlock
from memrecall.actors.selector import Selector as Selector
from memrecall.actors.selector import SelectorError as SelectorError
from memrecall.actors.selector import SelectorHTTPError as SelectorHTTPError
from memrecall.actors.selector import SelectorRequest as SelectorRequest
from memrecall.actors.selector import SelectorResponseError as SelectorResponseError
from memrecall.actors.selector import SelectorTimeoutError as SelectorTimeoutError
from memrecall.actors.selector import SelectorUnreachableError as SelectorUnreachableError
from memrecall.actors.selector import SimulatedSelector as SimulatedSelector
from memrecall.actors.selector import selector_instructions as selector_instructions
from memrecall.actors.selector import selector_user_message as selector_user_message
from memrecall.actors.session import Session as Session
from memrecall.actors.session import SessionBusyError as SessionBusyError
from memrecall.actors.session import SessionClosedError as SessionClosedError
from memrecall.actors.session import SessionMisuseError as SessionMisuseError
from memrecall.events.documents import MemoryDocument as MemoryDocument
from memrecall.events.documents import MemoryType as MemoryType
from memrecall.events.documents import Scope as Scope
from memrecall.events.telemetry import DeliveryPoint as DeliveryPoint
from memrecall.events.telemetry import DeliveryRecord as DeliveryRecord
from memrecall.events.telemetry import DiscardReason as DiscardReason
from memrecall.events.telemetry import Phase as Phase
from memrecall.events.telemetry import SelectionRecord as SelectionRecord
from memrecall.events.telemetry import SelectorOutcome as SelectorOutcome
from memrecall.events.telemetry import Strategy as Strategy
from memrecall.events.telemetry import TelemetryRecord as TelemetryRecord
from memrecall.selectors.openai import OpenAICompatibleSelector as OpenAICompatibleSelector
from memrecall.sources.scanner import Diagnostic as Diagnostic
from memrecall.sources.scanner import DiagnosticKind as DiagnosticKind
from memrecall.sources.scanner import MemoryTree as MemoryTree
from memrecall.sources.source import DocumentSource as DocumentSource
from memrecall.sources.source import StaticSource as StaticSource
from memrecall.telemetry.sinks import CorrelatedSink as CorrelatedSink
from memrecall.telemetry.sinks import JsonlSink as JsonlSink
from memrecall.telemetry.sinks import MemorySink as MemorySink
from memrecall.telemetry.sinks import TelemetrySink as TelemetrySink

__version__: Final[str]

__all__ = [
    "CorrelatedSink",
    "DeliveryPoint",
    "DeliveryRecord",
    "Diagnostic",
    "DiagnosticKind",
    "DiscardReason",
    "DocumentSource",
    "Engine",
    "EngineStatistics",
    "JsonlSink",
    "MemoryBlock",
    "MemoryDocument",
    "MemorySink",
    "MemoryTree",
    "MemoryType",
    "OpenAICompatibleSelector",
    "Phase",
    "Scope",
    "SelectionRecord",
    "Selector",
    "SelectorError",
    "SelectorHTTPError",
    "SelectorOutcome",
    "SelectorRequest",
    "SelectorResponseError",
    "SelectorTimeoutError",
    "SelectorUnreachableError",
    "Session",
    "SessionBusyError",
    "SessionClosedError",
    "SessionMisuseError",
    "SimulatedSelector",
    "StaticSource",
    "Strategy",
    "TelemetryRecord",
    "TelemetrySink",
    "__version__",
    "open_engine",
    "selector_instructions",
    "selector_user_message",
]
