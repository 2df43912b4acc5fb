import faulthandler
import os
import sys

import pytest

# Tests exercise the installed package. Run from the repository root (or anywhere but python/)
# so that python/uform, which holds no built extension, does not shadow it.
_here = os.path.dirname(os.path.abspath(__file__))
_source_package = os.path.dirname(_here)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _source_package]

import uform  # noqa: E402

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
