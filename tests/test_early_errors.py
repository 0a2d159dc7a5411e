"""Bad input fails early, once, in one line, with exit code 40 and nothing written (issue 10),
run as a user runs it: `law run` in a subprocess."""

from __future__ import annotations

import pytest

from tests.helpers import DNN, FAST, REPO, files_in, law_run, mlprof_run

SCRIPT = str(REPO / "models" / "selftest" / "linear.py")


def assert_one_line_error(proc, store, *fragments: str) -> str:
    """Exit 40, one `mlprof error:` line containing ``fragments``, no traceback, empty store."""
    out = proc.stdout + proc.stderr
    lines = [ln for ln in out.splitlines() if "mlprof error:" in ln]
    assert proc.returncode == 40, (proc.returncode, out[-2000:])
    assert len(lines) == 1, out[-2000:]
    assert "Traceback" not in out, out[-2000:]
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    assert files_in(store) == [], files_in(store)
    return lines[0]


@pytest.fixture
def bad_shape_yaml(tmp_path):
    text = DNN.read_text()
    assert "shape: [10]" in text or "shape:" in text
    import yaml

    spec = yaml.safe_load(text)
    spec["model"]["file"] = str((DNN.parent / spec["model"]["file"]).resolve())
    good = spec["model"]["inputs"][0]["shape"]
    spec["model"]["inputs"][0]["shape"] = [good[0] * 2 + 3]
    path = tmp_path / "bad_shape.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_a_shape_that_contradicts_the_graph_fails_once_before_scheduling(store, bad_shape_yaml):
    r = law_run("PlotRuntimes", "--version", "t1", "--model-file", str(bad_shape_yaml),
                *FAST, store=store)
    assert_one_line_error(r, store, str(bad_shape_yaml), "contradicts the ONNX graph")


def test_a_runtime_that_cannot_measure_the_model_kind(store):
    r = law_run("PlotRuntimes", "--version", "t1", "--runtime", "torch", store=store)
    assert_one_line_error(r, store, "--runtime", "Python model scripts")


@pytest.mark.parametrize("args, fragments", [
    (["--min-duration", "nan"], ["--min-duration", "finite"]),
    (["--min-duration", "inf"], ["--min-duration", "finite"]),
    (["--y-min", "nan"], ["--y-min", "finite"]),
    (["--y-max", "inf"], ["--y-max", "finite"]),
    (["--y-min", "5", "--y-max", "1"], ["--y-min", "below --y-max"]),
    (["--threads", "9999"], ["--threads", "logical CPUs", "--oversubscribe"]),
    (["--model-file", ""], ["--model-file", "must not be empty"]),
    (["--batch-sizes", ""], ["--batch-sizes", "must not be empty"]),
    (["--batch-sizes", "0,1"], ["--batch-sizes", ">= 1"]),
    (["--precision", "int8"], ["--precision", "did you mean int8-dynamic or int8-static?"]),
    (["--script-args", "--x 1"], ["--script-args", "model scripts"]),
    (["--version", "../escape"], ["--version", "not a path"]),
])
def test_bad_values_fail_in_one_line(store, args, fragments):
    version = [] if "--version" in args else ["--version", "t1"]
    r = law_run("PlotRuntimes", *version, *FAST, *args, store=store)  # args last: they win
    assert_one_line_error(r, store, *fragments)


def test_export_options_do_not_apply_to_a_runtime_that_runs_the_script(store):
    r = law_run("PlotRuntimes", "--version", "t1", "--model-file", SCRIPT, "--runtime", "torch",
                "--opset", "17", store=store)
    assert_one_line_error(r, store, "--opset", "ONNX exports only")


def test_report_with_a_missing_store(store, tmp_path):
    r = law_run("Report", "--version", "r1", "--stores", f"{tmp_path},/missing/store",
                store=store)
    assert_one_line_error(r, store, "/missing/store", "--stores")


def test_dashboard_for_a_version_that_does_not_exist(store):
    store.mkdir(parents=True)
    r = law_run("Dashboard", "--version", "d1", "--current", "nope", store=store)
    assert_one_line_error(r, store, "--current", "nope")


@pytest.mark.slow
def test_a_label_that_is_not_mathtext_is_drawn_literally(store):
    r = law_run("PlotRuntimes", "--version", "t1", "--batch-sizes", "1", "--model-label",
                r"$\badcmd{x}$", "--top-right-label", "cost $5 $", *FAST, store=store)
    assert r.returncode == 0, (r.stdout + r.stderr)[-2000:]
    assert [p for p in files_in(store / "PlotRuntimes") if p.suffix == ".pdf"]


@pytest.mark.parametrize("make, fragment", [
    ("fifo", "is a FIFO, not a regular file"),
    ("dev_zero", "is a device, not a regular file"),
    ("billion_laughs", "YAML aliases"),
    ("list_name", "model.name: must be a string"),
    ("huge", "a model YAML has at most"),
])
def test_hostile_model_files_fail_at_once(store, tmp_path, make, fragment):
    """None of these may hang, read without end or build gigabytes (each ran forever or
    exhausted memory before)."""
    import os

    onnx_file = REPO / "examples" / "dnn" / "model_onnx_l10u128.onnx"
    spec = ("model:\n  inference_engine: onnx\n  file: " + str(onnx_file) +
            "\n  inputs:\n    - name: input_0\n      shape: [64]\n")
    if make == "fifo":
        path = tmp_path / "m.yaml"
        os.mkfifo(path)
    elif make == "dev_zero":
        path = tmp_path / "zero.onnx"
        path.symlink_to("/dev/zero")
    elif make == "billion_laughs":
        path = tmp_path / "m.yaml"
        lol = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
            f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
            f"*{chr(97 + i)}]\n" for i in range(8))
        path.write_text(lol + spec.replace("model:\n", "model:\n  name: *i\n"))
    elif make == "list_name":
        path = tmp_path / "m.yaml"
        path.write_text(spec.replace("model:\n", "model:\n  name: [a, b]\n"))
    else:
        path = tmp_path / "m.yaml"
        path.write_text(spec + "#" * (2 << 20) + "\n")
    r = law_run("PlotRuntimes", "--version", "t1", "--model-file", str(path), store=store,
                timeout=60)
    assert_one_line_error(r, store, fragment)


def test_a_workflow_typo_is_not_measured_locally(store):
    r = law_run("MeasureRuntime", "--version", "t1", "--workflow", "slurmm", store=store)
    assert_one_line_error(r, store, "--workflow", "slurmm", "local, slurm, htcondor")


def test_labels_that_match_nothing_are_an_error(store):
    """README's old example (`--labels task::nlp`) selected nothing and exited 0."""
    import os

    proc = mlprof_run("benchmark", "models/selftest/linear.py", "--labels", "task::nlp",
                      timeout=60, env=dict(os.environ, MLP_STORE=str(store)))
    assert_one_line_error(proc, store, "--labels", "task::nlp", "their labels: task: test")
