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
    the first compiles (inductor's FX graph cache misses), the second reads every graph from
    the store's cache (hits, no miss: inductor generated and built no code)."""
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
    assert first["runtime_settings"]["compile"]["counters"]["fxgraph_cache_miss"] >= 1
    assert second["compile_cache"] == "hit"
    counters = second["runtime_settings"]["compile"]["counters"]
    assert counters["fxgraph_cache_miss"] == 0 and counters["fxgraph_cache_hit"] >= 1
    # both runs used the one directory of the store, keyed by model, torch version, settings
    cache = first["runtime_settings"]["compile"]["cache_dir"]
    assert cache == second["runtime_settings"]["compile"]["cache_dir"]
    assert Path(cache).is_relative_to(store / "cache" / "compiled")
    assert Path(cache).name == "fp32_threads1" and any(Path(cache).iterdir())
