"""MeasureRuntime as HTCondor jobs: a real single-node HTCondor pool on this machine.

The module fixture runs ``tests/htcondor/setup_htcondor.sh`` (as root: installs HTCondor, starts
a personal pool on 127.0.0.1 and creates the submitting user) and skips, with the reason, only
when HTCondor cannot be installed here (exit code 2). Any other failure of the setup fails the
tests. The sweep runs through ``law run`` as a user would, with
``--MeasureRuntime-workflow htcondor``.

HTCondor never runs a job as root (the schedd refuses the owner ``root``), so ``law run`` runs
as the ordinary user that the setup script made (``MLP_HTCONDOR_USER``, default ``mlprof``), with
a store that this user owns: a directory of its own in /tmp, since pytest's temporary
directories are private to root.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import FAST, REPO, assert_merged_and_plotted, branch_provenances, jobs_dir

pytestmark = pytest.mark.htcondor

SETUP = REPO / "tests" / "htcondor" / "setup_htcondor.sh"
JOB_USER = os.environ.get("MLP_HTCONDOR_USER", "mlprof")
BATCH_SIZES = (1, 2)
#: poll every two seconds: the jobs take seconds here (the default is 30 s)
HTCONDOR = ["--MeasureRuntime-workflow", "htcondor", "--MeasureRuntime-poll-interval", "2s"]
SWEEP = ["PlotRuntimes", "--version", "v", "--batch-sizes", ",".join(map(str, BATCH_SIZES)),
         *FAST, *HTCONDOR]


#: opt-in: Debian 12 has no HTCondor package, and the setup's fallback (Debian 13's packages
#: unpacked under /opt with patchelf, a system user, an ACL on /root) is too invasive and too
#: fragile to run by default in CI
OPT_IN = "MLP_TEST_HTCONDOR"


@pytest.fixture(scope="module")
def htcondor_pool() -> str:
    """A running personal HTCondor pool (started by setup_htcondor.sh); its log as the value."""
    if os.environ.get(OPT_IN) != "1":
        pytest.skip(f"set {OPT_IN}=1 to install and start a personal HTCondor pool "
                    "(tests/htcondor/setup_htcondor.sh, as root) and run these")
    try:
        proc = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{SETUP} did not finish within 900 s")
    output = (proc.stdout + proc.stderr).strip()
    if proc.returncode == 2:
        reason = output.splitlines()[-1] if output else "setup_htcondor.sh exited with code 2"
        pytest.skip(f"no HTCondor on this machine: {reason}")
    assert proc.returncode == 0, f"{SETUP} failed (exit {proc.returncode}):\n{output}"
    return output


def law_run_as_user(*args: str, store: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """``law run ARGS`` as JOB_USER, otherwise like ``tests.helpers.law_run`` (same environment
    defaults, $MLP_STORE set, output captured as text)."""
    user = pwd.getpwnam(JOB_USER)
    env = dict(os.environ)
    env.setdefault("MLP_BASE", str(REPO))
    env.setdefault("LAW_HOME", str(REPO / ".law"))
    env.setdefault("LAW_CONFIG_FILE", str(REPO / "law.cfg"))
    env["MLP_STORE"] = str(store)
    env.update(HOME=user.pw_dir, USER=user.pw_name, LOGNAME=user.pw_name)
    # the fallback install of setup_htcondor.sh links condor_submit & co. there
    if "/usr/local/bin" not in env.get("PATH", "").split(os.pathsep):
        env["PATH"] = env.get("PATH", "") + os.pathsep + "/usr/local/bin"
    return subprocess.run(["law", "run", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout, user=user.pw_uid, group=user.pw_gid,
                          extra_groups=[])


@pytest.fixture(scope="module")
def user_store(htcondor_pool: str) -> Iterator[Path]:
    """An empty store owned by JOB_USER (removed afterwards)."""
    user = pwd.getpwnam(JOB_USER)
    base = Path(tempfile.mkdtemp(prefix="mlprof-htcondor-", dir="/tmp"))
    os.chown(base, user.pw_uid, user.pw_gid)
    try:
        yield base / "store"
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def sweep(user_store: Path) -> dict:
    """A 2-batch-size PlotRuntimes sweep whose measurements ran as HTCondor jobs."""
    proc = law_run_as_user(*SWEEP, store=user_store, timeout=240)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return {"store": user_store, "proc": proc}


def _jobs_dir(store: Path) -> Path:
    return jobs_dir(store, "htcondor")


@pytest.mark.slow
def test_branches_ran_as_htcondor_jobs(sweep: dict) -> None:
    store = sweep["store"]
    provs = branch_provenances(store)
    assert sorted(provs) == list(BATCH_SIZES)
    jobs = [p["batch_job"] for p in provs.values()]
    assert all(j["system"] == "htcondor" for j in jobs)
    # one job per batch size: distinct <cluster>.<proc> ids, recorded from the job itself
    ids = {j["job_id"] for j in jobs}
    assert len(ids) == len(BATCH_SIZES)
    for job in jobs:
        cluster, proc = job["job_id"].split(".")
        assert int(cluster) > 0 and int(proc) >= 0
        assert f"#{job['job_id']}#" in job["global_job_id"]
        assert "@" in job["node"] and job["request_cpus"] == "1"
    # law's submission file, one stdout per job and HTCondor's job logs in logs/
    jobs_dir = _jobs_dir(store)
    submission = json.loads((jobs_dir / "htcondor_jobs_0To2.json").read_text())
    assert sorted(submission["jobs"]) == ["1", "2"]
    assert all(j["status"] == "finished" for j in submission["jobs"].values())
    logs = jobs_dir / "logs"
    assert sorted(p.name for p in logs.glob("stdout_*.txt")) == ["stdout_0To1.txt",
                                                                 "stdout_1To2.txt"]
    for log in logs.glob("stdout_*.txt"):
        text = log.read_text()
        assert "mlprof bootstrap: " in text and "job exit code : 0" in text
    for log in logs.glob("log_*.txt"):
        assert "Job terminated" in log.read_text()
    assert len(list(logs.glob("log_*.txt"))) == len(BATCH_SIZES)
    # nothing of the jobs' scratch directories was copied back beside the submission file
    assert sorted(p.name for p in jobs_dir.iterdir()) == [
        "bootstrap.sh", "files", "htcondor_jobs_0To2.json", "logs"]
    # the workflow was polled, the branches were not run by the submitting process
    out = sweep["proc"].stdout + sweep["proc"].stderr
    assert "submitted 2 htcondor job(s)" in out and "finished: 2" in out
    assert "measuring dnn_l10u128" not in out


@pytest.mark.slow
def test_sweep_is_merged_and_plotted(sweep: dict) -> None:
    assert len(BATCH_SIZES) == 2
    assert_merged_and_plotted(sweep["store"], BATCH_SIZES)


@pytest.mark.slow
def test_second_run_submits_nothing(sweep: dict) -> None:
    store = sweep["store"]
    before = (_jobs_dir(store) / "htcondor_jobs_0To2.json").read_text()
    proc = law_run_as_user(*SWEEP, store=store, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout + proc.stderr
    assert "submitted" not in out and "all: 2" not in out
    assert (_jobs_dir(store) / "htcondor_jobs_0To2.json").read_text() == before


def test_bootstrap_stops_where_the_store_is_not_visible(tmp_path: Path) -> None:
    """A job whose node does not see the store (no shared filesystem, or a store in /tmp that
    HTCondor's MOUNT_UNDER_SCRATCH hides) fails at once instead of writing elsewhere."""
    from mlprof.tasks.framework.remote import bootstrap_text

    missing = tmp_path / "not-here" / "store"
    script = tmp_path / "bootstrap.sh"
    script.write_text(bootstrap_text("htcondor", env={"MLP_BASE": str(REPO),
                                                      "MLP_STORE": str(missing)}))
    proc = subprocess.run(["bash", "-c", f"source {script} && echo sourced"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "sourced" not in proc.stdout
    assert f"mlprof bootstrap: the store {missing} is not visible on " in proc.stderr
