"""MeasureRuntime as Slurm (and HTCondor) jobs: a real single-node Slurm on this machine.

Opt-in: a plain ``pytest`` never installs packages or starts daemons, so these tests skip unless
``MLP_TEST_SLURM=1`` is set (``.ci/run`` sets it). Then the session fixture runs
``tests/slurm/setup_slurm.sh`` (installs and starts ``slurm-wlm`` and ``munge`` as root) and skips,
with the reason, only when the daemons cannot be installed here (exit code 2: not root, no apt-get,
the packages cannot be had). Any other failure of the setup fails the tests. The sweeps run through
``law run`` exactly as a user would, with ``--MeasureRuntime-workflow slurm``.

HTCondor runs real jobs in tests/test_htcondor.py (opt-in); here its submit file is checked.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import (
    DNN,
    FAST,
    REPO,
    assert_merged_and_plotted,
    branch_provenances,
    files_in,
    jobs_dir,
    law_run,
)

pytestmark = pytest.mark.slurm

SETUP = REPO / "tests" / "slurm" / "setup_slurm.sh"
BATCH_SIZES = (1, 2, 4, 8)
#: poll every second: the jobs take seconds here (the default is 30 s)
SLURM = ["--MeasureRuntime-workflow", "slurm", "--MeasureRuntime-poll-interval", "1s"]


@pytest.fixture(scope="session")
def slurm_cluster() -> str:
    """A running single-node Slurm (started by setup_slurm.sh); its log as the value."""
    if os.environ.get("MLP_TEST_SLURM") != "1":
        pytest.skip("installs and starts Slurm daemons: opt in with MLP_TEST_SLURM=1")
    try:
        proc = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{SETUP} did not finish within 900 s")
    output = (proc.stdout + proc.stderr).strip()
    if proc.returncode == 2:
        reason = output.splitlines()[-1] if output else "setup_slurm.sh exited with code 2"
        pytest.skip(f"no Slurm on this machine: {reason}")
    assert proc.returncode == 0, f"{SETUP} failed (exit {proc.returncode}):\n{output}"
    return output


@pytest.fixture(scope="module")
def sweep(slurm_cluster: str, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A 4-batch-size PlotRuntimes sweep whose measurements ran as Slurm jobs."""
    store = tmp_path_factory.mktemp("slurm") / "store"
    proc = law_run("PlotRuntimes", "--version", "slurm", "--batch-sizes",
                   ",".join(map(str, BATCH_SIZES)), *FAST, *SLURM, store=store, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return {"store": store, "proc": proc}


def _jobs_dir(store: Path) -> Path:
    return jobs_dir(store, "slurm")


@pytest.mark.slow
def test_branches_ran_as_slurm_jobs(sweep: dict) -> None:
    store = sweep["store"]
    provs = branch_provenances(store)
    assert sorted(provs) == list(BATCH_SIZES)
    jobs = [p["batch_job"] for p in provs.values()]
    assert all(j["system"] == "slurm" for j in jobs)
    # one job per batch size: four distinct Slurm job ids, in the partition setup_slurm.sh made
    ids = {int(j["job_id"]) for j in jobs}
    assert len(ids) == len(BATCH_SIZES)
    assert {j["partition"] for j in jobs} == {os.environ.get("MLP_SLURM_PARTITION", "mlprof")}
    # law's submission file and one log per job under $MLP_STORE/jobs/..., each a success
    jobs_dir = _jobs_dir(store)
    submission = json.loads((jobs_dir / "slurm_jobs_0To4.json").read_text())
    assert sorted(submission["jobs"]) == ["1", "2", "3", "4"]
    assert all(j["status"] == "finished" for j in submission["jobs"].values())
    logs = sorted(p.name for p in (jobs_dir / "logs").glob("stdout_*.txt"))
    assert logs == [f"stdout_{i}To{i + 1}.txt" for i in range(len(BATCH_SIZES))]
    for log in (jobs_dir / "logs").glob("stdout_*.txt"):
        text = log.read_text()
        assert "mlprof bootstrap: " in text and "job exit code : 0" in text
    # the workflow was polled, the branches were not run by the submitting process
    out = sweep["proc"].stdout + sweep["proc"].stderr
    assert "finished: 4" in out
    assert "measuring dnn_l10u128" not in out


@pytest.mark.slow
def test_sweep_is_merged_and_plotted(sweep: dict) -> None:
    assert len(BATCH_SIZES) == 4
    assert_merged_and_plotted(sweep["store"], BATCH_SIZES)


@pytest.mark.slow
def test_measurement_jobs_never_overlap(sweep: dict) -> None:
    """Exclusive jobs ([mlprof_slurm] exclusive): one measurement at a time on the node."""
    spans = sorted((p["started_unix"], p["finished_unix"])
                   for p in branch_provenances(sweep["store"]).values())
    for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
        assert start >= end
    job_file = next((_jobs_dir(sweep["store"]) / "files").rglob("slurm_job_*_0To1.sh"))
    assert "#SBATCH --exclusive" in job_file.read_text().splitlines()


@pytest.mark.slow
def test_second_run_submits_nothing(sweep: dict) -> None:
    store = sweep["store"]
    before = (_jobs_dir(store) / "slurm_jobs_0To4.json").read_text()
    proc = law_run("PlotRuntimes", "--version", "slurm", "--batch-sizes",
                   ",".join(map(str, BATCH_SIZES)), *FAST, *SLURM, store=store, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout + proc.stderr
    assert "submitted" not in out and "all: 4" not in out
    assert (_jobs_dir(store) / "slurm_jobs_0To4.json").read_text() == before


@pytest.mark.slow
def test_failed_job_is_retried_and_reported(slurm_cluster: str, store: Path,
                                            tmp_path: Path) -> None:
    from tests.onnx_factory import hardcoded_reshape_model

    path = hardcoded_reshape_model(tmp_path / "fixed.onnx", batch=1)
    proc = law_run("MergeRuntimes", "--version", "bad", "--batch-sizes", "1,2", *FAST, *SLURM,
                   "--model-file", path, store=store, timeout=240)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 30, out[-3000:]
    # batch size 1 was measured in its job; batch size 2 failed twice (one automatic retry)
    provs = branch_provenances(store)
    assert list(provs) == [1] and provs[1]["batch_job"]["system"] == "slurm"
    # law's submission file is set aside, so that the next run submits the failed job anew
    assert not (_jobs_dir(store) / "slurm_jobs_0To2.json").exists()
    submission = json.loads((_jobs_dir(store) / "slurm_jobs_0To2.failed.json").read_text())
    assert submission["jobs"]["2"]["status"] == "failed"
    assert submission["attempts"]["2"] == 1
    assert "retry: 1" in out and "failed: 1" in out
    # the job wrote the failure record to the store and the one-line error to its log
    (record,) = [p for p in files_in(store) if p.name == "_failure_bs_2.json"]
    message = json.loads(record.read_text())["message"]
    assert message.startswith(path) and "fixed batch dimension of 1" in message
    log = _jobs_dir(store) / "logs" / "stderr_1To2.txt"
    assert f"mlprof error: {message}" in log.read_text()
    # the submitting process names the failed job, the reason and the log
    (line,) = [x for x in out.splitlines() if "slurm job 2 (id " in x]
    assert line.startswith("ERROR: mlprof - ") and message in line and line.endswith(str(log))
    # again: batch size 1 is done, batch size 2 is submitted anew (and fails again)
    again = law_run("MergeRuntimes", "--version", "bad", "--batch-sizes", "1,2", *FAST, *SLURM,
                    "--MeasureRuntime-retries", "0", "--model-file", path, store=store,
                    timeout=240)
    assert again.returncode == 30
    out = again.stdout + again.stderr
    assert "going to submit 1 slurm job(s)" in out and "failed: 1" in out


# ---- without a cluster: job files and settings --------------------------------------------


def _job_file(monkeypatch: pytest.MonkeyPatch, workflow: str, job_num: int,
              branches: list[int]) -> tuple:
    """Let law write the job file of a 2-batch-size MeasureRuntime, parsed from a command line
    as ``law run`` does; nothing is submitted. Returns the task and law's job-file record."""
    from law.job.dashboard import NoJobDashboard
    from luigi.cmdline_parser import CmdlineParser

    import mlprof.tasks.runtime  # noqa: F401  (registers MeasureRuntime)

    monkeypatch.setenv("MLP_BASE", str(REPO))
    argv = ["MeasureRuntime", "--version", "v", "--batch-sizes", "1,2", "--model-file", str(DNN),
            "--threads", "2", "--workflow", workflow]
    with CmdlineParser.global_instance(argv) as parser:
        task = parser.get_task_obj()
        proxy = task.workflow_proxy
        proxy.dashboard = NoJobDashboard()
        proxy.job_file_factory = proxy.create_job_file_factory()
        return task, proxy.create_job_file(job_num, branches)


def test_default_workflow_is_local() -> None:
    from mlprof.tasks.runtime import MeasureRuntime

    task = MeasureRuntime(version="v", batch_sizes=(1, 2))
    assert task.effective_workflow == "local"
    assert MeasureRuntime(version="v", workflow="htcondor").effective_workflow == "htcondor"


def test_htcondor_submit_file(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task, job = _job_file(monkeypatch, "htcondor", 1, [0])
    text = Path(job["job"]).read_text()
    lines = {line.split("=", 1)[0].strip(): line.split("=", 1)[1].strip()
             for line in text.splitlines() if "=" in line}
    jobs_dir = Path(task.jobs_directory("htcondor"))
    assert jobs_dir.is_relative_to(store / "jobs" / "MeasureRuntime")
    assert lines["universe"] == "vanilla"
    assert lines["request_cpus"] == "2"  # auto: the measurement's --threads
    assert lines["getenv"] == "false"
    assert lines["initialdir"] == str(jobs_dir)
    # HTCondor brings stdout back into the job directory's logs/
    assert lines["output"] == "stdout_0To1.txt"
    assert f"stdout_0To1.txt = {jobs_dir / 'logs' / 'stdout_0To1.txt'}" in \
        lines["transfer_output_remaps"]
    assert "bootstrap" in lines["transfer_input_files"]
    assert text.rstrip().splitlines()[-1].startswith("queue")
    # the bootstrap: the submitter's store and checkout, then setup.sh
    bootstrap = (jobs_dir / "bootstrap.sh").read_text()
    assert f"export MLP_STORE={store}" in bootstrap and "source ./setup.sh" in bootstrap
    subprocess.run(["bash", "-n", str(jobs_dir / "bootstrap.sh")], check=True)


def test_slurm_job_file_resources(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import law

    cfg = law.config.Config.instance()
    saved = {o: cfg.get("mlprof_slurm", o) for o in ("exclusive", "memory", "extra_options")}
    try:
        cfg.set("mlprof_slurm", "exclusive", "false")
        cfg.set("mlprof_slurm", "memory", "2G")
        cfg.set("mlprof_slurm", "extra_options", "--qos=short --requeue")
        task, job = _job_file(monkeypatch, "slurm", 2, [1])
        lines = Path(job["job"]).read_text().splitlines()
    finally:
        for option, value in saved.items():
            cfg.set("mlprof_slurm", option, value)
    jobs_dir = Path(task.jobs_directory("slurm"))
    for expected in ("#SBATCH --time=01:00:00", "#SBATCH --mem=2G", "#SBATCH --cpus-per-task=2",
                     "#SBATCH --qos=short", "#SBATCH --requeue",
                     f"#SBATCH --output={jobs_dir / 'logs' / 'stdout_1To2.txt'}"):
        assert expected in lines
    assert "#SBATCH --exclusive" not in lines


@pytest.mark.parametrize(("option", "value", "expected"), [
    ("exclusive", "maybe", "[mlprof_slurm] exclusive: expected true or false, got 'maybe'"),
    ("cpus", "-1", "[mlprof_slurm] cpus: expected a positive integer or 'auto', got '-1'"),
    ("extra_options", "qos=short", "[mlprof_slurm] extra_options: expected long sbatch options"),
])
def test_bad_job_settings_name_file_and_field(option: str, value: str, expected: str) -> None:
    import law

    from mlprof.errors import MLProfError
    from mlprof.tasks.framework.remote import config_file, slurm_settings

    cfg = law.config.Config.instance()
    saved = cfg.get("mlprof_slurm", option)
    cfg.set("mlprof_slurm", option, value)
    try:
        with pytest.raises(MLProfError) as err:
            slurm_settings()
    finally:
        cfg.set("mlprof_slurm", option, saved)
    assert str(err.value).startswith(f"{config_file()}: {expected}")
    assert "\n" not in str(err.value)


@pytest.mark.slow
def test_load_points_run_as_slurm_jobs(slurm_cluster: str, store: Path) -> None:
    """MeasureLoad's branches (one load point each) as Slurm jobs, PlotLoad over them."""
    from mlprof.measure.loadgen import read_load

    proc = law_run("PlotLoad", "--version", "slurm", "--scenario", "streams", "--streams", "1,2",
                   "--threads", "1", "--min-duration", "0.2", "--MeasureLoad-workflow", "slurm",
                   "--MeasureLoad-poll-interval", "1s", store=store, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    records = [read_load(str(p)) for p in files_in(store)
               if p.name.startswith("load_") and p.suffix == ".json"]
    assert len(records) == 2
    jobs = [r["batch_job"] for r in records]
    assert all(j and j["system"] == "slurm" for j in jobs), jobs
    assert len({int(j["job_id"]) for j in jobs}) == 2  # one job per load point
    assert sorted(r["points"][0]["streams"] for r in records) == [1, 2]
    assert "events/s with" in proc.stdout
