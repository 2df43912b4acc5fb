"""The README's Python example runs as written (so the README cannot drift from the package)."""
import os
import pathlib
import re
import sys

import children

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_readme_python_example_runs(tmp_path):
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "the README shows a Python example"
    script = tmp_path / "example.py"
    script.write_text(blocks[0])
    result = children.run([sys.executable, str(script)], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "1000 / 1000" in result.stdout  # progress reached total


def test_readme_python_gpu_example_runs_against_the_cuda_double(tmp_path, cuda_double):
    """The README's second Python block, the GPU one, against the CUDA driver test double."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    gpu = [block for block in blocks if "for_vram" in block]
    assert gpu, "the README shows a Python GPU example"
    script = tmp_path / "gpu_example.py"
    script.write_text(gpu[0])
    environment = dict(os.environ, UFORM_CUDA_LIBRARY=str(cuda_double),
                       UFORM_CUDA_DOUBLE_CONFIG="device cc=9.0 memory=256M;device cc=8.0 memory=256M")
    result = children.run([sys.executable, "-X", "dev", str(script)], cwd=tmp_path, env=environment)
    assert result.returncode == 0, result.stderr
    assert "device 1 stream" in result.stdout
    assert "round trips ok" in result.stdout
    assert "Warning" not in result.stderr, result.stderr


def test_readme_python_mesh_example_runs_three_processes(tmp_path, cuda_double):
    """The README's mesh block, as three processes of one run over the CUDA driver test double."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    mesh = [block for block in blocks if "Mesh.bootstrap" in block]
    assert mesh, "the README shows a Python mesh example"
    script = tmp_path / "mesh_example.py"
    script.write_text(mesh[0])
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
