"""Telemetry sinks: where the engine's telemetry records go (JSON Lines file, memory, guarded)."""

from .sinks import DEFAULT_QUEUE_RECORDS as DEFAULT_QUEUE_RECORDS
from .sinks import CorrelatedSink as CorrelatedSink
from .sinks import GuardedSink as GuardedSink
from .sinks import JsonlSink as JsonlSink
from .sinks import MemorySink as MemorySink
from .sinks import TelemetrySink as TelemetrySink
from .sinks import sink_name as sink_name
from .sinks import telemetry_codec as telemetry_codec
