"""scripts/device_check.py's staging check against the CUDA driver test double.

The double's link (`link bandwidth=16M`) makes a 16 MiB DMA last a second each way; a staged copy
whose waits block spends a small fraction of that on the host's CPUs, one whose waits spin spends
most of it. The same command runs on a real GPU in scripts/device-check, without the bound.
"""

import json
import os
import pathlib
import sys

import children

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "device_check.py"


def run(cuda_double, tmp_path, *arguments):
    environment = dict(os.environ)
    environment["UFORM_CUDA_LIBRARY"] = str(cuda_double)
    environment["UFORM_CUDA_DOUBLE_CONFIG"] = "device memory=1G name=only\nlink bandwidth=16M"
    result = children.run([sys.executable, str(SCRIPT), *arguments], cwd=tmp_path, env=environment)
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert lines, result.stdout + result.stderr
    return result.returncode, json.loads(lines[-1])


def test_staged_copies_spend_little_cpu_while_the_dma_runs(cuda_double, tmp_path):
    code, answer = run(cuda_double, tmp_path, "staging", "--mib", "16", "--expect-cpu-below-ms", "200")
    assert code == 0, answer
    assert answer["result_right"], answer
    assert answer["to_device_wall_ms"] >= 950 and answer["to_host_wall_ms"] >= 950, answer  # the link was in the way
    assert answer["to_device_cpu_ms"] < 200 and answer["to_host_cpu_ms"] < 200, answer

