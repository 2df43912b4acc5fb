"""help() is enough to use the package: every public function and method documents its
arguments (each by name, with its default), the errors it raises and a short example."""

import doctest
import inspect

import pytest

import uform
from uform import Arena, ArenaView, Deferred, Executor

FUNCTIONS = [uform.capabilities_compiled, uform.capabilities_available, uform.gpu_devices, uform.cpu_class_derived,
             uform.default_threads, uform.info, uform.version]
CLASSES = [Executor, Deferred, Arena, ArenaView, uform.lib.Staging]


def public_methods():
    for cls in CLASSES:
        for name, member in vars(cls).items():
            if (name.startswith("_") and name not in ("__enter__", "__exit__", "__dlpack__", "__dlpack_device__")) \
                    or not callable(member):
                continue
            yield f"{cls.__name__}.{name}", getattr(cls, name)


CALLABLES = [(function.__name__, function) for function in FUNCTIONS] + list(public_methods())


@pytest.mark.parametrize("name, function", CALLABLES, ids=[name for name, _ in CALLABLES])
def test_docstring_has_arguments_errors_and_an_example(name, function):
    doc = inspect.getdoc(function) or ""
    assert "Example:" in doc, f"{name}: no example"
    assert "Raises:" in doc or "Never raises" in doc, f"{name}: no errors"
    try:
        parameters = inspect.signature(function).parameters
    except ValueError:
        parameters = {}
    for parameter in parameters.values():
        if parameter.name in ("self", "cls"):
            continue
        assert parameter.name in doc, f"{name}: argument {parameter.name} undocumented"
        if parameter.default is not inspect.Parameter.empty and parameter.default is not None:
            assert repr(parameter.default) in doc or "default" in doc, f"{name}: {parameter.name}'s default"


def run_examples(function):
    """Runs the examples of `function`'s docstring with `uform` imported; answers the names they bound."""
    tests = doctest.DocTestFinder().find(function, globs={"uform": uform})
    assert tests and tests[0].examples, f"{function.__name__}: no example to run"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    results = runner.run(tests[0], clear_globs=False)
    assert results.failed == 0, f"{function.__name__}: {results.failed} of {results.attempted} examples failed"
    return tests[0].globs


@pytest.mark.parametrize("function", FUNCTIONS, ids=[function.__name__ for function in FUNCTIONS])
def test_package_function_examples_run(function):
    run_examples(function)


def test_capability_example_builds_a_set_of_capability_names():
    usable = run_examples(uform.capabilities_available)["usable"]
    assert "serial" in usable, usable
    known = {member.name.lower() for member in uform.CPUClass} | {"cuda", "hip", "nccl", "numa"}
    assert usable <= known, f"not capability names: {usable - known}"
    assert usable == set(uform.capabilities_available().split(",")), "available is a part of compiled"
