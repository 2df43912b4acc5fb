"""Each C status has its exception class; bad input raises, never crashes."""

import builtins

import pytest

import uform

STATUSES = {
    "UnsupportedError": 1,
    "ContendedError": 2,
    "InvalidArgumentError": 3,
    "OutOfMemoryError": 4,
    "NotFoundError": 5,
    "DeviceFaultError": 6,
    "TimeoutError": 7,
    "MismatchError": 8,
    "UFormIOError": 9,
    "UFormInterruptedError": 10,
    "ForkedError": 11,
    "CallbackFailedError": 12,
    "MalformedError": 13,
}


def test_hierarchy():
    assert issubclass(uform.UFormError, Exception)
    for name, status in STATUSES.items():
        error = getattr(uform, name)
        assert issubclass(error, uform.UFormError), name
        assert error.status == status
        assert error.__module__ == "uform.lib"
    assert issubclass(uform.TimeoutError, builtins.TimeoutError)
    assert issubclass(uform.UFormIOError, OSError)
    assert issubclass(uform.UFormInterruptedError, builtins.InterruptedError)
    assert issubclass(uform.InvalidArgumentError, ValueError)


def test_raised_errors_carry_status_and_message():
    with pytest.raises(uform.UFormError) as error:
        uform.Executor.for_ram(memory_domains=[4096])
    assert isinstance(error.value, uform.NotFoundError)
    assert error.value.status == 5
    assert error.value.message and str(error.value) == error.value.message


def test_unknown_and_cpu_less_domains():
    with pytest.raises(uform.NotFoundError):
        uform.Executor.for_ram(memory_domains=[12345])
    with pytest.raises(uform.UFormError):
        uform.Executor.for_ram(memory_domains=[0, 0])  # duplicate
    with pytest.raises(uform.UFormError):
        uform.Executor.for_ram(memory_domains=[-1])


def test_unrunnable_cpu_class_is_unsupported():
    available = uform.capabilities_available().split(",")
    missing = [member for member in uform.CPUClass if member.name.lower() not in available
               and member not in (uform.CPUClass.MONOVERSIONED,)]
    if not missing:
        pytest.skip("this CPU runs every class")
    with pytest.raises(uform.UnsupportedError) as error:
        uform.Executor.for_ram(1, cpu_class=missing[-1])
    assert error.value.message


def test_too_many_threads_is_invalid():
    with pytest.raises(uform.InvalidArgumentError):
        uform.Executor.for_ram(uform.lib.THREADS_MAX + 1)
    with pytest.raises(uform.InvalidArgumentError):
        uform.Executor.for_ram(1, deferred_limit=1 << 20)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(threads=-1), ValueError),
        (dict(threads=1 << 70), ValueError),
        (dict(threads="2"), TypeError),
        (dict(threads=2.0), TypeError),
        (dict(threads=True), TypeError),
        (dict(deferred_limit=-3), ValueError),
        (dict(memory_domains="0"), TypeError),
        (dict(memory_domains=0), TypeError),
        (dict(memory_domains=[0.0]), TypeError),
        (dict(memory_domains=[1 << 40]), ValueError),
        (dict(cpu_class=0), ValueError),
        (dict(cpu_class=99), ValueError),
        (dict(cpu_class=-1), ValueError),
        (dict(cpu_class="serial"), TypeError),
        (dict(cpu_class=True), TypeError),
        (dict(cpu_class=uform.GPUClass.NVIDIA_ADA), TypeError),
    ],
)
def test_for_ram_bad_inputs(kwargs, error):
    with pytest.raises(error):
        uform.Executor.for_ram(**kwargs)


def test_signature_markers_are_enforced():
    with pytest.raises(TypeError):
        uform.Executor.for_ram(1, [0])  # memory_domains is keyword-only
    with pytest.raises(TypeError):
        uform.Executor.on_pool(pool=1)  # pool is positional-only
    with pytest.raises(TypeError):
        uform.Executor.for_vram(None, 0)  # scratch_limit is keyword-only
    with pytest.raises(TypeError):
        uform.Executor()  # only the constructors make one


def test_on_pool_validates_before_unsupported():
    with pytest.raises(ValueError):
        uform.Executor.on_pool(-1)
    with pytest.raises(uform.InvalidArgumentError):
        uform.Executor.on_pool(0)  # a NULL pool
    with pytest.raises(ValueError):
        uform.Executor.on_pool(1, cpu_class=77)
    with pytest.raises(uform.UnsupportedError):
        uform.Executor.on_pool(1, memory_domains=[0])


def test_for_vram_bad_inputs():
    with pytest.raises(ValueError):
        uform.Executor.for_vram(scratch_limit=-1)
    with pytest.raises(ValueError):
        uform.Executor.for_vram(gpu_class=13)
    with pytest.raises(TypeError):
        uform.Executor.for_vram(gpu_class=uform.CPUClass.SERIAL)
    with pytest.raises(TypeError):
        uform.Executor.for_vram(devices="0")
    with pytest.raises(uform.UFormError):
        uform.Executor.for_vram(devices=[0, 0])
    with pytest.raises(uform.UFormError):
        uform.Executor.for_vram(devices=[1000])


def test_verb_bad_inputs(executor):
    task = lambda task, thread: None  # noqa: E731
    with pytest.raises(ValueError):
        executor.for_n(-1, task)
    with pytest.raises(TypeError):
        executor.for_n(1.5, task)
    with pytest.raises(TypeError):
        executor.for_n(1, None)
    with pytest.raises(TypeError):
        executor.for_n(1, task, progress=3)
    with pytest.raises(TypeError):
        executor.for_n(1, task, True)  # dynamic is keyword-only
    with pytest.raises(TypeError):
        executor.for_slices(4, "not callable")
    with pytest.raises(TypeError):
        executor.for_threads(task, 1)
    with pytest.raises(TypeError):
        executor.for_n(2, lambda: None)  # wrong arity: the TypeError comes from the call
    with pytest.raises(ValueError):
        executor.drain(3)
    with pytest.raises(TypeError):
        executor.drain(None)
    with pytest.raises(TypeError):
        executor.drain(uform.CPUClass.SERIAL)
    with pytest.raises(TypeError):
        executor.__exit__(None, None)


def test_closed_executor_refuses_everything():
    executor = uform.Executor.for_ram(1)
    executor.close()
    for call in (
        lambda: executor.for_n(1, lambda task, thread: None),
        lambda: executor.for_threads(lambda task, thread: None, deferred=True),
        lambda: executor.drain(),
        lambda: executor.threads,
        lambda: executor.__enter__(),
        lambda: uform.Mesh.bootstrap(executor, None),
    ):
        with pytest.raises(ValueError, match="closed"):
            call()
    assert "closed" in repr(executor)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(host_domain_index=-1), ValueError),
        (dict(host_domain_count="2"), TypeError),
        (dict(gpus_per_multimem_domain=-4), ValueError),
        (dict(directory=5), TypeError),
        (dict(directory="a\0b"), ValueError),
        (dict(directory=""), ValueError),
        (dict(job=b"job"), TypeError),
        (dict(job="a\0b"), ValueError),
        (dict(timeout_seconds=float("nan")), ValueError),
        (dict(timeout_seconds=-1.0), ValueError),
        (dict(timeout_seconds="1"), TypeError),
        (dict(unknown=1), TypeError),
    ],
)
def test_mesh_options_bad_inputs(kwargs, error):
    with pytest.raises(error):
        uform.MeshOptions(**kwargs)


def test_mesh_bootstrap_bad_inputs(executor):
    with pytest.raises(TypeError):
        uform.Mesh.bootstrap(None, None)
    with pytest.raises(TypeError):
        uform.Mesh.bootstrap(executor, {"job": "x"})
    with pytest.raises(TypeError):
        uform.Mesh.bootstrap(executor)
    with pytest.raises(TypeError):
        uform.Mesh.bootstrap(executor, options=None)
    options = uform.MeshOptions(host_domain_index=5, host_domain_count=2, directory="/nonexistent", job="j")
    with pytest.raises(uform.UFormError):
        uform.Mesh.bootstrap(executor, options)


def test_native_function_must_look_like_code():
    """A small number (a task index, an enum member, a bool) is refused, never jumped to."""
    import uform

    with uform.Executor.for_ram(2) as executor:
        for address in (0, 1, 4095, 65535):
            with pytest.raises(ValueError):
                executor.for_n_native(4, address, 0)
        for flag in (True, uform.CPUClass.SERIAL):
            with pytest.raises(TypeError):
                executor.for_n_native(4, flag, 0)
        executor.for_n(4, lambda task, thread: None)  # still usable
