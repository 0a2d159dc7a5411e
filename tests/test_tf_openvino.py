"""The TensorFlow engines (tensorflow for MLProf's ``tf`` models, tfaot for its AOT models) and
OpenVINO: real TF sessions, real XLA compilations, real OpenVINO compiled models.

Skipped (with the reason) only when TensorFlow or OpenVINO is not installed; setup.sh installs
both by default (extras ``tf`` and ``openvino``).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import numpy as np
import pytest

from mlprof.errors import MLProfError
from mlprof.measure.settings import MeasureSettings
from mlprof.runtimes.batching import default_rule, normalized_rules, parse_batch_rules, rule_for
from tests.helpers import REPO, law_run

HAVE_TF = importlib.util.find_spec("tensorflow") is not None
HAVE_OV = importlib.util.find_spec("openvino") is not None
needs_tf = pytest.mark.skipif(not HAVE_TF, reason="TensorFlow is not installed "
                              "(pip install -e '.[tf]')")
needs_ov = pytest.mark.skipif(not HAVE_OV, reason="OpenVINO is not installed "
                              "(pip install -e '.[openvino]')")

DNN_DIR = REPO / "examples" / "dnn"
CNN_DIR = REPO / "examples" / "cnn"
#: per example: the ONNX YAML, the tf YAML, the SavedModel directory, the tfaot YAML and batch
#: rules for batch size 15 (MLProf's DNN AOT YAML compiles batch size 1 only; the CNN's 1..1024)
EXAMPLES = {
    "dnn": (DNN_DIR / "model_onnx_l10u128.yaml", DNN_DIR / "model_tf_l10u128.yaml",
            DNN_DIR / "saved_model_l10u128", DNN_DIR / "model_tfaot_l10u128.yaml",
            ("15:ones",)),
    "cnn": (CNN_DIR / "model_onnx_cnn.yaml", CNN_DIR / "model_tf_cnn.yaml",
            CNN_DIR / "saved_model_cnn", CNN_DIR / "model_tfaot_cnn.yaml",
            ("15:1,2,4,8", "15:8,8", "15:twos")),
}


def _outputs(runtime: str, model_file, batch_size: int, rules: str = "") -> np.ndarray:
    """The first output of ``runtime`` on ``model_file`` for the seeded random inputs."""
    from mlprof.measure.inputs import make_feeds
    from mlprof.runtimes import get_runtime

    cls = get_runtime(runtime)
    resolved = cls.resolve(str(model_file))
    rt = cls(resolved, threads=1)
    rt.configure(MeasureSettings(batch_size=batch_size, runtime=runtime,
                                 tfaot_batch_rules=rules).validated())
    rt.load(batch_size)
    feed = make_feeds(resolved.inputs, batch_size, 1, "random", 0)[0]
    fn, args = rt.bind(feed)
    out = fn(*args)
    if isinstance(out, dict):  # OpenVINO's OVDict
        out = list(out.values())
    return np.asarray(out[0])


# -- batch rules (no TensorFlow needed) -----------------------------------------------------

def test_batch_rules_parse_as_mlprof_writes_them():
    rules = parse_batch_rules("15:1,2,1,1,2,8-3:ones-5:twos-6:4,4")
    assert rules[15].sizes == (1, 2, 1, 1, 2, 8) and rules[15].last_padding == 0
    assert rules[3].sizes == (1, 1, 1)
    assert rules[5].sizes == (2, 2, 2) and rules[5].last_padding == 1
    assert rules[6].sizes == (4, 4) and rules[6].last_padding == 2
    assert rules[6].pieces() == [(0, 4, 4), (4, 4, 2)]
    assert normalized_rules("6:4,4 - 3:ones") == "3:1,1,1-6:4,4"


def test_default_rule_is_cmssws():
    assert default_rule(8, [1, 8]).sizes == (8,)
    rule = default_rule(15, [4, 8])  # the smallest compiled size, repeated, the last padded
    assert rule.sizes == (4, 4, 4, 4) and rule.last_padding == 1


@pytest.mark.parametrize("text, words", [
    ("15:1,2", ["sum to 3", "less than the target batch size 15"]),
    ("15;1,2", ["bad rule", "target:size"]),
    ("15:1,x", ["bad rule"]),
    ("6:8,1", ["padding 3 must be smaller than the last size 1"]),
    ("3:ones-3:1,2", ["two rules for batch size 3"]),
])
def test_bad_batch_rules_are_one_line_errors(text, words):
    with pytest.raises(MLProfError) as e:
        parse_batch_rules(text)
    msg = str(e.value)
    assert "--tfaot-batch-rules" in msg and "\n" not in msg
    for w in words:
        assert w in msg


def test_a_rule_with_a_size_that_was_not_compiled_is_refused():
    with pytest.raises(MLProfError, match=r"batch size\(s\) \[3\] that the model was not "
                       r"compiled for"):
        rule_for(6, "6:3,3", [1, 2, 4])


def test_rules_are_refused_before_anything_runs(store):
    aot = str(DNN_DIR / "model_tfaot_l10u128.yaml")
    r = law_run("MeasureRuntime", "--version", "v", "--model-file", aot, "--batch-sizes", "6",
                "--tfaot-batch-rules", "6:3,3", store=store)
    assert r.returncode != 0 and "not compiled for" in r.stdout + r.stderr
    onnx_yaml = str(DNN_DIR / "model_onnx_l10u128.yaml")
    r = law_run("MeasureRuntime", "--version", "v", "--model-file", onnx_yaml,
                "--tfaot-batch-rules", "3:ones", store=store)
    assert r.returncode != 0 and "applies to AOT TensorFlow models" in r.stdout + r.stderr
    assert not (store / "MeasureRuntime").exists()


def test_the_rules_reach_the_output_path():
    from mlprof.tasks.runtime import MergeRuntimes

    aot = str(DNN_DIR / "model_tfaot_l10u128.yaml")
    base = MergeRuntimes(version="v", model_file=aot, batch_sizes=(15,))
    ruled = MergeRuntimes(version="v", model_file=aot, batch_sizes=(15,),
                          tfaot_batch_rules="15:ones")
    assert base.runtime == "tfaot"  # the YAML's engine decides the default runtime
    assert "_rules-" not in base.output()["stats"].path
    assert "_rules-" in ruled.output()["stats"].path


# -- model files ----------------------------------------------------------------------------

def test_tf_yamls_are_read_without_tensorflow():
    from mlprof.model import read_model_file

    tf_spec = read_model_file(DNN_DIR / "model_tf_l10u128.yaml")
    assert tf_spec.model_kind == "tf" and tf_spec.file.endswith(".pb")
    aot = read_model_file(DNN_DIR / "model_tfaot_l10u128.yaml")
    assert aot.model_kind == "tfaot" and aot.is_saved_model
    assert aot.serving_key == "serving_default" and aot.compilation["batch_sizes"] == [1]
    sm = read_model_file(DNN_DIR / "saved_model_l10u128")
    assert sm.model_kind == "tf" and sm.serving_key == "serving_default"
    assert len(sm.content_hash) == 64 and sm.model_sha256() != aot.spec_file


@pytest.mark.slow  # 2 s or more here (2026-11-26): out of the 5-minute fast tier
@needs_tf
def test_a_tensor_name_not_in_the_graph_names_the_graphs_tensors(tmp_path):
    from mlprof.runtimes.tensorflow import TensorFlowRuntime

    # MLProf's YAML says `input`; a Keras 3 export names the placeholder `inputs`: the other
    # way round here, same message
    text = (DNN_DIR / "model_tf_l10u128.yaml").read_text()
    y = tmp_path / "model.yaml"
    pb = "frozen_graph_l10u128.pb"
    (tmp_path / pb).write_bytes((DNN_DIR / pb).read_bytes())
    y.write_text(text.replace("name: input\n", "name: inputs\n"))
    with pytest.raises(MLProfError) as e:
        TensorFlowRuntime.resolve(str(y))
    assert "input 'inputs' is not in the graph; its inputs: input" in str(e.value)
    assert "model.inputs[0].name" in str(e.value)
    y.write_text(text.replace("name: Identity", "name: output_9"))
    with pytest.raises(MLProfError, match="output 'output_9' is not in the graph; its "
                       "outputs: Identity:0"):
        TensorFlowRuntime.resolve(str(y))


def test_a_missing_extra_is_one_line_naming_it():
    for module, extra in (("mlprof.runtimes.openvino", "openvino"),
                          ("mlprof.runtimes.tensorflow", "tf")):
        pkg = extra if extra != "tf" else "tensorflow"
        code = (f"import sys; sys.modules[{pkg!r}] = None\n"
                f"try:\n    import {module}\nexcept Exception as e:\n    print(e)")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             cwd=REPO, timeout=60).stdout.strip()
        assert f"pip install -e '.[{extra}]'" in out and "\n" not in out, out


# -- the engines compute the same function --------------------------------------------------

@needs_tf
@needs_ov
@pytest.mark.parametrize("example", [  # cnn: 3.9 s here (2026-11-26), out of the fast tier
    pytest.param(e, marks=pytest.mark.slow) if e == "cnn" else e for e in sorted(EXAMPLES)])
def test_every_engine_computes_the_same_function(example):
    onnx_yaml, tf_yaml, saved_model, aot_yaml, rules = EXAMPLES[example]
    for bs in (1, 8, 15):
        ref = _outputs("onnxruntime", onnx_yaml, bs)
        got = {"tf frozen graph": _outputs("tensorflow", tf_yaml, bs),
               "tf SavedModel": _outputs("tensorflow", saved_model, bs),
               "tfaot": _outputs("tfaot", aot_yaml, bs),
               "openvino": _outputs("openvino", onnx_yaml, bs)}
        if bs == 15:  # composed of compiled sizes, padded where the sizes sum to more
            for rule in rules:
                got[f"tfaot {rule}"] = _outputs("tfaot", aot_yaml, bs, rule)
        for what, out in got.items():
            assert out.shape == ref.shape, (what, bs)
            np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5, err_msg=f"{what} bs {bs}")


@needs_tf
def test_the_provenance_names_the_call_and_the_build():
    from mlprof.runtimes.tensorflow import TensorFlowRuntime

    rt = TensorFlowRuntime(TensorFlowRuntime.resolve(str(DNN_DIR / "model_tf_l10u128.yaml")),
                           threads=2)
    rt.load(1)
    info = rt.info()
    assert info["call"].startswith("tf.compat.v1.Session.make_callable")
    assert info["intra_op_parallelism_threads"] == 2 and info["tensorflow_version"]
    assert isinstance(info["onednn_enabled"], bool)


@needs_ov
def test_openvino_applies_threads_and_the_latency_hint():
    from mlprof.runtimes.openvino import OpenVinoRuntime

    rt = OpenVinoRuntime(OpenVinoRuntime.resolve(str(DNN_DIR / "model_onnx_l10u128.yaml")),
                         threads=2)
    rt.load(4)
    applied = rt.info()["applied"]
    assert applied["INFERENCE_NUM_THREADS"] == "2"
    assert applied["PERFORMANCE_HINT"] == "LATENCY"
    assert applied["INFERENCE_PRECISION_HINT"] == "f32"


_NO_TELEMETRY = """
import json, os, sys, threading
from mlprof.measure.harness import measure
from mlprof.measure.settings import MeasureSettings
settings = MeasureSettings(batch_size=2, runtime="openvino", n_calls=20, warmup=2,
                           min_duration=0)
measure(sys.argv[1], settings)
print(json.dumps({"threads": [t.name for t in threading.enumerate()],
                  "telemetry": sys.modules.get("openvino_telemetry", "absent") is None,
                  "home": sorted(os.listdir(os.environ["HOME"]))}))
"""


@needs_ov
def test_openvino_measures_without_sending_telemetry(tmp_path):
    """OpenVINO's telemetry (on unless the user opted out in ~/intel) sends an event from a
    thread of its own at every ``import openvino``: a measurement process imports it without
    (mlprof.runtimes.base.import_openvino), so no thread is left, nothing is written to the
    home directory, and the process can be kept for the next point. A HOME without ~/intel is
    the default of a new user, which OpenVINO treats as consent."""
    home = tmp_path / "home"
    home.mkdir()
    env = {**__import__("os").environ, "HOME": str(home)}
    proc = subprocess.run([sys.executable, "-c", _NO_TELEMETRY,
                           str(DNN_DIR / "model_onnx_l10u128.yaml")], capture_output=True,
                          text=True, timeout=300, cwd=REPO, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen == {"threads": ["MainThread"], "telemetry": True, "home": []}, seen


# -- end to end, as a user runs them --------------------------------------------------------

def _medians(store, family: str) -> dict[str, dict[int, float]]:
    """stats of every MergeRuntimes: {runtime: {batch size: median}}."""
    import pandas as pd

    out = {}
    for stats in (store / "MergeRuntimes").rglob("stats_*.csv"):
        # .../MergeRuntimes/<model>/<runtime>-<version>__<device>/<settings>/<version>/
        runtime = stats.parts[-4].rsplit("__", 1)[0].rsplit("-", 1)[0]
        df = pd.read_csv(stats)
        out[runtime] = dict(zip(df["batch_size"], df["median_ms"], strict=True))
    return out


@pytest.mark.slow
@needs_tf
def test_three_engines_on_one_plot(store):
    r = law_run("PlotMultiRuntimes", "--version", "v1", "--model-files",
                "examples/dnn/model_{tf,tfaot,onnx}_l10u128.yaml", "--batch-sizes", "1,8,15,64",
                "--min-duration", "0.1", "--file-types", "png", store=store, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (png,) = (store / "PlotMultiRuntimes").rglob("*.png")
    assert "tensorflow-tfaot-onnxruntime" in png.name
    medians = _medians(store, "MergeRuntimes")
    assert set(medians) == {"tensorflow", "tfaot", "onnxruntime"}
    for m in medians.values():
        assert set(m) == {1, 8, 15, 64} and all(v > 0 for v in m.values())
    prov = [json.loads(p.read_text()) for p in (store / "MeasureRuntime").rglob("*.json")]
    aot = [p for p in prov if p.get("runtime") == "tfaot"]
    # MLProf's AOT YAML compiles batch size 1 only: CMSSW's default rule repeats it
    assert {p["runtime_settings"]["batch_rule"] for p in aot} >= {"15:" + ",".join(["1"] * 15)}
    assert all(p["runtime_settings"]["compile_ms"] for p in aot)


@pytest.mark.slow
@needs_ov
def test_openvino_against_onnxruntime(store):
    r = law_run("PlotMultiRuntimes", "--version", "v1", "--model-files",
                "examples/cnn/model_onnx_cnn.yaml", "--runtimes", "onnxruntime,openvino",
                "--batch-sizes", "1,64", "--min-duration", "0.1", "--file-types", "png",
                store=store, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (png,) = (store / "PlotMultiRuntimes").rglob("*.png")
    assert "onnxruntime-openvino" in png.name
    assert set(_medians(store, "MergeRuntimes")) == {"onnxruntime", "openvino"}


@pytest.mark.slow
@needs_tf
def test_mlprofs_tf_examples_unchanged_at_1_8_15(store):
    for yaml in ("examples/dnn/model_tf_l10u128.yaml", "examples/dnn/model_tfaot_l10u128.yaml",
                 "examples/cnn/model_tf_cnn.yaml", "examples/cnn/model_tfaot_cnn.yaml"):
        r = law_run("PlotRuntimes", "--version", "v1", "--model-file", yaml, "--batch-sizes",
                    "1,8,15", "--min-duration", "0.05", "--file-types", "png", store=store,
                    timeout=600)
        assert r.returncode == 0, yaml + r.stdout[-3000:] + r.stderr[-3000:]
    assert len(list((store / "PlotRuntimes").rglob("*.png"))) == 4


def test_the_rules_tag_round_trips_through_the_layout():
    from mlprof.results import layout

    key = layout.MeasureKey(100, 1, 10, 0.5, 1, "random", "15:1,2,4,8")
    seg = layout.measure_segment(key)
    assert seg.endswith(f"_input-random_rules-{layout.batch_rules_tag('15:1,2,4,8')}")
    back = layout.parse_measure_segment(seg)
    assert back.input == "random" and layout.measure_segment(back) == seg


def test_a_task_on_a_runtime_that_is_not_installed_names_the_extra(monkeypatch):
    import mlprof.util
    from mlprof.tasks.runtime import MeasureRuntime

    real = mlprof.util.dist_version
    monkeypatch.setattr(mlprof.util, "dist_version",
                        lambda d: None if d in ("openvino", "tensorflow-cpu") else real(d))
    with pytest.raises(MLProfError, match=r"pip install -e '\.\[openvino\]'"):
        MeasureRuntime(version="v-missing", model_file=str(DNN_DIR / "model_onnx_l10u128.yaml"),
                       runtime="openvino")
    with pytest.raises(MLProfError, match=r"pip install -e '\.\[tf\]'"):
        MeasureRuntime(version="v-missing", model_file=str(DNN_DIR / "model_tf_l10u128.yaml"))


@pytest.mark.slow
@needs_ov
def test_another_openvino_version_in_its_own_environment(store):
    r = law_run("MeasureRuntime", "--version", "v1", "--runtime", "openvino",
                "--runtime-version", "2025.3.0", "--batch-sizes", "1", "--min-duration", "0",
                "--n-calls", "20", store=store, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (prov,) = (store / "MeasureRuntime").rglob("runtime_bs_1.json")
    data = json.loads(prov.read_text())
    assert data["runtime_version"] == "2025.3.0" and "openvino-2025.3.0" in str(prov)
