"""TurnkeyML's scripts, unedited: ``turnkeyml.parser``, no network, missing packages."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="the model-script tests need PyTorch (MLP_EXTRAS=torch)")

from mlprof.errors import MeasurementFailed  # noqa: E402
from mlprof.measure.isolate import run_isolated  # noqa: E402
from mlprof.model.sandbox import script_sandbox  # noqa: E402
from mlprof.model.script import discover  # noqa: E402
from tests.helpers import FAST, files_in, law_run, mlprof_run  # noqa: E402

TURNKEY = Path(__file__).resolve().parent / "scripts" / "turnkey"


def _discover(name: str, *args: str) -> dict:
    return run_isolated(discover, {"path": str(TURNKEY / f"{name}.py"), "script_args": args},
                        timeout=120, torch=True)


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_turnkey_script_runs_through_discovery_export_and_measurement(store):
    script = str(TURNKEY / "tiny_mlp.py")
    proc = law_run("PlotMultiRuntimes", "--version", "tk", "--model-files", script,
                   "--runtimes", "onnxruntime,torch", "--batch-sizes", "1",
                   "--script-args", "--batch_size 4 --max_seq_length 32", *FAST, store=store)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (manifest,) = [p for p in files_in(store / "DiscoverModels") if p.name == "manifest.json"]
    man = json.loads(manifest.read_text())
    # parse() took --script-args in TurnkeyML's spelling; TurnkeyML's labels line is read
    assert man["parsed"] == {"batch_size": 4, "max_seq_length": 32, "pretrained": False}
    assert man["labels"]["test_group"] == ["turnkey"]
    (model,) = man["models"]
    assert model["inputs"][0]["shape"] == [4, 32] and model["inputs"][0]["batched"]
    assert [p for p in files_in(store / "ExportOnnx") if p.suffix == ".onnx"]
    merged = [p for p in files_in(store / "MergeRuntimes") if p.name.startswith("stats_")]
    assert len(merged) == 2  # onnxruntime and torch
    assert [p for p in files_in(store / "PlotMultiRuntimes") if p.suffix == ".pdf"]


@pytest.mark.slow  # 2 s or more here (2026-11-26): out of the 5-minute fast tier
def test_turnkey_parser_defaults_match_turnkeyml():
    man = _discover("tiny_mlp")
    assert man["parsed"] == {"batch_size": 1, "max_seq_length": 128, "pretrained": False}


@pytest.mark.slow  # 2 s or more here (2026-11-26): out of the 5-minute fast tier
@pytest.mark.parametrize("name", ["needs_network", "needs_socket"])
def test_network_is_refused_at_once_with_status_needs_network(name):
    t0 = time.monotonic()
    with pytest.raises(MeasurementFailed) as info:
        _discover(name)
    assert time.monotonic() - t0 < 10
    assert info.value.status == "needs-network"
    assert "needs-network" in str(info.value) and "example.com" in str(info.value)


@pytest.mark.slow  # 2 s or more here (2026-11-26): out of the 5-minute fast tier
def test_missing_package_gets_status_needs_package():
    with pytest.raises(MeasurementFailed) as info:
        _discover("needs_package")
    assert info.value.status == "needs-package"
    assert "needs-package: torch_geometric" in str(info.value)


def test_sandbox_leaves_no_trace():
    import os
    import socket

    before = (socket.getaddrinfo, socket.socket.connect, list(sys.meta_path),
              os.environ.get("HF_HUB_OFFLINE"))
    with script_sandbox():
        from turnkeyml.parser import parse

        assert parse(["batch_size", "num_channels", "height", "width"], []) == [1, 3, 224, 224]
        assert os.environ["HF_HUB_OFFLINE"] == "1"
        with pytest.raises(ConnectionRefusedError, match="example.com"):
            socket.getaddrinfo("example.com", 80)
        socket.getaddrinfo("localhost", 80)  # the local machine stays reachable
    assert "turnkeyml" not in sys.modules and "turnkeyml.parser" not in sys.modules
    assert (socket.getaddrinfo, socket.socket.connect, list(sys.meta_path),
            os.environ.get("HF_HUB_OFFLINE")) == before


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_statuses_show_in_the_report(tmp_path):
    import pandas as pd

    store = tmp_path / "s"
    for name in ("needs_network", "needs_package"):
        proc = law_run("MeasureRuntime", "--version", "tk", "--runtime", "torch", *FAST,
                       "--batch-sizes", "1", "--model-file", str(TURNKEY / f"{name}.py"),
                       store=store, timeout=120)
        assert proc.returncode != 0
    proc = law_run("Report", "--version", "r1", store=store)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (csv,) = store.glob("Report/**/report.csv")
    rows = {r["model"]: r for r in pd.read_csv(csv).to_dict("records")}
    assert rows["needs_network"]["status"] == "needs-network"
    assert rows["needs_network"]["stage"] == "discovery"
    assert rows["needs_package"]["status"] == "needs-package"
    assert "needs-package: torch_geometric" in rows["needs_package"]["error"]


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_corpus_command_on_a_turnkey_models_dir(store, tmp_path):
    """``mlprof corpus --models-dir``: a TurnkeyML-style checkout's models/, statuses summed."""
    import os
    import shutil

    from tests.helpers import REPO

    models = tmp_path / "models"
    (models / "selftest").mkdir(parents=True)
    for name in ("tiny_mlp", "needs_network", "needs_package"):
        shutil.copy(TURNKEY / f"{name}.py", models / "selftest" / f"{name}.py")
    env = {**os.environ, "MLP_STORE": str(store), "MLP_BASE": str(REPO)}
    proc = mlprof_run("corpus", "--models-dir", str(models), "--n-calls", "5", env=env,
                      timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert any(ln.startswith("selftest/needs_network.py onnxruntime: needs-network: ")
               for ln in lines), proc.stdout
    assert any(ln.startswith("selftest/needs_package.py onnxruntime: needs-package: "
                             "torch_geometric") for ln in lines), proc.stdout
    assert lines[-2].startswith("1 of 3 measured (33.3 %) in "), lines[-2]
    assert lines[-1].startswith("full results (every statistic, the samples, the provenance): 1 "
                                "statistics file(s)"), lines[-1]
    # per corpus: scripts, measured, skipped, needs-network, needs-package
    assert re.search(r"^selftest +3 +1 +0 +1 +1$", proc.stdout, re.M), proc.stdout


def test_a_real_turnkeyml_wins_over_the_shim(tmp_path, monkeypatch):
    pkg = tmp_path / "turnkeyml"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "parser.py").write_text("def parse(names):\n    return ['real'] * len(names)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with script_sandbox():
            from turnkeyml.parser import parse

            assert parse(["batch_size"]) == ["real"]
    finally:
        for name in ("turnkeyml", "turnkeyml.parser"):
            sys.modules.pop(name, None)
