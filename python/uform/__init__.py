"""UForm: executors placing compute on CPUs and GPUs.

The package re-exports the CPython extension `uform.lib` (executors, arenas, meshes, devices,
errors) and defines the enums, valued as the C library's, and the capability queries.
"""

from __future__ import annotations

import os
from enum import IntEnum
from typing import Any

from . import lib as _lib
from .lib import (
    Arena,
    ArenaView,
    CallbackFailedError,
    ContendedError,
    Deferred,
    DeviceFaultError,
    DeviceSlot,
    Executor,
    ForkedError,
    GPUDevice,
    InvalidArgumentError,
    MalformedError,
    Mesh,
    MeshDescription,
    MeshOptions,
    MismatchError,
    NotFoundError,
    OutOfMemoryError,
    Staging,
    TimeoutError as TimeoutError,  # the redundant alias exports it to type checkers (see __all__)
    UFormError,
    UFormInterruptedError,
    UFormIOError,
    UnsupportedError,
)

__version__ = "4.0.0-rc.1"

# The extension must come from the same release as this package: a stale build left in place
# would otherwise answer with another library's behaviour.
if _lib.version() != __version__:
    raise ImportError(f"uform {__version__} found the C library {_lib.version()}; reinstall the package")


def capabilities_compiled() -> str:
    """The hardware capabilities this binary was compiled with.

    A comma-separated list (e.g. "serial,intel_haswell,intel_skylake,cuda,numa"): the CPU
    classes with kernels built in, as snake-case CPUClass names in class order, then the
    backends ("cuda", "hip", "nccl", "numa").

    Raises:
        Never raises.

    Example:
        >>> "serial" in uform.capabilities_compiled().split(",")
        True

    Calls uform_capabilities_compiled.
    """
    return _lib.capabilities_compiled()


def capabilities_available() -> str:
    """The hardware capabilities this machine offers at runtime.

    A comma-separated list in the order and names of capabilities_compiled(): the part of it
    this machine (CPU, OS, drivers) can run.

    Raises:
        Never raises.

    Example:
        >>> usable = set(uform.capabilities_compiled().split(",")) & set(uform.capabilities_available().split(","))
        >>> "serial" in usable
        True

    Calls uform_capabilities_available.
    """
    return _lib.capabilities_available()


def gpu_devices() -> tuple[GPUDevice, ...]:
    """Every GPU this process can drive, a device's position being its ordinal.

    NVIDIA devices first, then AMD, each in PCI bus order; () on a machine without GPUs or
    drivers (uform.info() says why). Executor.for_vram(devices=[...]) takes these positions.

    Raises:
        Never raises for a missing driver: the list is empty then.

    Example:
        >>> for ordinal, device in enumerate(uform.gpu_devices()):
        ...     print(ordinal, device.name, device.memory_bytes)

    Calls uform_gpu_devices.
    """
    return _lib.gpu_devices()


def cpu_class_derived() -> CPUClass:
    """The highest CPU class this CPU and OS can run.

    What Executor.for_ram(cpu_class=None) dispatches as.

    Raises:
        Never raises.

    Example:
        >>> uform.cpu_class_derived() >= uform.CPUClass.SERIAL
        True

    Calls uform_cpu_class_derived.
    """
    return CPUClass(_lib.cpu_class_derived())


def default_threads() -> int:
    """The threads Executor.for_ram(0) takes: n - n/8 of the CPUs this process may use.

    Raises:
        Never raises.

    Example:
        >>> uform.default_threads() >= 1
        True

    Calls uform_default_threads.
    """
    return _lib.default_threads()


def info(*, json: bool = False) -> str:
    """What `uform info` prints; one JSON object with json=True.

    Arguments:
        json: False (the default) answers the text report; True one JSON object.

    Raises:
        MemoryError: no memory for the report's text; the exception of any status
        uform_info_write answers.

    Example:
        >>> import json
        >>> report = json.loads(uform.info(json=True))

    Calls uform_info_write.
    """
    return _lib.info(json=json)


def version() -> str:
    """The C library's version at run time, e.g. "4.0.0-rc.1"; the package's own __version__.

    Raises:
        Never raises.

    Example:
        >>> uform.version() == uform.__version__
        True

    Calls uform_version.
    """
    return _lib.version()


def _native_address(thing: object, role: str) -> int:
    """The address a native verb takes for `thing`, a ctypes or cffi object, or TypeError.

    role "function": a ctypes function object (CFUNCTYPE callback, a library's symbol) or a cffi
    function pointer. role "context": also a ctypes pointer (its value), any other ctypes object
    (its address, as ctypes.addressof), or a cffi pointer."""
    import sys

    ctypes = sys.modules.get("ctypes")
    if ctypes is not None:
        # A function object's or a pointer's memory holds the address itself. (ctypes.cast would
        # leave a reference cycle through `thing` in its _objects, one more on every call.)
        if isinstance(thing, ctypes._CFuncPtr) or (  # type: ignore[attr-defined]
            role == "context" and isinstance(thing, (ctypes._Pointer, ctypes.c_void_p))  # type: ignore[attr-defined]
        ):
            return ctypes.c_void_p.from_buffer(thing).value or 0  # type: ignore[arg-type]
        if role == "context" and isinstance(thing, ctypes._SimpleCData.__mro__[1]):  # _CData: any ctypes object
            return ctypes.addressof(thing)  # type: ignore[arg-type]
    backend = sys.modules.get("_cffi_backend")
    if backend is not None and isinstance(thing, backend._CDataBase):
        ffi = backend.FFI()
        kind = ffi.typeof(thing).kind
        if kind == "function" or (role == "context" and kind == "pointer"):
            return int(ffi.cast("uintptr_t", thing))
        raise TypeError(f"{role} must be a cffi {'function pointer' if role == 'function' else 'pointer'}, "
                        f"not a cffi {kind} ({ffi.typeof(thing).cname})")
    kinds = "a ctypes function or a cffi function pointer" if role == "function" else \
        "a ctypes object or pointer, or a cffi pointer"
    raise TypeError(f"{role} must be an address (int), {kinds}, not {type(thing).__name__}")


class _Waiter:
    """The one thread that waits for every awaited deferred call, however many are awaited.

    It sleeps on the oldest pending call in short slices (calls on one executor finish in
    submission order), then hands each finished call back to its event loop with
    call_soon_threadsafe, where the outcome is read and raised. The loop never blocks, and the
    thread is a daemon that leaves when nothing is pending: an interrupted asyncio.run() does
    not join it, so Ctrl-C ends it at once."""

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self._pending: list[tuple[Deferred, Any, Any]] = []
        self._running = False

    def add(self, deferred: Deferred, loop: Any, future: Any) -> None:
        import threading

        with self._lock:
            self._pending.append((deferred, loop, future))
            if self._running:
                return
            self._running = True
        threading.Thread(target=self._run, name="uform:await", daemon=True).start()

    def forget_in_child(self) -> None:
        """After fork(): the thread is not in the child, and neither are the parent's loops."""
        import threading

        self._lock = threading.Lock()
        self._pending = []
        self._running = False

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._pending:
                    self._running = False
                    return
                oldest = self._pending[0][0]
            try:
                oldest.wait(0.02)
            except BaseException:  # its failure, or the slice running out: read again on the loop
                pass
            with self._lock:
                finished = [entry for entry in self._pending if entry[0].done() or entry[2].done()]
                self._pending = [entry for entry in self._pending if entry not in finished]
            for deferred, loop, future in finished:
                try:
                    loop.call_soon_threadsafe(_settle, deferred, future)
                except RuntimeError:  # the loop closed first: nobody awaits any more
                    pass


def _settle(deferred: Deferred, future: Any) -> None:
    """On the awaiting loop: the finished call's outcome becomes the future's."""
    if future.done():  # cancelled meanwhile
        return
    try:
        deferred.wait(0)
    except BaseException as error:  # the call's failure, raised again by await
        future.set_exception(error)
    else:
        future.set_result(None)


_waiter = _Waiter()

if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_waiter.forget_in_child)


def _await_deferred(deferred: Deferred) -> Any:
    """What `await deferred` iterates: a future of the running loop, settled once the shared
    waiting thread (_Waiter) sees the call finish; cancelling it (the awaiting task cancelled)
    cancels the call."""
    import asyncio

    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def cancel_the_call(settled: Any) -> None:
        if settled.cancelled():  # the awaiting task was cancelled: so is the call
            deferred.cancel()

    future.add_done_callback(cancel_the_call)
    if deferred.done():
        _settle(deferred, future)
    else:
        _waiter.add(deferred, loop, future)
    return future.__await__()


class CPUClass(IntEnum):
    """The CPU families dispatch picks from, valued as uform_cpu_class_t; a RAM placement may pin one."""

    SERIAL = 1
    INTEL_HASWELL = 2
    INTEL_SIERRA = 3
    INTEL_SKYLAKE = 4
    INTEL_ICELAKE = 5
    AMD_GENOA = 6
    INTEL_SAPPHIRE = 7
    INTEL_GRANITE = 8
    INTEL_DIAMOND = 9
    AWS_G2 = 10
    APPLE_M2 = 11
    APPLE_M4 = 12
    AWS_G5 = 13
    NVIDIA_VERA = 14
    ALIBABA_C930 = 15
    WASM32_V128 = 16
    WASM64_EXTENDED = 17
    MONOVERSIONED = 18


class GPUClass(IntEnum):
    """The GPU families dispatch picks from, valued as uform_gpu_class_t; a VRAM placement may pin one."""

    NVIDIA_AMPERE = 1
    NVIDIA_ADA = 2
    NVIDIA_HOPPER = 3
    NVIDIA_BLACKWELL = 4
    NVIDIA_BLACKWELLRTX = 5
    NVIDIA_RUBIN = 6
    AMD_CDNA3 = 7
    AMD_CDNA4 = 8
    AMD_CDNA5 = 9
    APPLE_METAL7 = 10
    APPLE_METAL9 = 11
    APPLE_METAL10 = 12


class GPUVendor(IntEnum):
    """The vendor whose runtime drives a GPU, valued as uform_gpu_vendor_t."""

    NVIDIA = 1
    AMD = 2
    APPLE = 3


class Mood(IntEnum):
    """What idle workers do between calls, valued as uform_mood_t."""

    SPINNING = 1
    PARKED = 2


class MultimemTier(IntEnum):
    """How a mesh's NVLink domains reduce, valued as uform_multimem_tier_t."""

    SWITCH_REDUCED = 0
    PEER_READ = 1


# TimeoutError stays out of `from uform import *`, which would shadow the builtin in the importing
# module; uform.TimeoutError (a builtin TimeoutError too) is there to be named.
__all__ = [
    "Arena",
    "ArenaView",
    "CPUClass",
    "CallbackFailedError",
    "ContendedError",
    "Deferred",
    "DeviceFaultError",
    "DeviceSlot",
    "Executor",
    "ForkedError",
    "GPUClass",
    "GPUDevice",
    "GPUVendor",
    "InvalidArgumentError",
    "MalformedError",
    "Mesh",
    "MeshDescription",
    "MeshOptions",
    "MismatchError",
    "Mood",
    "MultimemTier",
    "NotFoundError",
    "OutOfMemoryError",
    "Staging",
    "UFormError",
    "UFormIOError",
    "UFormInterruptedError",
    "UnsupportedError",
    "capabilities_available",
    "capabilities_compiled",
    "cpu_class_derived",
    "default_threads",
    "gpu_devices",
    "info",
    "version",
]
