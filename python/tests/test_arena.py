"""`uform.Arena` on the host: placement, allocation, the buffer protocol and its lifetime rules."""

import ctypes
import gc
import inspect
import weakref

import pytest

import uform
from uform import Arena, Executor

try:
    import numpy
except ImportError:  # the buffer checks fall back to memoryview
    numpy = None


def test_arena_is_exported_with_the_page_style():
    assert uform.Arena is uform.lib.Arena
    assert "Arena" in uform.__all__
    assert str(inspect.signature(Arena.new_in)) == "(executor, capacity)"
    assert type(inspect.getattr_static(Arena, "new_in")).__name__ == "classmethod_descriptor"
    assert str(inspect.signature(Arena.allocate)) == "(self, /, nbytes, alignment=64)"
    assert str(inspect.signature(Arena.device_pointer)) == "(self, /, device, pointer)"
    for name, verb in [("new_in", "uform_arena_new_in"), ("allocate", "uform_arena_allocate"),
                       ("device_pointer", "uform_arena_device_pointer"), ("close", "uform_arena_free")]:
        assert f"Calls {verb}." in getattr(Arena, name).__doc__


@pytest.mark.parametrize("placement", ["none", "ram"])
def test_host_arena_allocates_aligned_addresses_inside_its_buffer(placement, executor):
    arena = Arena.new_in(None if placement == "none" else executor, 1 << 20)
    with arena:
        assert (arena.used, arena.capacity, arena.devices, arena.closed) == (0, 1 << 20, 0, False)
        view = memoryview(arena)
        assert (view.format, view.itemsize, view.nbytes, view.readonly, view.ndim) == ("B", 1, 1 << 20, False, 1)
        base = ctypes.addressof(ctypes.c_char.from_buffer(view))
        first = arena.allocate(100)
        assert first % 64 == 0 and base <= first < base + (1 << 20)
        second = arena.allocate(10, alignment=4096)
        assert second % 4096 == 0 and second >= first + 100
        assert arena.used == second - base + 10
        # The buffer is the arena's memory: writes through an address show in the view, and back.
        ctypes.memmove(second, b"uform", 5)
        assert bytes(view[second - base:second - base + 5]) == b"uform"
        view[first - base:first - base + 3] = b"abc"
        assert ctypes.string_at(first, 3) == b"abc"
        assert repr(arena) == f"<uform.lib.Arena host used={arena.used} capacity={1 << 20}>"
        view.release()
    assert arena.closed and repr(arena) == "<uform.lib.Arena closed>"


def test_host_arena_outlives_its_executor():
    with Executor.for_ram(2) as executor:
        arena = Arena.new_in(executor, 4 << 20)  # huge pages from 2 MiB up
    assert executor.closed
    address = arena.allocate(1 << 20)
    ctypes.memset(address, 7, 1 << 20)
    with memoryview(arena) as view:
        base = ctypes.addressof(ctypes.c_char.from_buffer(view))
        assert view[address - base:address - base + (1 << 20)] == b"\x07" * (1 << 20)
    arena.close()


@pytest.mark.skipif(numpy is None, reason="numpy is not installed")
def test_host_arena_is_a_numpy_buffer_without_a_copy():
    with Arena.new_in(None, 1 << 16) as arena:
        array = numpy.frombuffer(arena, dtype=numpy.float32)
        assert array.size == (1 << 16) // 4 and array.flags.writeable
        address = arena.allocate(64 * 4, alignment=64)
        offset = (address - array.ctypes.data) // 4
        array[offset:offset + 64] = numpy.arange(64, dtype=numpy.float32)
        assert (ctypes.c_float * 64).from_address(address)[:] == list(range(64))
        with pytest.raises(BufferError):
            arena.close()
        del array
        gc.collect()


def test_close_with_a_live_export_raises_buffer_error_then_closes():
    arena = Arena.new_in(None, 4096)
    view = memoryview(arena)
    other = memoryview(arena)
    with pytest.raises(BufferError, match="2 buffers taken from it still live"):
        arena.close()
    assert not arena.closed
    view[0] = 1  # still valid: nothing was freed
    view.release()
    with pytest.raises(BufferError, match="1 buffer taken"):
        arena.__exit__(None, None, None)
    other.release()
    arena.close()
    arena.close()  # closing twice does nothing
    assert arena.closed
    for attempt in (lambda: memoryview(arena), lambda: arena.allocate(1), lambda: arena.used,
                    lambda: arena.device_pointer(0, 0), lambda: arena.__enter__()):
        with pytest.raises(ValueError, match="the arena is closed"):
            attempt()
    assert arena.capacity == 4096 and arena.devices == 0


def test_garbage_collection_frees_an_arena():
    arena = Arena.new_in(None, 1 << 20)
    view = memoryview(arena)
    reference = weakref.ref(arena)
    del arena
    gc.collect()
    assert reference() is not None  # the view keeps it
    view.release()
    del view
    gc.collect()
    assert reference() is None


def test_bad_input_raises_clear_errors(executor):
    with pytest.raises(uform.InvalidArgumentError, match="capacity is 0") as error:
        Arena.new_in(None, 0)
    assert error.value.status == 3 and isinstance(error.value, ValueError)
    with pytest.raises(ValueError, match="capacity must be non-negative"):
        Arena.new_in(None, -1)
    with pytest.raises(TypeError, match="capacity must be an int"):
        Arena.new_in(None, 1.5)
    with pytest.raises(ValueError, match="capacity is too large"):
        Arena.new_in(None, 1 << 70)
    with pytest.raises(uform.OutOfMemoryError, match="more than any machine has") as error:
        Arena.new_in(None, 1 << 62)
    assert error.value.status == 4
    with pytest.raises(TypeError, match="executor must be a uform.Executor or None, not int"):
        Arena.new_in(3, 4096)
    with pytest.raises(TypeError):
        Arena()  # made by new_in only
    closed = Executor.for_ram(1)
    closed.close()
    with pytest.raises(ValueError, match="the executor is closed"):
        Arena.new_in(closed, 4096)

    with Arena.new_in(executor, 4096) as arena:
        with pytest.raises(uform.InvalidArgumentError, match="not a power of two"):
            arena.allocate(1, alignment=3)
        with pytest.raises(ValueError, match="alignment must be non-negative"):
            arena.allocate(1, alignment=-64)
        with pytest.raises(ValueError, match="nbytes must be non-negative"):
            arena.allocate(-1)
        with pytest.raises(TypeError):
            arena.allocate(True)
        with pytest.raises(uform.OutOfMemoryError, match="do not fit"):
            arena.allocate(1 << 40)
        with pytest.raises(uform.OutOfMemoryError):
            arena.allocate(4097)
        assert arena.used == 0  # refusals take nothing
        arena.allocate(4096)
        with pytest.raises(uform.OutOfMemoryError):
            arena.allocate(1)
        assert arena.used == 4096
        with pytest.raises(uform.InvalidArgumentError, match="host arena has no devices"):
            arena.device_pointer(0, arena.allocate(0, 1))
