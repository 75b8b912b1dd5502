"""Worker threads step aside for the event loop around the initial deadline (no wall time)."""

from __future__ import annotations

import sys
import threading

import trio
from trio.testing import MockClock, wait_all_tasks_blocked

from memrecall.actors import SimulatedSelector, open_engine
from memrecall.actors.plan import PAUSE_LEAD, MemoryBlock
from memrecall.engine.plan import INITIAL_WAIT
from memrecall.events.documents import MemoryDocument, MemoryType
from memrecall.sources import pacing
from memrecall.sources.source import Snapshot, StaticSource
from memrecall.testing import open_test_engine
from tests.factories import memory


def _doc(title: str) -> MemoryDocument:
    return memory(title, body=f"{title} notes", kind=MemoryType.REFERENCE)


class _ScanInProgress:
    """A source whose scan is under way until the test lets it reach a checkpoint and end."""

    def __init__(self) -> None:
        self.inner = StaticSource((_doc("kubectl staging deploy"),))
        self.go_on = threading.Event()
        self.at_checkpoint = threading.Event()
        self.paused: bool | None = None
        self.done = threading.Event()

    def snapshot(self) -> Snapshot:
        self.go_on.wait()
        self.at_checkpoint.set()
        self.paused = pacing.PACER.checkpoint(timeout=60.0)
        self.done.set()
        return self.inner.snapshot()


async def test_a_scan_in_progress_steps_aside_until_user_query_has_returned(
    mock_clock: MockClock,
) -> None:
    source = _ScanInProgress()
    held: dict[str, bool] = {}
    answer: list[MemoryBlock | None] = []
    async with open_engine(source) as engine:
        session = await engine.open_session()
        t0 = trio.current_time()

        async def turn() -> None:
            answer.append(await session.user_query("kubectl staging deploy"))
            held["at return"] = pacing.PACER.held

        async with trio.open_nursery() as nursery:
            nursery.start_soon(turn)
            await wait_all_tasks_blocked()
            mock_clock.jump(INITIAL_WAIT - PAUSE_LEAD - 0.005)
            await wait_all_tasks_blocked()
            held["early"] = pacing.PACER.held
            mock_clock.jump(0.005)
            await wait_all_tasks_blocked()
            held["in the lead"] = pacing.PACER.held
            # the scan reaches a checkpoint now, while the deadline is near
            source.go_on.set()
            await trio.to_thread.run_sync(source.at_checkpoint.wait)
            assert not answer
            mock_clock.jump(PAUSE_LEAD)
        assert trio.current_time() - t0 == INITIAL_WAIT
        await wait_all_tasks_blocked()
        held["after"] = pacing.PACER.held
        await trio.to_thread.run_sync(source.done.wait)
        await session.close()
    assert answer == [None]  # the deadline came first: nothing was waited for
    assert held == {"early": False, "in the lead": True, "at return": True, "after": False}
    assert source.paused is True


async def test_the_deadline_fires_on_time_while_the_scan_never_reaches_a_checkpoint(
    autojump_clock: MockClock,
) -> None:
    source = _ScanInProgress()
    async with open_engine(source) as engine:
        session = await engine.open_session()
        t0 = trio.current_time()
        block = await session.user_query("kubectl staging deploy")
        assert block is None
        assert trio.current_time() - t0 == INITIAL_WAIT
        source.go_on.set()
        await session.close()
    assert not pacing.PACER.held


async def test_a_fast_result_inside_the_window_takes_no_hold(autojump_clock: MockClock) -> None:
    # The selector is still thinking when the deadline comes near: the plan is open,
    # but its caller already has an answer, so nothing needs the loop in a hurry.
    source = StaticSource((_doc("kubectl staging deploy"),))
    selector = SimulatedSelector(latency=5.0)
    async with open_test_engine(
        source, selector=selector, scan_in_thread=False, scan_delay=0.010
    ) as engine:
        session = await engine.open_session()
        t0 = trio.current_time()
        block = await session.user_query("kubectl staging deploy")
        assert block is not None
        assert trio.current_time() - t0 == 0.010
        await trio.sleep_until(t0 + INITIAL_WAIT - PAUSE_LEAD / 2)
        assert not pacing.PACER.held
        await trio.sleep(1.0)
        assert not pacing.PACER.held
        await session.close()


# -- the pacer alone -------------------------------------------------------------------


def _in_worker(pacer: pacing.Pacer, timeout: float) -> bool:
    result: list[bool] = []

    def body() -> None:
        with pacing.worker():
            result.append(pacer.checkpoint(timeout=timeout))

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    return result[0]


def test_only_worker_threads_pause_and_only_while_held() -> None:
    pacer = pacing.Pacer()
    assert _in_worker(pacer, timeout=60.0) is False  # nothing held: no pause
    hold = pacer.hold()
    assert pacer.checkpoint(timeout=60.0) is False  # this thread is no worker: never pauses
    assert _in_worker(pacer, timeout=0.001) is True
    hold.release()
    assert _in_worker(pacer, timeout=60.0) is False
    assert pacer.statistics() == pacing.PacerStatistics(holds=0, pauses=1)


def test_holds_nest_release_idempotently_and_restore_the_switch_interval() -> None:
    pacer = pacing.Pacer()
    before = sys.getswitchinterval()
    first, second = pacer.hold(), pacer.hold()
    assert sys.getswitchinterval() == min(before, pacing.HELD_SWITCH_INTERVAL)
    first.release()
    first.release()
    assert pacer.held
    assert pacer.statistics().holds == 1
    second.release()
    assert not pacer.held
    assert sys.getswitchinterval() == before


def test_the_worker_mark_is_scoped() -> None:
    pacer = pacing.Pacer()
    hold = pacer.hold()
    with pacing.worker():
        assert pacer.checkpoint(timeout=0.001) is True
    assert pacer.checkpoint(timeout=60.0) is False
    hold.release()
