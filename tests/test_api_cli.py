"""The Python API and the mlprof command, on real tasks and a real store."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the API tests need PyTorch")

import mlprof  # noqa: E402
from mlprof.cli import expand_inputs  # noqa: E402
from tests.helpers import REPO, files_in, mlprof_run  # noqa: E402

SCRIPTS = REPO / "tests" / "scripts"


class TinyNet(torch.nn.Module):
    """Defined at module level so that the measurement processes can load it."""

    def __init__(self) -> None:
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.ReLU(),
                                        torch.nn.Linear(12, 3))

    def forward(self, x):
        return self.body(x)


@pytest.mark.slow
def test_benchmark_model_returns_stats_and_samples_and_caches(store):
    torch.manual_seed(0)
    net, inputs = TinyNet(), {"x": torch.rand(1, 6)}
    result = mlprof.benchmark_model(net, inputs, runtime="ort",
                                    batch_sizes=[1, 4], n_calls=15, warmup=1, min_duration=0)
    assert result.runtime == "onnxruntime"
    assert result.stats["batch_size"].tolist() == [1, 4]
    assert (result.stats["count"] == 15).all()
    assert sorted(result.samples) == [1, 4] and len(result.samples[4]) == 15
    assert result.median_ms[4] == pytest.approx(float(sorted(result.samples[4])[7]))
    assert result.provenance["measurements"][1]["model"]["inputs"][0]["shape"] == [4, 6]
    before = {p: p.stat().st_mtime_ns for p in files_in(store)}
    again = mlprof.benchmark_model(net, inputs, runtime="ort",
                                   batch_sizes=[1, 4], n_calls=15, warmup=1, min_duration=0)
    assert {p: p.stat().st_mtime_ns for p in files_in(store)} == before  # nothing re-measured
    assert again.median_ms == result.median_ms
    # another model (other weights) is another script: measured anew, never mixed up
    other = mlprof.benchmark_model(TinyNet(), inputs, runtime="ort", batch_sizes=[1],
                                   n_calls=15, warmup=1, min_duration=0)
    assert other.files["stats"] != result.files["stats"]


@pytest.mark.slow
def test_export_onnx_of_a_module(store):
    record = mlprof.export_onnx(TinyNet(), torch.rand(2, 6), name="tiny")
    assert os.path.exists(record["file"]) and record["file"].endswith("model.onnx")
    assert record["validation"][1]["ok"] is True
    assert record["dynamic_axes"]["x"] == {"0": "batch_size"}


@pytest.mark.slow
def test_benchmark_files_torch_on_a_script(store):
    (res,) = mlprof.benchmark_files(str(SCRIPTS / "linear.py"), runtimes=["torch"],
                                    batch_sizes=[2], n_calls=5, warmup=0, min_duration=0)
    assert res.model.startswith("linear-") and res.runtime == "torch"
    assert len(res.samples[2]) == 5


@pytest.mark.slow
def test_benchmark_generate_prints_plot_generations_table_and_caches(store):
    args = ("benchmark", "--generate", "--runtimes", "torch,onnxruntime", "--prompt-lengths",
            "16", "--batch-sizes", "1", "--new-tokens", "8")
    proc = _mlprof(*args, store=store)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    head = lines.index("tiny_llama")
    assert lines[head + 1].split()[:4] == ["prompt", "batch", "runtime", "TTFT"]
    assert [ln.split()[2] for ln in lines[head + 2:head + 4]] == ["torch", "onnxruntime"]
    assert "tpot_ms: TPOT = (E2E - TTFT) / (N - 1)" in proc.stdout
    (record,) = store.glob("MeasureGeneration/*/*/gen-new8*/cli/generation_p16_bs1.json")
    stamp = record.stat().st_mtime_ns
    # the API: the same tasks, the same store (measured by the command above: nothing again)
    res = mlprof.benchmark_generation(version="cli", runtimes=["torch", "onnxruntime"],
                                      prompt_lengths=[16], batch_sizes=[1], new_tokens=8)
    assert record.stat().st_mtime_ns == stamp and res.model == "tiny_llama"
    assert list(res.table.runtime) == ["torch", "onnxruntime"] and res.text in proc.stdout
    with pytest.raises(mlprof.MLProfError, match="new_tokns: unknown setting; did you mean "
                       "new_tokens"):
        mlprof.benchmark_generation(new_tokns=8)


def test_inputs_from_globs_and_txt_lists(tmp_path):
    lst = tmp_path / "models.txt"
    lst.write_text(f"# a list\n{SCRIPTS / 'linear.py'}\n{SCRIPTS}/two_*.py\n")
    got = expand_inputs([str(lst)])
    assert got == [str(SCRIPTS / "linear.py"), str(SCRIPTS / "two_models.py")]


def _mlprof(*args: str, store: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, MLP_STORE=str(store))
    return mlprof_run(*args, env=env, timeout=900)


@pytest.mark.slow
def test_corpus_command_on_the_selftest_corpus(store):
    proc = _mlprof("corpus", "--corpora", "selftest", store=store)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "[1/" in proc.stdout  # progress across the corpus
    n = len(list((REPO / "models/selftest").glob("*.py")))
    *_, summary, where = proc.stdout.strip().splitlines()
    assert summary.startswith(f"{n} of {n} measured (100.0 %) in "), summary
    assert where.startswith("full results (every statistic, the samples, the provenance): "
                            f"{n + 1} statistics file(s)"), where  # two_models.py: 2 models
    assert re.search(rf"^selftest +{n} +{n} +0$", proc.stdout, re.M), proc.stdout
    # every model in the results table, at batch size 1
    assert re.search(r"^script +model +runtime +bs 1$", proc.stdout, re.M), proc.stdout
    assert len(re.findall(r"^selftest/\w+\.py +\S+ +onnxruntime +\d", proc.stdout, re.M)) == n + 1


@pytest.mark.slow
def test_benchmark_command_with_labels_filter(store):
    proc = _mlprof("benchmark", str(SCRIPTS / "*.py"), "--labels", "task::multi",
                   "--n-calls", "5", "--min-duration", "0", "--runtimes", "ort",
                   store=store)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [ln for ln in proc.stdout.splitlines() if ln.startswith("two_models-")]
    assert len(rows) == 2  # only two_models.py has task::multi, and it has two models


def test_system_info_and_version():
    out = subprocess.run(["mlprof", "system-info"], capture_output=True, text=True, check=True)
    assert '"onnxruntime"' in out.stdout and '"cpu_model"' in out.stdout
    assert subprocess.run(["mlprof", "version"], capture_output=True, text=True,
                          check=True).stdout.strip() == mlprof.__version__
