"""Every line of the Python page (seeds/python-executors.txt), as a test."""

import inspect
import os
import pathlib

import pytest

import uform
from uform import Executor, GPUDevice, MeshOptions  # the page's own import line


def signature(function) -> str:
    return str(inspect.signature(function))


def test_import_line():
    from uform import CPUClass, GPUClass, GPUVendor, Mesh, MeshDescription, MultimemTier  # noqa: F401

    assert GPUDevice is uform.lib.GPUDevice
    assert Executor is uform.lib.Executor
    assert MeshOptions is uform.lib.MeshOptions


def test_version():
    assert uform.__version__ == "4.0.0-rc.1"
    assert uform.lib.version() == uform.__version__
    assert uform.lib.VERSION == uform.__version__


@pytest.mark.parametrize(
    "name, values",
    [
        (
            "CPUClass",
            dict(
                SERIAL=1, INTEL_HASWELL=2, INTEL_SIERRA=3, INTEL_SKYLAKE=4, INTEL_ICELAKE=5, AMD_GENOA=6,
                INTEL_SAPPHIRE=7, INTEL_GRANITE=8, INTEL_DIAMOND=9, AWS_G2=10, APPLE_M2=11, APPLE_M4=12,
                AWS_G5=13, NVIDIA_VERA=14, ALIBABA_C930=15, WASM32_V128=16, WASM64_EXTENDED=17, MONOVERSIONED=18,
            ),
        ),
        (
            "GPUClass",
            dict(
                NVIDIA_AMPERE=1, NVIDIA_ADA=2, NVIDIA_HOPPER=3, NVIDIA_BLACKWELL=4, NVIDIA_BLACKWELLRTX=5,
                NVIDIA_RUBIN=6, AMD_CDNA3=7, AMD_CDNA4=8, AMD_CDNA5=9, APPLE_METAL7=10, APPLE_METAL9=11,
                APPLE_METAL10=12,
            ),
        ),
        ("GPUVendor", dict(NVIDIA=1, AMD=2, APPLE=3)),
        ("MultimemTier", dict(SWITCH_REDUCED=0, PEER_READ=1)),
        ("Mood", dict(SPINNING=1, PARKED=2)),
    ],
)
def test_enum_values(name, values):
    enum = getattr(uform, name)
    assert issubclass(enum, int)
    assert {member.name: member.value for member in enum} == values
    assert enum.__module__ == "uform"


def test_cpu_class_names_match_the_library():
    compiled = uform.capabilities_compiled().split(",")
    for name in compiled:
        if name in ("cuda", "hip", "nccl", "numa"):
            continue
        assert name.upper() in uform.CPUClass.__members__, name


def test_gpu_device_fields():
    assert GPUDevice.__match_args__ == ("vendor", "vendor_ordinal", "gpu_class", "compute_units", "memory_bytes", "name")
    assert GPUDevice.n_fields == 6
    device = GPUDevice((uform.GPUVendor.NVIDIA, 0, uform.GPUClass.NVIDIA_HOPPER, 132, 80 << 30, "NVIDIA H100"))
    assert device.vendor is uform.GPUVendor.NVIDIA
    assert device.vendor_ordinal == 0
    assert device.gpu_class is uform.GPUClass.NVIDIA_HOPPER
    assert device.compute_units == 132
    assert device.memory_bytes == 80 << 30
    assert device.name == "NVIDIA H100"
    assert isinstance(device, tuple)
    with pytest.raises(AttributeError):
        device.name = "x"


def test_mesh_description_fields():
    assert uform.MeshDescription.__match_args__ == (
        "gpus_per_host_domain",
        "gpus_per_multimem_domain",
        "gpus_per_colocated_domain",
        "host_domain_index",
        "first_gpu_index",
        "multimem_tier",
        "gpu_class",
    )
    assert uform.MeshDescription.n_fields == 7


def test_executor_signatures():
    assert signature(Executor.for_ram) == "(threads=0, *, memory_domains=None, deferred_limit=0, cpu_class=None)"
    assert signature(Executor.on_pool) == "(pool, /, *, memory_domains=None, deferred_limit=0, cpu_class=None)"
    assert signature(Executor.for_vram) == (
        "(devices=None, *, scratch_limit=0, deferred_limit=0, gpu_class=None, memory_domains=None, cpu_class=None)"
    )
    drain = inspect.signature(Executor.drain)
    assert list(drain.parameters) == ["self", "mood"]
    assert drain.parameters["mood"].default is uform.Mood.PARKED
    assert signature(Executor.__exit__) == "(self, kind, value, traceback, /)"
    for name in ("for_ram", "on_pool", "for_vram"):
        assert getattr(Executor, name).__self__ is Executor  # a classmethod
        assert type(inspect.getattr_static(Executor, name)).__name__ == "classmethod_descriptor"


def test_executor_docs_name_the_c_verbs():
    for name, verb in [
        ("for_ram", "uform_executor_for_ram"),
        ("on_pool", "uform_executor_on_pool"),
        ("for_vram", "uform_executor_for_vram"),
        ("drain", "uform_executor_drain"),
        ("__exit__", "uform_executor_free"),
    ]:
        assert f"Calls {verb}." in getattr(Executor, name).__doc__
    assert "Spawns host threads for RAM-resident models." in Executor.for_ram.__doc__
    assert "raises UnsupportedError until borrowing is designed" in Executor.on_pool.__doc__


def test_mesh_options_signature_and_defaults():
    assert signature(MeshOptions) == (
        "(*, host_domain_index=0, host_domain_count=0, gpus_per_multimem_domain=0, directory=None, job=None,"
        " timeout_seconds=0.0)"
    )
    options = MeshOptions()
    assert (options.host_domain_index, options.host_domain_count, options.gpus_per_multimem_domain) == (0, 0, 0)
    assert options.directory is None and options.job is None and options.timeout_seconds == 0.0
    options = MeshOptions(host_domain_index=1, host_domain_count=2, gpus_per_multimem_domain=4,
                          directory=pathlib.Path("/tmp"), job="run-1", timeout_seconds=5.0)
    assert options.host_domain_index == 1 and options.host_domain_count == 2
    assert options.gpus_per_multimem_domain == 4 and os.fspath(options.directory) == "/tmp"
    assert options.job == "run-1" and options.timeout_seconds == 5.0
    for field in ("host_domain_index", "host_domain_count", "gpus_per_multimem_domain", "directory", "job",
                  "timeout_seconds"):
        with pytest.raises(AttributeError):
            setattr(options, field, getattr(options, field))
    with pytest.raises(TypeError):
        MeshOptions(1)  # keyword-only
    with pytest.raises(TypeError):
        options.__init__(job="again")  # immutable
    assert "job='run-1'" in repr(options)


def test_mesh_signatures():
    assert signature(uform.Mesh.bootstrap) == "(executor, options, /)"
    assert signature(uform.Mesh.describe) == "(self, /)"
    assert "Calls uform_mesh_bootstrap." in uform.Mesh.bootstrap.__doc__
    assert "Calls uform_mesh_describe." in uform.Mesh.describe.__doc__
    assert signature(uform.Mesh.communicator) == "(self, device, /)"
    assert "Calls uform_mesh_communicator." in uform.Mesh.communicator.__doc__


def test_functions():
    assert signature(uform.capabilities_compiled) == "() -> 'str'"
    assert signature(uform.capabilities_available) == "() -> 'str'"
    assert signature(uform.gpu_devices) == "() -> 'tuple[GPUDevice, ...]'"
    assert "Calls uform_capabilities_compiled." in uform.capabilities_compiled.__doc__
    assert "Calls uform_capabilities_available." in uform.capabilities_available.__doc__
    assert "Calls uform_gpu_devices." in uform.gpu_devices.__doc__
    compiled = uform.capabilities_compiled().split(",")
    available = uform.capabilities_available().split(",")
    assert "serial" in compiled and "serial" in available
    assert set(available) <= set(compiled)
    assert [c for c in compiled if c in available] == available  # same order


def test_gpu_devices_before_gpu_support():
    devices = uform.gpu_devices()
    assert isinstance(devices, tuple)
    for device in devices:
        assert isinstance(device, GPUDevice) and isinstance(device.vendor, uform.GPUVendor)
    if not devices:
        with pytest.raises(uform.NotFoundError) as error:
            Executor.for_vram()
        assert error.value.status == 5


def test_for_ram_creates_host_threads():
    with Executor.for_ram() as executor:
        assert executor.threads == uform.default_threads()
        assert isinstance(executor.cpu_class, uform.CPUClass)
        assert executor.cpu_class == uform.cpu_class_derived()
        assert executor.mood is uform.Mood.PARKED  # new executors start parked
    with Executor.for_ram(3, memory_domains=[0], deferred_limit=4, cpu_class=uform.CPUClass.SERIAL) as executor:
        assert executor.threads == 3
        assert executor.cpu_class is uform.CPUClass.SERIAL


def test_on_pool_is_unsupported():
    with pytest.raises(uform.UnsupportedError) as error:
        Executor.on_pool(0x1000)
    assert error.value.status == 1
    assert "design" in error.value.message


def test_drain_then_mood(executor):
    executor.drain(uform.Mood.SPINNING)
    assert executor.mood is uform.Mood.SPINNING
    executor.drain()
    assert executor.mood is uform.Mood.PARKED


def test_with_block_closes():
    with Executor.for_ram(2) as executor:
        assert not executor.closed
    assert executor.closed
    with pytest.raises(ValueError):
        executor.for_n(1, lambda task, thread: None)
    executor.__exit__(None, None, None)  # closing twice does nothing


def test_mesh_bootstrap_with_ram_executor_raises_the_c_status(executor):
    with pytest.raises(uform.UFormError) as error:
        uform.Mesh.bootstrap(executor, None)
    assert error.value.status == 3  # INVALID_ARGUMENT: the mesh needs a VRAM executor
    with pytest.raises(uform.UFormError):
        uform.Mesh.bootstrap(executor, MeshOptions())
