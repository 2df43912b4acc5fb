"""DLPack on the host: a host arena and its views as numpy and torch arrays, zero copy, and an
arena that cannot close while a consumer still holds its memory."""

import ctypes
import gc
import threading

import pytest

import dlpack_abi
from uform import Arena

numpy = pytest.importorskip("numpy", reason="numpy (Debian's python3-numpy) is not installed")
try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch (Debian's python3-torch) is not installed")


def base_of(arena):
    with memoryview(arena) as view:
        return ctypes.addressof(ctypes.c_char.from_buffer(view))


def test_numpy_reads_a_host_arena_in_place():
    with Arena.new_in(None, 1 << 16) as arena:
        assert arena.__dlpack_device__() == (1, 0)
        array = numpy.from_dlpack(arena)
        assert (array.shape, array.dtype) == ((1 << 16,), numpy.uint8)
        assert array.ctypes.data == base_of(arena)
        with memoryview(arena) as view:
            view[10:14] = b"\x01\x02\x03\x04"
        assert array[10:14].tolist() == [1, 2, 3, 4]
        del array


@needs_torch
def test_torch_writes_show_in_the_arena_and_back():
    with Arena.new_in(None, 1 << 16) as arena:
        tensor = torch.from_dlpack(arena)
        assert tensor.dtype == torch.uint8 and tensor.shape == (1 << 16,) and tensor.data_ptr() == base_of(arena)
        tensor[100:103] = torch.tensor([7, 8, 9], dtype=torch.uint8)
        with memoryview(arena) as view:
            assert bytes(view[100:103]) == b"\x07\x08\x09"
            view[200] = 42
        assert int(tensor[200]) == 42
        del tensor


def test_capsules_follow_the_consumers_max_version():
    with Arena.new_in(None, 4096) as arena:
        base = base_of(arena)
        for max_version in [None, (0, 8)]:
            legacy = dlpack_abi.describe(arena.__dlpack__(max_version=max_version))
            assert legacy == {"name": "dltensor", "data": base, "device": (1, 0), "ndim": 1, "dtype": (1, 8, 1),
                              "shape": [4096], "strides": False, "byte_offset": 0}
        for max_version in [(1, 0), (1, 3), (2, 0)]:
            versioned = dlpack_abi.describe(arena.__dlpack__(max_version=max_version))
            assert versioned["name"] == "dltensor_versioned" and versioned["version"] == (1, 0)
            assert versioned["flags"] == 0 and versioned["data"] == base and versioned["shape"] == [4096]
        gc.collect()
    assert arena.closed  # the capsules nobody consumed let go of the arena when they died


@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_close_is_refused_while_a_consumer_holds_the_memory(max_version):
    arena = Arena.new_in(None, 4096)
    capsule = arena.__dlpack__(max_version=max_version)
    let_go = dlpack_abi.consume(capsule)
    del capsule  # consumed: only the deleter lets go now
    with pytest.raises(BufferError, match="1 buffer taken from it still live"):
        arena.close()
    assert not arena.closed
    let_go()
    arena.close()
    assert arena.closed


def test_the_deleter_may_run_on_a_thread_without_the_gil():
    arena = Arena.new_in(None, 4096)
    let_gos = [dlpack_abi.consume(arena.__dlpack__()) for _ in range(8)]
    with pytest.raises(BufferError, match="8 buffers"):
        arena.close()
    # ctypes releases the GIL around a foreign call: each deleter takes it for itself.
    threads = [threading.Thread(target=let_go) for let_go in let_gos]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    arena.close()


def test_numpy_and_torch_arrays_hold_the_arena_open():
    arena = Arena.new_in(None, 4096)
    array = numpy.from_dlpack(arena)
    with pytest.raises(BufferError):
        arena.close()
    del array
    if torch is not None:
        tensor = torch.from_dlpack(arena)
        with pytest.raises(BufferError):
            arena.close()
        del tensor
    arena.close()
    with pytest.raises(ValueError, match="closed"):
        arena.__dlpack__()
    with pytest.raises(ValueError, match="closed"):
        numpy.from_dlpack(arena)


def test_copy_true_answers_a_private_copy_that_outlives_the_arena():
    arena = Arena.new_in(None, 4096)
    with memoryview(arena) as view:
        view[:5] = b"uform"
    capsule = arena.__dlpack__(max_version=(1, 0), copy=True)
    copied = dlpack_abi.describe(capsule)
    assert copied["flags"] & dlpack_abi.IS_COPIED and copied["data"] != base_of(arena)
    assert copied["device"] == (1, 0) and copied["shape"] == [4096]
    assert ctypes.string_at(copied["data"], 5) == b"uform"
    arena.close()  # the copy holds nothing of the arena
    assert ctypes.string_at(copied["data"], 5) == b"uform"
    del capsule


def test_keywords_the_standard_defines():
    with Arena.new_in(None, 4096) as arena:
        base = base_of(arena)
        assert dlpack_abi.describe(arena.__dlpack__(copy=False))["data"] == base
        assert dlpack_abi.describe(arena.__dlpack__(dl_device=(1, 0)))["data"] == base
        with pytest.raises(BufferError, match=r"\(1, 0\) to \(2, 0\)"):
            arena.__dlpack__(dl_device=(2, 0))
        with pytest.raises(BufferError, match="stream must be None"):
            arena.__dlpack__(stream=1)
        with pytest.raises(TypeError):
            arena.__dlpack__(copy="yes")
        with pytest.raises(TypeError):
            arena.__dlpack__(max_version=1)
        with pytest.raises(TypeError):
            arena.__dlpack__(None)  # keywords only
        gc.collect()


def test_a_view_is_an_array_over_one_allocation():
    with Arena.new_in(None, 1 << 16) as arena:
        arena.allocate(100)
        address = arena.allocate(4096)
        view = arena.view(address, 4096)
        assert (view.address, view.nbytes, view.device, view.arena) == (address, 4096, None, arena)
        assert view.__dlpack_device__() == (1, 0)
        floats = numpy.from_dlpack(view).view(numpy.float32)
        assert floats.shape == (1024,) and floats.ctypes.data == address
        ctypes.memmove(address, numpy.arange(4, dtype=numpy.float32).tobytes(), 16)
        assert floats[:4].tolist() == [0.0, 1.0, 2.0, 3.0]
        if torch is not None:
            tensor = torch.from_dlpack(view)
            tensor[0] = 200
            assert ctypes.string_at(address, 1) == b"\xc8"
            del tensor
        with memoryview(view) as bytes_view:
            assert bytes_view.nbytes == 4096 and not bytes_view.readonly
            bytes_view[1] = 7
            with pytest.raises(BufferError):
                arena.close()
        assert ctypes.string_at(address + 1, 1) == b"\x07"
        whole = arena.view()
        assert (whole.address, whole.nbytes) == (base_of(arena), 1 << 16)
        assert arena.view(address).nbytes == (1 << 16) - (address - base_of(arena))
        with pytest.raises(ValueError, match="outside the arena"):
            arena.view(address + (1 << 20), 1)
        with pytest.raises(ValueError, match="run past the arena's end"):
            arena.view(address, 1 << 16)
        with pytest.raises(BufferError, match="no devices"):
            arena.device_view(0)
        del floats
    with pytest.raises(ValueError, match="closed"):
        numpy.from_dlpack(view)
    with pytest.raises(ValueError, match="closed"):
        memoryview(view)
