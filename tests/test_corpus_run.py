"""Whole corpora in one command: ``mlprof corpus PATH...`` runs TurnkeyML-style corpora through
the real tasks in parallel, resumes, and sums up the failures by cause (also in the Report and
at the end of ``law run PlotMultiRuntimes``)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("torch", reason="the corpus tests need PyTorch")

from mlprof.report.causes import cause_summary, failure_cause, format_summary  # noqa: E402
from tests.helpers import REPO, law_run, mlprof_run  # noqa: E402

GOOD = '''# labels: name::{name} author::test task::test
"""A linear layer, in TurnkeyML's template."""
import torch
from turnkeyml.parser import parse

torch.manual_seed(0)
batch_size, = parse(["batch_size"])
model = torch.nn.Linear({n}, 4).eval()
with torch.no_grad():
    model(torch.rand(batch_size, {n}))
'''

BAD = {
    "net": "import urllib.request\nurllib.request.urlopen('http://example.com/w.pt', timeout=60)\n",
    "pkg": "import torch_geometric  # noqa: F401\n",
    "crash": "import os\nos.abort()\n",
    "err": "raise ValueError('bad config')\n",
    "noexport": ("import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
                 "        return torch.linalg.eig(x)[0].real\n\n\nwith torch.no_grad():\n"
                 "    M()(torch.rand(1, 4, 4))\n"),
}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A directory of two corpora: ``good`` (2 scripts, 1 skipped) and ``bad`` (one script
    per cause), plus a generator script next to them that is not a model."""
    models = tmp_path / "models"
    (models / "good").mkdir(parents=True)
    (models / "bad").mkdir()
    for name, n in (("lin8", 8), ("lin16", 16)):
        (models / "good" / f"{name}.py").write_text(GOOD.format(name=name, n=n))
    (models / "good" / "skipped.py").write_text(
        "# labels: name::skipped author::test task::test\n# mlprof-skip: needs a GPU\n")
    for name, body in BAD.items():
        (models / "bad" / f"{name}.py").write_text(
            f"# labels: name::{name} author::test task::test\n{body}")
    (models / "generate.py").write_text("raise SystemExit('not a model')\n")
    return models


def _corpus(*args: str, store: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "MLP_STORE": str(store), "MLP_BASE": str(REPO)}
    return mlprof_run("corpus", *args, "--n-calls", "5", env=env, timeout=timeout)


def _mtimes(store: Path, pattern: str) -> dict[str, int]:
    return {str(p): p.stat().st_mtime_ns for p in store.glob(pattern)}


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_a_corpus_directory_runs_in_parallel_and_sums_up_failures_by_cause(corpus, store):
    proc = _corpus(str(corpus), "--workers", "2", store=store)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr[-3000:]  # crash, error, export: failures
    # per corpus: scripts, measured, skipped, then one column per cause that occurred
    assert re.search(r"^corpus +scripts +measured +skipped +needs-network +needs-package +"
                     r"export-failed +crashed +error$", out, re.M), out
    assert re.search(r"^bad +5 +0 +0 +1 +1 +1 +1 +1$", out, re.M), out
    assert re.search(r"^good +3 +2 +1 +0 +0 +0 +0 +0$", out, re.M), out
    assert re.search(r"^total +8 +2 +1 +1 +1 +1 +1 +1$", out, re.M), out
    # the failures by cause name what to act on: host, package, operator, signal, error type
    for cause, detail in (("needs-network", "example.com:80 (1)"),
                          ("needs-package", "torch_geometric (1)"),
                          ("export-failed", "aten::linalg_eig (1)"),
                          ("crashed", "SIGABRT (1)"), ("error", "ValueError (1)")):
        assert re.search(rf"^{cause} +1 +{re.escape(detail)}$", out, re.M), out
    assert re.search(r"^2 of 8 measured \(25.0 %\) in \d+ s", out, re.M), out
    # the results: a row per model and runtime, a column per batch size, and where the rest is
    table = out.split("\nresults: median latency per call (ms) at each batch size\n")[1]
    assert re.match(r"script +model +runtime +bs 1 *\n", table), table
    assert len(re.findall(r"^good/lin\d+\.py +lin\d+\S* +onnxruntime +\d", table, re.M)) == 2
    last = out.strip().splitlines()[-1]
    assert last.startswith("full results (every statistic, the samples, the provenance): 2 "
                           f"statistics file(s), one per model and runtime, under {store}"), last
    assert last.endswith("law run Report --version corpus (report.csv)"), last
    assert "generate" not in out  # a script beside the corpora is not one of their models

    # resumable: the second run redoes no finished step, and retries the failures
    done = _mtimes(store, "DiscoverModels/**/manifest.json") | _mtimes(
        store, "MergeRuntimes/**/stats_bs_1.csv")
    failed = _mtimes(store, "DiscoverModels/**/_failure.json")
    assert len(done) == 3 + 2 and len(failed) == 4, (done, failed)  # 3 discovered, 2 merged
    again = _corpus(str(corpus), "--workers", "2", store=store)
    assert again.returncode == 1
    assert _mtimes(store, "DiscoverModels/**/manifest.json") | _mtimes(
        store, "MergeRuntimes/**/stats_bs_1.csv") == done
    assert all(t > failed[p] for p, t in _mtimes(store, "DiscoverModels/**/_failure.json")
               .items()), "failures are retried"
    def timeless(text: str) -> str:
        return re.sub(r"measured \(([\d.]+) %\) in \d+ s", r"measured (\1 %)", text)

    assert timeless(again.stdout.split("\n\ncorpus ")[1]) == timeless(
        out.split("\n\ncorpus ")[1])

    # the Report groups the same failures by cause, per corpus
    proc = law_run("Report", "--version", "r1", store=store)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (summary,) = store.glob("Report/**/summary.txt")
    text = summary.read_text()
    assert re.search(r"^bad +5 +0 +0 +1 +1 +1 +1 +1$", text, re.M), text
    assert "torch_geometric (1)" in text and "aten::linalg_eig (1)" in text
    (csv,) = store.glob("Report/**/report.csv")
    df = pd.read_csv(csv)
    bad = df[df["corpus"] == "bad"].set_index("model")
    assert bad.loc["pkg", "cause"] == "needs-package"
    assert bad.loc["pkg", "cause_detail"] == "torch_geometric"
    assert set(df.loc[df["status"] == "ok", "corpus"]) == {"good"}


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_labels_select_scripts_and_runtimes_take_the_corpus_alias(corpus, store):
    proc = _corpus(str(corpus / "good"), "--labels", "name::lin16", "--runtime", "ort",
                   store=store)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "good/lin16.py onnxruntime: ok" in proc.stdout
    assert "lin8" not in proc.stdout
    assert re.search(r"^1 of 1 measured \(100.0 %\)", proc.stdout, re.M), proc.stdout


@pytest.mark.parametrize("make, message", [
    (lambda d: d / "missing", "cannot read: No such file or directory"),
    (lambda d: d / "empty", "holds no model script"),
    (lambda d: d / "notes.txt", "is not a model script (.py) or a directory"),
    (lambda d: d / "fifo.py", "is not a regular file or directory"),
    (lambda d: d / "nothing*.py", "no file or directory matches"),
])
def test_bad_paths_fail_at_once_in_one_line_and_write_nothing(tmp_path, store, make, message):
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.txt").write_text("not a script")
    os.mkfifo(tmp_path / "fifo.py")
    proc = _corpus(str(make(tmp_path)), store=store, timeout=60)
    assert proc.returncode == 40, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and message in proc.stderr, proc.stderr
    assert proc.stderr.startswith(f"mlprof error: {make(tmp_path)}: PATH: ")
    assert not store.exists()


def test_labels_that_match_nothing_fail_at_once(corpus, store):
    proc = _corpus(str(corpus), "--labels", "author::nobody", store=store, timeout=60)
    assert proc.returncode == 40
    assert proc.stderr == ("mlprof error: --labels: no script of 8 has the labels "
                           "author::nobody\n")
    assert not store.exists()


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_law_run_over_a_corpus_ends_with_the_failures_by_cause(corpus, store):
    files = f"{corpus}/good/lin8.py,{corpus}/bad/pkg.py,{corpus}/bad/err.py"
    proc = law_run("PlotMultiRuntimes", "--version", "c1", "--model-files", files,
                   "--n-calls", "5", "--workers", "2", store=store)
    assert proc.returncode != 0
    out = proc.stdout
    assert re.search(r"^corpus +scripts +measured +skipped +needs-package +error$",
                     out, re.M), out
    assert re.search(r"^bad +2 +0 +0 +1 +1$", out, re.M), out
    assert "torch_geometric (1)" in out and "ValueError (1)" in out
    # lin8 calls one model, known before scheduling (the tasks name a script's one model as
    # script.py::HASH does): it is measured whatever the other scripts' discoveries do
    assert re.search(r"^good +1 +1 +0 +0 +0$", out, re.M), out
    assert " not run: " not in out


@pytest.mark.parametrize("status, message, stage, cause, detail", [
    ("needs-network", "x.py: needs-network: the script tried to reach example.com:80 (mlprof "
     "runs scripts without network; URLError)", "discovery", "needs-network", "example.com:80"),
    ("needs-network", "x.py: needs-network: the script loads the hub repository "
     "google-bert/bert-base-uncased (mlprof runs ...)", "discovery", "needs-network",
     "google-bert/bert-base-uncased"),
    ("needs-package", "x.py: needs-package: torch_geometric (the script imports "
     "torch_geometric.nn, which is not installed)", "discovery", "needs-package",
     "torch_geometric"),
    ("failed", "x.py::ab12: cannot be exported to ONNX (opset 18): SymbolicValueError: "
     "Unsupported: ONNX export of operator Unfold, input size not accessible.", "export",
     "export-failed", "Unfold"),
    ("failed", "x.py::ab12: cannot be exported to ONNX (opset 18): UnsupportedOperatorError: "
     "Exporting the operator 'aten::linalg_eig' to ONNX opset version 18 is not supported",
     "export", "export-failed", "aten::linalg_eig"),
    ("failed", "x.py::ab12: the ONNX export is numerically wrong on the script's inputs: max "
     "abs error 3 ...", "export", "export-failed", "numerically wrong"),
    ("failed", "x.py::ab12: onnxruntime cannot load the graph the dynamo exporter made: "
     "InvalidArgument: [ONNXRuntimeError] : 2 : INVALID_ARGUMENT", "export", "export-failed",
     "onnxruntime cannot load the graph"),
    ("oom", "m at batch size 64: exceeded the memory limit of 2000 MB", "measure", "oom", ""),
    ("timeout", "m at batch size 64: killed after 600 s", "measure", "timeout", ""),
    ("failed", "discovery of x.py: the measurement process crashed with SIGSEGV", "discovery",
     "crashed", "SIGSEGV"),
    ("failed", "m: the measurement process exited with code 3 without a result", "measure",
     "crashed", "exit code 3"),
    ("failed", "x.py: the script raised KeyError: 'weight'", "discovery", "error", "KeyError"),
    ("corrupt", "stats.csv: has 3 rows, its provenance says 5", "measure", "corrupt", ""),
])
def test_failure_causes_from_real_messages(status, message, stage, cause, detail):
    got = failure_cause(status, message, stage)
    assert (got.cause, got.detail) == (cause, detail)


def test_cause_summary_counts_per_corpus_and_orders_details():
    rows = [{"corpus": "timm", "status": "ok"}, {"corpus": "timm", "status": "skipped"},
            *({"corpus": "tk", "status": "needs-package", "cause": "needs-package",
               "detail": d} for d in ("dgl", "torch_geometric", "torch_geometric")),
            {"corpus": "tk", "status": "failed", "cause": "export-failed", "detail": "Unfold"}]
    per_corpus, by_cause = cause_summary(rows)
    assert per_corpus == [
        {"corpus": "timm", "scripts": 2, "measured": 1, "skipped": 1, "needs-package": 0,
         "export-failed": 0},
        {"corpus": "tk", "scripts": 4, "measured": 0, "skipped": 0, "needs-package": 3,
         "export-failed": 1},
        {"corpus": "total", "scripts": 6, "measured": 1, "skipped": 1, "needs-package": 3,
         "export-failed": 1}]
    assert by_cause[0] == {"cause": "needs-package", "count": 3,
                           "details": "torch_geometric (2), dgl (1)"}
    assert "failures by cause" in format_summary(rows)
    assert "failures by cause" not in format_summary(rows[:2])
