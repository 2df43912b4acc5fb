"""Pinned staging lent to device functions, against the CUDA driver test double: a view never
outlives the buffer under it (growth, the function's return), its DLPack export is kDLCUDAHost,
and an export that outlives its function keeps the executor from freeing or overwriting it."""

from test_dlpack_cuda_double import PRELUDE
from test_vram_cuda_double import TWO_DEVICES, run_child


def test_growing_staging_releases_the_views_it_would_leave_dangling(cuda_double, tmp_path):
    # The trial's crash: a 4 KiB view, then a 64 MiB request in the same call, then a write
    # through the first view into the freed buffer (SIGSEGV). The child dies if it still happens.
    answer = run_child(cuda_double, tmp_path, TWO_DEVICES, """
        seen = {}
        with Executor.for_vram() as executor:
            def fn(slot):
                small = executor.staging(slot.device, 4096)
                small[:4] = b"abcd"
                smaller = executor.staging(slot.device, 1024)  # no growth: both stay valid
                seen["smaller"] = bytes(smaller[:4]).decode()
                big = executor.staging(slot.device, 64 << 20)
                seen["small_after"] = failure(lambda: small.__setitem__(slice(0, 4096), b"x" * 4096))
                seen["smaller_after"] = failure(lambda: smaller[0])
                big[:4] = b"wxyz"  # the new buffer is usable
                seen["big"] = bytes(big[:4]).decode()

            executor.for_devices(fn)
        report(**seen)
    """)
    assert answer["smaller"] == "abcd"
    assert answer["small_after"][0] == "ValueError" and "released" in answer["small_after"][1]
    assert answer["smaller_after"][0] == "ValueError"
    assert answer["big"] == "wxyz"


def test_growth_under_an_array_is_refused_instead_of_freeing_it(cuda_double, tmp_path):
    answer = run_child(cuda_double, tmp_path, TWO_DEVICES, """
        if numpy is None:
            report(skip="numpy (Debian's python3-numpy) is not installed")
            return
        seen = {}
        with Executor.for_vram([0]) as executor:
            def fn(slot):
                array = numpy.frombuffer(executor.staging(slot.device, 4096), numpy.uint8)
                seen["refused"] = failure(lambda: executor.staging(slot.device, 64 << 20))
                array[0] = 1  # still the live buffer
                del array
                seen["after_drop"] = len(executor.staging(slot.device, 64 << 20))

            executor.for_devices(fn)
        report(**seen)
    """)
    assert answer["refused"][0] == "BufferError" and "drop it first" in answer["refused"][1]
    assert answer["after_drop"] == 64 << 20


def test_staging_tensor_is_kdlcudahost_for_numpy_and_torch(cuda_double, tmp_path):
    answer = run_child(cuda_double, tmp_path, TWO_DEVICES, PRELUDE + """
        try:
            import torch
        except ImportError:
            torch = None
        seen = {}
        with Executor.for_vram([1]) as executor:
            def fn(slot):
                staging = executor.staging_tensor(slot.device, 4096)
                with memoryview(staging) as view:
                    address = ctypes.addressof(ctypes.c_char.from_buffer(view))
                    view[:3] = b"\\x01\\x02\\x03"
                seen["device"] = list(staging.__dlpack_device__())
                seen["legacy"] = dlpack_abi.describe(staging.__dlpack__())
                seen["versioned"] = dlpack_abi.describe(staging.__dlpack__(max_version=(1, 0)))
                seen["as_cpu"] = dlpack_abi.describe(staging.__dlpack__(dl_device=(1, 0)))["device"]
                seen["cuda"] = failure(lambda: staging.__dlpack__(dl_device=(2, 0)))
                seen["address"] = address
                if numpy is not None:
                    array = numpy.from_dlpack(staging)
                    seen["numpy"] = [array.ctypes.data == address, array[:3].tolist()]
                    del array
                if torch is not None:  # torch 1.13 takes no kDLCUDAHost: it asks for the CPU's view
                    tensor = torch.from_dlpack(staging.__dlpack__(dl_device=(1, 0)))
                    tensor[3] = 4
                    seen["torch"] = [tensor.data_ptr() == address, ctypes.string_at(address, 4) == b"\\x01\\x02\\x03\\x04"]
                    del tensor
                gc.collect()

            executor.for_devices(fn)
        report(**seen)
    """)
    assert answer["device"] == [3, 0]
    for kind in ("legacy", "versioned"):
        assert answer[kind]["device"] == [3, 0] and answer[kind]["data"] == answer["address"]
        assert answer[kind]["shape"] == [4096]
    assert answer["as_cpu"] == [1, 0]
    assert answer["cuda"][0] == "BufferError"
    if "numpy" in answer:
        assert answer["numpy"] == [True, [1, 2, 3]]
    if "torch" in answer:
        assert answer["torch"] == [True, True]


def test_an_export_outliving_its_function_keeps_the_staging_safe(cuda_double, tmp_path):
    answer = run_child(cuda_double, tmp_path, TWO_DEVICES, PRELUDE + """
        seen = {}
        with Executor.for_vram([0]) as executor, Arena.new_in(executor, 1 << 20) as arena:
            pointer = arena.allocate(1 << 20)
            kept = []

            def leak(slot):
                staging = executor.staging_tensor(slot.device, 4096)
                kept.append(dlpack_abi.consume(staging.__dlpack__()))
                kept.append(staging)

            seen["call"] = failure(lambda: executor.for_devices(leak))
            seen["invalid"] = failure(lambda: kept[1].__dlpack__())
            seen["copy"] = failure(lambda: executor.copy_to_device(0, pointer, b"x" * (1 << 20)))
            seen["grow"] = failure(lambda: executor.for_devices(lambda slot: executor.staging(slot.device, 64 << 20)))
            seen["close"] = failure(executor.close)
            seen["closed"] = executor.closed
            kept[0]()  # the consumer lets go
            seen["copy_after"] = failure(lambda: executor.copy_to_device(0, pointer, b"x" * (1 << 20)))
            seen["grow_after"] = failure(lambda: executor.for_devices(
                lambda slot: executor.staging(slot.device, 64 << 20)))
        seen["closed_after"] = executor.closed
        report(**seen)
    """)
    assert answer["call"][0] == "BufferError" and "outlived" in answer["call"][1]
    assert answer["invalid"][0] == "BufferError"
    for refused in ("copy", "grow", "close"):
        assert answer[refused][0] == "BufferError" and "still read" in answer[refused][1], answer[refused]
    assert answer["closed"] is False
    assert answer["copy_after"] is None and answer["grow_after"] is None and answer["closed_after"] is True


def test_a_deferred_copy_keeps_its_host_buffer_from_moving(cuda_double, tmp_path):
    answer = run_child(cuda_double, tmp_path, TWO_DEVICES, """
        seen = {}
        with Executor.for_vram([0]) as executor, Arena.new_in(executor, 8 << 20) as arena:
            pointer = arena.allocate(8 << 20)
            executor.copy_to_device(0, pointer, PATTERN[:8 << 20])
            destination = bytearray(8 << 20)
            pending = executor.copy_to_host(destination, 0, pointer, deferred=True)
            # resizing would move the bytes the copy is still writing
            seen["resize"] = failure(lambda: destination.extend(b"more"))
            pending.wait()
            seen["resize_finished"] = failure(lambda: destination.extend(b"more"))
            del pending
            destination.extend(b"more")
            seen["copied"] = bytes(destination[:8 << 20]) == PATTERN[:8 << 20]
        report(**seen)
    """)
    assert answer["resize"][0] == "BufferError"
    assert answer["resize_finished"][0] == "BufferError"  # held until the Deferred is released
    assert answer["copied"] is True
