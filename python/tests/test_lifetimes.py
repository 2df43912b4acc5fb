"""Lifetimes of handles and executors: cycles collect, drops never block, Ctrl-C is answered,
unretrieved failures and unclosed executors are reported."""

import builtins
import gc
import os
import sys
import textwrap
import threading
import time
import warnings
import weakref

import pytest

import children

import uform


def uform_threads() -> int:
    """Threads of this process named uform:ram:N, the executors' workers."""
    count = 0
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as comm:
                count += comm.read().startswith("uform:ram")
        except OSError:  # the thread ended meanwhile
            pass
    return count


def eventually(predicate, seconds=10.0) -> bool:
    """Polls `predicate` until it holds (generously bounded, for a slow machine)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        gc.collect()
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


# ---- the collector sees through a Deferred ----------------------------------------------------


def test_deferred_is_tracked_by_the_collector(executor):
    deferred = executor.for_n(1, lambda task, thread: None, deferred=True)
    deferred.wait()
    assert gc.is_tracked(deferred)


def test_a_callable_referring_to_its_own_handle_is_collected():
    baseline = uform_threads()
    box = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)  # left unclosed on purpose
        executor = uform.Executor.for_ram(2)
        assert uform_threads() == baseline + 2
        box["deferred"] = executor.for_n(4, lambda task, thread: box.get("deferred"), deferred=True)
        box["deferred"].wait()
        handle, owner = weakref.ref(box["deferred"]), weakref.ref(executor)
        del box, executor  # the cycle: handle -> callable -> box -> handle
        gc.collect()
        assert handle() is None
        assert owner() is None
    # eventually: a thread pthread_join has reaped can still be listed in /proc/self/task for a
    # moment (the kernel wakes the joiner before it releases the task)
    assert eventually(lambda: uform_threads() == baseline), "the executor's threads outlived the collected cycle"


def test_a_cycle_through_the_executor_is_collected():
    baseline = uform_threads()

    class Model:
        def __init__(self):
            self.executor = uform.Executor.for_ram(2)
            self.pending = self.executor.for_n(4, self.task, deferred=True)

        def task(self, index, thread):
            return (self.executor, getattr(self, "pending", None))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        model = Model()
        model.pending.wait()
        handle = weakref.ref(model.pending)
        del model
        gc.collect()
        assert handle() is None
    assert eventually(lambda: uform_threads() == baseline), "the executor's threads outlived the collected cycle"


def test_a_running_call_keeps_its_callable_through_a_collection(executor):
    release = threading.Event()
    seen = []
    box = {}

    def task(index, thread):
        release.wait(10)
        seen.append(box["deferred"] is not None)

    box["deferred"] = executor.for_n(4, task, deferred=True)
    del task
    gc.collect()  # the call runs: nothing it uses may be cleared
    release.set()
    box["deferred"].wait()
    assert seen == [True] * 4


# ---- dropping never blocks, and never keeps the executor --------------------------------------


def test_a_deferred_dropped_by_its_own_callback_lets_the_executor_go():
    baseline = uform_threads()
    ready = threading.Event()
    holder = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        executor = uform.Executor.for_ram(2)

        def task(index, thread):
            if index == 0:
                assert ready.wait(10)
                holder.pop("deferred")  # the last reference, dropped while its call runs

        holder["deferred"] = executor.for_n(16, task, dynamic=True, deferred=True)
        owner = weakref.ref(executor)
        del executor, task
        ready.set()
        # No later uform call: the executor must go once its call ended and its users left.
        assert eventually(lambda: owner() is None), "the dropped handle kept the executor alive"
    assert eventually(lambda: uform_threads() == baseline)
    assert "deferred" not in holder


def test_a_dropped_native_call_keeps_its_objects_until_it_ends(executor):
    ctypes = pytest.importorskip("ctypes")
    release = threading.Event()
    task_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
    callback = task_type(lambda context, index, thread: (release.wait(10), 0)[1])
    address = ctypes.cast(callback, ctypes.c_void_p).value
    keep = [callback]
    references = sys.getrefcount(keep)
    deferred = executor.for_n_native(2, address, 0, deferred=True, keep=keep)
    del deferred, callback
    assert sys.getrefcount(keep) == references + 1  # still the call's
    release.set()
    assert eventually(lambda: sys.getrefcount(keep) == references), "the ended call kept its objects"


# ---- Ctrl-C ----------------------------------------------------------------------------------

INTERRUPT_SCRIPT = """
import asyncio, signal, sys, threading, time, uform

release = threading.Event()
executor = uform.Executor.for_ram(2)
deferred = executor.for_n(2, lambda task, thread: release.wait(60), deferred=True)


async def awaiting():
    await deferred


time.sleep(0.05)
main = threading.main_thread().ident
threading.Timer(0.3, signal.pthread_kill, (main, signal.SIGINT)).start()
started = time.monotonic()
try:
    {action}
except KeyboardInterrupt:
    elapsed = time.monotonic() - started
else:
    sys.exit("no KeyboardInterrupt")
release.set()
executor.close()  # the interrupted close (if any) completes
assert executor.closed
deferred.wait()
print(f"interrupted after {{elapsed:.2f}} s")
"""

ACTIONS = {
    "close": "executor.close()",
    "exit": "executor.__exit__(None, None, None)",
    "wait": "deferred.wait()",
    "await": "asyncio.run(awaiting())",
}


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_ctrl_c_is_answered(action):
    # In a child process: a KeyboardInterrupt must never reach this test runner.
    script = textwrap.dedent(INTERRUPT_SCRIPT).format(action=ACTIONS[action])
    result = children.run([sys.executable, "-c", script])
    assert result.returncode == 0, result.stdout + result.stderr
    elapsed = float(result.stdout.split()[2])
    assert elapsed < 10, f"{action} answered Ctrl-C only after {elapsed} s (the call runs 60 s)"


# ---- failures never retrieved ----------------------------------------------------------------


def test_a_failure_never_retrieved_warns_once(executor):
    deferred = executor.for_n(2, lambda task, thread: 1 / 0, deferred=True)
    executor.drain()
    with pytest.warns(RuntimeWarning, match="for_n.*never retrieved.*ZeroDivisionError") as record:
        del deferred
        gc.collect()
    assert len([w for w in record if issubclass(w.category, RuntimeWarning)]) == 1


def test_a_failure_in_a_collected_cycle_warns(executor):
    box = {}

    def task(index, thread):
        box.get("deferred")
        raise KeyError(index)

    box["deferred"] = executor.for_n(2, task, deferred=True)
    executor.drain()
    with pytest.warns(RuntimeWarning, match="never retrieved.*KeyError"):
        del box
        gc.collect()


def test_a_retrieved_failure_never_warns(executor):
    deferred = executor.for_n(2, lambda task, thread: 1 / 0, deferred=True)
    with pytest.raises(ZeroDivisionError):
        deferred.wait()
    succeeded = executor.for_n(2, lambda task, thread: None, deferred=True)
    executor.drain()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        del deferred, succeeded
        gc.collect()


# ---- errors, unclosed executors, reprs, star import --------------------------------------------


def test_errors_made_by_python_code_carry_status_and_message():
    error = uform.UFormError("x")
    assert error.message == "x"
    assert isinstance(error.status, int)
    assert str(error) == "x"
    assert uform.ContendedError("busy").status == 2
    assert uform.ContendedError("busy").message == "busy"
    assert uform.UFormError().message == ""
    timeout = uform.TimeoutError("late")
    assert isinstance(timeout, builtins.TimeoutError) and timeout.status == 7 and timeout.message == "late"
    io = uform.UFormIOError("disk")
    assert isinstance(io, OSError) and io.message == "disk" and io.args == ("disk",)


def test_library_errors_keep_their_detail():
    with pytest.raises(uform.NotFoundError) as error:
        uform.Executor.for_ram(memory_domains=[999])
    assert error.value.status == 5
    assert error.value.message and error.value.message == str(error.value)


def test_an_unclosed_executor_warns():
    executor = uform.Executor.for_ram(1)
    with pytest.warns(ResourceWarning, match="unclosed executor"):
        del executor
        gc.collect()
    closed = uform.Executor.for_ram(1)
    closed.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        del closed
        with uform.Executor.for_ram(1):
            pass
        gc.collect()


def test_deferred_repr(executor):
    release = threading.Event()
    deferred = executor.for_n(100, lambda task, thread: release.wait(10) if task == 99 else None,
                              dynamic=True, deferred=True)
    assert repr(deferred).startswith("<uform.Deferred for_n running ")
    assert repr(deferred).endswith("/100>")
    release.set()
    deferred.wait()
    assert repr(deferred) == "<uform.Deferred for_n done 100/100>"
    failed = executor.for_threads(lambda task, thread: 1 / 0, deferred=True)
    with pytest.raises(ZeroDivisionError):
        failed.wait()
    assert repr(failed).startswith("<uform.Deferred for_threads failed ")


def test_mesh_has_its_own_repr():
    assert uform.Mesh.__repr__ is not object.__repr__


def test_star_import_does_not_shadow_the_builtin_timeout_error():
    namespace = {}
    exec("from uform import *", namespace)
    assert "TimeoutError" not in namespace
    assert "Executor" in namespace and "UFormError" in namespace
    assert set(uform.__all__) <= set(dir(uform))
    shadowed = [name for name in uform.__all__ if hasattr(builtins, name)]
    assert shadowed == []


def test_package_exports_every_public_class_and_function_of_the_extension():
    """Every class and function lib.pyi declares (the extension's public surface) is an attribute
    of the package and in its __all__, unless its name is a builtin's (TimeoutError: named, never
    star-imported); the classes are the extension's own."""
    import ast
    import pathlib

    stub = pathlib.Path(uform.lib.__file__).with_name("lib.pyi")
    declared = [node for node in ast.parse(stub.read_text()).body
                if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and not node.name.startswith("_")]
    assert len(declared) > 20, f"{stub} declares only {[node.name for node in declared]}"
    missing = [node.name for node in declared if not hasattr(uform, node.name)]
    assert missing == [], f"lib.pyi declares them, uform lacks them: {missing}"
    unlisted = [node.name for node in declared if node.name not in uform.__all__ and not hasattr(builtins, node.name)]
    assert unlisted == [], f"not in uform.__all__: {unlisted}"
    for node in declared:
        if isinstance(node, ast.ClassDef):
            assert getattr(uform, node.name) is getattr(uform.lib, node.name), node.name
        else:
            assert callable(getattr(uform, node.name)), node.name
