"""MeasureRuntime (a workflow over batch sizes) and MergeRuntimes."""

from __future__ import annotations

import json
import logging
import time

import law

from mlprof.errors import MLProfError
from mlprof.tasks.base import install_error_handling
from mlprof.tasks.parameters import (
    BatchSizesMixin,
    MeasurementMixin,
    ModelMixin,
    RuntimeMixin,
)
from mlprof.tasks.remote import HTCondorWorkflow, SlurmWorkflow, batch_job_info
from mlprof.util import atomic_path, write_json_atomic, write_text_atomic

install_error_handling()
logger = logging.getLogger("mlprof")


class MeasureRuntime(ModelMixin, RuntimeMixin, MeasurementMixin, BatchSizesMixin,
                     law.LocalWorkflow, SlurmWorkflow, HTCondorWorkflow):
    """Measure the inference latency of one model, one branch per batch size.

    Each branch writes ``runtime_bs_<N>.csv`` (raw samples: batch_size, event, call,
    runtime_ms) and ``runtime_bs_<N>.json`` (provenance). ``--branch K`` runs one batch size.
    """

    # the workflow requires its branches statically: law's dynamic branch yielding starts a
    # multiprocessing manager process (~0.3 s per run); priorities keep the batch-size order
    local_workflow_require_branches = True

    def create_branch_map(self) -> dict[int, int]:
        return dict(enumerate(self.batch_sizes))

    @property
    def priority(self) -> int:
        """Branches run in batch-size order (luigi runs higher priorities first)."""
        return max(1, 10_000 - self.branch) if self.is_branch() else 0

    def _model_reqs(self) -> dict:
        """Script models: the ONNX export for onnxruntime, the discovery for torch."""
        if not self.is_script:
            return {}
        from mlprof.tasks.discover import DiscoverModels
        from mlprof.tasks.export import ExportOnnx

        if self.runtime == "onnxruntime":
            return {"export": ExportOnnx.req(self)}
        return {"discover": DiscoverModels.req(self)}

    def workflow_requires(self):
        reqs = super().workflow_requires()
        reqs.update(self._model_reqs())
        # something is to be measured: start the measurement server now, so that its imports
        # overlap with scheduling instead of delaying the first branch
        from mlprof.measure.isolate import prestart

        if self.effective_workflow == "local":  # remote branches measure on the workers
            prestart(torch=self.is_script or self.runtime != "onnxruntime")
        return reqs

    def requires(self):
        return self._model_reqs()

    def measured_file(self) -> str:
        """What the harness measures: the YAML/ONNX file, the export, or script::HASH."""
        if not self.is_script:
            return self.model_spec.spec_file
        reqs = self.requires()
        if "export" in reqs:
            return reqs["export"].output()["onnx"].path
        (model,) = reqs["discover"].selected(single=True)
        return f"{self.model_spec.file}::{model['hash']}"

    def failure_path(self) -> str:
        """One failure record per batch size (the branches share a directory)."""
        if self.is_branch():
            return self.local_path(f"_failure_bs_{self.branch_data}.json")
        return super().failure_path()

    @property
    def resources(self) -> dict[str, int]:
        # never two measurements at once, whatever --workers says
        return {"mlprof_measure": 1} if self.is_branch() else {}

    def output(self):
        bs = self.branch_data
        return {"csv": self.local_target(f"runtime_bs_{bs}.csv"),
                "json": self.local_target(f"runtime_bs_{bs}.json")}

    def run(self):
        import numpy as np

        from mlprof.measure import measure_isolated

        bs = self.branch_data
        outputs = self.output()
        label = f"{self.resolved_model_name} on {self.runtime} at batch size {bs}"
        self.publish_message(f"measuring {label}")

        last = [0.0]

        def progress(fraction: float, message: str) -> None:
            self.publish_progress(int(100 * fraction))
            if time.monotonic() - last[0] >= 5.0:
                last[0] = time.monotonic()
                logger.info("%s: %s", label, message)

        measured = self.measured_file()
        if self.uses_venv:  # another version of the runtime, in its own environment
            from mlprof.measure.venvs import ensure_venv, measure_in_venv

            python = ensure_venv(self.runtime, self.runtime_version,
                                 log=lambda m: logger.info("%s: %s", label, m))
            result = measure_in_venv(python, measured, self.measure_settings(bs),
                                     script_args=self.script_argv)
            if result.provenance.get("runtime_version") != self.runtime_version:
                raise MLProfError(f"measured with {self.runtime} "
                                  f"{result.provenance.get('runtime_version')}, not "
                                  f"{self.runtime_version}", python, "--runtime-version")
            result.provenance["venv"] = python
        else:
            result = measure_isolated(measured, self.measure_settings(bs),
                                      script_args=self.script_argv, progress=progress)
        prov = result.provenance
        for note in prov["model"].get("notes", []):
            logger.warning("%s: %s", label, note)
        prov["batch_job"] = batch_job_info()  # the Slurm/HTCondor job, None when local
        prov["task"] = {"family": self.task_family, "version": self.version,
                        "model_name": self.resolved_model_name,
                        "model_label": self.resolved_model_label,
                        "model_file": self.model_file, "measured_file": measured,
                        "output": outputs["csv"].path,
                        # enough to measure this again (a confirming re-measurement)
                        "params": self.to_str_params(only_significant=True)}
        if self.is_script:
            prov["script"] = {"file": self.model_spec.file, "script_args": self.script_argv,
                              "max_depth": self.max_depth}
            if self.runtime == "onnxruntime":
                with open(self.requires()["export"].output()["json"].path) as f:
                    prov["export"] = json.load(f)
        write_text_atomic(outputs["csv"].path, result.csv_text())
        # the JSON last: a branch counts as complete only when both exist
        write_json_atomic(outputs["json"].path, prov)
        logger.info("%s: median %.4f ms over %d calls", label,
                    float(np.median(result.samples_ms)), result.samples_ns.size)


class MergeRuntimes(ModelMixin, RuntimeMixin, MeasurementMixin, BatchSizesMixin):
    """Merge the branches of :class:`MeasureRuntime` and compute statistics per batch size.

    Outputs: ``runtimes_<bs>.csv`` (all raw samples), ``stats_<bs>.csv`` (count, mean, std, CV,
    min, p16, median, p84, p90, p95, p99, max, throughput, unstable) and ``provenance_<bs>.json``.
    """

    def requires(self):
        return MeasureRuntime.req(self)

    def output(self):
        tag = self.bs_tag
        return {"raw": self.local_target(f"runtimes_{tag}.csv"),
                "stats": self.local_target(f"stats_{tag}.csv"),
                "provenance": self.local_target(f"provenance_{tag}.json")}

    def run(self):
        from mlprof.measure.stats import CV_UNSTABLE, read_runtimes, summarize, write_stats_csv

        coll = self.input()["collection"]
        branches = [coll.targets[b] for b in sorted(coll.targets)]
        provs, rows = [], []
        for inp in branches:
            with open(inp["json"].path) as f:
                prov = json.load(f)
            provs.append(prov)
            rows.append(summarize(read_runtimes(inp["csv"].path),
                                  prov["settings"]["batch_size"]))
        unstable = [r for r in rows if r["unstable"]]
        if unstable:
            logger.warning(
                "%s: unstable measurement (CV > %.0f%%) at batch size(s) %s (CV %s); the median "
                "and percentiles are robust, mean and std are not: consider a larger "
                "--min-duration or a quieter machine", self.resolved_model_name,
                100 * CV_UNSTABLE, ", ".join(str(r["batch_size"]) for r in unstable),
                ", ".join(f"{100 * r['cv']:.0f}%" for r in unstable))
        outputs = self.output()
        # the merged raw CSV: the branches' rows under one header
        with atomic_path(outputs["raw"].path) as tmp, open(tmp, "w") as out:
            for i, inp in enumerate(branches):
                with open(inp["csv"].path) as f:
                    header = f.readline()
                    if i == 0:
                        out.write(header)
                    out.write(f.read())
        with atomic_path(outputs["stats"].path) as tmp:
            write_stats_csv(tmp, rows)
        write_json_atomic(outputs["provenance"].path, {
            "model_name": self.resolved_model_name, "model_label": self.resolved_model_label,
            "runtime": self.runtime, "device": self.device,
            "batch_sizes": list(self.batch_sizes), "measurements": provs,
        })

