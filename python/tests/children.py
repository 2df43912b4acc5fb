"""Child processes for the tests, bounded in time and never silent when they hang.

Every test already runs under the suite's deadlock watchdog (conftest.py), which ends the whole
run after UFORM_TEST_TIMEOUT seconds. A child that hangs must fail its own test first, and with
something to read: so children get a bound below the watchdog's, Python children run with
faulthandler enabled, and a child past its bound gets SIGABRT (faulthandler prints every
thread's Python traceback; a C child dumps core or dies), then its output goes into the
failure message.
"""

import os
import signal
import subprocess
import time

# The watchdog's bound (conftest.py reads the same variable) and the children's, well below it.
TEST_TIMEOUT_SECONDS = float(os.environ.get("UFORM_TEST_TIMEOUT", "60"))
CHILD_TIMEOUT_SECONDS = TEST_TIMEOUT_SECONDS * 0.75


# Helpers every child script of the tests starts with (text, not a module: a child is a fresh
# interpreter running `python -c`).
CHILD_HELPERS = r'''
import json, os, time

def report(**answer):
    print(json.dumps(answer))

def failure(call):
    """[exception class name, message] of what call() raised, or None."""
    try:
        call()
    except BaseException as error:
        return [type(error).__name__, str(error)]
    return None

def threads_named(prefix):
    """The names of this process's threads that start with `prefix`, sorted."""
    names = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as file:
                names.append(file.read().strip())
        except OSError:  # it ended meanwhile: ENOENT, or ESRCH once the task is a zombie
            pass
    return sorted(name for name in names if name.startswith(prefix))

def threads_named_gone(prefix):
    """threads_named(prefix) once they have left: a joined thread's /proc entry goes a moment after
    the join returns (the join wakes when its tid is cleared, before its exit completes); up to 2 s."""
    deadline = time.monotonic() + 2
    while threads_named(prefix) and time.monotonic() < deadline:
        time.sleep(0.01)
    return threads_named(prefix)
'''


class ChildHung(AssertionError):
    """A child process ran past its bound; the message holds what it printed."""


def _environment(environment):
    environment = dict(os.environ if environment is None else environment)
    environment["PYTHONFAULTHANDLER"] = "1"  # SIGABRT prints a Python child's threads
    return environment


def start(command, *, env=None, cwd=None):
    """Starts `command` with its output piped (text), faulthandler on for Python children."""
    return subprocess.Popen(command, cwd=cwd, env=_environment(env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(children, seconds=CHILD_TIMEOUT_SECONDS):
    """Waits for every child of `children` within one shared bound; answers their
    CompletedProcess, in order. Past the bound it aborts those still running and raises
    ChildHung with every child's output, so the test fails instead of the watchdog ending the run."""
    deadline = time.monotonic() + seconds
    results = [None] * len(children)
    try:
        for position, child in enumerate(children):
            try:
                stdout, stderr = child.communicate(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                break
            results[position] = subprocess.CompletedProcess(child.args, child.returncode, stdout, stderr)
        else:
            return results
        report = []
        for position, child in enumerate(children):
            if results[position] is None:
                if child.poll() is None:
                    child.send_signal(signal.SIGABRT)
                try:
                    stdout, stderr = child.communicate(timeout=10)
                except subprocess.TimeoutExpired:
                    child.kill()
                    stdout, stderr = child.communicate()
                state = f"hung, aborted (exit {child.returncode})"
            else:
                stdout, stderr, state = results[position].stdout, results[position].stderr, "finished"
            report.append(f"--- child {position} {state}: {child.args!r}\n{stdout}\n{stderr}")
        raise ChildHung(f"children still running after {seconds:.0f} s\n" + "\n".join(report))
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()


def run(command, *, env=None, cwd=None, seconds=CHILD_TIMEOUT_SECONDS):
    """subprocess.run(command, capture_output=True, text=True), bounded as finish() says."""
    return finish([start(command, env=env, cwd=cwd)], seconds)[0]
