"""The mesh from Python, against the CUDA driver test double: real processes, a real directory.

Every process is a fresh interpreter (uform loads the driver named by UFORM_CUDA_LIBRARY once per
process) running a short script over the double's emulated GPUs, which reports one JSON line.
The runs of several processes start them all at once, each with its own MeshOptions, and meet in
a temporary directory, as the processes of a real run would on a shared file system.
"""

import json
import os
import sys
import textwrap

import pytest

import children
import uform

PRELUDE = children.CHILD_HELPERS + r"""
import gc, json, os, sys, weakref
import uform
from uform import Executor, Mesh, MeshOptions

def ram_threads():
    return threads_named("uform:ram:")

def ram_threads_gone():
    return threads_named_gone("uform:ram:")

def described(mesh):
    d = mesh.describe()
    return {"gpus_per_host_domain": d.gpus_per_host_domain, "gpus_per_multimem_domain": d.gpus_per_multimem_domain,
            "gpus_per_colocated_domain": d.gpus_per_colocated_domain, "host_domain_index": d.host_domain_index,
            "first_gpu_index": d.first_gpu_index, "multimem_tier": d.multimem_tier.name,
            "gpu_class": d.gpu_class.name if d.gpu_class is not None else None}
"""

# One member of a run: argv is index, count, directory, job.
MEMBER = PRELUDE + r"""
index, count, directory, job = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
options = MeshOptions(host_domain_index=index, host_domain_count=count, directory=directory, job=job,
                      timeout_seconds=60.0)
with Executor.for_vram() as executor:
    try:
        mesh = Mesh.bootstrap(executor, options)
    except uform.UFormError as error:
        report(error=[type(error).__name__, str(error)], index=index)
    else:
        report(description=described(mesh), communicator=failure(lambda: mesh.communicator(0)), index=index)
        del mesh
"""


def gpus(count):
    return "".join("device cc=9.0 memory=64M\n" for _ in range(count))


def environment_for(cuda_double, config):
    environment = dict(os.environ)
    environment.pop("CUDA_DEVICE_ORDER", None)
    environment["UFORM_CUDA_LIBRARY"] = str(cuda_double)
    environment["UFORM_CUDA_DOUBLE_CONFIG"] = config
    # A machine without NCCL: a real libnccl.so.2 installed here cannot drive the emulated GPUs.
    environment["UFORM_NCCL_LIBRARY"] = "/nonexistent/libnccl.so.2"
    environment["PYTHONDEVMODE"] = "1"  # ResourceWarning and unraisable errors reach stderr
    return environment


def answer_of(returncode, stdout, stderr):
    assert returncode == 0, stdout + stderr
    # Nothing went wrong unseen: no error swallowed in a destructor, nothing left unclosed.
    assert "Exception ignored" not in stderr and "Warning" not in stderr, stderr
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    assert lines, stdout + stderr
    return json.loads(lines[-1])


def run_child(cuda_double, tmp_path, config, body):
    """Runs `body` in a child on the double; answers its last JSON line."""
    script = PRELUDE + textwrap.dedent(body)
    result = children.run([sys.executable, "-c", script], cwd=tmp_path, env=environment_for(cuda_double, config))
    return answer_of(result.returncode, result.stdout, result.stderr)


def run_members(cuda_double, tmp_path, job, gpu_counts):
    """Starts one process per entry of `gpu_counts` (that many GPUs each) at once, index i the
    i-th; answers each one's report, in index order."""
    directory = tmp_path / "rendezvous"
    directory.mkdir(exist_ok=True)
    count = len(gpu_counts)
    members = [
        children.start([sys.executable, "-c", MEMBER, str(index), str(count), str(directory), job], cwd=tmp_path,
                       env=environment_for(cuda_double, gpus(gpu_count)))
        for index, gpu_count in enumerate(gpu_counts)
    ]
    answers = [answer_of(result.returncode, result.stdout, result.stderr) for result in children.finish(members)]
    assert not (directory / job).exists(), "the run cleaned up its job directory"
    return answers


def test_one_process_mesh_over_two_gpus(cuda_double, tmp_path):
    answer = run_child(cuda_double, tmp_path, gpus(2), """
        with Executor.for_vram() as executor:
            mesh = Mesh.bootstrap(executor, None)
            alone = Mesh.bootstrap(executor, MeshOptions())  # options of a run of one, given
            answer = {"description": described(mesh), "alone": described(alone), "repr": repr(mesh),
                      "no_data_plane": failure(lambda: mesh.communicator(0)),
                      "last_device": failure(lambda: mesh.communicator(1)),
                      "past_the_devices": failure(lambda: mesh.communicator(5)),
                      "negative": failure(lambda: mesh.communicator(-1)),
                      "not_an_int": failure(lambda: mesh.communicator("0")),
                      "as_a_bool": failure(lambda: mesh.communicator(True)),
                      "no_device": failure(lambda: mesh.communicator()),
                      "type": type(mesh.describe()).__name__}
            del mesh, alone
        report(**answer)
    """)
    assert answer["description"] == {
        "gpus_per_host_domain": 2, "gpus_per_multimem_domain": 1, "gpus_per_colocated_domain": 2,
        "host_domain_index": 0, "first_gpu_index": 0, "multimem_tier": "PEER_READ", "gpu_class": "NVIDIA_HOPPER"}
    assert answer["alone"] == answer["description"]
    assert answer["type"] == "MeshDescription"
    assert answer["repr"] == ("<uform.Mesh host_domain_index=0 gpus_per_host_domain=2 first_gpu_index=0 "
                              "gpus_per_colocated_domain=2>")
    # Without NCCL in the process the mesh forms, with no data plane, and says so.
    for device in ("no_data_plane", "last_device"):
        kind, message = answer[device]
        assert kind == "NotFoundError" and "no data plane" in message and "uform_mesh_communicator" in message
    kind, message = answer["past_the_devices"]
    assert kind == "InvalidArgumentError" and "device 5 of 2" in message
    assert answer["negative"][0] == "ValueError"
    assert answer["not_an_int"][0] == "TypeError" and answer["as_a_bool"][0] == "TypeError"
    assert answer["no_device"][0] == "TypeError"


def test_four_processes_meet_through_a_directory(cuda_double, tmp_path):
    answers = run_members(cuda_double, tmp_path, "python-four", [2, 2, 2, 2])
    for index, answer in enumerate(answers):
        assert "error" not in answer, answer
        assert answer["index"] == index
        assert answer["description"] == {
            "gpus_per_host_domain": 2, "gpus_per_multimem_domain": 1, "gpus_per_colocated_domain": 8,
            "host_domain_index": index, "first_gpu_index": 2 * index, "multimem_tier": "PEER_READ",
            "gpu_class": "NVIDIA_HOPPER"}
        kind, message = answer["communicator"]
        assert kind == "NotFoundError" and "no data plane" in message


def test_processes_driving_different_gpu_counts_do_not_form(cuda_double, tmp_path):
    answers = run_members(cuda_double, tmp_path, "python-mismatch", [2, 2, 3])
    for answer in answers:
        assert "error" in answer, answer
        kind, message = answer["error"]
        assert kind == "MismatchError", answer
        assert "GPUs per process" in message and "index 2" in message, message


def test_mesh_holds_its_executor(cuda_double, tmp_path):
    answer = run_child(cuda_double, tmp_path, gpus(2), """
        answer = {}
        # Closed first (the with block): the close answers at once, the executor's threads stay
        # for the mesh, and go with it.
        with Executor.for_vram() as executor:
            mesh = Mesh.bootstrap(executor, None)
            answer["threads_open"] = ram_threads()
        answer["closed"] = executor.closed
        answer["threads_held"] = ram_threads()
        answer["described_after_close"] = described(mesh)["gpus_per_host_domain"]
        answer["communicator_after_close"] = failure(lambda: mesh.communicator(0))[0]
        answer["verb_after_close"] = failure(lambda: executor.for_devices(lambda slot: None))
        answer["bootstrap_after_close"] = failure(lambda: Mesh.bootstrap(executor, None))
        executor.close()  # twice does nothing
        del mesh
        answer["threads_after_mesh"] = ram_threads_gone()

        # The Mesh alone keeps its Executor alive; closing that one later works the same.
        executor = Executor.for_vram()
        kept = weakref.ref(executor)
        mesh = Mesh.bootstrap(executor, None)
        del executor
        gc.collect()
        answer["kept_alive"] = kept() is not None
        answer["held_threads"] = len(ram_threads()) > 0
        if kept() is not None:
            kept().close()
        answer["threads_after_close"] = len(ram_threads()) > 0
        del mesh
        gc.collect()
        answer["dropped_with_mesh"] = kept() is None
        answer["threads_after_drop"] = ram_threads_gone()

        # The mesh dropped first: the executor goes on working, and its close ends its threads.
        executor = Executor.for_vram()
        mesh = Mesh.bootstrap(executor, None)
        del mesh
        executor.for_devices(lambda slot: None)
        answer["threads_before_close"] = len(ram_threads()) > 0
        executor.close()
        answer["threads_mesh_first"] = ram_threads_gone()

        # The last reference to a mesh dropped inside one of its executor's own callbacks: the
        # executor is open (its call is running), so the mesh's free is not the last release.
        executor = Executor.for_vram()
        holder = [Mesh.bootstrap(executor, None)]
        executor.for_devices(lambda slot: holder.clear())
        answer["dropped_in_callback"] = holder == []
        executor.close()
        answer["threads_callback"] = ram_threads_gone()

        # Several meshes over one executor, closed in between.
        executor = Executor.for_vram()
        meshes = [Mesh.bootstrap(executor, None) for _ in range(3)]
        executor.close()
        meshes.pop(1)
        meshes.pop(0)
        answer["threads_last_mesh"] = len(ram_threads()) > 0
        meshes.clear()
        answer["threads_no_mesh"] = ram_threads_gone()
        report(**answer)
    """)
    assert answer["threads_open"] and answer["threads_held"] == answer["threads_open"]
    assert answer["closed"] is True
    assert answer["described_after_close"] == 2 and answer["communicator_after_close"] == "NotFoundError"
    assert answer["verb_after_close"] == ["ValueError", "the executor is closed"]
    assert answer["bootstrap_after_close"] == ["ValueError", "the executor is closed"]
    assert answer["threads_after_mesh"] == []
    assert answer["held_threads"] and answer["kept_alive"]
    assert answer["threads_after_close"], "a close while the mesh lives leaves the threads to it"
    assert answer["dropped_with_mesh"] and answer["threads_after_drop"] == []
    assert answer["threads_before_close"] and answer["threads_mesh_first"] == []
    assert answer["dropped_in_callback"] and answer["threads_callback"] == []
    assert answer["threads_last_mesh"] and answer["threads_no_mesh"] == []


def test_mesh_in_a_forked_child_is_refused(cuda_double, tmp_path):
    if not hasattr(os, "fork"):
        pytest.skip("no fork")
    answer = run_child(cuda_double, tmp_path, gpus(1), """
        import warnings
        with Executor.for_vram() as executor:
            mesh = Mesh.bootstrap(executor, None)
            read, write = os.pipe()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # fork() with threads: on purpose
                pid = os.fork()
            if pid == 0:
                kind = failure(lambda: Mesh.bootstrap(executor, None))
                os.write(write, json.dumps(kind).encode())
                os._exit(0)
            os.close(write)
            child = json.loads(os.read(read, 4096).decode())
            os.waitpid(pid, 0)
            os.close(read)
            described_here = described(mesh)["gpus_per_host_domain"]
            del mesh
        report(child=child, described=described_here, threads=ram_threads_gone())
    """)
    assert answer["child"][0] == "ForkedError", answer
    assert answer["described"] == 1 and answer["threads"] == []


# Index 0 of a run of two, whose peer never comes: it prints "waiting", then reports how it ended.
WAITING = PRELUDE + r"""
import time
directory, job = sys.argv[1], sys.argv[2]
options = MeshOptions(host_domain_index=0, host_domain_count=2, directory=directory, job=job, timeout_seconds=60.0)
with Executor.for_vram() as executor:
    print("waiting", flush=True)
    try:
        Mesh.bootstrap(executor, options)
    except KeyboardInterrupt:
        report(interrupted=time.monotonic())
    else:
        report(interrupted=None)
"""


def test_ctrl_c_interrupts_a_bootstrap_waiting_for_a_peer(cuda_double, tmp_path):
    """Ctrl-C (SIGINT) one second into a bootstrap that waits for a peer: KeyboardInterrupt within
    half a second, and nothing left that blocks a rerun under the same job name."""
    import signal
    import subprocess
    import time

    directory = tmp_path / "rendezvous"
    directory.mkdir()
    child = subprocess.Popen([sys.executable, "-c", WAITING, str(directory), "ctrl-c"], cwd=tmp_path,
                             env=environment_for(cuda_double, gpus(1)), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "waiting"
        time.sleep(1.0)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    answer = answer_of(child.returncode, stdout, stderr)
    assert answer["interrupted"] is not None, "the bootstrap ran to its end instead"
    assert answer["interrupted"] - sent < 0.5, f"KeyboardInterrupt came {answer['interrupted'] - sent:.2f} s late"
    assert not (directory / "ctrl-c").exists(), "the interrupted run left its job directory"
    answers = run_members(cuda_double, tmp_path, "ctrl-c", [1, 1])  # the same name forms
    assert all("description" in a for a in answers), answers


# A bootstrap on another thread, waiting 2 s for a peer that never comes; meanwhile the main
# thread sets SIGINT back to the default. Once the bootstrap gave up, a SIGINT must end the
# process, as the default does: the handler the bootstrap put in front is not restored over it.
DEFAULT_AFTER = PRELUDE + r"""
import signal, threading, time
directory, job = sys.argv[1], sys.argv[2]
options = MeshOptions(host_domain_index=0, host_domain_count=2, directory=directory, job=job, timeout_seconds=2.0)
outcome = []
def bootstrap():
    with Executor.for_vram() as executor:
        outcome.append(failure(lambda: Mesh.bootstrap(executor, options)))
thread = threading.Thread(target=bootstrap)
thread.start()
time.sleep(0.5)  # the bootstrap waits, its handler installed
signal.signal(signal.SIGINT, signal.SIG_DFL)
thread.join()
print(json.dumps({"outcome": outcome}), flush=True)
os.kill(os.getpid(), signal.SIGINT)
time.sleep(1.0)
print("survived", flush=True)
"""


def test_bootstrap_leaves_a_sigint_handler_set_meanwhile(cuda_double, tmp_path):
    import signal
    import subprocess

    directory = tmp_path / "rendezvous"
    directory.mkdir()
    child = subprocess.run([sys.executable, "-c", DEFAULT_AFTER, str(directory), "default-after"], cwd=tmp_path,
                           env=environment_for(cuda_double, gpus(1)), capture_output=True, text=True, timeout=60)
    assert '"outcome"' in child.stdout, child.stdout + child.stderr
    assert "TimeoutError" in child.stdout or "Timeout" in child.stdout, child.stdout + child.stderr
    assert "survived" not in child.stdout, child.stdout + child.stderr
    assert child.returncode == -signal.SIGINT, (child.returncode, child.stdout, child.stderr)


# Index argv[1] of a run of three whose third member never comes: it prints "waiting", then
# reports how its bootstrap ended: the exception's class, message and status, if any.
PEER = PRELUDE + r"""
index, directory, job = int(sys.argv[1]), sys.argv[2], sys.argv[3]
options = MeshOptions(host_domain_index=index, host_domain_count=3, directory=directory, job=job,
                      timeout_seconds=20.0)
with Executor.for_vram() as executor:
    print("waiting", flush=True)
    try:
        Mesh.bootstrap(executor, options)
    except BaseException as error:
        report(index=index, raised=type(error).__name__, message=str(error), status=getattr(error, "status", None),
               caught_as_exception=isinstance(error, Exception))
    else:
        report(index=index, raised=None)
"""


def test_ctrl_c_in_one_process_is_an_error_in_its_peers(cuda_double, tmp_path):
    """SIGINT to index 1 only, while it and index 0 wait for a third: index 1 raises
    KeyboardInterrupt; index 0, where no Ctrl-C happened, raises UFormInterruptedError (an
    Exception) naming index 1, as every process of the run learns it."""
    import signal
    import time

    directory = tmp_path / "rendezvous"
    directory.mkdir()
    members = [children.start([sys.executable, "-c", PEER, str(index), str(directory), "peer-ctrl-c"], cwd=tmp_path,
                              env=environment_for(cuda_double, gpus(1)))
               for index in (0, 1)]
    try:
        for member in members:
            assert member.stdout.readline().strip() == "waiting"
        time.sleep(1.0)  # both have joined the rendezvous
        members[1].send_signal(signal.SIGINT)
    except BaseException:
        for member in members:
            member.kill()
        raise
    first, second = [answer_of(result.returncode, result.stdout, result.stderr) for result in children.finish(members)]
    assert second["raised"] == "KeyboardInterrupt", second
    assert first["raised"] == "UFormInterruptedError", first
    assert first["caught_as_exception"] and first["status"] == uform.UFormInterruptedError.status, first
    assert "index 1" in first["message"] and "interrupted" in first["message"], first
    assert not (directory / "peer-ctrl-c").exists(), "the interrupted run left its job directory"
