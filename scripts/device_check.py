#!/usr/bin/env python3
"""The Python half of scripts/device-check: checks that need a GPU and a framework beside uform.

    device_check.py torch             a device function enqueues PyTorch work on the executor's
                                      stream (torch.cuda.ExternalStream(slot.stream)); once
                                      for_devices returns, the stream is idle and the result right
    device_check.py cupy              the same with CuPy's cupy.cuda.ExternalStream
    device_check.py staging [--mib N] [--expect-cpu-below-ms MS]
                                      host CPU time (getrusage) of a staged copy of N MiB of
                                      pageable memory each way, beside its wall time and one plain
                                      memcpy's CPU time; with --expect-cpu-below-ms, fails when a
                                      direction spent more (the suite runs this against the CUDA
                                      driver test double's slow link)

Each prints one JSON line and exits 0 when the check passed, 1 when it failed, and 0 with
"skipped" where the framework or a CUDA device is missing (the device check says so).
"""

import argparse
import ctypes
import json
import resource
import sys
import time

import uform
from uform import Arena, Executor


def cpu_ms():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (usage.ru_utime + usage.ru_stime) * 1e3


def report(**fields):
    print(json.dumps(fields), flush=True)
    return 0 if fields.get("ok", True) else 1


def check_torch():
    try:
        import torch
    except ImportError as error:
        return report(check="torch", skipped=f"no PyTorch: {error}")
    if not torch.cuda.is_available():
        return report(check="torch", skipped="PyTorch sees no CUDA device")
    device = torch.device("cuda", 0)
    a = torch.randn(4096, 4096, device=device)
    b = torch.randn(4096, 4096, device=device)
    torch.cuda.synchronize(device)  # a and b exist before another stream reads them
    held = {}
    with Executor.for_vram([0]) as executor:

        def enqueue(slot):
            stream = torch.cuda.ExternalStream(slot.stream, device=device)
            held["stream"] = stream
            with torch.cuda.stream(stream):
                c = a
                for _ in range(20):  # long enough that a call returning early would catch it running
                    c = torch.mm(c, b) / 4096.0
                held["c"] = c

        executor.for_devices(enqueue)
        idle = held["stream"].query()  # asked before anything else waits: the call itself drained it
        expected = a
        for _ in range(20):
            expected = torch.mm(expected, b) / 4096.0
        torch.cuda.synchronize(device)
        same = bool(torch.allclose(held["c"], expected, rtol=1e-3, atol=1e-3))
    return report(check="torch", version=torch.__version__, stream_idle_after_for_devices=idle, result_right=same,
                  ok=idle and same)


def check_cupy():
    try:
        import cupy
    except ImportError as error:
        return report(check="cupy", skipped=f"no CuPy: {error}")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return report(check="cupy", skipped="CuPy sees no CUDA device")
    except Exception as error:  # noqa: BLE001 - CuPy raises its own runtime error types
        return report(check="cupy", skipped=f"CuPy sees no CUDA device: {error}")
    with cupy.cuda.Device(0):
        a = cupy.random.random((4096, 4096), dtype=cupy.float32)
        b = cupy.random.random((4096, 4096), dtype=cupy.float32)
        cupy.cuda.Device(0).synchronize()
        held = {}
        with Executor.for_vram([0]) as executor:

            def enqueue(slot):
                stream = cupy.cuda.ExternalStream(slot.stream, 0)
                held["stream"] = stream
                with stream:
                    c = a
                    for _ in range(20):
                        c = (c @ b) / 4096.0
                    held["c"] = c

            executor.for_devices(enqueue)
            idle = bool(held["stream"].done)
            expected = a
            for _ in range(20):
                expected = (expected @ b) / 4096.0
            cupy.cuda.Device(0).synchronize()
            same = bool(cupy.allclose(held["c"], expected, rtol=1e-3, atol=1e-3))
    return report(check="cupy", version=cupy.__version__, stream_idle_after_for_devices=idle, result_right=same,
                  ok=idle and same)


def check_staging(mib, expect_cpu_below_ms):
    size = mib << 20
    source = bytearray(size)
    for offset in range(0, size, 4096):  # one byte a page: every page touched, a pattern to compare
        source[offset] = (offset >> 12) & 0xFF
    back = bytearray(size)
    scratch = bytearray(size)
    c0, w0 = cpu_ms(), time.perf_counter()
    ctypes.memmove((ctypes.c_char * size).from_buffer(scratch), (ctypes.c_char * size).from_buffer(source), size)
    c1, w1 = cpu_ms(), time.perf_counter()
    with Executor.for_vram([0]) as executor, Arena.new_in(executor, size + (1 << 20)) as arena:
        pointer = arena.allocate(size, alignment=4096)
        executor.copy_to_device(0, pointer, source[:4096])  # the staging grows outside the measurement
        c2, w2 = cpu_ms(), time.perf_counter()
        executor.copy_to_device(0, pointer, source)
        c3, w3 = cpu_ms(), time.perf_counter()
        executor.copy_to_host(back, 0, pointer)
        c4, w4 = cpu_ms(), time.perf_counter()
    right = back == source
    fields = dict(check="staging", mib=mib, memcpy_cpu_ms=round(c1 - c0, 1), memcpy_wall_ms=round((w1 - w0) * 1e3, 1),
                  to_device_wall_ms=round((w3 - w2) * 1e3, 1), to_device_cpu_ms=round(c3 - c2, 1),
                  to_host_wall_ms=round((w4 - w3) * 1e3, 1), to_host_cpu_ms=round(c4 - c3, 1),
                  to_device_gbps=round(size / max(w3 - w2, 1e-9) / 1e9, 2),
                  to_host_gbps=round(size / max(w4 - w3, 1e-9) / 1e9, 2), result_right=right)
    ok = right
    if expect_cpu_below_ms is not None:
        ok = ok and c3 - c2 < expect_cpu_below_ms and c4 - c3 < expect_cpu_below_ms
        fields["expect_cpu_below_ms"] = expect_cpu_below_ms
    return report(ok=ok, **fields)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("torch")
    commands.add_parser("cupy")
    staging = commands.add_parser("staging")
    staging.add_argument("--mib", type=int, default=1024)
    staging.add_argument("--expect-cpu-below-ms", type=float, default=None)
    arguments = parser.parse_args(argv)
    if not uform.gpu_devices():
        return report(check=arguments.command, skipped="uform lists no GPU")
    if arguments.command == "torch":
        return check_torch()
    if arguments.command == "cupy":
        return check_cupy()
    return check_staging(arguments.mib, arguments.expect_cpu_below_ms)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
