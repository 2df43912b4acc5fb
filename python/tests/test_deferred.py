"""Deferred calls: polled, waited on with a timeout, awaited from asyncio with progress."""

import asyncio
import builtins
import threading
import time

import pytest

import uform


def test_deferred_returns_at_once_and_finishes(executor):
    release = threading.Event()
    deferred = executor.for_n(4, lambda task, thread: release.wait(5), deferred=True)
    assert isinstance(deferred, uform.Deferred)
    assert deferred.done() is False
    release.set()
    assert deferred.wait() is None
    assert deferred.done() is True
    assert deferred.progress() == (4, 4)
    deferred.wait()  # waiting again answers the same


def test_wait_timeout_raises_timeout_error(executor):
    release = threading.Event()
    deferred = executor.for_threads(lambda task, thread: release.wait(5), deferred=True)
    started = time.monotonic()
    with pytest.raises(uform.TimeoutError) as error:
        deferred.wait(timeout=0.1)
    assert 0.09 <= time.monotonic() - started < 2
    assert isinstance(error.value, builtins.TimeoutError)
    assert error.value.status == 7
    with pytest.raises(builtins.TimeoutError):
        deferred.wait(0)
    release.set()
    deferred.wait(timeout=5)


def test_deferred_failure_surfaces_when_waited(executor):
    def task(index, thread):
        raise ArithmeticError(index)

    deferred = executor.for_n(8, task, deferred=True)
    with pytest.raises(ArithmeticError):
        deferred.wait()
    with pytest.raises(ArithmeticError):
        deferred.wait()  # and every time after


def test_deferred_calls_run_in_submission_order(executor):
    order = []
    handles = [executor.for_threads(lambda task, thread, i=i: order.append(i) if thread == 0 else None, deferred=True)
               for i in range(10)]
    for handle in handles:
        handle.wait()
    assert order == list(range(10))


def test_full_deferred_table_is_contended():
    with uform.Executor.for_ram(2, deferred_limit=1) as executor:
        release = threading.Event()
        first = executor.for_n(2, lambda task, thread: release.wait(5), deferred=True)
        with pytest.raises(uform.ContendedError) as error:
            executor.for_n(2, lambda task, thread: None, deferred=True)
        assert error.value.status == 2
        release.set()
        first.wait()
        executor.for_n(2, lambda task, thread: None, deferred=True).wait()


def test_dropping_an_unfinished_deferred_does_not_block(executor):
    release = threading.Event()
    seen = []
    # The callable is referenced by the call alone: it must stay alive until the call ends.
    deferred = executor.for_n(8, lambda task, thread: (release.wait(10), seen.append(task)), deferred=True)
    started = time.monotonic()
    del deferred
    assert time.monotonic() - started < 5, "dropping the handle waited for its call"
    assert seen == []
    release.set()
    executor.drain()
    assert sorted(seen) == list(range(8))


def test_closing_with_deferred_calls_in_flight():
    seen = []
    with uform.Executor.for_ram(2) as executor:
        deferred = executor.for_n(20, lambda task, thread: (time.sleep(0.002), seen.append(task)), deferred=True)
    assert sorted(seen) == list(range(20))  # free drained it
    deferred.wait()
    assert deferred.done()


def test_awaited_with_progress_without_blocking_the_loop(executor):
    reports = []
    ticks = 0

    async def ticker(stop):
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0.001)

    async def main():
        stop = asyncio.Event()
        tick_task = asyncio.create_task(ticker(stop))
        deferred = executor.for_n(
            40,
            lambda task, thread: time.sleep(0.005),
            deferred=True,
            progress=lambda done, total: reports.append((threading.get_ident(), done, total)),
        )
        result = await deferred
        stop.set()
        await tick_task
        return result

    assert asyncio.run(main()) is None
    assert ticks >= 5, "the event loop was blocked while awaiting"
    assert reports[-1][1:] == (40, 40)
    assert all(thread != threading.get_ident() for thread, _, _ in reports)  # on the executor's threads


def test_awaiting_a_failed_call_raises(executor):
    async def main():
        await executor.for_n(3, lambda task, thread: 1 / 0, deferred=True)

    with pytest.raises(ZeroDivisionError):
        asyncio.run(main())


def test_gather_many(executor):
    async def main():
        handles = [executor.for_n(10, lambda task, thread: None, deferred=True) for _ in range(20)]
        await asyncio.gather(*handles)
        return [handle.done() for handle in handles]

    assert all(asyncio.run(main()))


def test_await_needs_a_running_loop(executor):
    deferred = executor.for_n(1, lambda task, thread: None, deferred=True)
    with pytest.raises(RuntimeError):
        deferred.__await__()
    deferred.wait()


def test_bad_timeouts(executor):
    deferred = executor.for_n(1, lambda task, thread: None, deferred=True)
    for bad in (-1, float("nan")):
        with pytest.raises(ValueError):
            deferred.wait(bad)
    with pytest.raises(TypeError):
        deferred.wait("soon")
    deferred.wait()


def test_deferred_dropped_by_its_own_callback(executor):
    holder = {}
    ready = threading.Event()

    def task(index, thread):
        if index == 0:
            assert ready.wait(5)
            holder.pop("deferred")  # the last reference, dropped while its call runs

    holder["deferred"] = executor.for_n(4, lambda index, thread: None, deferred=True)
    holder["deferred"].wait()
    # A Deferred freed from within a callback of the executor running it must not wait on itself.
    deferred = executor.for_n(64, task, dynamic=True, deferred=True)
    holder["deferred"] = deferred
    del deferred
    ready.set()
    executor.drain()
    assert "deferred" not in holder
    executor.for_n(4, lambda index, thread: None)  # reaps the parked handle


def test_wait_never_raises_a_stale_timeout(executor):
    # The window: a wait slice runs out (TIMEOUT) while the call is running, and the call then
    # finishes before the poll that tells a finished call from a running one. The hook finishes
    # the call right there.
    release = threading.Event()
    deferred = executor.for_n(1, lambda task, thread: release.wait(10), deferred=True)
    windows = []

    def finish_inside_the_window():
        if not windows:
            release.set()
            while not deferred.done():
                time.sleep(0.001)
        windows.append(deferred.done())

    uform.lib._set_wait_slice_hook(finish_inside_the_window)
    try:
        assert deferred.wait() is None  # no timeout: it must wait, not raise TimeoutError
    finally:
        uform.lib._set_wait_slice_hook(None)
    assert windows == [True]


def test_wait_keeps_a_failure_found_after_a_slice(executor):
    release = threading.Event()

    def task(index, thread):
        release.wait(10)
        raise KeyError("after the slice")

    deferred = executor.for_n(1, task, deferred=True)

    def finish():
        release.set()
        while not deferred.done():
            time.sleep(0.001)

    uform.lib._set_wait_slice_hook(finish)
    try:
        with pytest.raises(KeyError, match="after the slice"):
            deferred.wait(timeout=5)
    finally:
        uform.lib._set_wait_slice_hook(None)


def uform_await_threads():
    return [thread for thread in threading.enumerate() if thread.name.startswith("uform:await")]


def test_many_awaits_share_one_waiting_thread(executor):
    release = threading.Event()
    peak = 0

    async def main():
        nonlocal peak
        first = executor.for_n(1, lambda task, thread: release.wait(10), deferred=True)
        handles = [first] + [executor.for_n(1, lambda task, thread: None, deferred=True) for _ in range(30)]
        waiting = [asyncio.ensure_future(handle) for handle in handles]
        await asyncio.sleep(0.05)
        peak = len(uform_await_threads())
        release.set()
        await asyncio.gather(*waiting)
        return [handle.done() for handle in handles]

    assert all(asyncio.run(main()))
    assert peak == 1, f"{peak} threads waited for 31 awaits"
