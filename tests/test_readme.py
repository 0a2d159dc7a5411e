"""The README's Python API example runs as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.helpers import REPO

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


def _python_blocks(section: str) -> list[str]:
    text = (REPO / "README.md").read_text()
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", body, re.S)


def test_measure_isolated_snippet_runs_as_written(tmp_path):
    (snippet,) = [b for b in _python_blocks("Python API") if "measure_isolated" in b]
    assert 'if __name__ == "__main__":' in snippet
    script = tmp_path / "snippet.py"
    script.write_text(snippet)
    proc = subprocess.run([sys.executable, str(script)], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert float(proc.stdout.strip().splitlines()[-1]) > 0  # a median in ms


def test_readme_label_examples_select_corpus_scripts():
    """Every `--labels key::value` in the README matches some script of the corpus."""
    from mlprof.model.script import read_labels

    text = (REPO / "README.md").read_text()
    examples = set(re.findall(r"--labels ([\w:,]+)", text))
    assert examples
    have: dict[str, set[str]] = {}
    for script in (REPO / "models").glob("*/*.py"):
        for k, vs in read_labels(str(script)).items():
            have.setdefault(k, set()).update(vs)
    for ex in examples:
        key, _, values = ex.partition("::")
        assert set(values.split(",")) & have.get(key, set()), (ex, sorted(have.get(key, ())))
