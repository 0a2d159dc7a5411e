"""Issue 22, part C: corpora and scripts, SavedModel directories and result files are hostile
until checked (:mod:`mlprof.ingest`).

- ``mlprof corpus`` over a corpus with odd entries (a directory, a FIFO or a link to a device
  named ``*.py``, an undecodable, an oversized or a self-linked script): each is one
  ``unreadable`` row and one line, the good scripts (a latin-1 script among them) are measured,
  a linked corpus directory or script is measured once, nothing hangs;
- a SavedModel whose ``variables/`` is a link is hashed with its weights; a FIFO or a device in
  it is one line;
- a FIFO or a device at a result file is a ``corrupt`` record: the Report goes on with the
  others, MeasureRuntime measures the branch again.

Every test that could hang on a regression has a time bound (``timeout=`` on the subprocess,
a thread join for in-process reads).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from mlprof.errors import CorruptResult, MLProfError
from tests.helpers import DNN, REPO, bounded, law_run, mlprof_run

SELFTEST = REPO / "models" / "selftest"
CNN_SAVED_MODEL = REPO / "examples" / "cnn" / "saved_model_cnn"

#: a valid script whose comment and string are latin-1 (a coding cookie says so)
LATIN1 = ("# labels: name::latin author::test task::test\n# -*- coding: latin-1 -*-\n"
          "import torch\n\nname = 'caf\xe9 cr\xe8me'  # \xe9t\xe9\n"
          "model = torch.nn.Linear(4, 2).eval()\nwith torch.no_grad():\n"
          "    model(torch.rand(1, 4))\n").encode("latin-1")


@pytest.fixture
def hostile_corpus(tmp_path: Path) -> Path:
    """A directory of corpora: ``good`` (two selftest scripts), ``hostile`` (one latin-1 script
    that is good, and one entry per way a script can be unreadable, plus a link to a good
    script), ``alias`` (a link to ``good``) and ``up`` (a link to the parent: a cycle)."""
    models = tmp_path / "models"
    good, bad = models / "good", models / "hostile"
    good.mkdir(parents=True)
    bad.mkdir()
    for name in ("linear.py", "mlp.py"):
        shutil.copy(SELFTEST / name, good / name)
    (bad / "latin1.py").write_bytes(LATIN1)
    (bad / "x.py").mkdir()                                # a directory named like a script
    os.mkfifo(bad / "y.py")                               # a FIFO: hung the reader
    (bad / "z.py").symlink_to("/dev/zero")                # a device: read without end
    (bad / "undecodable.py").write_bytes(b"x = '\xff\xfe'\n")  # no cookie, not UTF-8
    (bad / "big.py").write_bytes(b"#" * (5 << 20))        # above the 4 MiB of a script
    (bad / "loop.py").symlink_to("loop.py")               # a link to itself
    (bad / "dup.py").symlink_to("../good/linear.py")      # the same script again
    (models / "alias").symlink_to("good")                 # the same corpus again
    (models / "up").symlink_to("..")                      # a cycle
    return models


#: each hostile entry and the line (and reason) it now gets
UNREADABLE = {
    "x.py": "is a directory, not a regular file",
    "y.py": "is a FIFO, not a regular file",
    "z.py": "is a device, not a regular file",
    "undecodable.py": "not a text file: cannot be decoded as Python reads source (invalid or "
                      "missing encoding declaration)",
    "big.py": "is 5242880 bytes; a model script has at most 4194304",
    "loop.py": "is a loop of symbolic links",
}


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_corpus_measures_good_scripts_beside_hostile_ones(hostile_corpus: Path,
                                                          tmp_path: Path) -> None:
    env = {**os.environ, "MLP_STORE": str(tmp_path / "store"), "MLP_BASE": str(REPO),
           "MLP_QUICK": "1"}
    proc = mlprof_run("corpus", str(hostile_corpus), "--n-calls", "5", env=env, timeout=600)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr[-3000:]  # not everything was measured
    assert "Traceback" not in out + proc.stderr
    # each hostile entry: one line while the run goes on, and one row of the table
    for name, message in UNREADABLE.items():
        assert f"hostile/{name}: unreadable: {message}\n" in out, out
        assert len(re.findall(rf"^hostile/{re.escape(name)} ", out, re.M)) == 1, out
    # the good ones, the latin-1 script among them, are measured; each script once
    for script in ("good/linear.py", "good/mlp.py", "hostile/latin1.py"):
        assert re.search(rf"^{re.escape(script)} +\S+ +onnxruntime +[\d.]+", out, re.M), out
    assert "alias/" not in out and "dup.py" not in out and "up/" not in out, out
    assert re.search(r"^good +2 +2 +0 +0$", out, re.M), out
    assert re.search(r"^hostile +7 +1 +0 +6$", out, re.M), out
    assert re.search(r"^unreadable +6 +", out, re.M), out
    assert "3 of 9 measured" in out, out


def test_collect_scripts_takes_each_script_once_by_real_path(hostile_corpus: Path) -> None:
    from mlprof.corpus import collect_scripts

    scripts = bounded(lambda: collect_scripts([str(hostile_corpus)]))
    names = sorted(s.name for s in scripts)
    assert names == sorted(["good/linear.py", "good/mlp.py", "hostile/latin1.py",
                            *(f"hostile/{n}" for n in UNREADABLE)]), names
    # the link given as a path: the same script, once, under the name without a link
    again = collect_scripts([str(hostile_corpus / "alias"), str(hostile_corpus / "good")])
    assert sorted(s.name for s in again) == ["good/linear.py", "good/mlp.py"]


@pytest.mark.slow  # 2 s or more here (2026-11-26): out of the 5-minute fast tier
def test_a_latin1_script_is_read_and_discovered(tmp_path: Path) -> None:
    from mlprof.model.script import read_labels, read_skip, script_hash

    script = tmp_path / "latin1.py"
    script.write_bytes(LATIN1)
    assert read_labels(str(script)) == {"name": ["latin"], "author": ["test"], "task": ["test"]}
    assert read_skip(str(script)) is None
    assert len(script_hash(str(script))) == 64
    proc = law_run("DiscoverModels", "--version", "t", "--model-file", str(script),
                   store=tmp_path / "store", timeout=300)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    assert re.search(r"latin1-[0-9a-f]{8} +torch\.nn\.modules\.linear\.Linear",
                     proc.stdout + proc.stderr), proc.stderr[-2000:]


@pytest.mark.parametrize("make, message", [
    (lambda p: os.mkfifo(p), "is a FIFO, not a regular file"),
    (lambda p: p.symlink_to("/dev/zero"), "is a device, not a regular file"),
    (lambda p: p.mkdir(), "is a directory, expected a .yaml, .onnx or .py model file or a "
     "SavedModel directory"),
    (lambda p: p.write_bytes(b"x = '\xff'\n"), "not a text file: cannot be decoded as Python "
     "reads source (invalid or missing encoding declaration)"),
])
def test_law_run_on_an_unreadable_script_is_one_line(tmp_path: Path, make, message) -> None:
    script = tmp_path / "s.py"
    make(script)
    proc = law_run("DiscoverModels", "--version", "t", "--model-file", str(script),
                   store=tmp_path / "store", timeout=120)
    assert proc.returncode == 40, (proc.stdout + proc.stderr)[-3000:]
    assert f"mlprof error: {script}: {message}\n" in proc.stderr, proc.stderr[-2000:]
    assert "Traceback" not in proc.stdout + proc.stderr


# -- SavedModel directories ---------------------------------------------------------------------

def _hash(path: Path) -> str:
    from mlprof.model.spec import read_model_file

    return bounded(lambda: read_model_file(str(path)).content_hash)


def test_saved_model_hash_of_an_ordinary_directory_is_unchanged() -> None:
    # the hash before issue 22 (store compatibility: old results keep their model segment)
    assert _hash(CNN_SAVED_MODEL).startswith("c6cc036c24f8e7a0")


def test_a_linked_variables_directory_is_hashed_with_its_weights(tmp_path: Path) -> None:
    model, weights = tmp_path / "sm", tmp_path / "weights"
    shutil.copytree(CNN_SAVED_MODEL, model)
    shutil.move(model / "variables", weights)
    (model / "variables").symlink_to(weights)
    before = _hash(model)
    assert before == _hash(CNN_SAVED_MODEL)  # a linked variables/ hashes like a copied one
    data = weights / "variables.data-00000-of-00001"
    raw = bytearray(data.read_bytes())
    raw[100] ^= 1  # other weights, same size
    data.write_bytes(bytes(raw))
    assert _hash(model) != before  # old results are not reused for new weights
    (weights / "up").symlink_to("../sm")  # a cycle back into the model
    assert _hash(model) == _hash(model)  # ends


@pytest.mark.parametrize("make, message", [
    (lambda p: os.mkfifo(p), "is a FIFO, not a regular file"),
    (lambda p: p.symlink_to("/dev/zero"), "is a device, not a regular file"),
])
def test_a_fifo_or_device_in_a_saved_model_is_one_line(tmp_path: Path, make, message) -> None:
    model = tmp_path / "sm"
    shutil.copytree(CNN_SAVED_MODEL, model)
    odd = model / "variables" / "extra"
    make(odd)
    with pytest.raises(MLProfError) as err:
        _hash(model)
    assert str(err.value) == f"{odd}: {message}"
    proc = law_run("MeasureRuntime", "--version", "t", "--model-file", str(model), "--runtime",
                   "tf", "--batch-sizes", "1", store=tmp_path / "store", timeout=120)
    assert proc.returncode == 40, (proc.stdout + proc.stderr)[-3000:]
    assert f"mlprof error: {odd}: {message}\n" in proc.stderr, proc.stderr[-2000:]
    assert "Traceback" not in proc.stdout + proc.stderr


# -- result files ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with one real sweep of the small DNN at batch sizes 1, 2 and 4."""
    store = tmp_path_factory.mktemp("measured") / "store"
    proc = law_run("MeasureRuntime", "--version", "t", "--model-file", str(DNN), "--batch-sizes",
                   "1,2,4", "--n-calls", "5", "--warmup", "1", "--min-duration", "0",
                   store=store, env={"MLP_QUICK": "1"}, timeout=300)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    return store


def _hostile_copy(measured: Path, target: Path) -> tuple[Path, Path, Path]:
    """A copy of ``measured`` with a FIFO at batch size 1's provenance and a link to
    /dev/zero at batch size 2's samples; returns the store and the two files."""
    shutil.copytree(measured, target, symlinks=True)
    (json1,) = target.rglob("runtime_bs_1.json")
    csv2 = json1.parent / "runtime_bs_2.csv"
    json1.unlink()
    os.mkfifo(json1)
    csv2.unlink()
    csv2.symlink_to("/dev/zero")
    return target, json1, csv2


def test_report_reads_past_a_fifo_and_a_device_at_result_files(measured: Path,
                                                                tmp_path: Path) -> None:
    import pandas as pd

    other, fifo, dev = _hostile_copy(measured, tmp_path / "other")
    proc = law_run("Report", "--version", "r", "--stores", str(other),
                   store=tmp_path / "store", timeout=120)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    (csv,) = (tmp_path / "store").rglob("report.csv")
    df = pd.read_csv(csv).sort_values("batch_size")
    assert df["status"].tolist() == ["corrupt", "corrupt", "ok"]
    assert df["error"].tolist()[:2] == [f"{fifo}: is a FIFO, not a regular file",
                                        f"{dev}: is a device, not a regular file"]


def test_readers_of_result_files_refuse_a_fifo_in_one_line(measured: Path,
                                                           tmp_path: Path) -> None:
    from mlprof.measure.results import branch_problem, read_failure, read_merged_provenance
    from mlprof.measure.stats import read_stats_csv
    from mlprof.report.collect import collect

    other, fifo, dev = _hostile_copy(measured, tmp_path / "other")
    problem = bounded(lambda: branch_problem(str(fifo.with_suffix(".csv")), str(fifo)))
    assert str(problem) == f"{fifo}: is a FIFO, not a regular file"
    problem = bounded(lambda: branch_problem(str(dev), str(dev.with_suffix(".json"))))
    assert str(problem) == f"{dev}: is a device, not a regular file"
    fail = fifo.parent / "_failure_bs_8.json"
    os.mkfifo(fail)
    with pytest.raises(CorruptResult, match="is a FIFO, not a regular file"):
        bounded(lambda: read_failure(fail))
    stats = tmp_path / "stats_bs_1.csv"
    os.mkfifo(stats)
    with pytest.raises(CorruptResult, match="is a FIFO, not a regular file"):
        bounded(lambda: read_stats_csv(stats))
    merged = tmp_path / "provenance_bs_1.json"
    os.mkfifo(merged)
    with pytest.raises(CorruptResult, match="is a FIFO, not a regular file"):
        bounded(lambda: read_merged_provenance(merged))
    rows = bounded(lambda: collect([other]))
    assert sorted(r["status"] for r in rows) == ["corrupt", "corrupt", "corrupt", "ok"]


def test_measure_runtime_measures_a_fifo_or_device_branch_again(measured: Path,
                                                                tmp_path: Path) -> None:
    store, fifo, dev = _hostile_copy(measured, tmp_path / "store")
    proc = law_run("MeasureRuntime", "--version", "t", "--model-file", str(DNN), "--batch-sizes",
                   "1,2,4", "--n-calls", "5", "--warmup", "1", "--min-duration", "0",
                   store=store, env={"MLP_QUICK": "1"}, timeout=300)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    err = proc.stderr
    assert f"re-measuring {fifo}: is a FIFO, not a regular file" in err, err[-3000:]
    assert f"re-measuring {dev}: is a device, not a regular file" in err, err[-3000:]
    assert fifo.is_file() and not fifo.is_symlink() and dev.is_file() and not dev.is_symlink()
    assert err.count("re-measuring") == 2, err[-3000:]  # batch size 4 was kept
