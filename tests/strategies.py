"""Hypothesis strategies for memrecall's data types."""

from __future__ import annotations

from hypothesis import strategies as st

from memrecall.events import (
    Abort,
    ArmInitialDeadline,
    CallSelector,
    Deliver,
    DeliveryPoint,
    DeliveryRecord,
    DiscardReason,
    EmitTelemetry,
    InitialDeadline,
    MemoryDocument,
    MemoryType,
    Phase,
    ReleaseInitialWait,
    Reset,
    ScanCompleted,
    ScanFailed,
    Scope,
    SelectionRecord,
    SelectorFailed,
    SelectorFailure,
    SelectorSucceeded,
    Shutdown,
    StartScan,
    Strategy,
    ToolResult,
    TurnEnd,
    UserQuery,
)

text = st.text(max_size=40)
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
counts = st.integers(min_value=0, max_value=10_000)

documents = st.builds(
    MemoryDocument,
    scope=st.sampled_from(Scope),
    path=text,
    relative_path=text,
    type=st.sampled_from(MemoryType),
    title=text,
    description=text,
    body=text,
    mtime=finite,
)

doc_tuples = st.lists(documents, max_size=3).map(tuple)

runtime_events = st.one_of(
    st.builds(UserQuery, query_id=text, text=text, recent_tools=st.lists(text).map(tuple)),
    st.builds(ToolResult),
    st.builds(TurnEnd, tools_requested=st.booleans()),
    st.builds(Reset),
    st.builds(Abort),
    st.builds(Shutdown),
)

completions = st.one_of(
    st.builds(
        ScanCompleted,
        docs_scanned=counts,
        fallback=doc_tuples,
        fast=doc_tuples.map(lambda docs: docs[:2]),
        candidates=counts,
    ),
    st.builds(ScanFailed, reason=text),
    st.builds(SelectorSucceeded, selected=doc_tuples),
    st.builds(SelectorFailed, failure=st.sampled_from(SelectorFailure)),
    st.builds(InitialDeadline),
)

plan_events = st.one_of(runtime_events, completions)

telemetry_records = st.one_of(
    st.builds(
        SelectionRecord,
        query_length=counts,
        docs_scanned=counts,
        docs_selected=counts,
        strategy=st.sampled_from(Strategy),
        duration_ms=finite,
    ),
    st.builds(
        DeliveryRecord,
        phase=st.sampled_from(Phase),
        delivery_point=st.sampled_from(DeliveryPoint),
        strategy=st.sampled_from(Strategy),
        docs_selected=counts,
        latency_ms=finite,
        discard_reason=st.none() | st.sampled_from(DiscardReason),
    ),
)

effects = st.one_of(
    st.builds(StartScan),
    st.builds(ArmInitialDeadline, at=finite),
    st.builds(CallSelector, candidates=counts),
    st.builds(
        Deliver,
        phase=st.sampled_from(Phase),
        point=st.sampled_from(DeliveryPoint),
        prompt=text,
        paths=st.lists(text).map(tuple),
    ),
    st.builds(ReleaseInitialWait),
    st.builds(EmitTelemetry, record=telemetry_records),
)
