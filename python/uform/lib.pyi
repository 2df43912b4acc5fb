"""Stubs of the CPython extension over libuform; import these names from `uform`."""

import builtins
import ctypes
import os
import sys
from collections.abc import Callable, Generator, Sequence
from types import TracebackType
from typing import Any, Final, Literal, final, overload

from _typeshed import ReadableBuffer, WriteableBuffer, structseq
from typing_extensions import Self, TypeAlias

from uform import CPUClass, GPUClass, GPUVendor, Mood, MultimemTier

_PathLike: TypeAlias = str | bytes | os.PathLike[str] | os.PathLike[bytes]
_Task: TypeAlias = Callable[[int, int], object]
_Slice: TypeAlias = Callable[[int, int, int], object]
_Progress: TypeAlias = Callable[[int, int], object]
_DeviceFunction: TypeAlias = Callable[[DeviceSlot], object]
# A C function for the native verbs: its address, a ctypes function object, or a cffi function
# pointer (cffi ships no stubs, hence Any); its context: an address, a ctypes object (its address)
# or pointer, or a cffi pointer.
_NativeFunction: TypeAlias = int | ctypes._CData | Any
_NativeContext: TypeAlias = int | ctypes._CData | Any

VERSION: Final[str]
VERSION_NUMBER: Final[int]
DEFERRED_LIMIT_DEFAULT: Final[int]
THREADS_MAX: Final[int]

# ---- errors: one class per C status, each carrying it ------------------------------------------

class UFormError(Exception):
    """Base of every uform error; `status` is the C uform_status_t, `message` the library's detail."""

    status: int
    message: str

class UnsupportedError(UFormError): ...
class ContendedError(UFormError): ...
class InvalidArgumentError(UFormError, ValueError): ...
class OutOfMemoryError(UFormError): ...
class NotFoundError(UFormError): ...
class DeviceFaultError(UFormError): ...
class TimeoutError(UFormError, builtins.TimeoutError): ...
class MismatchError(UFormError): ...
class UFormIOError(UFormError, OSError): ...
class UFormInterruptedError(UFormError, InterruptedError): ...
class ForkedError(UFormError): ...
class CallbackFailedError(UFormError): ...
class MalformedError(UFormError): ...

# ---- devices ------------------------------------------------------------------------------------

@final
class GPUDevice(structseq[Any], tuple[GPUVendor, int, GPUClass | None, int, int, str]):
    """One GPU this process can drive, its position in gpu_devices() being its ordinal."""

    __match_args__: Final = ("vendor", "vendor_ordinal", "gpu_class", "compute_units", "memory_bytes", "name")
    vendor: GPUVendor
    """The vendor whose runtime drives the device."""
    vendor_ordinal: int
    """The device's ordinal in its vendor's runtime, as nvidia-smi or rocm-smi list it."""
    gpu_class: GPUClass | None
    """The class whose kernels run on it, or None."""
    compute_units: int
    """Streaming multiprocessors or compute units."""
    memory_bytes: int
    """Device memory in bytes."""
    name: str
    """The vendor's own name for the device."""

@final
class DeviceSlot(structseq[Any], tuple[int, int, GPUVendor, int, int, int, int]):
    """One device of a VRAM executor, as a device function is given it; valid during the call."""

    __match_args__: Final = ("device", "ordinal", "vendor", "native_device", "native_context", "stream", "thread")
    device: int
    """Its index among the executor's devices."""
    ordinal: int
    """Its position in uform.gpu_devices()."""
    vendor: GPUVendor
    """The vendor whose runtime the handles below belong to."""
    native_device: int
    """The CUdevice, or the HIP device id."""
    native_context: int
    """CUDA: the primary CUcontext, current on this thread; HIP: 0."""
    stream: int
    """The executor's CUstream or hipStream_t on this device, as an int."""
    thread: int
    """The host thread (logical slot) running the function."""

def capabilities_compiled() -> str:
    """The hardware capabilities this binary was compiled with."""

def capabilities_available() -> str:
    """The hardware capabilities this machine offers at runtime."""

def gpu_devices() -> tuple[GPUDevice, ...]:
    """Every GPU this process can drive, a device's position being its ordinal."""

def version() -> str:
    """The C library's version at run time."""

def info(json: bool = False) -> str:
    """What `uform info` prints."""

def cpu_class_derived() -> CPUClass:
    """The highest CPU class this CPU and OS can run."""

def default_threads() -> int:
    """The threads for_ram(0) takes."""

# ---- executors ----------------------------------------------------------------------------------

@final
class Deferred:
    """A call running on an executor's own threads: poll it, wait for it, or await it."""

    def done(self) -> bool:
        """Whether the call finished; never blocks."""
    def wait(self, timeout: float | None = None) -> None:
        """Waits for the call and raises its failure; uform.TimeoutError if still running."""
    def progress(self) -> tuple[int, int]:
        """Tasks finished so far and in total."""
    def cancel(self) -> None:
        """Cancels the call: tasks not started never start; wait() then raises UFormInterruptedError.

        Once the call has begun, each thread's first task still starts (tasks that wait for
        each other never wait for one the cancel skipped).

        Calls uform_deferred_cancel.
        """
    def __await__(self) -> Generator[Any, None, None]: ...

@final
class Executor:
    """The threads or streams a verb runs on, shared across models and named by on and deferred."""

    @classmethod
    def for_ram(
        cls,
        threads: int = 0,
        *,
        memory_domains: Sequence[int] | None = None,
        deferred_limit: int = 0,
        cpu_class: CPUClass | None = None,
    ) -> Executor:
        """Spawns host threads for RAM-resident models.

        Calls uform_executor_for_ram.
        """
    @classmethod
    def on_pool(
        cls,
        pool: int,
        /,
        *,
        memory_domains: Sequence[int] | None = None,
        deferred_limit: int = 0,
        cpu_class: CPUClass | None = None,
    ) -> Executor:
        """Borrows a ForkUnion pool; raises UnsupportedError until borrowing is designed.

        Calls uform_executor_on_pool.
        """
    @classmethod
    def for_vram(
        cls,
        devices: Sequence[int] | None = None,
        *,
        scratch_limit: int = 0,
        deferred_limit: int = 0,
        gpu_class: GPUClass | None = None,
        memory_domains: Sequence[int] | None = None,
        cpu_class: CPUClass | None = None,
    ) -> Executor:
        """Opens one submission stream on every named device.

        Calls uform_executor_for_vram.
        """
    def drain(self, mood: Mood = ...) -> None:
        """Waits for every call submitted before it, then sets the idle mood.

        Calls uform_executor_drain.
        """
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
        /,
    ) -> None:
        """Closes it once its calls finish, or leaves that to its last live GPU arena.

        Calls uform_executor_free.
        """
    def close(self) -> None:
        """Closes it once its calls finish, as leaving a with block does."""
    @property
    def threads(self) -> int:
        """Threads a call runs on."""
    @property
    def cpu_class(self) -> CPUClass:
        """The class its calls dispatch as: the pin or the derived one."""
    @property
    def mood(self) -> Mood:
        """What idle workers do between calls."""
    @property
    def closed(self) -> bool:
        """Whether it was closed."""
    @property
    def devices(self) -> int:
        """Devices it drives: 0 for a RAM executor. Calls uform_executor_devices."""
    @property
    def gpu_class(self) -> GPUClass | None:
        """The class its device calls dispatch as; None for a RAM executor. Calls uform_executor_gpu_class."""

    # Verbs with Python callables, which run holding the GIL.
    @overload
    def for_n(
        self, n: int, fn: _Task, *, dynamic: bool = False, deferred: Literal[False] = False, progress: _Progress | None = None
    ) -> None: ...
    @overload
    def for_n(
        self, n: int, fn: _Task, *, dynamic: bool = False, deferred: Literal[True], progress: _Progress | None = None
    ) -> Deferred: ...
    @overload
    def for_threads(self, fn: _Task, *, deferred: Literal[False] = False, progress: _Progress | None = None) -> None: ...
    @overload
    def for_threads(self, fn: _Task, *, deferred: Literal[True], progress: _Progress | None = None) -> Deferred: ...
    @overload
    def for_slices(
        self, n: int, fn: _Slice, *, deferred: Literal[False] = False, progress: _Progress | None = None
    ) -> None: ...
    @overload
    def for_slices(self, n: int, fn: _Slice, *, deferred: Literal[True], progress: _Progress | None = None) -> Deferred: ...

    # Verbs with C functions given by address, which run without the GIL.
    @overload
    def for_n_native(
        self,
        n: int,
        function: _NativeFunction,
        context: _NativeContext = 0,
        *,
        dynamic: bool = False,
        deferred: Literal[False] = False,
        progress: _Progress | None = None,
        keep: object = None,
    ) -> None: ...
    @overload
    def for_n_native(
        self,
        n: int,
        function: _NativeFunction,
        context: _NativeContext = 0,
        *,
        dynamic: bool = False,
        deferred: Literal[True],
        progress: _Progress | None = None,
        keep: object = None,
    ) -> Deferred: ...
    @overload
    def for_threads_native(
        self,
        function: _NativeFunction,
        context: _NativeContext = 0,
        *,
        deferred: Literal[False] = False,
        progress: _Progress | None = None,
        keep: object = None,
    ) -> None: ...
    @overload
    def for_threads_native(
        self,
        function: _NativeFunction,
        context: _NativeContext = 0,
        *,
        deferred: Literal[True],
        progress: _Progress | None = None,
        keep: object = None,
    ) -> Deferred: ...
    @overload
    def for_slices_native(
        self,
        n: int,
        function: _NativeFunction,
        context: _NativeContext = 0,
        *,
        deferred: Literal[False] = False,
        progress: _Progress | None = None,
        keep: object = None,
    ) -> None: ...
    @overload
    def for_slices_native(
        self,
        n: int,
        function: _NativeFunction,
        context: _NativeContext = 0,
        *,
        deferred: Literal[True],
        progress: _Progress | None = None,
        keep: object = None,
    ) -> Deferred: ...

    # VRAM verbs: device functions, staged copies, and what a device function may ask for.
    @overload
    def for_devices(
        self, fn: _DeviceFunction, *, deferred: Literal[False] = False, progress: _Progress | None = None
    ) -> None:
        """Calls fn(slot) once for every device, in parallel, holding the GIL.

        Calls uform_executor_for_devices.
        """
    @overload
    def for_devices(self, fn: _DeviceFunction, *, deferred: Literal[True], progress: _Progress | None = None) -> Deferred: ...
    @overload
    def for_devices_native(
        self,
        function: _NativeFunction,
        context: _NativeContext = 0,
        *,
        deferred: Literal[False] = False,
        progress: _Progress | None = None,
        keep: object = None,
    ) -> None:
        """As for_devices, calling the C uform_device_function_t at address `function` without the GIL.

        Calls uform_executor_for_devices.
        """
    @overload
    def for_devices_native(
        self,
        function: _NativeFunction,
        context: _NativeContext = 0,
        *,
        deferred: Literal[True],
        progress: _Progress | None = None,
        keep: object = None,
    ) -> Deferred: ...
    @overload
    def copy_to_device(
        self,
        device: int,
        device_pointer: int,
        source: ReadableBuffer,
        *,
        deferred: Literal[False] = False,
        progress: _Progress | None = None,
    ) -> None:
        """Copies a C-contiguous host buffer to device memory; progress counts bytes.

        Calls uform_executor_copy_to_device.
        """
    @overload
    def copy_to_device(
        self,
        device: int,
        device_pointer: int,
        source: ReadableBuffer,
        *,
        deferred: Literal[True],
        progress: _Progress | None = None,
    ) -> Deferred: ...
    @overload
    def copy_to_host(
        self,
        destination: WriteableBuffer,
        device: int,
        device_pointer: int,
        *,
        deferred: Literal[False] = False,
        progress: _Progress | None = None,
    ) -> None:
        """Copies device memory into a writable C-contiguous host buffer; progress counts bytes.

        Calls uform_executor_copy_to_host.
        """
    @overload
    def copy_to_host(
        self,
        destination: WriteableBuffer,
        device: int,
        device_pointer: int,
        *,
        deferred: Literal[True],
        progress: _Progress | None = None,
    ) -> Deferred: ...
    def device_scratch(self, device: int, nbytes: int) -> int:
        """Device scratch for the running device function of `device`: its address.

        Calls uform_executor_device_scratch.
        """
    def staging(self, device: int, nbytes: int) -> memoryview:
        """Pinned host staging for the running device function of `device`, released when it returns.

        A larger request releases the earlier views (BufferError while an array over one lives);
        an export outliving the function makes copies, larger staging and close() raise
        BufferError until it is dropped.

        Calls uform_executor_staging.
        """
    def staging_tensor(self, device: int, nbytes: int) -> Staging:
        """As staging(), a Staging: a buffer and a DLPack producer on kDLCUDAHost (kDLROCMHost).

        Calls uform_executor_staging.
        """

# ---- arenas -------------------------------------------------------------------------------------

@final
class Arena:
    """Memory placed where an executor computes, bump-allocated and freed whole."""

    @classmethod
    def new_in(cls, executor: Executor | None, capacity: int) -> Arena:
        """Reserves `capacity` bytes where `executor` computes: host memory, or on every GPU.

        Calls uform_arena_new_in.
        """
    def allocate(self, nbytes: int, alignment: int = 64) -> int:
        """Takes `nbytes` at `alignment` and answers the address (device 0's on GPUs).

        Calls uform_arena_allocate.
        """
    def device_pointer(self, device: int, pointer: int) -> int:
        """The twin on device `device` of an address in device 0's reservation.

        Calls uform_arena_device_pointer.
        """
    def close(self) -> None:
        """Frees it whole; BufferError while a buffer taken from it lives.

        Calls uform_arena_free.
        """
    def view(self, address: int | None = None, nbytes: int | None = None) -> ArenaView:
        """An ArenaView over `nbytes` of a host arena from `address` (None: all of it), zero copy.

        Example: ``numpy.from_dlpack(arena.view(arena.allocate(4096), 4096))``. Raises ValueError
        for a range outside the arena or a closed arena, BufferError for a device arena.
        """
    def device_view(self, device: int, address: int | None = None, nbytes: int | None = None) -> ArenaView:
        """An ArenaView over the twin on device `device` of a range of a device arena.

        `address` is device 0's, as allocate() answers it. Its DLPack device is (2, CUDA ordinal)
        or (10, HIP device id). Raises ValueError, BufferError for a host arena,
        InvalidArgumentError for a device out of range.
        """
    def __dlpack__(
        self,
        *,
        stream: int | None = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> object:
        """A DLPack capsule: a 1-D uint8 tensor over a host arena's whole capacity, zero copy.

        max_version >= (1, 0): a versioned capsule. copy=True: a private copy. A dl_device other
        than (1, 0), or a stream, raises BufferError; close() raises BufferError while it lives.
        """
    def __dlpack_device__(self) -> tuple[int, int]:
        """(1, 0): kDLCPU. BufferError for a device arena."""
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
        /,
    ) -> None: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...
    def __release_buffer__(self, buffer: memoryview, /) -> None: ...

    @property
    def used(self) -> int:
        """Bytes taken so far, alignment padding included. Calls uform_arena_usage."""
    @property
    def capacity(self) -> int:
        """Bytes it holds (on each device, for a device arena)."""
    @property
    def devices(self) -> int:
        """Devices it spans: 0 for a host arena. Calls uform_arena_devices."""
    @property
    def closed(self) -> bool:
        """Whether it was closed."""

@final
class Staging:
    """Pinned staging lent to one device function: a buffer and a DLPack producer until it returns."""

    def __dlpack__(
        self,
        *,
        stream: int | None = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> object:
        """A DLPack capsule on kDLCUDAHost; dl_device=(1, 0) answers it as CPU memory, zero copy."""
    def __dlpack_device__(self) -> tuple[int, int]:
        """(3, 0) for CUDA pinned memory, (11, 0) for ROCm's."""
    def __buffer__(self, flags: int, /) -> memoryview: ...
    def __release_buffer__(self, buffer: memoryview, /) -> None: ...
    @property
    def nbytes(self) -> int:
        """Bytes it spans."""
    @property
    def valid(self) -> bool:
        """Whether its device function still runs and has not grown its staging."""

@final
class ArenaView:
    """A range of an arena as an array: DLPack and, on the host, the buffer protocol."""

    def __dlpack__(
        self,
        *,
        stream: int | None = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> object:
        """A DLPack capsule of the view. For a device view, stream=s (not -1) makes the consumer's
        stream s wait, on the device, for the executor's earlier calls (CUDA: None or 1 the legacy
        default stream, 2 the per-thread one; ROCm: None or 0 the default stream; else a handle);
        the host waits only for what those calls have not yet queued."""
    def __dlpack_device__(self) -> tuple[int, int]:
        """(1, 0) on the host, (2, ordinal) for CUDA, (10, id) for ROCm."""
    def __buffer__(self, flags: int, /) -> memoryview: ...
    def __release_buffer__(self, buffer: memoryview, /) -> None: ...
    @property
    def address(self) -> int:
        """Its first byte's address (on its device, for a device view)."""
    @property
    def nbytes(self) -> int:
        """Bytes it spans."""
    @property
    def device(self) -> int | None:
        """The executor's device it lies on, or None on the host."""
    @property
    def arena(self) -> Arena:
        """The arena it lies in."""

# ---- mesh ---------------------------------------------------------------------------------------

@final
class MeshOptions:
    """Where this process sits among the processes training one model, and how they meet."""

    host_domain_index: Final[int]
    host_domain_count: Final[int]
    gpus_per_multimem_domain: Final[int]
    directory: Final[_PathLike | None]
    job: Final[str | None]
    timeout_seconds: Final[float]
    def __init__(
        self,
        *,
        host_domain_index: int = 0,
        host_domain_count: int = 0,
        gpus_per_multimem_domain: int = 0,
        directory: _PathLike | None = None,
        job: str | None = None,
        timeout_seconds: float = 0.0,
    ) -> None: ...

@final
class MeshDescription(structseq[Any], tuple[int, int, int, int, int, MultimemTier, GPUClass | None]):
    """What a mesh reports about itself, as uform_mesh_description_t holds it."""

    __match_args__: Final = (
        "gpus_per_host_domain",
        "gpus_per_multimem_domain",
        "gpus_per_colocated_domain",
        "host_domain_index",
        "first_gpu_index",
        "multimem_tier",
        "gpu_class",
    )
    gpus_per_host_domain: int
    """GPUs one process drives."""
    gpus_per_multimem_domain: int
    """GPUs one NVLink domain spans."""
    gpus_per_colocated_domain: int
    """GPUs in the whole run."""
    host_domain_index: int
    """This process's index among the run's processes."""
    first_gpu_index: int
    """The run-wide index of this process's first GPU."""
    multimem_tier: MultimemTier
    """How its NVLink domains reduce."""
    gpu_class: GPUClass | None
    """The class every GPU of the run dispatches as, or None."""

@final
class Mesh:
    """One process's place among the processes of a run, borrowed by every trainer."""

    @classmethod
    def bootstrap(cls, executor: Executor, options: MeshOptions | None, /) -> Mesh:
        """Joins this process to the run's mesh.

        Every process of the run gets the same answer. Ctrl-C while it waits
        raises KeyboardInterrupt in that process; every other process of the run
        raises UFormInterruptedError, whose message names the one interrupted.

        Calls uform_mesh_bootstrap.
        """
    def describe(self) -> MeshDescription:
        """The mesh's shape and this process's place in it.

        Calls uform_mesh_describe.
        """
    def communicator(self, device: int, /) -> int:
        """The NCCL communicator (the ncclComm_t's address) of this process's device `device`.

        `device` indexes the executor's devices; the communicator spans every GPU of the run,
        its rank first_gpu_index + device, its size gpus_per_colocated_domain. Hand the address
        to an NCCL wrapper (torch, cupy); it is the mesh's, destroyed when the mesh is, so use it
        only while the mesh lives, and never destroy it yourself. Raises NotFoundError ("no
        data plane", saying why) when the mesh formed without NCCL, InvalidArgumentError for a
        device out of range.

        Calls uform_mesh_communicator.
        """
