"""Remote workflows: run the branches of a workflow as Slurm or HTCondor jobs.

A workflow task that lists :class:`SlurmWorkflow` and :class:`HTCondorWorkflow` after
``law.LocalWorkflow`` among its bases accepts ``--workflow slurm`` and ``--workflow htcondor``
(``--workflow local`` stays the default). Each job sources a bootstrap script that changes to
the checkout and sources ``setup.sh``, then runs its branches with ``law run``; outputs go to the
shared store (``$MLP_STORE`` must be on a filesystem that the worker nodes see).

Everything a workflow submits lives in one directory of the store::

    $MLP_STORE/jobs/<Task>/<model>/<runtime>/<settings>/<version>/<bs tag>/<slurm|htcondor>/
        slurm_jobs_0To4.json     law's submission file (job ids, states, attempts)
        stdout_0To1.txt ...      job logs (one per job and branch range)
        files/job_*/             job scripts, law_job.sh and bootstrap.sh as submitted

Job resources come from ``law.cfg``, sections ``[mlprof_slurm]`` and ``[mlprof_htcondor]``
(see :func:`slurm_settings` and :func:`htcondor_settings`).
"""

from __future__ import annotations

import logging
import os
import re
import shlex
from typing import Any, ClassVar

import law
import luigi

from mlprof.errors import MLProfError
from mlprof.results import layout
from mlprof.results.layout import store_base
from mlprof.tasks.framework.base import BaseTask
from mlprof.util import write_text_atomic

law.contrib.load("slurm", "htcondor")

logger = logging.getLogger("mlprof")

#: law.cfg sections of the job resources
SLURM_SECTION = "mlprof_slurm"
HTCONDOR_SECTION = "mlprof_htcondor"

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def config_file() -> str:
    """The law.cfg in use (for error messages)."""
    return os.environ.get("LAW_CONFIG_FILE") or "law.cfg"


def _option(section: str, name: str, default: str = "") -> str:
    """An option of law.cfg as a stripped string, with variables expanded."""
    value = law.config.get_expanded(section, name, default=default)
    return "" if value is None else str(value).strip()


def _bool_option(section: str, name: str, default: bool) -> bool:
    value = _option(section, name, "true" if default else "false").lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise MLProfError(f"expected true or false, got {value!r}", file=config_file(),
                      field=f"[{section}] {name}")


def _int_option(section: str, name: str, threads: int) -> int | None:
    """A positive integer option; ``auto`` (or empty) means ``max(1, threads)``."""
    value = _option(section, name, "auto").lower()
    if value in ("", "auto"):
        return max(1, int(threads))
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise MLProfError(f"expected a positive integer or 'auto', got {value!r}",
                          file=config_file(), field=f"[{section}] {name}")
    return number


def _sbatch_options(section: str, name: str) -> list[tuple[str, ...]]:
    """Extra sbatch options (``--key=value`` or ``--flag``) as law job-file lines."""
    value = _option(section, name)
    try:
        tokens = shlex.split(value)
    except ValueError as e:
        raise MLProfError(f"cannot split {value!r}: {e}", file=config_file(),
                          field=f"[{section}] {name}") from None
    lines: list[tuple[str, ...]] = []
    for token in tokens:
        if not token.startswith("--") or len(token) < 3:
            raise MLProfError(f"expected long sbatch options like --qos=short, got {token!r}",
                              file=config_file(), field=f"[{section}] {name}")
        key, sep, val = token[2:].partition("=")
        lines.append((key, val) if sep else (key,))
    return lines


def _submit_lines(section: str, name: str) -> list[tuple[str, str]]:
    """Extra HTCondor submit-file lines (``key = value``, separated by newlines or ``;``)."""
    lines: list[tuple[str, str]] = []
    for raw in _option(section, name).replace(";", "\n").splitlines():
        raw = raw.strip()
        if not raw:
            continue
        key, sep, val = raw.partition("=")
        if not sep or not key.strip():
            raise MLProfError(f"expected 'key = value', got {raw!r}", file=config_file(),
                              field=f"[{section}] {name}")
        lines.append((key.strip(), val.strip()))
    return lines


def slurm_settings(threads: int = 1) -> dict[str, Any]:
    """Slurm job resources from law.cfg ``[mlprof_slurm]``.

    ``partition``, ``account``, ``qos``: passed on when set; ``time``: wall time (``HH:MM:SS``);
    ``memory``: ``--mem`` (e.g. ``4G``); ``exclusive`` (default true): the job gets a whole
    node, so that no other job runs beside a measurement; ``cpus``: ``--cpus-per-task`` when not
    exclusive (``auto``: the measurement's ``--threads``); ``extra_options``: further sbatch
    options, e.g. ``--constraint=avx512 --nice=10``.
    """
    s = SLURM_SECTION
    return {
        "partition": _option(s, "partition"),
        "account": _option(s, "account"),
        "qos": _option(s, "qos"),
        "time": _option(s, "time", "01:00:00"),
        "memory": _option(s, "memory"),
        "exclusive": _bool_option(s, "exclusive", True),
        "cpus": _int_option(s, "cpus", threads),
        "extra_options": _sbatch_options(s, "extra_options"),
    }


def htcondor_settings(threads: int = 1) -> dict[str, Any]:
    """HTCondor job resources from law.cfg ``[mlprof_htcondor]``.

    ``universe`` (default ``vanilla``); ``request_cpus`` (``auto``: the measurement's
    ``--threads``, at least 1); ``request_memory`` (e.g. ``2GB``); ``max_runtime``: seconds,
    written as ``+MaxRuntime`` (CERN's wall-time attribute) when set; ``requirements``: a
    ClassAd expression; ``extra_lines``: further submit-file lines ``key = value``, separated
    by ``;`` or newlines.
    """
    s = HTCONDOR_SECTION
    max_runtime = _option(s, "max_runtime")
    if max_runtime and not max_runtime.isdigit():
        raise MLProfError(f"expected seconds, got {max_runtime!r}", file=config_file(),
                          field=f"[{s}] max_runtime")
    return {
        "universe": _option(s, "universe", "vanilla") or "vanilla",
        "request_cpus": _int_option(s, "request_cpus", threads),
        "request_memory": _option(s, "request_memory"),
        "max_runtime": max_runtime,
        "requirements": _option(s, "requirements"),
        "extra_lines": _submit_lines(s, "extra_lines"),
    }


def batch_job_info() -> dict[str, Any] | None:
    """Which batch job this process runs in (Slurm or HTCondor), None outside of one.

    Slurm: job id, name, partition, cluster, node and its CPUs from the ``SLURM_*`` variables.
    HTCondor: ``job_id`` as ``<cluster>.<proc>`` (from law's ``LAW_HTCONDOR_JOB_CLUSTER`` and
    ``LAW_HTCONDOR_JOB_PROCESS``, else from the job ad in ``$_CONDOR_JOB_AD``), and from the job
    ad the schedd's ``global_job_id``, the ``node`` (``slot@host``) and ``request_cpus``.
    """
    env = os.environ
    if env.get("SLURM_JOB_ID"):
        return {"system": "slurm", "job_id": env["SLURM_JOB_ID"],
                "job_name": env.get("SLURM_JOB_NAME"),
                "partition": env.get("SLURM_JOB_PARTITION"),
                "cluster": env.get("SLURM_CLUSTER_NAME"),
                "node": env.get("SLURMD_NODENAME"),
                "cpus_on_node": env.get("SLURM_CPUS_ON_NODE")}
    ad_file = env.get("_CONDOR_JOB_AD")
    if ad_file or env.get("_CONDOR_SCRATCH_DIR") or env.get("LAW_HTCONDOR_JOB_CLUSTER"):
        info: dict[str, Any] = {"system": "htcondor", "job_id": None}
        if env.get("LAW_HTCONDOR_JOB_CLUSTER"):  # set by law's submit file
            info["job_id"] = (f"{env['LAW_HTCONDOR_JOB_CLUSTER']}."
                              f"{env.get('LAW_HTCONDOR_JOB_PROCESS', '0')}")
        ad: dict[str, str] = {}
        if ad_file:
            try:
                with open(ad_file) as f:
                    for line in f:
                        key, sep, val = line.partition("=")
                        if sep:
                            ad[key.strip()] = val.strip().strip('"')
            except OSError:
                pass
        if "ClusterId" in ad and not info["job_id"]:
            info["job_id"] = f"{ad['ClusterId']}.{ad.get('ProcId', '0')}"
        # the schedd's unique id (schedd#cluster.proc#submission time), the slot and its cpus
        info["global_job_id"] = ad.get("GlobalJobId")
        info["node"] = ad.get("RemoteHost") or env.get("_CONDOR_SLOT")
        info["request_cpus"] = ad.get("RequestCpus")
        return info
    return None


#: the bootstrap script sourced by law's job script on the worker; {exports}, {base}, {system}
#: are filled in at submission time
BOOTSTRAP = """#!/usr/bin/env bash
# mlprof job bootstrap, written at submission by mlprof.tasks.framework.remote and sourced by law's
# job script (law_job.sh) on the worker before the branches run: the submitting shell's mlprof
# settings, then the checkout's setup.sh (venv, law index).

{exports}
# a law home of the job's own: setup.sh writes law's task index there, and parallel jobs on a
# shared filesystem must not write the same file
export LAW_HOME="${{LAW_JOB_HOME:-${{TMPDIR:-/tmp}}}}/.law"
export MLP_JOB_SYSTEM={system}

# the submitter's store, where this bootstrap was written: if it is not here, the results would
# land on this node only (no shared filesystem, or a store in /tmp that HTCondor's
# MOUNT_UNDER_SCRATCH replaces by a private one)
if [ -n "${{MLP_STORE:-}}" ] && [ ! -d "${{MLP_STORE}}/jobs" ]; then
    echo "mlprof bootstrap: the store ${{MLP_STORE}} is not visible on $(hostname) (it must be on" \
        "a filesystem that the worker nodes share, and not in /tmp or /var/tmp on HTCondor)" >&2
    return 1
fi

_mlp_job_dir="$(pwd)"
cd {base} || {{ echo "mlprof bootstrap: cannot cd to the checkout "{base} >&2; return 1; }}
source ./setup.sh "" || {{ cd "${{_mlp_job_dir}}"; return 1; }}
cd "${{_mlp_job_dir}}" || return 1
echo "mlprof bootstrap: $(command -v law) in ${{MLP_BASE}}, store ${{MLP_STORE}}"
"""


#: a shell variable name (POSIX): the only names the bootstrap exports
_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def bootstrap_text(system: str, env: dict[str, str] | None = None) -> str:
    """The bootstrap script: export the submitter's ``MLP_*`` and ``LAW_CONFIG_FILE``, cd to
    the checkout, ``source setup.sh``."""
    if env is None:
        env = dict(os.environ)
        if env.get("MLP_BASE"):
            # the store as this process resolves it: absolute, whatever form it was given in
            env["MLP_STORE"] = store_base()
    env = dict(env)
    if not env.get("MLP_BASE"):
        raise MLProfError("MLP_BASE is not set: source setup.sh before submitting jobs",
                          field="MLP_BASE")
    names = sorted(n for n in env if n.startswith("MLP_") and not n.startswith("MLP_SLURM_"))
    if env.get("LAW_CONFIG_FILE"):
        names.append("LAW_CONFIG_FILE")
    # a name is written as it is (a shell cannot quote a name): one that is not a shell
    # identifier (``MLP_$(cmd)``, which `env` can set) would run its command in every job
    unsafe = [n for n in names if not _SHELL_NAME.fullmatch(n)]
    for n in unsafe:
        from mlprof.ingest import printable

        logger.warning("mlprof: the environment variable %r is not passed to the jobs (not a "
                       "shell variable name)", printable(n))
    exports = "\n".join(f"export {n}={shlex.quote(env[n])}" for n in names if n not in unsafe)
    return BOOTSTRAP.format(exports=exports, base=shlex.quote(env["MLP_BASE"]),
                            system=shlex.quote(system))


def _law_job_hooks(cls: type, system: str) -> dict[str, Any]:
    """law's hooks of a ``system`` workflow class ``cls`` (without the ``<system>_`` prefix):
    the job directory and its logs on the shared store, the bootstrap script, job files beside
    the submission file, and the failed jobs reported when the jobs end."""

    def output_directory(self: RemoteJobsMixin) -> law.LocalDirectoryTarget:
        return law.LocalDirectoryTarget(self.jobs_directory(system))

    def log_directory(self: RemoteJobsMixin) -> law.LocalDirectoryTarget:
        return law.LocalDirectoryTarget(os.path.join(self.jobs_directory(system), "logs"))

    def bootstrap_file(self: RemoteJobsMixin) -> law.JobInputFile:
        return self.write_bootstrap(system)

    def create_job_file_factory(self: RemoteJobsMixin, **kwargs: Any) -> Any:
        kwargs.setdefault("dir", self.job_file_directory(system))
        kwargs.setdefault("mkdtemp", True)
        return getattr(super(cls, self), f"{system}_create_job_file_factory")(**kwargs)

    def post_poll_callback(self: RemoteJobsMixin, success: bool, duration: float) -> None:
        if not success:
            self.on_jobs_failed(system)

    return {"output_directory": output_directory, "log_directory": log_directory,
            "bootstrap_file": bootstrap_file, "create_job_file_factory": create_job_file_factory,
            "post_poll_callback": post_poll_callback}


class RemoteJobsMixin(BaseTask):
    """What Slurm and HTCondor workflows share: job directory, bootstrap, defaults."""

    exclude_index = True

    # measurement jobs take seconds to minutes: poll every 30 s, retry a failed job once
    poll_interval = law.DurationParameter(default=0.5, unit="m", significant=False,
                                          description="time between job status polls; default "
                                          "unit is minutes; default: 0.5")
    retries = luigi.IntParameter(default=1, significant=False, description="automatic "
                                 "resubmissions of a failed job; default: 1")

    param_reasons = {
        name: "how jobs are submitted and watched; the jobs measure the same into the same "
              "files" for name in (
                  "poll_interval", "retries", "tasks_per_job", "parallel_jobs", "no_poll",
                  "submission_threads", "poll_fails", "walltime", "job_workers",
                  "shuffle_jobs", "cancel_jobs", "cleanup_jobs", "ignore_submission",
                  "transfer_logs", "clear_logs", "slurm_partition", "htcondor_pool",
                  "htcondor_scheduler", "acceptance", "tolerance", "pilot")}

    #: the batch system a subclass submits to (``slurm``, ``htcondor``): law's hooks of that
    #: name that are the same for both are installed by :meth:`__init_subclass__`
    batch_system: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Give a class that names its ``batch_system`` law's ``<system>_output_directory``,
        ``_log_directory``, ``_bootstrap_file``, ``_create_job_file_factory`` and
        ``_post_poll_callback``: law names them after the system, and they are the same for
        Slurm and HTCondor but for that name (they were written out twice, 25 lines each)."""
        super().__init_subclass__(**kwargs)
        system = cls.__dict__.get("batch_system")
        if system:
            for hook, method in _law_job_hooks(cls, system).items():
                setattr(cls, f"{system}_{hook}", method)

    def watch_phase(self) -> str:
        """While the workflow waits for its jobs between law's polls (30 s by default), the
        run's watcher says so (:meth:`BaseTask.watch_phase`)."""
        workflow = getattr(self, "effective_workflow", "local")
        if workflow == "local" or not self.is_workflow():
            return super().watch_phase()
        return (f"{self.task_family}: waiting for its {workflow} jobs (law polls every "
                f"{float(self.poll_interval) * 60:g} s)")

    def jobs_tag(self) -> str:
        """What tells this workflow's job directory apart from other workflows writing into the
        same result directory (MeasureRuntime: its batch sizes)."""
        return ""

    def jobs_directory(self, system: str) -> str:
        """``$MLP_STORE/jobs/<the task's output path>/<jobs tag>/<system>``."""
        return layout.job_dir(self.local_path(), self.jobs_tag(), system)

    def write_bootstrap(self, system: str) -> law.JobInputFile:
        """Write the bootstrap script into the job directory (once per task instance)."""
        path = os.path.join(self.jobs_directory(system), "bootstrap.sh")
        cache = self.__dict__.setdefault("_mlp_bootstrap", {})
        if path not in cache:
            write_text_atomic(path, bootstrap_text(system))
            cache[path] = law.JobInputFile(path, share=True, render=False)
        return cache[path]

    def job_file_directory(self, system: str) -> str:
        """Where law writes the job scripts: beside the submission file, on the shared store."""
        path = os.path.join(self.jobs_directory(system), "files")
        os.makedirs(path, exist_ok=True)
        return path

    def on_jobs_failed(self, system: str) -> list[str]:
        """After the jobs failed for good: report them and set the submission file aside.

        Logs one line per failed job: its branches, the reason from the branch's failure record
        (written by the job into the store) and the job's log file. law would resume a
        submission file on the next run and fail again at once (its retries are used up), so it
        is renamed to ``*.failed.json``: running the command again submits the missing branches
        anew. Returns the logged lines.
        """
        lines = self.report_failed_jobs(system)
        jobs_file = self.workflow_proxy.get_cached_output()["jobs"].path
        if os.path.exists(jobs_file):
            os.replace(jobs_file, jobs_file[:-len(".json")] + ".failed.json")
        return lines

    def report_failed_jobs(self, system: str) -> list[str]:
        """Log one line per failed job (branches, reason, log file); returns the lines."""
        lines = []
        logs = os.path.join(self.jobs_directory(system), "logs")
        for num, data in sorted(self.workflow_proxy.job_data.jobs.items()):
            if data.get("status") != "failed":
                continue
            branches = list(data.get("branches") or [])
            reasons = []
            for b in branches:
                branch = self.as_branch(b)
                record = branch.failure() if hasattr(branch, "failure") else None
                what = f"branch {b}"
                if hasattr(self, "batch_sizes"):
                    what += f" (batch size {branch.branch_data})"
                reasons.append(f"{what}: {record['message']}" if record else
                               f"{what}: no failure record (killed, or failed before running)")
            log = os.path.join(logs, f"stderr_{branches[0]}To{branches[-1] + 1}.txt"
                               if branches else "")
            lines.append(f"{system} job {num} (id {data.get('job_id')}) failed: "
                         f"{'; '.join(reasons)}; log: {log}")
        for line in lines:
            logger.error(line)
        return lines

    def measurement_threads(self) -> int:
        """The ``--threads`` of the measurement (1 for tasks without it)."""
        return int(getattr(self, "threads", 1) or 0)


class SlurmWorkflow(RemoteJobsMixin, law.slurm.SlurmWorkflow):
    """``--workflow slurm``: one Slurm job per branch (``--tasks-per-job`` to group)."""

    exclude_index = True
    batch_system = "slurm"

    def slurm_job_config(self, config, job_num, branches):
        s = slurm_settings(self.measurement_threads())
        # one log per job (logs/stdout_<branches>.txt), whether or not --transfer-logs is given
        config.stdout = config.stdout or "stdout.txt"
        config.stderr = config.stderr or "stderr.txt"
        if not config.partition and s["partition"]:
            config.partition = s["partition"]
        lines = config.custom_content
        for key in ("account", "qos", "time"):
            if s[key]:
                lines.append((key, s[key]))
        if s["memory"]:
            lines.append(("mem", s["memory"]))
        if s["exclusive"] or self.measurement_threads() == 0:
            # a whole node: nothing else runs beside the measurement (--threads 0 uses every core)
            lines.append(("exclusive",))
        else:
            lines.append(("cpus-per-task", str(s["cpus"])))
        lines.extend(s["extra_options"])
        return config


class HTCondorWorkflow(RemoteJobsMixin, law.htcondor.HTCondorWorkflow):
    """``--workflow htcondor``: one HTCondor job per branch (``--tasks-per-job`` to group)."""

    exclude_index = True
    batch_system = "htcondor"

    def htcondor_job_config(self, config, job_num, branches):
        s = htcondor_settings(self.measurement_threads())
        # HTCondor's job log and one stdout/stderr per job, in logs/ (law puts stdout and stderr
        # there by itself; the job log is written by the schedd, wherever the submit file says)
        logs = os.path.join(self.jobs_directory("htcondor"), "logs")
        config.log = config.log or os.path.join(logs, "log.txt")
        config.stdout = config.stdout or "stdout.txt"
        config.stderr = config.stderr or "stderr.txt"
        config.universe = s["universe"]
        lines = config.custom_content
        # the bootstrap exports what the job needs; do not depend on the submitter's environment
        lines.append(("getenv", "false"))
        if not config.output_files and not config.custom_log_file:
            # the results go to the shared store, stdout and stderr come back by themselves:
            # nothing else of the job's scratch directory (law's rendered scripts, ...) is copied
            # into the job directory
            lines.append(("transfer_output_files", '""'))
        lines.append(("request_cpus", str(s["request_cpus"])))
        if s["request_memory"]:
            lines.append(("request_memory", s["request_memory"]))
        if s["max_runtime"]:
            lines.append(("+MaxRuntime", s["max_runtime"]))
        if s["requirements"]:
            lines.append(("requirements", s["requirements"]))
        lines.extend(s["extra_lines"])
        return config
