"""Compiled artifacts kept in the store (issue 38, item 3): torch.compile's inductor caches live
in ``<store>/cache/compiled/<model>/<runtime-version>/<settings>`` and a second run, under
another ``--version``, loads the compiled code instead of compiling; the compile time is
recorded apart from the measurement (``compile_s``, ``compile_cache``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlprof.results import layout, records
from tests.helpers import FAST, REPO, files_in, law_run

SCRIPT = str(REPO / "models" / "selftest" / "linear.py")


def _torch_compile_branch(store: Path, version: str) -> dict:
    """The torch-compile branch record of ``version`` (read through its typed class)."""
    found = [p for p in files_in(store / "MeasureRuntime")
             if p.name == "runtime_bs_1.json" and p.parent.name == version
             and "torch-compile-" in str(p)]
    assert len(found) == 1, found
    obj = json.loads(found[0].read_text())
    rec = records.BranchRecord.from_json(obj, str(found[0]))
    assert rec.compile_s is not None and rec.compile_s > 0
    return obj


def test_the_cache_directory_is_keyed_like_exports(tmp_path):
    path = layout.compile_cache_dir("linear", "ff1a27c7" * 8, "torch-compile", "2.14.1",
                                    "fp32_threads1", store=str(tmp_path))
    assert path == str(tmp_path / "cache" / "compiled" / "linear__ff1a27c7"
                       / "torch-compile-2.14.1" / "fp32_threads1")


@pytest.mark.slow
def test_a_second_version_compiles_nothing(tmp_path):
    """The acceptance run: two PlotSpeedup runs of linear.py under two versions in one store;
    the first exports and compiles the model ahead of time (an AOTInductor package in the
    store's cache: a miss), the second loads that package (a hit: no tracing, no code
    generated or built) and its compile time is the package's load."""
    pytest.importorskip("torch")
    store = tmp_path / "store"
    for version in ("v1", "v2"):
        r = law_run("PlotSpeedup", "--version", version, "--model-files", SCRIPT,
                    "--batch-sizes", "1", "--file-types", "svg", *FAST, store=store,
                    timeout=1200)
        assert r.returncode == 0, r.stderr[-3000:]
        # the compile is reported apart, in the run's own output
        assert "compiled in " in r.stdout + r.stderr
    first, second = _torch_compile_branch(store, "v1"), _torch_compile_branch(store, "v2")
    assert first["compile_cache"] == "miss"
    assert first["runtime_settings"]["compile"]["counters"] == {"aoti_package_hit": 0,
                                                                 "aoti_package_miss": 1}
    assert second["compile_cache"] == "hit"
    assert second["runtime_settings"]["compile"]["counters"] == {"aoti_package_hit": 1,
                                                                  "aoti_package_miss": 0}
    assert second["runtime_settings"]["compile"]["mode"].startswith("aot ")
    # both runs used the one package in the store, keyed by model, torch version, settings
    package = Path(first["runtime_settings"]["compile"]["package"])
    assert package == Path(second["runtime_settings"]["compile"]["package"])
    assert package.is_relative_to(store / "cache" / "compiled") and package.is_file()
    assert package.parent.name == "fp32_threads1" and package.suffix == ".pt2"
    # no half-written package left beside it
    assert not [p for p in package.parent.iterdir() if p.name.startswith(".partial-")]


@pytest.mark.slow
def test_a_model_that_does_not_export_whole_uses_torch_compile(tmp_path, monkeypatch):
    """A model with a graph break (``torch.export`` refuses it) is compiled by torch.compile
    with inductor's caches in the same directory; the record says so and why."""
    torch = pytest.importorskip("torch")
    from mlprof.runtimes.torch import TorchCompileRuntime, resolve_script

    script = tmp_path / "breaks.py"
    script.write_text(
        "import torch\n"
        "class Breaks(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.lin = torch.nn.Linear(4, 2)\n"
        "    def forward(self, x):\n"
        "        y = self.lin(x)\n"
        "        if float(y.detach().sum()) > 1e9:  # data-dependent: a graph break\n"
        "            return y * 2\n"
        "        return y\n"
        "model = Breaks().eval()\n"
        "model(torch.rand(1, 4))\n")
    monkeypatch.setenv("MLP_STORE", str(tmp_path / "store"))
    rt = TorchCompileRuntime(resolve_script(str(script)))
    rt.load(1)
    fn, args = rt.bind({"x": torch.rand(1, 4).numpy()})
    phases: list[str] = []
    compiled = rt.compile(fn, args, phase=phases.append)
    # the progress line says what happens: the export was tried, torch.compile compiles
    assert phases == ["compiling with torch.export + AOTInductor (once per store)",
                      "compiling with torch.compile (torch.export failed)"]
    info = rt.info()["compile"]
    assert info["mode"] == "jit (torch.compile)"
    assert info["jit_because"].startswith("torch.export failed: ")
    assert compiled.cache == "miss" and "package" not in info
    out = fn(*args)
    assert tuple(out.shape) == (1, 2)
