"""The Executor's GPU verbs and uform.DeviceSlot where no GPU is needed: their shape, and how RAM
executors refuse them. Behaviour on devices is in test_vram_cuda_double.py."""

import inspect

import pytest

import uform
from uform import Executor


def signature(function) -> str:
    return str(inspect.signature(function))


def test_gpu_verbs_have_the_binding_style():
    assert signature(Executor.for_devices) == "(self, /, fn, *, deferred=False, progress=None)"
    assert signature(Executor.for_devices_native) == (
        "(self, /, function, context=0, *, deferred=False, progress=None, keep=None)")
    assert signature(Executor.copy_to_device) == (
        "(self, /, device, device_pointer, source, *, deferred=False, progress=None)")
    assert signature(Executor.copy_to_host) == (
        "(self, /, destination, device, device_pointer, *, deferred=False, progress=None)")
    assert signature(Executor.device_scratch) == "(self, /, device, nbytes)"
    assert signature(Executor.staging) == "(self, /, device, nbytes)"
    for name, verb in [("for_devices", "uform_executor_for_devices"),
                       ("for_devices_native", "uform_executor_for_devices"),
                       ("copy_to_device", "uform_executor_copy_to_device"),
                       ("copy_to_host", "uform_executor_copy_to_host"),
                       ("device_scratch", "uform_executor_device_scratch"), ("staging", "uform_executor_staging")]:
        assert f"Calls {verb}." in getattr(Executor, name).__doc__, name
    assert "Calls uform_executor_devices." in Executor.devices.__doc__


def test_device_slot_fields():
    assert uform.DeviceSlot is uform.lib.DeviceSlot and "DeviceSlot" in uform.__all__
    assert uform.DeviceSlot.__match_args__ == (
        "device", "ordinal", "vendor", "native_device", "native_context", "stream", "thread")
    assert uform.DeviceSlot.n_fields == 7
    slot = uform.DeviceSlot((1, 3, uform.GPUVendor.NVIDIA, 3, 0x1000, 0x2000, 1))
    assert (slot.device, slot.ordinal, slot.vendor, slot.stream, slot.thread) == (1, 3, uform.GPUVendor.NVIDIA,
                                                                                  0x2000, 1)
    assert isinstance(slot, tuple)


def test_ram_executor_has_no_devices_and_refuses_gpu_verbs(executor):
    assert executor.devices == 0 and executor.gpu_class is None
    assert "devices=" not in repr(executor)
    calls = [
        lambda: executor.for_devices(lambda slot: None),
        lambda: executor.copy_to_device(0, 0x10000, b"data"),
        lambda: executor.copy_to_host(bytearray(4), 0, 0x10000),
        lambda: executor.device_scratch(0, 256),
        lambda: executor.staging(0, 256),
    ]
    for call in calls:
        with pytest.raises(uform.InvalidArgumentError) as error:
            call()
        assert error.value.status == 3
    with pytest.raises(uform.InvalidArgumentError):
        executor.for_devices(lambda slot: None, deferred=True)
    executor.for_n(4, lambda task, thread: None)  # refusals leave it working


def test_gpu_verbs_check_their_arguments_first(executor):
    with pytest.raises(TypeError, match="fn must be callable"):
        executor.for_devices(42)
    with pytest.raises(TypeError, match="progress must be callable or None"):
        executor.for_devices(lambda slot: None, progress=3)
    with pytest.raises(ValueError, match="function must be the address of a C function"):
        executor.for_devices_native(7)
    with pytest.raises(TypeError, match="function must be an address"):
        executor.for_devices_native(True)
    with pytest.raises(TypeError, match="source must be a buffer"):
        executor.copy_to_device(0, 0x10000, "text")
    with pytest.raises(TypeError, match="destination must be a writable buffer, not a read-only bytes"):
        executor.copy_to_host(b"read-only", 0, 0x10000)
    with pytest.raises(ValueError, match="source must be C-contiguous"):
        executor.copy_to_device(0, 0x10000, memoryview(bytearray(16))[::2])
    with pytest.raises(ValueError, match="device must be non-negative"):
        executor.copy_to_device(-1, 0x10000, b"data")
    with pytest.raises(ValueError, match="nbytes must be non-negative"):
        executor.device_scratch(0, -1)


def test_closed_executor_refuses_gpu_verbs():
    executor = Executor.for_ram(1)
    executor.close()
    for call in (lambda: executor.devices, lambda: executor.for_devices(lambda slot: None),
                 lambda: executor.copy_to_device(0, 0x10000, b"x"), lambda: executor.device_scratch(0, 1)):
        with pytest.raises(ValueError, match="the executor is closed"):
            call()


def test_for_vram_without_gpu_is_not_found():
    if uform.gpu_devices():
        pytest.skip("this machine has GPUs")
    with pytest.raises(uform.NotFoundError, match="no GPU"):
        Executor.for_vram()
