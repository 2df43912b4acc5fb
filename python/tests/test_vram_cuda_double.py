"""VRAM executors and device arenas from Python, against the CUDA driver test double.

The double (tests/doubles/cuda_emulated) emulates the driver on the host: device memory is host
memory, every stream a host thread. Each test runs its script in a fresh interpreter (uform
loads the driver named by UFORM_CUDA_LIBRARY once per process) and reads back one JSON line.
"""

import json
import os
import sys
import textwrap

import pytest

import children

TWO_DEVICES = "device memory=1G name=first\ndevice memory=1G name=second"
THREE_DEVICES = TWO_DEVICES + "\ndevice memory=1G name=third"

# Shared by every child: what it imports and how it reports.
PRELUDE = children.CHILD_HELPERS + r"""
import asyncio, ctypes, gc, json, os, sys
import uform
from uform import Arena, Executor
try:
    import numpy
except ImportError:
    numpy = None

def uform_threads():
    return threads_named("uform:")

def uform_threads_gone():
    return threads_named_gone("uform:")

PATTERN = bytes(range(251)) * ((20 << 20) // 251 + 1)  # 251 is prime: no chunk repeats another
"""

EPILOGUE = r"""
try:
    main()
except uform.UnsupportedError as error:
    if "lacks cuEvent" not in str(error):
        raise
    report(skip=str(error))
"""


def run_child(cuda_double, tmp_path, config, body):
    """Runs `body` (the statements of a main()) in a child on the double; answers its last JSON line."""
    script = PRELUDE + "\ndef main():\n" + textwrap.indent(textwrap.dedent(body), "    ") + EPILOGUE
    environment = dict(os.environ)
    environment.pop("CUDA_DEVICE_ORDER", None)
    environment["UFORM_CUDA_LIBRARY"] = str(cuda_double)
    environment["UFORM_CUDA_DOUBLE_CONFIG"] = config
    environment["PYTHONDEVMODE"] = "1"  # ResourceWarning and unraisable errors reach stderr
    result = children.run([sys.executable, "-c", script], cwd=tmp_path, env=environment)
    assert result.returncode == 0, result.stdout + result.stderr
    # Nothing went wrong unseen: no error swallowed in a destructor, nothing left unclosed.
    assert "Exception ignored" not in result.stderr and "Warning" not in result.stderr, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert lines, result.stdout + result.stderr
    answer = json.loads(lines[-1])
    if "skip" in answer:  # the double predates the entry points the VRAM executor needs
        pytest.skip(answer["skip"])
    return answer


def test_for_devices_gives_every_device_its_own_stream_and_context(cuda_double, tmp_path):
    answer = run_child(cuda_double, tmp_path, THREE_DEVICES, """
        slots, progress = [], []
        with Executor.for_vram() as executor:
            def fn(slot):
                assert type(slot) is uform.DeviceSlot and isinstance(slot, tuple)
                slots.append({"device": slot.device, "ordinal": slot.ordinal, "vendor": slot.vendor.name,
                              "native_device": slot.native_device, "context": slot.native_context,
                              "stream": slot.stream, "thread": slot.thread})
            executor.for_devices(fn, progress=lambda done, total: progress.append([done, total]))
            whole = {"devices": executor.devices, "threads": executor.threads, "repr": repr(executor),
                     "gpu_class": executor.gpu_class.name}
        picked = []
        with Executor.for_vram([2, 0], gpu_class=uform.GPUClass.NVIDIA_AMPERE) as executor:
            executor.for_devices(lambda slot: picked.append([slot.device, slot.ordinal]))
            picked_devices = executor.devices
            whole["pinned_class"] = executor.gpu_class.name
        report(slots=sorted(slots, key=lambda s: s["device"]), progress=progress, picked=sorted(picked),
               picked_devices=picked_devices, **whole)
    """)
    slots = answer["slots"]
    assert answer["devices"] == 3 and "devices=3" in answer["repr"]
    assert answer["gpu_class"] == "NVIDIA_HOPPER"  # the double's default device is an H100
    assert answer["pinned_class"] == "NVIDIA_AMPERE"
    assert [s["device"] for s in slots] == [0, 1, 2]
    assert [s["ordinal"] for s in slots] == [0, 1, 2]
    assert {s["vendor"] for s in slots} == {"NVIDIA"}
    assert [s["native_device"] for s in slots] == [0, 1, 2]
    assert all(s["stream"] and s["context"] for s in slots)
    assert len({s["stream"] for s in slots}) == 3, slots  # one stream per device
    assert len({s["context"] for s in slots}) == 3, slots  # each on its own primary context
    assert all(0 <= s["thread"] < answer["threads"] for s in slots), slots
    # Progress counts devices: one report at a time, non-decreasing, the last one done == total.
    progress = answer["progress"]
    assert progress[-1] == [3, 3] and all(total == 3 for _, total in progress)
    assert [done for done, _ in progress] == sorted(done for done, _ in progress)
    # Devices are positions among the executor's own; ordinals are positions in gpu_devices().
    assert answer["picked_devices"] == 2 and answer["picked"] == [[0, 2], [1, 0]]


def test_for_devices_gives_the_calling_thread_its_context_back(cuda_double, tmp_path):
    # The device function of a one-device executor runs on the caller's thread with its device's
    # context current; afterwards, and after the executor closes, the thread has what it had
    # (none here), read through the double's own cuCtxGetCurrent.
    answer = run_child(cuda_double, tmp_path, TWO_DEVICES, """
        driver = ctypes.CDLL(os.environ["UFORM_CUDA_LIBRARY"])
        def current():
            context = ctypes.c_void_p(1)
            assert driver.cuCtxGetCurrent(ctypes.byref(context)) == 0
            return context.value or 0
        seen = {}
        uform.gpu_devices()  # the driver initialised (cuInit) before it is asked anything
        before = current()
        with Executor.for_vram([0]) as executor:
            import threading
            caller = threading.get_ident()
            def fn(slot):
                seen["on_caller"] = threading.get_ident() == caller
                seen["during"] = current()
                seen["context"] = slot.native_context
            executor.for_devices(fn)
            after = current()
        report(before=before, after=after, closed=current(), **seen)
    """)
    assert answer["on_caller"] and answer["during"] == answer["context"] != 0, answer
    assert answer["before"] == answer["after"] == answer["closed"] == 0, answer


def test_copies_round_trip_20_mib_and_numpy_arrays(cuda_double, tmp_path):
    answer = run_child(cuda_double, tmp_path, TWO_DEVICES, """
        size = 20 << 20
        data = PATTERN[:size]
        with Executor.for_vram() as executor, Arena.new_in(executor, 64 << 20) as arena:
            pointer = arena.allocate(size, alignment=4096)
            twin = arena.device_pointer(1, pointer)
            up, down = [], []
            executor.copy_to_device(0, pointer, data, progress=lambda done, total: up.append([done, total]))
            executor.copy_to_device(1, twin, bytearray(data[::-1]))
            back0, back1 = bytearray(size), bytearray(size)
            executor.copy_to_host(back0, 0, pointer, progress=lambda done, total: down.append([done, total]))
            executor.copy_to_host(memoryview(back1), 1, twin)
            answer = {"same0": back0 == data, "same1": back1 == data[::-1], "up": up, "down": down,
                      "twin_differs": twin != pointer}
            # A slice of a device range, from the middle of a host buffer.
            middle = bytearray(1000)
            executor.copy_to_host(middle, 0, pointer + 12345)
            answer["middle"] = middle == data[12345:13345]
            executor.copy_to_device(0, pointer, b"")  # nothing to do
            if numpy is not None:
                array = numpy.arange(1 << 18, dtype=numpy.float64).reshape(512, 512)
                executor.copy_to_device(1, twin, array)
                out = numpy.empty_like(array)
                executor.copy_to_host(out, 1, twin)
                answer["numpy"] = bool((out == array).all())
                answer["strided"] = failure(lambda: executor.copy_to_device(0, pointer, array[:, ::2]))
                frozen = numpy.empty(16, dtype=numpy.uint8)
                frozen.flags.writeable = False
                answer["frozen"] = failure(lambda: executor.copy_to_host(frozen, 0, pointer))
            # Host arenas are buffers too.
            with Arena.new_in(None, 1 << 20) as host:
                view = memoryview(host)
                view[:] = data[: 1 << 20]
                executor.copy_to_device(0, pointer, host)
                view[:] = bytes(1 << 20)
                executor.copy_to_host(host, 0, pointer)
                answer["host_arena"] = view == data[: 1 << 20]
                view.release()
            answer["past_the_end"] = failure(lambda: executor.copy_to_device(0, pointer + (64 << 20) - 8, b"x" * 64))
            answer["bad_device"] = failure(lambda: executor.copy_to_device(2, pointer, b"x"))
            answer["bytes_destination"] = failure(lambda: executor.copy_to_host(b"immutable", 0, pointer))
            # Refusals leave the executor working.
            executor.copy_to_device(1, twin, b"0123456789abcdef")
            check = bytearray(16)
            executor.copy_to_host(check, 1, twin)
            answer["still_works"] = check == b"0123456789abcdef"
        report(**answer)
    """)
    assert answer["same0"] and answer["same1"] and answer["middle"] and answer["host_arena"]
    assert answer["twin_differs"]
    size = 20 << 20
    for progress in (answer["up"], answer["down"]):  # progress counts bytes
        assert progress and progress[-1] == [size, size], progress
        assert all(total == size for _, total in progress)
        assert [done for done, _ in progress] == sorted(done for done, _ in progress)
    if "numpy" in answer:
        assert answer["numpy"] is True
        assert answer["strided"] == ["ValueError", "source must be C-contiguous"]
        assert answer["frozen"][0] == "TypeError"
        assert answer["frozen"][1].startswith("destination must be a writable buffer, not a read-only ")
    assert answer["past_the_end"][0] == "InvalidArgumentError", answer["past_the_end"]
    assert answer["bad_device"][0] == "InvalidArgumentError", answer["bad_device"]
    assert answer["bytes_destination"][0] == "TypeError"
    assert answer["still_works"] is True


def test_deferred_copies_awaited_with_asyncio(cuda_double, tmp_path):
    answer = run_child(cuda_double, tmp_path, TWO_DEVICES, """
        size = 8 << 20
        data = PATTERN[:size]
        with Executor.for_vram() as executor, Arena.new_in(executor, size) as arena:
            pointer = arena.allocate(size)
            twin = arena.device_pointer(1, pointer)
            progress = []

            async def run():
                up = executor.copy_to_device(0, pointer, data, deferred=True,
                                             progress=lambda done, total: progress.append(done))
                assert isinstance(up, uform.Deferred)
                await up
                assert up.progress() == (size, size)
                await executor.copy_to_device(1, twin, data[::-1], deferred=True)
                back0, back1 = bytearray(size), bytearray(size)
                both = [executor.copy_to_host(back0, 0, pointer, deferred=True),
                        executor.copy_to_host(back1, 1, twin, deferred=True)]
                await asyncio.gather(*both)
                devices = []
                await executor.for_devices(lambda slot: devices.append(slot.device), deferred=True)
                return back0 == data, back1 == data[::-1], sorted(devices), repr(both[0])

            same0, same1, devices, text = asyncio.run(run())
            # A deferred copy keeps its buffer exported until the Deferred is released: a host
            # arena it reads cannot close under it, even once the copy finished.
            host = Arena.new_in(None, 4096)
            pending = executor.copy_to_device(0, pointer, host, deferred=True)
            pending.wait()
            refused = failure(host.close)
            del pending
            gc.collect()
            host.close()
        report(same0=same0, same1=same1, devices=devices, progress=progress, refused=refused, repr=text,
               closed=host.closed)
    """)
    assert answer["same0"] and answer["same1"]
    assert answer["devices"] == [0, 1]
    assert answer["progress"][-1] == 8 << 20
    assert answer["repr"] == f"<uform.Deferred copy_to_host done {8 << 20}/{8 << 20}>"
    assert answer["refused"][0] == "BufferError" and answer["closed"] is True


def test_device_function_exceptions_propagate(cuda_double, tmp_path):
    answer = run_child(cuda_double, tmp_path, TWO_DEVICES, """
        class Broken(Exception):
            pass

        def fn(slot):
            if slot.device == 1:
                raise Broken(f"device {slot.device} broke")

        with Executor.for_vram() as executor:
            synchronous = failure(lambda: executor.for_devices(fn))
            deferred = executor.for_devices(fn, deferred=True)
            waited = failure(deferred.wait)

            async def run():
                await executor.for_devices(fn, deferred=True)

            awaited = failure(lambda: asyncio.run(run()))
            ran = []
            executor.for_devices(lambda slot: ran.append(slot.device))  # it keeps working
            inside = failure(lambda: executor.for_devices(lambda slot: executor.drain()))
        report(synchronous=synchronous, waited=waited, awaited=awaited, ran=sorted(ran), inside=inside)
    """)
    assert answer["synchronous"] == ["Broken", "device 1 broke"]
    assert answer["waited"] == ["Broken", "device 1 broke"]
    assert answer["awaited"] == ["Broken", "device 1 broke"]
    assert answer["ran"] == [0, 1]
    assert answer["inside"] == ["RuntimeError", "a callback must not use the executor running it"]


def test_native_device_functions_run_without_the_gil(cuda_double, tmp_path):
    answer = run_child(cuda_double, tmp_path, TWO_DEVICES, """
        class Slot(ctypes.Structure):  # uform_device_slot_t
            _fields_ = [("device", ctypes.c_size_t), ("ordinal", ctypes.c_int32), ("vendor", ctypes.c_uint32),
                        ("native_device", ctypes.c_int32), ("native_context", ctypes.c_void_p),
                        ("stream", ctypes.c_void_p), ("thread", ctypes.c_size_t)]

        Function = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(Slot))
        streams = (ctypes.c_size_t * 2)()

        @Function
        def record(context, slot):
            ctypes.cast(context, ctypes.POINTER(ctypes.c_size_t))[slot.contents.device] = slot.contents.stream
            return 0

        @Function
        def refuse(context, slot):
            return 9 if slot.contents.device == 1 else 0  # UFORM_STATUS_IO_ERROR

        address = ctypes.cast(record, ctypes.c_void_p).value
        with Executor.for_vram() as executor:
            python_streams = {}
            executor.for_devices(lambda slot: python_streams.__setitem__(slot.device, slot.stream))
            executor.for_devices_native(address, ctypes.addressof(streams))
            native = list(streams)
            streams[0] = streams[1] = 0
            executor.for_devices_native(address, ctypes.addressof(streams), deferred=True, keep=streams).wait()
            refused = failure(lambda: executor.for_devices_native(ctypes.cast(refuse, ctypes.c_void_p).value))
        report(native=native, again=list(streams), python=[python_streams[0], python_streams[1]], refused=refused)
    """)
    assert answer["native"] == answer["python"] == answer["again"]
    assert answer["refused"][0] == "UFormIOError"


def test_device_arena_holds_its_executor_until_it_closes(cuda_double, tmp_path):
    answer = run_child(cuda_double, tmp_path, TWO_DEVICES, """
        answer = {}
        with Executor.for_vram() as executor:
            arena = Arena.new_in(executor, 1 << 20)
            answer["repr"] = repr(arena)
            answer["devices"] = arena.devices
            first = arena.allocate(1000)
            second = arena.allocate(1000, alignment=4096)
            answer["aligned"] = second % 4096 == 0 and second >= first + 1000
            answer["twins"] = [arena.device_pointer(d, second) - arena.device_pointer(d, first) for d in (0, 1)]
            answer["self_twin"] = arena.device_pointer(0, second) == second
            answer["memoryview"] = failure(lambda: memoryview(arena))
            answer["full"] = failure(lambda: arena.allocate(2 << 20))
            answer["bad_device"] = failure(lambda: arena.device_pointer(2, first))
            answer["outside"] = failure(lambda: arena.device_pointer(1, first + (2 << 20)))
            answer["closed_by_callback"] = failure(lambda: executor.for_devices(lambda slot: arena.close()))
            executor.copy_to_device(1, arena.device_pointer(1, second), b"on the second device")
            back = bytearray(20)
            executor.copy_to_host(back, 1, arena.device_pointer(1, second))
            answer["copied"] = bytes(back).decode()
            twin = arena.device_pointer(1, second)
            threads_open = uform_threads()
        # The with block closed the executor, but the arena holds it: its threads are still there.
        answer["executor_closed"] = executor.closed
        answer["threads_open"] = threads_open
        answer["threads_held"] = uform_threads()
        answer["verb_after_close"] = failure(lambda: executor.for_devices(lambda slot: None))
        answer["allocate_after_close"] = arena.allocate(64) > second
        answer["twin_after_close"] = arena.device_pointer(1, second) == twin
        arena.close()  # the last device arena closes its executor
        answer["threads_after"] = uform_threads_gone()
        answer["arena_closed"] = arena.closed
        # Dropping one does the same.
        executor = Executor.for_vram([1])
        dropped = Arena.new_in(executor, 4096)
        executor.close()
        answer["held_again"] = len(uform_threads()) > 0
        del dropped, executor
        gc.collect()
        answer["threads_dropped"] = uform_threads_gone()
        report(**answer)
    """)
    assert answer["repr"] == "<uform.lib.Arena devices=2 used=0 capacity=1048576>"
    assert answer["devices"] == 2 and answer["aligned"] and answer["self_twin"]
    assert answer["twins"][0] == answer["twins"][1]  # symmetric: the same offsets on every device
    assert answer["memoryview"][0] == "BufferError" and "copy_to_host" in answer["memoryview"][1]
    assert answer["full"][0] == "OutOfMemoryError"
    assert answer["bad_device"][0] == "InvalidArgumentError"
    assert answer["outside"][0] == "InvalidArgumentError"
    assert answer["closed_by_callback"] == [
        "RuntimeError", "a callback must not close a device arena of the executor running it"]
    assert answer["copied"] == "on the second device"
    assert answer["executor_closed"] is True
    assert answer["threads_open"] and answer["threads_held"] == answer["threads_open"]
    assert answer["verb_after_close"] == ["ValueError", "the executor is closed"]
    assert answer["allocate_after_close"] and answer["twin_after_close"]
    assert answer["threads_after"] == [] and answer["arena_closed"]
    assert answer["held_again"] and answer["threads_dropped"] == []


def test_scratch_and_staging_from_device_functions(cuda_double, tmp_path):
    answer = run_child(cuda_double, tmp_path, TWO_DEVICES, """
        answer = {}
        with Executor.for_vram(scratch_limit=1 << 20) as executor:
            addresses, kept = {}, []

            def fn(slot):
                scratch = executor.device_scratch(slot.device, 4096)
                view = executor.staging(slot.device, 4096)
                view[:5] = b"stage"
                addresses[slot.device] = [scratch, scratch % 256, len(view), view.readonly, bytes(view[:5]).decode()]
                kept.append(view)

            executor.for_devices(fn)
            answer["addresses"] = [addresses[0], addresses[1]]
            answer["released"] = failure(lambda: kept[0][0])
            # Scratch is kept between calls: the same request answers the same buffer.
            again = {}
            executor.for_devices(lambda slot: again.__setitem__(slot.device, executor.device_scratch(slot.device, 4096)))
            answer["kept"] = [again[0] == addresses[0][0], again[1] == addresses[1][0]]
            # Past scratch_limit: OutOfMemoryError, in the function and from the call.
            inner = {}

            def greedy(slot):
                inner[slot.device] = failure(lambda: executor.device_scratch(slot.device, 2 << 20))
                return executor.device_scratch(slot.device, 2 << 20)

            answer["over_limit"] = failure(lambda: executor.for_devices(greedy))
            answer["inner"] = inner.get(0)
            answer["at_limit"] = failure(lambda: executor.for_devices(
                lambda slot: executor.device_scratch(slot.device, 1 << 20)))
            answer["outside"] = failure(lambda: executor.device_scratch(0, 256))
            answer["staging_outside"] = failure(lambda: executor.staging(0, 256))
            answer["other_device"] = failure(lambda: executor.for_devices(
                lambda slot: executor.device_scratch(1 - slot.device, 256)))
            leaked = []
            answer["leaked_slice"] = failure(lambda: executor.for_devices(
                lambda slot: leaked.append(executor.staging(slot.device, 64)[8:16])))
            answer["leaked_view"] = failure(lambda: memoryview(leaked[0].obj))
            leaked.clear()
            if numpy is not None:
                answer["leaked_array"] = failure(lambda: executor.for_devices(
                    lambda slot: leaked.append(numpy.frombuffer(executor.staging(slot.device, 64), numpy.uint8))))
                leaked.clear()
            answer["afterwards"] = failure(lambda: executor.for_devices(
                lambda slot: executor.staging(slot.device, 64).tobytes()))
        report(**answer)
    """)
    for scratch, alignment, length, readonly, text in answer["addresses"]:
        assert scratch and alignment == 0 and length == 4096 and readonly is False and text == "stage"
    assert answer["addresses"][0][0] != answer["addresses"][1][0]
    assert answer["released"][0] == "ValueError" and "released" in answer["released"][1]
    assert answer["kept"] == [True, True]
    assert answer["over_limit"][0] == "OutOfMemoryError" and "limit" in answer["over_limit"][1]
    assert answer["inner"][0] == "OutOfMemoryError"
    assert answer["at_limit"] is None  # nothing broke: the limit itself still fits
    assert answer["outside"][0] == "InvalidArgumentError"
    assert answer["staging_outside"][0] == "InvalidArgumentError"
    assert answer["other_device"][0] == "InvalidArgumentError"
    assert answer["leaked_slice"][0] == "BufferError" and "outlived" in answer["leaked_slice"][1]
    assert answer["leaked_view"][0] == "BufferError" and "only valid inside" in answer["leaked_view"][1]
    if "leaked_array" in answer:
        assert answer["leaked_array"][0] == "BufferError"
    assert answer["afterwards"] is None


def test_sticky_fault_is_device_fault_error_until_closed(cuda_double, tmp_path):
    # The double faults the first operation any stream runs, and its context stays faulted.
    answer = run_child(cuda_double, tmp_path, TWO_DEVICES + "\nfault sticky=1", """
        executor = Executor.for_vram()
        arena = Arena.new_in(executor, 1 << 20)
        pointer = arena.allocate(4096)
        first = failure(lambda: executor.copy_to_device(0, pointer, b"x" * 4096))
        later = [failure(call) for call in (
            lambda: executor.for_devices(lambda slot: None),
            lambda: executor.copy_to_host(bytearray(16), 1, arena.device_pointer(1, pointer)),
            lambda: executor.drain(),
            lambda: Arena.new_in(executor, 4096),
        )]
        # A deferred call answers it when waited for (the detail stays on the executor's thread).
        deferred = failure(lambda: executor.copy_to_device(1, arena.device_pointer(1, pointer), b"y",
                                                           deferred=True).wait())
        arena.close()
        closed = failure(executor.close)
        report(first=first, later=later, deferred=deferred, closed=closed, threads=uform_threads_gone())
    """)
    assert answer["first"][0] == "DeviceFaultError", answer
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in answer["first"][1]
    for later in answer["later"]:
        assert later[0] == "DeviceFaultError" and "CUDA_ERROR_ILLEGAL_ADDRESS" in later[1], later
    assert answer["deferred"][0] == "DeviceFaultError", answer["deferred"]
    assert answer["closed"] is None and answer["threads"] == []  # free still releases everything


def test_bad_devices_are_refused(cuda_double, tmp_path):
    answer = run_child(cuda_double, tmp_path, TWO_DEVICES, """
        report(duplicate=failure(lambda: Executor.for_vram([1, 1])),
               missing=failure(lambda: Executor.for_vram([2])),
               negative=failure(lambda: Executor.for_vram([-1])),
               streams_left=uform_threads_gone())
    """)
    assert answer["duplicate"][0] == "InvalidArgumentError" and "twice" in answer["duplicate"][1]
    assert answer["missing"][0] == "NotFoundError" and "2 GPUs" in answer["missing"][1]
    assert answer["negative"][0] == "NotFoundError"
    assert answer["streams_left"] == []
