"""Verbs with Python callables (run holding the GIL) and native ones (run without it)."""

import ctypes
import gc
import subprocess
import sys
import sysconfig
import threading
import time

import pytest

import uform

NATIVE_SOURCE = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

typedef struct {
    _Atomic unsigned long long calls;
    _Atomic unsigned long long sum;
    unsigned long long fail_at;
    int fail_status;
    _Atomic int flag;
} counter_t;

int count_task(void *context, size_t task, size_t thread) {
    counter_t *counter = context;
    atomic_fetch_add(&counter->calls, 1);
    atomic_fetch_add(&counter->sum, task);
    if (counter->fail_status && task == counter->fail_at) return counter->fail_status;
    return 0;
}

int count_slice(void *context, size_t first, size_t count, size_t thread) {
    counter_t *counter = context;
    for (size_t i = first; i < first + count; ++i) {
        atomic_fetch_add(&counter->calls, 1);
        atomic_fetch_add(&counter->sum, i);
    }
    return 0;
}

/* Waits (at most 5 s) for a Python thread to raise the flag: only possible without the GIL. */
int wait_for_flag(void *context, size_t task, size_t thread) {
    counter_t *counter = context;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (!atomic_load(&counter->flag)) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > 5) return 7;
    }
    return 0;
}
"""


class Counter(ctypes.Structure):
    _fields_ = [
        ("calls", ctypes.c_uint64),
        ("sum", ctypes.c_uint64),
        ("fail_at", ctypes.c_uint64),
        ("fail_status", ctypes.c_int),
        ("flag", ctypes.c_int),
    ]


@pytest.fixture(scope="module")
def native(tmp_path_factory):
    compiler = (sysconfig.get_config_var("CC") or "cc").split()
    directory = tmp_path_factory.mktemp("native")
    source = directory / "native.c"
    library = directory / "native.so"
    source.write_text(NATIVE_SOURCE)
    try:
        built = subprocess.run([*compiler, "-std=c11", "-O2", "-shared", "-fPIC", str(source), "-o", str(library)],
                               capture_output=True, text=True)
    except OSError as error:
        pytest.skip(f"no C compiler for the native helpers: {error}")
    assert built.returncode == 0, built.stderr
    return ctypes.CDLL(str(library))


def address(function) -> int:
    return ctypes.cast(function, ctypes.c_void_p).value


# ---- Python callables -------------------------------------------------------------------------


@pytest.mark.parametrize("dynamic", [False, True])
def test_for_n_runs_every_task_once(executor, dynamic):
    seen = []
    lock = threading.Lock()

    def task(index, thread):
        assert 0 <= thread < executor.threads
        with lock:
            seen.append(index)

    assert executor.for_n(1000, task, dynamic=dynamic) is None
    assert sorted(seen) == list(range(1000))


def test_for_n_static_split(executor):
    threads = {}
    executor.for_n(10, lambda task, thread: threads.__setitem__(task, thread))
    # thread t takes [t*n/T, (t+1)*n/T)
    expected = {task: next(t for t in range(2) if t * 10 // 2 <= task < (t + 1) * 10 // 2) for task in range(10)}
    assert threads == expected


def test_for_n_zero_tasks(executor):
    executor.for_n(0, lambda task, thread: pytest.fail("no task expected"))


def test_for_threads_calls_every_thread_once(executor):
    seen = []
    executor.for_threads(lambda task, thread: seen.append((task, thread)))
    assert sorted(seen) == [(t, t) for t in range(executor.threads)]


def test_for_slices_cover_the_range(executor):
    slices = []
    executor.for_slices(101, lambda first, count, thread: slices.append((first, count, thread)))
    covered = sorted(i for first, count, _ in slices for i in range(first, first + count))
    assert covered == list(range(101))
    assert all(count > 0 for _, count, _ in slices)
    assert len(slices) <= executor.threads


def test_first_exception_is_raised_again(executor):
    class Stop(Exception):
        pass

    calls = []

    def task(index, thread):
        calls.append(index)
        raise Stop(index)

    with pytest.raises(Stop) as error:
        executor.for_n(1000, task, dynamic=True)
    assert error.value.args[0] in calls
    assert len(calls) < 1000  # later tasks were skipped
    assert error.value.__traceback__ is not None
    executor.for_n(10, lambda task, thread: None)  # the executor still works


def test_base_exceptions_are_raised_again(executor):
    def task(index, thread):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        executor.for_threads(task)


def test_progress_reports(executor):
    reports = []
    executor.for_n(200, lambda task, thread: None, progress=lambda done, total: reports.append((done, total)))
    assert reports, "progress was never reported"
    assert all(total == 200 for _, total in reports)
    dones = [done for done, _ in reports]
    assert dones == sorted(dones) and dones[-1] == 200


def test_progress_exception_is_raised(executor):
    def progress(done, total):
        raise LookupError("progress")

    with pytest.raises(LookupError):
        executor.for_n(10, lambda task, thread: None, progress=progress)


def test_callback_must_not_use_its_executor(executor):
    def task(index, thread):
        executor.for_n(1, lambda t, th: None)

    with pytest.raises(RuntimeError, match="callback"):
        executor.for_n(1, task)

    def closing(index, thread):
        executor.close()

    with pytest.raises(RuntimeError):
        executor.for_threads(closing)
    assert not executor.closed


def test_other_executor_inside_a_callback(executor):
    with uform.Executor.for_ram(1) as inner:
        seen = []
        executor.for_n(4, lambda task, thread: inner.for_n(1, lambda t, th: seen.append(task)) if task == 0 else None)
        assert seen == [0]


# ---- native callables -------------------------------------------------------------------------


@pytest.mark.parametrize("dynamic", [False, True])
def test_native_for_n(executor, native, dynamic):
    counter = Counter()
    executor.for_n_native(10_000, address(native.count_task), ctypes.addressof(counter), dynamic=dynamic)
    assert counter.calls == 10_000
    assert counter.sum == sum(range(10_000))


def test_native_for_slices_and_threads(executor, native):
    counter = Counter()
    executor.for_slices_native(777, address(native.count_slice), ctypes.addressof(counter))
    assert (counter.calls, counter.sum) == (777, sum(range(777)))
    counter = Counter()
    executor.for_threads_native(address(native.count_task), ctypes.addressof(counter))
    assert counter.calls == executor.threads


def test_native_status_becomes_its_exception(executor, native):
    counter = Counter(fail_at=3, fail_status=8)  # MISMATCH
    with pytest.raises(uform.MismatchError) as error:
        executor.for_n_native(10, address(native.count_task), ctypes.addressof(counter))
    assert error.value.status == 8


def test_native_runs_without_the_gil(executor, native):
    counter = Counter()

    def raise_flag():
        time.sleep(0.05)
        counter.flag = 1  # needs the GIL while the call runs

    thread = threading.Thread(target=raise_flag)
    thread.start()
    executor.for_threads_native(address(native.wait_for_flag), ctypes.addressof(counter))
    thread.join()


def test_native_with_python_progress(executor, native):
    counter = Counter()
    reports = []
    executor.for_n_native(500, address(native.count_task), ctypes.addressof(counter),
                          progress=lambda done, total: reports.append(done))
    assert counter.calls == 500 and reports[-1] == 500


def test_ctypes_callback(executor):
    task_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
    seen = []
    lock = threading.Lock()

    def task(context, index, thread):
        with lock:
            seen.append(index)
        return 0

    callback = task_type(task)
    executor.for_n_native(100, address(callback))
    assert sorted(seen) == list(range(100))


def test_native_deferred_keeps_its_objects(executor, native):
    counter = Counter()
    deferred = executor.for_n_native(1000, address(native.count_task), ctypes.addressof(counter), deferred=True,
                                     keep=counter)
    before = sys.getrefcount(counter)
    deferred.wait()
    del deferred
    assert sys.getrefcount(counter) == before - 1
    assert counter.calls == 1000


def test_native_rejects_bad_addresses(executor):
    with pytest.raises(ValueError):
        executor.for_n_native(1, 0)
    with pytest.raises(ValueError):
        executor.for_n_native(1, -5)
    with pytest.raises(TypeError):
        executor.for_n_native(1, "0x1000")
    with pytest.raises(TypeError):
        executor.for_n_native(1, 0x7F0000001000, 1.5)  # context checked before any call


def test_verb_signatures():
    import inspect

    def parameters(method):
        with uform.Executor.for_ram(1) as executor:  # closed: an unclosed one warns
            return str(inspect.signature(getattr(executor, method)))

    assert parameters("for_n") == "(n, fn, *, dynamic=False, deferred=False, progress=None)"
    assert parameters("for_threads") == "(fn, *, deferred=False, progress=None)"
    assert parameters("for_slices") == "(n, fn, *, deferred=False, progress=None)"
    assert parameters("for_n_native") == (
        "(n, function, context=0, *, dynamic=False, deferred=False, progress=None, keep=None)"
    )
    assert parameters("for_threads_native") == "(function, context=0, *, deferred=False, progress=None, keep=None)"
    assert parameters("for_slices_native") == (
        "(n, function, context=0, *, deferred=False, progress=None, keep=None)"
    )
    assert str(inspect.signature(uform.Deferred.wait)) == "(self, /, timeout=None)"


# ---- ctypes and cffi objects as native callables -------------------------------------------------


def test_native_verbs_take_ctypes_functions_and_objects(executor, native):
    counter = Counter()
    executor.for_n_native(100, native.count_task, counter)  # a library's symbol; a Structure as context
    assert (counter.calls, counter.sum) == (100, sum(range(100)))
    counter = Counter()
    executor.for_slices_native(50, native.count_slice, ctypes.pointer(counter))  # a ctypes pointer
    assert (counter.calls, counter.sum) == (50, sum(range(50)))
    counter = Counter()
    executor.for_threads_native(native.count_task, ctypes.c_void_p(ctypes.addressof(counter)))
    assert counter.calls == executor.threads


def test_a_deferred_call_keeps_its_ctypes_callback_alive(executor):
    task_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
    seen = []
    release = threading.Event()

    def task(context, index, thread):
        release.wait(10)
        seen.append(index)
        return 0

    callback = task_type(task)
    alone = sys.getrefcount(callback)
    deferred = executor.for_n_native(4, callback, deferred=True)
    gc.collect()  # ctypes.cast, reading its address, leaves a cycle through it
    held = sys.getrefcount(callback)
    del callback  # the call holds it: freeing its trampoline now would crash the workers
    gc.collect()
    release.set()
    deferred.wait()
    assert sorted(seen) == [0, 1, 2, 3]
    assert held == alone + 1  # the Deferred holds it


def test_native_verbs_refuse_other_objects_clearly(executor, native):
    with pytest.raises(TypeError, match="a ctypes function or a cffi function pointer, not str"):
        executor.for_n_native(1, "0x1000")
    with pytest.raises(TypeError, match="function must be an address"):
        executor.for_n_native(1, ctypes.c_int(5))
    with pytest.raises(TypeError, match="context must be an address"):
        executor.for_n_native(1, native.count_task, object())


def test_native_verbs_take_cffi_function_pointers(executor, native):
    cffi = pytest.importorskip("cffi", reason="cffi is not installed (Debian's python3-cffi)")
    ffi = cffi.FFI()
    ffi.cdef("int count_task(void *context, size_t task, size_t thread);")
    library = ffi.dlopen(native._name)
    counter = Counter()
    executor.for_n_native(64, ffi.addressof(library, "count_task"), ffi.cast("void *", ctypes.addressof(counter)))
    assert (counter.calls, counter.sum) == (64, sum(range(64)))

    seen = []

    @ffi.callback("int(void *, size_t, size_t)")
    def task(context, index, thread):
        seen.append(index)
        return 0

    executor.for_n_native(10, task, dynamic=True)
    assert sorted(seen) == list(range(10))
    with pytest.raises(TypeError, match="cffi function pointer, not a cffi"):
        executor.for_n_native(1, ffi.new("int *"))
