"""`uform.gpu_devices()` and `python -m uform` against the CUDA driver test double.

The double (tests/doubles/cuda_emulated, see its README.md) is a host emulation of the CUDA
driver's ABI, never a real GPU. It is built once per session with the system C compiler (the
`cuda_double` fixture of conftest.py), and every check runs in a fresh interpreter: uform loads
the driver named by UFORM_CUDA_LIBRARY once per process, configured by UFORM_CUDA_DOUBLE_CONFIG.
"""

import json
import os
import sys

import pytest

import children

import uform

# Prints what gpu_devices() answers as one JSON object: the devices, or the error raised.
LIST_DEVICES = r"""
import json, uform
try:
    devices = uform.gpu_devices()
except uform.UFormError as error:
    print(json.dumps({"error": type(error).__name__, "message": str(error)}))
    try:
        uform.gpu_devices()
    except uform.UFormError as second:
        print(json.dumps({"second_error": type(second).__name__, "second_message": str(second)}))
    raise SystemExit(0)
print(json.dumps({"devices": [
    {"type": type(d).__name__, "vendor": d.vendor.name, "vendor_ordinal": d.vendor_ordinal,
     "gpu_class": d.gpu_class.name if d.gpu_class is not None else None,
     "compute_units": d.compute_units, "memory_bytes": d.memory_bytes, "name": d.name,
     "tuple": [int(d[0]), d[1], None if d[2] is None else int(d[2]), d[3], d[4], d[5]]}
    for d in devices], "same_again": uform.gpu_devices() == devices}))
"""


def run_python(arguments, library, config, tmp_path, **extra):
    """A fresh interpreter with uform pointed at `library` configured by `config`."""
    environment = dict(os.environ)
    environment.pop("CUDA_DEVICE_ORDER", None)
    environment.update(extra)
    environment["UFORM_CUDA_LIBRARY"] = str(library)
    if config is None:
        environment.pop("UFORM_CUDA_DOUBLE_CONFIG", None)
    else:
        environment["UFORM_CUDA_DOUBLE_CONFIG"] = config
    # Not python/: the source package, which holds no built extension, would shadow the installed one.
    return children.run([sys.executable, *arguments], cwd=tmp_path, env=environment)


def gpu_devices_in_child(library, config, tmp_path, **extra):
    result = run_python(["-c", LIST_DEVICES], library, config, tmp_path, **extra)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    merged = {}
    for line in lines:
        merged.update(line)
    return merged


TWO_SOCKET = (
    "device pci=0000:C1:00.0 cc=9.0 sms=132 memory=80G name=NVIDIA H100 80GB HBM3\n"
    "device pci=0000:41:00.0 cc=8.9 sms=142 memory=48G name=NVIDIA L40S\n"
    "device pci=0000:02:00.0 cc=8.6 sms=84 memory=24G name=NVIDIA GeForce RTX 3090\n"
    "device pci=0000:81:00.0 cc=7.0 sms=80 memory=32G name=Tesla V100-SXM2-32GB\n"
    "device pci=0000:03:00.0 cc=12.0 sms=188 memory=96G name=NVIDIA RTX PRO 6000 Blackwell\n"
    "device pci=0000:04:00.0 cc=10.0 sms=148 memory=180G name=NVIDIA B200\n"
)


def test_gpu_devices_cuda_double_lists_devices_in_pci_bus_order(cuda_double, tmp_path):
    answer = gpu_devices_in_child(cuda_double, TWO_SOCKET, tmp_path)
    assert "error" not in answer, answer
    devices = answer["devices"]
    expected = [
        ("NVIDIA_AMPERE", 84, 24 << 30, "NVIDIA GeForce RTX 3090"),
        ("NVIDIA_BLACKWELLRTX", 188, 96 << 30, "NVIDIA RTX PRO 6000 Blackwell"),
        ("NVIDIA_BLACKWELL", 148, 180 << 30, "NVIDIA B200"),
        ("NVIDIA_ADA", 142, 48 << 30, "NVIDIA L40S"),
        (None, 80, 32 << 30, "Tesla V100-SXM2-32GB"),
        ("NVIDIA_HOPPER", 132, 80 << 30, "NVIDIA H100 80GB HBM3"),
    ]
    assert len(devices) == len(expected), devices
    for ordinal, (device, (gpu_class, sms, memory, name)) in enumerate(zip(devices, expected)):
        assert device["type"] == "GPUDevice"
        assert device["vendor"] == "NVIDIA"
        assert device["vendor_ordinal"] == ordinal
        assert device["gpu_class"] == gpu_class, device
        assert device["compute_units"] == sms
        assert device["memory_bytes"] == memory
        assert device["name"] == name
        # The structseq's tuple order is the page's: vendor, vendor_ordinal, gpu_class,
        # compute_units, memory_bytes, name.
        class_value = None if gpu_class is None else int(uform.GPUClass[gpu_class])
        assert device["tuple"] == [int(uform.GPUVendor.NVIDIA), ordinal, class_value, sms, memory, name]
    assert answer["same_again"] is True


def test_gpu_devices_cuda_double_pci_bus_order_whatever_cuda_device_order(cuda_double, tmp_path):
    # The double orders its ordinals as configured (FASTEST_FIRST) or by PCI bus (PCI_BUS_ID),
    # as the driver does; uform's list is PCI bus order either way.
    config = "device pci=0001:00:00.0 name=second domain\ndevice pci=0000:02:00.1 name=function 1\n"
    for order in ("FASTEST_FIRST", "PCI_BUS_ID"):
        answer = gpu_devices_in_child(cuda_double, config, tmp_path, CUDA_DEVICE_ORDER=order)
        assert [d["name"] for d in answer["devices"]] == ["function 1", "second domain"], (order, answer)
        assert [d["vendor_ordinal"] for d in answer["devices"]] == [0, 1], (order, answer)


def test_gpu_devices_cuda_double_names_keep_utf8_and_cut_split_characters(cuda_double, tmp_path):
    config = "device name=NVIDIA \\xC3\\xA9t\\xC3\\xA9\n"
    answer = gpu_devices_in_child(cuda_double, config, tmp_path)
    assert [d["name"] for d in answer["devices"]] == ["NVIDIA \u00e9t\u00e9"]


def test_gpu_devices_cuda_double_without_driver_is_empty(tmp_path):
    answer = gpu_devices_in_child(tmp_path / "no-such" / "libcuda.so.1", None, tmp_path)
    assert answer == {"devices": [], "same_again": True}


def test_gpu_devices_cuda_double_with_no_device_is_empty(cuda_double, tmp_path):
    answer = gpu_devices_in_child(cuda_double, "driver version=12080", tmp_path)
    assert answer == {"devices": [], "same_again": True}


def test_gpu_devices_cuda_double_stub_library_is_empty(cuda_double, tmp_path):
    answer = gpu_devices_in_child(cuda_double, "device name=never-seen\nfault init=CUDA_ERROR_STUB_LIBRARY", tmp_path)
    assert answer == {"devices": [], "same_again": True}


TOOLKIT_STUB = "/usr/local/cuda/lib64/stubs/libcuda.so"


@pytest.mark.skipif(not os.path.exists(TOOLKIT_STUB), reason="no CUDA toolkit stub libcuda.so here")
def test_gpu_devices_real_toolkit_stub_is_empty_and_said(tmp_path):
    # The toolkit's own stub (every entry, cuGetProcAddress_v2 included, answers
    # CUDA_ERROR_STUB_LIBRARY): no NVIDIA device, no error, and `python -m uform` says why.
    answer = gpu_devices_in_child(TOOLKIT_STUB, None, tmp_path, UFORM_HIP_LIBRARY="/nonexistent/libamdhip64.so")
    assert answer == {"devices": [], "same_again": True}, answer
    result = run_python(["-m", "uform"], TOOLKIT_STUB, None, tmp_path, UFORM_HIP_LIBRARY="/nonexistent/libamdhip64.so")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "CUDA stub library, no driver" in result.stdout, result.stdout


def test_gpu_devices_cuda_double_driver_fault_raises_device_fault_error(cuda_double, tmp_path):
    config = "device name=unreachable\nfault init=CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"
    answer = gpu_devices_in_child(cuda_double, config, tmp_path)
    assert answer["error"] == "DeviceFaultError", answer
    assert "cuInit" in answer["message"] and "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH" in answer["message"], answer
    # The driver is read once per process: every later call answers the same failure.
    assert answer["second_error"] == "DeviceFaultError"
    assert answer["second_message"] == answer["message"]
    assert issubclass(uform.DeviceFaultError, uform.UFormError)


def test_gpu_devices_cuda_double_missing_entry_point_raises_unsupported_error(cuda_double, tmp_path):
    config = "device name=any\nfault missing=cuDeviceGetPCIBusId"
    answer = gpu_devices_in_child(cuda_double, config, tmp_path)
    assert answer["error"] == "UnsupportedError", answer
    assert "lacks cuDeviceGetPCIBusId" in answer["message"], answer
    assert answer["second_error"] == "UnsupportedError"


def test_python_m_uform_lists_the_cuda_double_gpus(cuda_double, tmp_path):
    config = ("device pci=0000:C1:00.0 cc=9.0 sms=132 memory=80G name=NVIDIA H100 80GB HBM3\n"
              "device pci=0000:41:00.0 cc=8.9 sms=142 memory=48G name=NVIDIA L40S\n")
    text = run_python(["-m", "uform"], cuda_double, config, tmp_path)
    assert text.returncode == 0, text.stdout + text.stderr
    lines = text.stdout.splitlines()
    assert "GPUs:                   2" in lines, text.stdout
    assert any(line.startswith("  GPU 0: NVIDIA L40S (nvidia 0, nvidia_ada, compute 8.9, 142 SMs, 48.0 GiB, "
                               "PCI 0000:41:00.0") for line in lines), text.stdout
    assert any(line.startswith("  GPU 1: NVIDIA H100 80GB HBM3 (nvidia 1, nvidia_hopper, compute 9.0, 132 SMs, "
                               "80.0 GiB, PCI 0000:c1:00.0") for line in lines), text.stdout

    report = run_python(["-m", "uform", "--json"], cuda_double, config, tmp_path)
    assert report.returncode == 0, report.stdout + report.stderr
    gpus = json.loads(report.stdout)["gpus"]
    assert [(g["name"], g["vendor_ordinal"], g["gpu_class"], g["compute_units"], g["memory_bytes"]) for g in gpus] == [
        ("NVIDIA L40S", 0, "nvidia_ada", 142, 48 << 30),
        ("NVIDIA H100 80GB HBM3", 1, "nvidia_hopper", 132, 80 << 30),
    ]
