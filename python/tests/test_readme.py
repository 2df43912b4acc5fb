"""The README's Python example runs as written (so the README cannot drift from the package)."""
import os
import pathlib
import re
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_readme_python_example_runs(tmp_path):
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "the README shows a Python example"
    script = tmp_path / "example.py"
    script.write_text(blocks[0])
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                            cwd=tmp_path)
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
    result = subprocess.run([sys.executable, "-X", "dev", str(script)], capture_output=True, text=True,
                            timeout=120, cwd=tmp_path, env=environment)
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
    children = []
    for rank in range(3):
        environment = dict(os.environ, UFORM_CUDA_LIBRARY=str(cuda_double), RANK=str(rank), WORLD="3",
                           MESH_DIR=str(tmp_path), MESH_JOB="readme-run",
                           UFORM_CUDA_DOUBLE_CONFIG="device cc=9.0 memory=64M;device cc=9.0 memory=64M",
                           UFORM_NCCL_LIBRARY="/nonexistent/libnccl.so.2")
        children.append(subprocess.Popen([sys.executable, "-X", "dev", str(script)], cwd=tmp_path,
                                         env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for rank, child in enumerate(children):
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        assert f"rank {rank}: GPUs {2 * rank}..{2 * rank + 1} of 6" in out, out
        assert "no data plane" in out, out
        assert "Warning" not in err, err
    assert not (tmp_path / "readme-run").exists()  # the run cleaned up
