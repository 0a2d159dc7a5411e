"""The README's Python API example runs as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from conftest import REPO

pytest.importorskip("torch", reason="the API example needs PyTorch")
pytestmark = pytest.mark.slow


def _block(section: str) -> str:
    text = (REPO / "README.md").read_text()
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", body, re.S).group(1)


def test_python_api_example_runs_as_written(tmp_path):
    script = tmp_path / "example.py"
    script.write_text(_block("Python API"))
    env = dict(os.environ, MLP_STORE=str(tmp_path / "store"))
    proc = subprocess.run([sys.executable, str(script)], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "median_ms" in out and "throughput" in out
    assert "model.onnx" in out
    # one line per selftest model and runtime
    n_models = len(list((REPO / "models" / "selftest").glob("*.py"))) + 1  # two_models: 2
    assert sum(" onnxruntime {" in ln for ln in out.splitlines()) == n_models
    assert sum(" torch {" in ln for ln in out.splitlines()) == n_models
