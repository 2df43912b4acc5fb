"""Two Python threads on one executor, with blocks, drain in both moods, fork."""

import os
import threading
import time

import pytest

import uform


def test_overlapping_threads_get_contended(executor):
    entered = threading.Event()
    release = threading.Event()
    errors = []

    def hold():
        try:
            executor.for_threads(lambda task, thread: (entered.set(), release.wait(5)))
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    holder = threading.Thread(target=hold)
    holder.start()
    assert entered.wait(5)
    with pytest.raises(uform.ContendedError) as error:
        executor.for_n(1, lambda task, thread: None)
    assert error.value.status == 2
    release.set()
    holder.join()
    assert not errors
    executor.for_n(1, lambda task, thread: None)  # free again


def test_threads_taking_one_executor_each():
    results = [0, 0]

    def work(slot):
        with uform.Executor.for_ram(1) as executor:
            for _ in range(200):
                executor.for_n(5, lambda task, thread: None)
            results[slot] = 1

    threads = [threading.Thread(target=work, args=(slot,)) for slot in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [1, 1]


def test_close_waits_for_another_threads_call():
    executor = uform.Executor.for_ram(2)
    entered = threading.Event()
    finished = []

    def run():
        executor.for_threads(lambda task, thread: (entered.set(), time.sleep(0.2)))
        finished.append(True)

    runner = threading.Thread(target=run)
    runner.start()
    assert entered.wait(5)
    executor.close()
    assert executor.closed
    runner.join()
    assert finished == [True]


def test_with_block_closes_on_exception():
    with pytest.raises(KeyError):
        with uform.Executor.for_ram(2) as executor:
            raise KeyError("inside")
    assert executor.closed


@pytest.mark.parametrize("mood", [uform.Mood.SPINNING, uform.Mood.PARKED])
def test_drain_in_both_moods(executor, mood):
    executor.drain(mood)
    assert executor.mood is mood
    seen = []
    for _ in range(20):
        executor.for_n(4, lambda task, thread: seen.append(task))
    assert len(seen) == 80
    executor.drain(mood=mood)
    assert executor.mood is mood


def test_drain_waits_for_deferred_calls(executor):
    seen = []
    executor.for_n(10, lambda task, thread: (time.sleep(0.005), seen.append(task)), deferred=True)
    executor.drain(uform.Mood.SPINNING)
    assert sorted(seen) == list(range(10))
    executor.drain(uform.Mood.PARKED)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork()")
def test_forked_child_gets_forked_error(executor):
    executor.for_n(2, lambda task, thread: None)
    pid = os.fork()
    if pid == 0:  # the child: answer through the exit code, never return into pytest
        code = 1
        try:
            executor.for_n(2, lambda task, thread: None)
        except uform.ForkedError:
            code = 0
        except BaseException:
            code = 2
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    executor.for_n(2, lambda task, thread: None)  # the parent's executor is untouched
