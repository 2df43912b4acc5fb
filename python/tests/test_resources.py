"""No references or memory leak across 100,000 calls."""

import ctypes
import os
import gc
import sys
import tracemalloc

import pytest

import uform


# Sanitizer runtimes keep freed memory in quarantine: resident size says nothing under them.
SANITIZED = "asan" in os.environ.get("LD_PRELOAD", "")


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


def test_no_leak_over_100k_calls(executor):
    def task(index, thread):
        return None

    def progress(done, total):
        return None

    for _ in range(1000):  # warm up caches, the allocator and the executor's scratch
        executor.for_n(2, task)
    gc.collect()
    task_references, progress_references = sys.getrefcount(task), sys.getrefcount(progress)
    rss = rss_bytes()
    tracemalloc.start()
    first, _ = tracemalloc.get_traced_memory()
    for i in range(100_000):
        if i % 10 == 0:
            executor.for_n(2, task, progress=progress)
        else:
            executor.for_n(1, task)
    gc.collect()
    last, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert sys.getrefcount(task) == task_references
    assert sys.getrefcount(progress) == progress_references
    assert last - first < 64 * 1024, f"Python heap grew by {last - first} bytes"
    assert SANITIZED or rss_bytes() - rss < 16 << 20, "resident memory grew by more than 16 MiB"


def test_no_leak_over_deferred_and_failing_calls(executor):
    def task(index, thread):
        return None

    def failing(index, thread):
        raise ValueError(index)

    def progress(done, total):
        return None

    for _ in range(200):
        executor.for_n(2, task, deferred=True, progress=progress).wait()
    gc.collect()
    counts = [sys.getrefcount(f) for f in (task, failing, progress)]
    tracemalloc.start()
    first, _ = tracemalloc.get_traced_memory()
    for _ in range(10_000):
        executor.for_n(2, task, deferred=True, progress=progress).wait()
        try:
            executor.for_n(2, failing)
        except ValueError:
            pass
    gc.collect()
    last, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert [sys.getrefcount(f) for f in (task, failing, progress)] == counts
    assert last - first < 64 * 1024, f"Python heap grew by {last - first} bytes"


def test_no_leak_in_native_calls_and_errors(executor):
    task_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
    callback = task_type(lambda context, index, thread: 0)
    address = ctypes.cast(callback, ctypes.c_void_p).value
    keep = object()
    references = sys.getrefcount(keep)
    for _ in range(10_000):
        executor.for_n_native(1, address, 0, deferred=True, keep=keep).wait()
    assert sys.getrefcount(keep) == references
    gc.collect()
    tracemalloc.start()
    first, _ = tracemalloc.get_traced_memory()
    for _ in range(10_000):
        try:
            uform.Executor.for_ram(memory_domains=[999])
        except uform.NotFoundError:
            pass
        uform.gpu_devices()
    gc.collect()
    last, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert last - first < 64 * 1024


def test_executors_are_released():
    gc.collect()
    rss = rss_bytes()
    for _ in range(300):
        with uform.Executor.for_ram(2) as executor:
            executor.for_n(4, lambda task, thread: None)
    with pytest.warns(ResourceWarning, match="unclosed executor"):
        for _ in range(300):
            executor = uform.Executor.for_ram(2)  # freed by its last reference, which warns
            del executor
    assert SANITIZED or rss_bytes() - rss < 16 << 20
