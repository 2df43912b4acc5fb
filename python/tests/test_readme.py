"""Every Python program in the README runs as written (so the README cannot drift from the package).

Each ```python block is one kind: a mesh program (it calls Mesh.bootstrap) runs as three processes
of one run, every other block runs once; all of them over the CUDA driver test double, so the GPU
programs take their GPU paths. A block's own asserts check it; the checks here add what it must
print.
"""
import os
import pathlib
import re
import sys

import pytest

import children

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
MESH = [block for block in BLOCKS if "Mesh.bootstrap" in block]
SINGLE = [block for block in BLOCKS if block not in MESH]
DOUBLE_CONFIG = "device cc=9.0 memory=256M;device cc=8.0 memory=256M"


def test_readme_shows_python_programs():
    assert SINGLE, "the README shows a Python quick start"
    assert MESH, "the README shows a Python mesh program"
    assert any("for_vram" in block for block in SINGLE), "the README shows a Python GPU program"


@pytest.mark.parametrize("index", range(len(SINGLE)))
def test_readme_python_program_runs(tmp_path, cuda_double, index):
    block = SINGLE[index]
    script = tmp_path / f"readme_{index}.py"
    script.write_text(block)
    environment = dict(os.environ, UFORM_CUDA_LIBRARY=str(cuda_double), UFORM_CUDA_DOUBLE_CONFIG=DOUBLE_CONFIG,
                       UFORM_NCCL_LIBRARY="/nonexistent/libnccl.so.2")
    result = children.run([sys.executable, "-X", "dev", str(script)], cwd=tmp_path, env=environment)
    assert result.returncode == 0, result.stderr
    assert "Warning" not in result.stderr, result.stderr
    if "progress=" in block:
        assert "1000 / 1000" in result.stdout  # progress reached total
    if "for_vram" in block:
        assert "device 1 stream" in result.stdout  # both emulated devices ran the step
        assert "round trips ok" in result.stdout


@pytest.mark.parametrize("index", range(len(MESH)))
def test_readme_python_mesh_program_runs_three_processes(tmp_path, cuda_double, index):
    """A mesh block, as three processes of one run over the CUDA driver test double."""
    script = tmp_path / f"mesh_{index}.py"
    script.write_text(MESH[index])
    ranks = []
    for rank in range(3):
        environment = dict(os.environ, UFORM_CUDA_LIBRARY=str(cuda_double), RANK=str(rank), WORLD="3",
                           MESH_DIR=str(tmp_path), MESH_JOB="readme-run",
                           UFORM_CUDA_DOUBLE_CONFIG="device cc=9.0 memory=64M;device cc=9.0 memory=64M",
                           UFORM_NCCL_LIBRARY="/nonexistent/libnccl.so.2")
        ranks.append(children.start([sys.executable, "-X", "dev", str(script)], cwd=tmp_path, env=environment))
    for rank, result in enumerate(children.finish(ranks)):
        out, err = result.stdout, result.stderr
        assert result.returncode == 0, err
        assert f"rank {rank}: GPUs {2 * rank}..{2 * rank + 1} of 6" in out, out
        assert "no data plane" in out, out
        assert "Warning" not in err, err
    assert not (tmp_path / "readme-run").exists()  # the run cleaned up
