"""The stubs match the runtime (mypy's stubtest), and `python -m uform` prints `uform info`."""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import children

import uform

PAGE_STUB_LINES = [
    "class GPUDevice(structseq[Any], tuple[GPUVendor, int, GPUClass | None, int, int, str]):",
    "vendor: GPUVendor",
    "vendor_ordinal: int",
    "gpu_class: GPUClass | None",
    "compute_units: int",
    "memory_bytes: int",
    "name: str",
    "class Executor:",
    "def drain(self, mood: Mood = ...) -> None:",
    "host_domain_index: Final[int]",
    "host_domain_count: Final[int]",
    "gpus_per_multimem_domain: Final[int]",
    "directory: Final[_PathLike | None]",
    "job: Final[str | None]",
    "timeout_seconds: Final[float]",
    "class MeshDescription(structseq[Any], tuple[int, int, int, int, int, MultimemTier, GPUClass | None]):",
    "def bootstrap(cls, executor: Executor, options: MeshOptions | None, /) -> Mesh:",
    "def describe(self) -> MeshDescription:",
]


def test_stub_has_the_page_declarations():
    stub = (pathlib.Path(uform.__file__).parent / "lib.pyi").read_text()
    for line in PAGE_STUB_LINES:
        assert line in stub, line
    assert (pathlib.Path(uform.__file__).parent / "py.typed").exists()


def test_stubtest(tmp_path):
    pytest.importorskip("mypy.stubtest")
    allowlist = pathlib.Path(__file__).parent / "typed" / "stubtest-allowlist.txt"
    result = children.run([sys.executable, "-m", "mypy.stubtest", "uform", "--allowlist", str(allowlist)],
                          cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def mypy_strict(path, cwd):
    return children.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(path)], cwd=cwd)


def test_the_typed_example_passes_mypy_strict(tmp_path):
    pytest.importorskip("mypy.api", reason="mypy (Debian's python3-mypy) is not installed")
    example = pathlib.Path(__file__).parent / "typed" / "example.py"
    result = mypy_strict(example, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_typed_example_runs():
    example = pathlib.Path(__file__).parent / "typed" / "example.py"
    result = children.run([sys.executable, "-X", "dev", "-W", "error", str(example)])
    assert result.returncode == 0 and result.stdout.strip() == "4097", result.stdout + result.stderr


def test_memoryview_of_an_arena_passes_mypy_strict(tmp_path):
    pytest.importorskip("mypy.api", reason="mypy (Debian's python3-mypy) is not installed")
    import mypy.version

    builtins_stub = pathlib.Path(mypy.__file__).parent / "typeshed" / "stdlib" / "builtins.pyi"
    if "def __buffer__" not in builtins_stub.read_text():
        pytest.skip(f"mypy {mypy.version.__version__}'s typeshed predates PEP 688: its memoryview() takes a "
                    "closed union of builtin buffer types, whatever a stub declares")
    result = mypy_strict(pathlib.Path(__file__).parent / "typed" / "buffer_example.py", tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_stubs_type_check_a_user(tmp_path):
    pytest.importorskip("mypy.api")
    user = tmp_path / "user.py"
    user.write_text(
        "import asyncio\n"
        "import uform\n"
        "from uform import GPUDevice, Executor, MeshOptions\n"
        "devices: tuple[GPUDevice, ...] = uform.gpu_devices()\n"
        "with Executor.for_ram(2, memory_domains=[0], cpu_class=uform.CPUClass.SERIAL) as executor:\n"
        "    executor.for_n(10, lambda task, thread: None, dynamic=True)\n"
        "    deferred: uform.Deferred = executor.for_n(10, lambda task, thread: None, deferred=True)\n"
        "    async def main() -> None:\n"
        "        await deferred\n"
        "    asyncio.run(main())\n"
        "    executor.drain(uform.Mood.SPINNING)\n"
        "    with uform.Arena.new_in(executor, 4096) as arena:\n"
        "        address: int = arena.allocate(64, alignment=64)\n"
        "        spans: int = arena.devices + arena.used + arena.capacity\n"
        "def on_device(slot: uform.DeviceSlot) -> None:\n"
        "    scratch: int = gpus.device_scratch(slot.device, 256)\n"
        "    gpus.staging(slot.device, 64)[:4] = b'data'\n"
        "    stream: int = slot.stream\n"
        "try:\n"
        "    with Executor.for_vram() as gpus, uform.Arena.new_in(gpus, 1 << 20) as weights:\n"
        "        pointer = weights.device_pointer(gpus.devices - 1, weights.allocate(16))\n"
        "        gpus.for_devices(on_device)\n"
        "        pending: uform.Deferred = gpus.copy_to_device(0, pointer, b'x' * 16, deferred=True)\n"
        "        gpus.copy_to_host(bytearray(16), 0, pointer, progress=lambda done, total: None)\n"
        "        gpus.for_devices_native(0x10000, 0, deferred=True, keep=weights).wait()\n"
        "except uform.NotFoundError:\n"
        "    pass\n"
        "options = MeshOptions(host_domain_count=2, directory='/tmp', job='run', timeout_seconds=5.0)\n"
        "count: int = options.host_domain_count\n"
        "try:\n"
        "    uform.Mesh.bootstrap(Executor.for_vram([0], scratch_limit=0), options).describe().multimem_tier\n"
        "except uform.UFormError as error:\n"
        "    status: int = error.status\n"
    )
    result = children.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(user)], cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_python_m_uform_prints_info():
    text = subprocess.run([sys.executable, "-m", "uform"], capture_output=True, text=True, check=True).stdout
    assert uform.__version__ in text
    assert text == uform.info() if uform.info().endswith("\n") else uform.info() + "\n"
    document = json.loads(subprocess.run([sys.executable, "-m", "uform", "--json"], capture_output=True, text=True,
                                         check=True).stdout)
    assert isinstance(document, dict)


def test_matches_the_cli_when_built():
    root = pathlib.Path(__file__).resolve().parents[2]
    # UFORM_CLI first; else the newest build*/tools/uform (an older build directory may hold a
    # CLI from before the sources changed); else one on PATH.
    # Cross builds (configured with a toolchain file: build-aarch64/, build-riscv64/) run their
    # CLI under an emulator, describing another machine: only native builds compare.
    def native(cli):
        cache = cli.parent.parent / "CMakeCache.txt"
        return not (cache.is_file() and "CMAKE_TOOLCHAIN_FILE:" in cache.read_text(errors="replace"))

    built = sorted((cli for cli in root.glob("build*/tools/uform") if native(cli)), key=lambda p: p.stat().st_mtime,
                   reverse=True)
    candidates = [os.environ.get("UFORM_CLI", "")] + [str(p) for p in built] + [shutil.which("uform") or ""]
    cli = next((c for c in candidates if c and os.access(c, os.X_OK)), None)
    if not cli:
        pytest.skip("no uform CLI built (cmake --build build)")
    expected = subprocess.run([cli, "info"], capture_output=True, text=True, check=True).stdout
    assert subprocess.run([sys.executable, "-m", "uform"], capture_output=True, text=True, check=True).stdout == expected
    expected = json.loads(subprocess.run([cli, "info", "--json"], capture_output=True, text=True, check=True).stdout)
    actual = json.loads(subprocess.run([sys.executable, "-m", "uform", "--json"], capture_output=True, text=True,
                                       check=True).stdout)
    assert actual == expected
