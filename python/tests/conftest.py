import faulthandler
import os
import pathlib
import shutil
import subprocess
import sys
import threading

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

from children import TEST_TIMEOUT_SECONDS  # noqa: E402

# Where the deadlock watchdog writes: the terminal's stderr, duplicated in pytest_configure, when
# pytest has suspended its start-up capture. During a test fd 2 is pytest's capture file, which
# dies with the process: a watchdog writing there ends the run without a word.
_watchdog_file = None


def pytest_configure(config):
    global _watchdog_file
    _watchdog_file = os.fdopen(os.dup(2), "w", buffering=1)


def pytest_unconfigure(config):
    faulthandler.cancel_dump_traceback_later()
    _watchdog_file.close()


@pytest.fixture(autouse=True)
def deadlock_watchdog(request):
    """A test that deadlocks ends the run with its name and every thread's traceback, instead of hanging it."""
    # The name comes from a Python timer just before the bound (it needs the GIL, which a hang
    # inside uform does not hold); the tracebacks and the exit come from faulthandler's own thread.
    name = threading.Timer(TEST_TIMEOUT_SECONDS - 1, lambda: _watchdog_file.write(
        f"\nuform test watchdog: {request.node.nodeid} ran past {TEST_TIMEOUT_SECONDS:.0f} s\n"))
    name.daemon = True
    name.start()
    faulthandler.dump_traceback_later(TEST_TIMEOUT_SECONDS, exit=True, file=_watchdog_file)
    yield
    faulthandler.cancel_dump_traceback_later()
    name.cancel()


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
