import faulthandler
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

# Tests exercise the installed package. Run from the repository root (or anywhere but python/)
# so that python/uform, which holds no built extension, does not shadow it.
_here = os.path.dirname(os.path.abspath(__file__))
_source_package = os.path.dirname(_here)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _source_package]

import uform  # noqa: E402

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
DOUBLE_SOURCES = REPOSITORY / "tests" / "doubles" / "cuda_emulated"
DOUBLE_COMMON = REPOSITORY / "tests" / "doubles" / "common"

# A test that deadlocks ends the run with every thread's traceback instead of hanging it.
TEST_TIMEOUT_SECONDS = float(os.environ.get("UFORM_TEST_TIMEOUT", "60"))


@pytest.fixture(autouse=True)
def deadlock_watchdog():
    faulthandler.dump_traceback_later(TEST_TIMEOUT_SECONDS, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture
def executor():
    with uform.Executor.for_ram(2) as executor:
        yield executor


@pytest.fixture(scope="session")
def cuda_double(tmp_path_factory) -> pathlib.Path:
    """The CUDA driver test double, libuform_cuda_emulated.so, built with the system compiler."""
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        pytest.skip("no C compiler to build the CUDA driver test double")
    # The double's own sources and the doubles' shared configuration parsing.
    sources = sorted(str(path) for path in [*DOUBLE_SOURCES.glob("*.c"), *DOUBLE_COMMON.glob("*.c")])
    assert sources, f"no CUDA driver test double sources under {DOUBLE_SOURCES}"
    library = tmp_path_factory.mktemp("cuda_double") / "libuform_cuda_emulated.so"
    command = [compiler, "-shared", "-fPIC", "-D_GNU_SOURCE", f"-I{DOUBLE_SOURCES}", f"-I{REPOSITORY / 'src'}",
               "-Wall", "-Wextra", "-Wno-unused-parameter", "-o", str(library), *sources, "-lpthread",
               "-Wl,--no-undefined"]  # a source missing from the list fails here, not as "no GPU" later
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, " ".join(command) + "\n" + result.stdout + result.stderr
    return library
