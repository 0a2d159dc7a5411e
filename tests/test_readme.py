"""The README and docs/ hold together: the Python API examples run as written, label examples
select scripts, every page is linked and every relative link and anchor resolves, and the README
stays short enough to read in a few minutes.

The bash examples are run by ``tests/test_docs.py``; these are the checks it does not make.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

#: the README is the front page: what mlprof is, installing, a quick start, recipes, links
README_MAX_LINES = 300

DOCS = sorted((REPO / "docs").rglob("*.md"))
PAGES = [REPO / "README.md", *DOCS]


def _block(section: str) -> str:
    return _python_blocks(section)[0]


def _python_blocks(section: str) -> list[str]:
    text = (REPO / "docs" / "api.md").read_text()
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", body, re.S)


@pytest.mark.slow
def test_python_api_example_runs_as_written(tmp_path):
    pytest.importorskip("torch", reason="the API example needs PyTorch")
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


@pytest.mark.slow
def test_measure_isolated_snippet_runs_as_written(tmp_path):
    (snippet,) = [b for b in _python_blocks("Python API") if "measure_isolated" in b]
    assert 'if __name__ == "__main__":' in snippet
    script = tmp_path / "snippet.py"
    script.write_text(snippet)
    proc = subprocess.run([sys.executable, str(script)], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert float(proc.stdout.strip().splitlines()[-1]) > 0  # a median in ms


def test_label_examples_select_corpus_scripts():
    """Every `--labels key::value` in the README and docs/ matches some script of the corpus."""
    from mlprof.model.script import read_labels

    text = "\n".join(p.read_text() for p in PAGES)
    examples = set(re.findall(r"--labels ([\w:,]+)", text))
    assert examples
    have: dict[str, set[str]] = {}
    for script in (REPO / "models").glob("*/*.py"):
        for k, vs in read_labels(str(script)).items():
            have.setdefault(k, set()).update(vs)
    for ex in examples:
        key, _, values = ex.partition("::")
        assert set(values.split(",")) & have.get(key, set()), (ex, sorted(have.get(key, ())))


def test_readme_is_short():
    n = len((REPO / "README.md").read_text().splitlines())
    assert n <= README_MAX_LINES, f"README.md has {n} lines; the reference goes to docs/"


def test_every_docs_page_is_linked_from_the_readme_and_the_index():
    readme = (REPO / "README.md").read_text()
    index = (REPO / "docs" / "README.md").read_text()
    assert DOCS
    for page in DOCS:
        rel = page.relative_to(REPO / "docs").as_posix()
        if rel != "README.md":
            assert f"](docs/{rel})" in readme, f"README.md does not link docs/{rel}"
            assert f"]({rel})" in index, f"docs/README.md does not link {rel}"
    assert "](docs/README.md)" in readme


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)  # no code comments
    return {_slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, re.M)}


_LINK = re.compile(r"\]\(([^)\s]+)\)")


def links(page: Path) -> list[tuple[str, Path, str]]:
    """(link as written, target file, anchor) of every relative link of ``page``."""
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)
    out = []
    for target in _LINK.findall(text):
        if re.match(r"\w+:", target):  # https:, file:, mailto:
            continue
        path, _, anchor = target.partition("#")
        out.append((target, (page.parent / path).resolve() if path else page, anchor))
    return out


def test_every_relative_link_and_anchor_resolves():
    checked = 0
    for page in PAGES:
        for target, path, anchor in links(page):
            where = f"{page.relative_to(REPO)}: ({target})"
            assert path.exists(), f"{where}: no such file"
            if anchor and path.suffix == ".md":
                assert anchor in _anchors(path), f"{where}: no heading with that anchor"
            checked += 1
    assert checked > 40


def test_the_link_check_sees_a_broken_anchor(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## Where outputs go\n\n[ok](#where-outputs-go) [bad](#nowhere)\n")
    found = {a: a in _anchors(page) for _, _, a in links(page)}
    assert found == {"where-outputs-go": True, "nowhere": False}
    assert _slug("TensorFlow models: `inference_engine: tf` and `tfaot`") == \
        "tensorflow-models-inference_engine-tf-and-tfaot"
