"""Model scripts: discovery, hashes, export checks, torch runtimes, scripts in the pipeline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="the model-script tests need PyTorch (MLP_EXTRAS=torch)")

from mlprof.errors import MLProfError  # noqa: E402
from mlprof.measure import MeasureSettings, measure_isolated  # noqa: E402
from mlprof.measure.isolate import run_isolated  # noqa: E402
from mlprof.model.script import discover, read_labels, select, split_model_file  # noqa: E402
from tests.helpers import FAST, REPO, files_in, law_run  # noqa: E402

SCRIPTS = Path(__file__).resolve().parent / "scripts"
TWO = str(SCRIPTS / "two_models.py")
LINEAR = str(SCRIPTS / "linear.py")


def _discover(path: str, *args: str) -> dict:
    return run_isolated(discover, {"path": path, "script_args": args}, timeout=300, torch=True)


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_discovery_lists_both_models_with_stable_hashes():
    first, second = _discover(TWO), _discover(TWO)
    models = first["models"]
    assert [m["class"] for m in models] == ["torch.nn.modules.container.Sequential",
                                            "torch.nn.modules.conv.Conv2d"]
    assert [m["line"] for m in models] == [9, 10]  # where they were created
    assert all(m["file"] == TWO for m in models)
    assert [m["calls"] for m in models] == [2, 1]
    assert models[0]["parameters"] == 10 * 20 + 20 + 20 * 5 + 5
    assert models[1]["inputs"] == [{"name": "input", "tensor": True, "shape": [1, 3, 8, 8],
                                    "dtype": "float32", "batched": True}]
    # identical across runs (separate processes), 8 hex digits
    assert [m["hash"] for m in models] == [m["hash"] for m in second["models"]]
    assert all(len(m["hash"]) == 8 for m in models)
    assert first["labels"] == {"name": ["two_models"], "author": ["mlprof-tests"],
                               "task": ["test", "multi"]}
    # input shapes are part of the hash
    bigger = _discover(TWO, "--batch_size", "4")
    assert bigger["batch_size"] == 4
    assert {m["hash"] for m in bigger["models"]}.isdisjoint(m["hash"] for m in models)


@pytest.mark.slow  # 2 s or more here (2026-11-26): out of the 5-minute fast tier
def test_a_part_called_while_the_model_is_built_is_not_a_model_of_its_own():
    models = _discover(str(SCRIPTS / "part_called_while_built.py"))["models"]
    assert [m["class"] for m in models] == ["torch.nn.modules.container.Sequential"]
    assert models[0]["parameters"] == 3 * 8 * 9 + 8 + 8 * 4 + 4
    assert models[0]["inputs"][0]["shape"] == [2, 3, 32, 32]


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_a_model_that_changes_when_called_is_found_again_by_its_hash():

    path = str(SCRIPTS / "changes_when_called.py")
    (model,) = _discover(path)["models"]
    module, items, _ = run_isolated(_capture_class, {"path": path, "want": model["hash"]},
                                    timeout=300, torch=True)
    assert module == "Switching" and [n for n, _ in items] == ["x"]


def _capture_class(path: str, want: str, progress=None):
    from mlprof.model.script import capture

    module, items, flags = capture(path, want)
    return type(module).__name__, [(n, None) for n, _ in items], flags


@pytest.mark.slow  # 2 s or more here (2026-11-26): out of the 5-minute fast tier
def test_hash_selects_one_model_and_single_model_tasks_list_the_hashes():
    manifest = _discover(TWO)
    h0, h1 = (m["hash"] for m in manifest["models"])
    assert [m["hash"] for m in select(manifest, (h1,))] == [h1]
    assert len(select(manifest)) == 2
    with pytest.raises(MLProfError) as err:
        select(manifest, single=True)
    assert h0 in str(err.value) and h1 in str(err.value) and "::HASH" in str(err.value)
    with pytest.raises(MLProfError, match="no model with hash 00000000"):
        select(manifest, ("00000000",))
    assert split_model_file(f"{TWO}::{h0},{h1}") == (TWO, (h0, h1))
    with pytest.raises(MLProfError, match="8-hex"):
        split_model_file(f"{TWO}::xyz")


@pytest.mark.slow  # 2 s or more here (2026-11-26): out of the 5-minute fast tier
def test_script_without_models_fails_clearly():
    with pytest.raises(MLProfError, match="no torch.nn.Module is called"):
        _discover(str(SCRIPTS / "no_model.py"))


def test_labels_line(tmp_path):
    p = tmp_path / "s.py"
    p.write_text("# labels: author::me task::a,b\n")
    assert read_labels(str(p)) == {"author": ["me"], "task": ["a", "b"]}
    p.write_text("# labels: broken\n")
    with pytest.raises(MLProfError, match="labels"):
        read_labels(str(p))


def test_torch_runtime_resizes_the_batch_dimension():
    r = measure_isolated(LINEAR, MeasureSettings(batch_size=8, n_calls=5, warmup=1,
                                                 min_duration=0, runtime="torch-eager"),
                         timeout=300)
    p = r.provenance
    assert p["runtime"] == "torch" and r.samples_ns.size == 5
    assert p["model"]["inputs"] == [{"name": "input", "shape": [8, 10], "dtype": "float32"}]
    assert p["runtime_settings"]["num_threads"] == 1
    assert p["runtime_settings"]["inference_mode"] is True


def test_model_without_batch_dimension_measures_its_own_shape_and_says_so():
    r = measure_isolated(str(SCRIPTS / "no_batch.py"),
                         MeasureSettings(batch_size=8, n_calls=3, warmup=0, min_duration=0,
                                         runtime="torch"),
                         timeout=300)
    assert r.provenance["model"]["inputs"][0]["shape"] == [16]
    assert any("no input has a batch dimension" in n for n in r.provenance["model"]["notes"])


@pytest.mark.slow
@pytest.mark.parametrize("script, text", [
    ("wrong_export.py", "the ONNX export is numerically wrong on"),
    ("unexportable.py", "cannot be exported to ONNX"),
])
def test_bad_exports_fail_clearly_and_leave_nothing(store, script, text):
    path = str(SCRIPTS / script)
    proc = law_run("ExportOnnx", "--version", "x", "--model-file", path, store=store)
    assert proc.returncode != 0
    lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "mlprof error:" in ln]
    assert lines and text in lines[0] and path in lines[0], proc.stderr[-3000:]
    exported = [p.name for p in files_in(store) if p.parts[-5] == "ExportOnnx"]
    assert exported == ["_failure.json"]  # the reason, and no output


@pytest.mark.slow
def test_export_records_validation_and_serves_every_batch_size(store):
    proc = law_run("ExportOnnx", "--version", "x", "--model-file", LINEAR, store=store)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (record,) = [p for p in files_in(store) if p.name == "export.json"]
    data = json.loads(record.read_text())
    assert data["opset"] == 18 and data["precision"] == "fp32"
    assert data["dynamic_axes"]["input"] == {"0": "batch_size"}
    assert [c["ok"] for c in data["validation"]] == [True, True]
    assert data["max_abs_error"] < 1e-4 and data["export_s"] > 0
    fp16 = law_run("ExportOnnx", "--version", "x", "--model-file", LINEAR, "--precision",
                   "fp16", store=store)
    assert fp16.returncode == 0, fp16.stderr[-3000:]
    assert len([p for p in files_in(store) if p.name == "model.onnx"]) == 2


@pytest.mark.slow
def test_single_model_task_with_a_two_model_script_lists_the_hashes(store):
    proc = law_run("MeasureRuntime", "--version", "x", "--model-file", TWO, "--batch-sizes",
                   "1", *FAST, store=store)
    assert proc.returncode != 0
    line = [ln for ln in proc.stderr.splitlines() if "mlprof error:" in ln][0]
    assert "the script has 2 models" in line and "::HASH" in line
    manifest = json.loads(next(p for p in files_in(store) if p.name == "manifest.json")
                          .read_text())
    h = manifest["models"][1]["hash"]
    ok = law_run("MeasureRuntime", "--version", "x", "--model-file", f"{TWO}::{h}",
                 "--batch-sizes", "1,2", *FAST, "--runtime", "torch", store=store)
    assert ok.returncode == 0, ok.stderr[-3000:]
    csvs = [p for p in files_in(store) if p.suffix == ".csv"]
    assert len(csvs) == 2 and all(f"two_models-{h}__" in str(p) for p in csvs)


@pytest.mark.slow
def test_three_runtimes_on_one_plot_from_a_script(store):
    proc = law_run("PlotMultiRuntimes", "--version", "v1", "--model-files",
                   str(REPO / "tests" / "scripts" / "linear.py"), "--runtimes",
                   "ort,torch-eager,torch-compiled", "--batch-sizes", "1,2", *FAST, store=store,
                   timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    stats = [p for p in files_in(store / "MergeRuntimes") if p.name.startswith("stats_")]
    runtimes = sorted(p.parts[-4].rsplit("-", 1)[0] for p in stats)
    assert runtimes == ["onnxruntime", "torch", "torch-compile"]
    plots = files_in(store / "PlotMultiRuntimes")
    assert [p.name for p in plots] == ["runtimes_onnxruntime-torch-torch-compile_bs_1_2.pdf"]


# --- models called under torch.inference_mode(), torch.no_grad() or plainly --------------------

CALL_STYLES = ["inference_mode.py", "inference_mode_decorated.py", "no_grad.py", "plain_call.py"]


def test_captured_model_and_inputs_are_normal_tensors():
    """Inference tensors (inputs, parameters, buffers, tensor attributes) become normal ones;
    tied weights stay one tensor."""
    import torch

    from mlprof.model.script import capture

    path = str(SCRIPTS / "inference_mode_decorated.py")
    (model,) = _discover(path)["models"]
    module, items, flags = capture(path, model["hash"])
    tensors = [*module.parameters(), *module.buffers(), module.scale, *(v for _, v in items)]
    assert tensors and not any(t.is_inference() for t in tensors)
    assert module.out.weight is module.proj.weight
    assert isinstance(module.proj.weight, torch.nn.Parameter) and module.proj.weight.requires_grad
    assert [n for n, _ in items] == ["x"] and flags == [True]


@pytest.mark.slow
@pytest.mark.parametrize("script", CALL_STYLES)
def test_scripts_export_and_measure_however_they_call_their_model(store, script):
    import pandas as pd

    proc = law_run("PlotMultiRuntimes", "--version", "v1", "--model-files", str(SCRIPTS / script),
                   "--runtimes", "onnxruntime,torch", "--batch-sizes", "1,2", *FAST,
                   store=store, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    stats = [p for p in files_in(store / "MergeRuntimes") if p.name.startswith("stats_")]
    assert sorted(p.parts[-4].rsplit("-", 1)[0] for p in stats) == ["onnxruntime", "torch"]
    for p in stats:
        frame = pd.read_csv(p)
        assert frame["batch_size"].tolist() == [1, 2] and (frame["median_ms"] > 0).all()
    (record,) = [p for p in files_in(store) if p.name == "export.json"]
    assert all(c["ok"] for c in json.loads(record.read_text())["validation"])


_DYNAMO_IN_SCRIPT = '''
import torch
import torch._dynamo  # imported while the script runs, as torchvision's models import it

model = torch.nn.Linear(4, 2)
model(torch.zeros(1, 4))
'''

_GIVE_BACK_CHECK = '''
import gc, json, sys
import torch
from mlprof.model.script import discover
assert "torch._dynamo" not in sys.modules
discover(sys.argv[1])
import torch._dynamo.mutation_guard as mg
import torch._dynamo.utils as du
gc.collect()
print(json.dumps({
    "call": du.unpatched_nn_module_call is torch.nn.Module.__call__,
    "init": mg.unpatched_nn_module_init is torch.nn.Module.__init__,
    "linears": sum(isinstance(o, torch.nn.Linear) for o in gc.get_objects())}))
'''


def test_a_module_imported_while_a_script_runs_keeps_no_hook(tmp_path):
    """PyTorch modules imported lazily during a script's run save ``nn.Module.__call__`` and
    ``__init__`` as "the unpatched ones": they get nn.Module's own back when the run ends
    (mlprof.model.script._give_back), and the hooks' records, with the script's models, are
    not kept alive through them."""
    import subprocess
    import sys

    script = tmp_path / "dynamo_inside.py"
    script.write_text(_DYNAMO_IN_SCRIPT)
    proc = subprocess.run([sys.executable, "-c", _GIVE_BACK_CHECK, str(script)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen == {"call": True, "init": True, "linears": 0}, seen


_PID_SCRIPT = '''
import os
import torch

with open(os.environ["MLP_TEST_PIDS"], "a") as f:
    f.write(f"{os.getpid()}\\n")
{extra}
model = torch.nn.Linear(4, 2)
model.eval()
with torch.no_grad():
    model(torch.rand(1, 4))
'''


@pytest.mark.slow
@pytest.mark.parametrize("extra, processes", [
    ("", [0, 0]),  # discovered and exported in one process
    # an operator defined twice in one process fails the second run there: a new process
    ('torch.library.define("mlproftest::once", "(Tensor x) -> Tensor")', [0, 0, 1]),
])
def test_a_script_is_exported_in_the_process_that_discovered_it(store, tmp_path, extra,
                                                                  processes):
    """The export runs in the discovery's process (no new process, no second import of what
    the script imports); when the script's second run fails there, in a new one."""
    script, pids = tmp_path / "pid_model.py", tmp_path / "pids.txt"
    script.write_text(_PID_SCRIPT.replace("{extra}", extra))
    proc = law_run("ExportOnnx", "--version", "x", "--model-file", str(script), store=store,
                   env={"MLP_TEST_PIDS": str(pids)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = pids.read_text().split()
    assert [sorted(set(seen), key=seen.index).index(p) for p in seen] == processes, seen
    retried = "exporting in a new process" in proc.stdout + proc.stderr
    assert retried == (len(processes) == 3), proc.stderr[-3000:]
    (record,) = [p for p in files_in(store) if p.name == "export.json"]
    assert json.loads(record.read_text())["verdict"] == "exact"
