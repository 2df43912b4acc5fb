"""Cancelling calls: Deferred.cancel(), a cancelled asyncio task, and Ctrl-C during a
synchronous call, which stops handing out tasks and raises KeyboardInterrupt at once."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import sysconfig
import textwrap
import threading
import time

import pytest

import children
import uform

SLEEP_SOURCE = r"""
#include <stddef.h>
#include <stdatomic.h>
#include <time.h>
/* Sleeps *(long *)context microseconds and counts itself in the next word. */
int sleep_task(void *context, size_t task, size_t thread) {
    long *words = context;
    struct timespec pause = {0, words[0] * 1000L};
    nanosleep(&pause, NULL);
    atomic_fetch_add((_Atomic long *)&words[1], 1);
    return 0;
}
"""


@pytest.fixture(scope="module")
def sleep_library(tmp_path_factory):
    compiler = (sysconfig.get_config_var("CC") or "cc").split()
    directory = tmp_path_factory.mktemp("sleep")
    source, library = directory / "sleep.c", directory / "sleep.so"
    source.write_text(SLEEP_SOURCE)
    try:
        built = subprocess.run([*compiler, "-std=c11", "-O2", "-shared", "-fPIC", str(source), "-o", str(library)],
                               capture_output=True, text=True)
    except OSError as error:
        pytest.skip(f"no C compiler for the native task: {error}")
    assert built.returncode == 0, built.stderr
    return library


def test_cancel_stops_a_running_call_and_the_executor_goes_on(executor):
    started = threading.Event()

    def task(index, thread):
        started.set()
        time.sleep(0.002)

    pending = executor.for_n(2000, task, dynamic=True, deferred=True)
    started.wait(5)
    pending.cancel()
    with pytest.raises(uform.UFormInterruptedError) as raised:
        pending.wait(10)
    assert isinstance(raised.value, InterruptedError)
    done, total = pending.progress()
    assert total == 2000 and 0 < done < 2000
    pending.cancel()  # twice: nothing more
    seen = []
    executor.for_n(10, lambda index, thread: seen.append(index))
    assert sorted(seen) == list(range(10))


def test_a_queued_call_cancelled_never_runs(executor):
    release = threading.Event()
    blocker = executor.for_threads(lambda thread, _: release.wait(10), deferred=True)
    ran = []
    queued = executor.for_n(100, lambda index, thread: ran.append(index), deferred=True)
    queued.cancel()
    release.set()
    blocker.wait(10)
    with pytest.raises(uform.UFormInterruptedError):
        queued.wait(10)
    assert ran == [] and queued.progress() == (0, 100)


def test_cancelling_a_finished_call_keeps_its_outcome(executor):
    finished = executor.for_n(4, lambda index, thread: None, deferred=True)
    finished.wait()
    finished.cancel()
    assert finished.wait() is None
    failed = executor.for_n(1, lambda index, thread: 1 / 0, deferred=True)
    with pytest.raises(ZeroDivisionError):
        failed.wait()
    failed.cancel()
    with pytest.raises(ZeroDivisionError):
        failed.wait()


def test_cancelling_the_awaiting_task_cancels_the_call(executor):
    ran = []

    def task(index, thread):
        ran.append(index)
        time.sleep(0.002)

    pending = executor.for_n(2000, task, dynamic=True, deferred=True)

    async def main():
        waiting = asyncio.ensure_future(pending)
        await asyncio.sleep(0.05)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting

    asyncio.run(main())
    with pytest.raises(uform.UFormInterruptedError):
        pending.wait(10)
    assert 0 < len(ran) < 2000


CHILD = children.CHILD_HELPERS + r"""
import ctypes, sys, time
import uform
kind, library = sys.argv[1], sys.argv[2]
with uform.Executor.for_ram(2) as executor:
    if kind == "native":
        words = (ctypes.c_long * 2)(5000, 0)  # 5 ms a task
        call = lambda: executor.for_n_native(2000, ctypes.CDLL(library).sleep_task, words, dynamic=True)
        ran = lambda: words[1]
    else:
        count = []
        call = lambda: executor.for_n(2000, lambda index, thread: (time.sleep(0.005), count.append(index)),
                                      dynamic=True)
        ran = lambda: len(count)
    print("calling", flush=True)
    try:
        call()
        report(outcome="finished")
    except KeyboardInterrupt:
        caught = time.time()
        tasks = ran()
        seen = []
        executor.for_n(10, lambda index, thread: seen.append(index))  # still usable
        report(outcome="KeyboardInterrupt", caught=caught, ran=tasks, afterwards=sorted(seen))
"""


@pytest.mark.parametrize("kind", ["native", "python"])
def test_ctrl_c_during_a_synchronous_call(kind, sleep_library, tmp_path):
    child = subprocess.Popen([sys.executable, "-X", "dev", "-c", CHILD, kind, str(sleep_library)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        assert child.stdout.readline().strip() == "calling"
        time.sleep(0.3)  # well inside the ~5 s call
        sent = time.time()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=children.CHILD_TIMEOUT_SECONDS)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, out + err
    answer = json.loads(out.strip().splitlines()[-1])
    assert answer["outcome"] == "KeyboardInterrupt", answer
    latency = answer["caught"] - sent
    print(f"{kind}: KeyboardInterrupt {latency * 1000:.0f} ms after SIGINT, {answer['ran']} of 2000 tasks ran")
    assert latency < 0.5, f"KeyboardInterrupt came {latency:.3f} s after SIGINT"
    assert 0 < answer["ran"] < 2000
    assert answer["afterwards"] == list(range(10))
