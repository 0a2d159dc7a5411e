"""MeasureRuntime (a workflow over batch sizes) and MergeRuntimes."""

from __future__ import annotations

import json
import logging
import time

import law

from mlprof.tasks.base import install_error_handling
from mlprof.tasks.parameters import (
    BatchSizesMixin,
    MeasurementMixin,
    ModelMixin,
    RuntimeMixin,
)
from mlprof.util import atomic_path, write_json_atomic, write_text_atomic

install_error_handling()
logger = logging.getLogger("mlprof")


class MeasureRuntime(ModelMixin, RuntimeMixin, MeasurementMixin, BatchSizesMixin,
                     law.LocalWorkflow):
    """Measure the inference latency of one model, one branch per batch size.

    Each branch writes ``runtime_bs_<N>.csv`` (raw samples: batch_size, event, call,
    runtime_ms) and ``runtime_bs_<N>.json`` (provenance). ``--branch K`` runs one batch size.
    """

    def create_branch_map(self) -> dict[int, int]:
        return dict(enumerate(self.batch_sizes))

    @property
    def resources(self) -> dict[str, int]:
        # never two measurements at once, whatever --workers says
        return {"mlprof_measure": 1} if self.is_branch() else {}

    def output(self):
        bs = self.branch_data
        return {"csv": self.local_target(f"runtime_bs_{bs}.csv"),
                "json": self.local_target(f"runtime_bs_{bs}.json")}

    def run(self):
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

        result = measure_isolated(self.model_spec.spec_file, self.measure_settings(bs),
                                  progress=progress)
        prov = result.provenance
        prov["task"] = {"family": self.task_family, "version": self.version,
                        "model_name": self.resolved_model_name,
                        "model_label": self.resolved_model_label,
                        "output": outputs["csv"].path}
        write_text_atomic(outputs["csv"].path, result.csv_text())
        # the JSON last: a branch counts as complete only when both exist
        write_json_atomic(outputs["json"].path, prov)
        logger.info("%s: median %.4f ms over %d calls", label,
                    float(_median(result.samples_ns)) / 1e6, result.samples_ns.size)


def _median(values) -> float:
    import numpy as np

    return float(np.median(values))


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
        import pandas as pd

        from mlprof.measure.stats import CV_UNSTABLE, compute_stats

        coll = self.input()["collection"]
        frames, provs = [], []
        for _, inp in sorted(coll.targets.items()):
            frames.append(pd.read_csv(inp["csv"].path))
            with open(inp["json"].path) as f:
                provs.append(json.load(f))
        raw = pd.concat(frames, ignore_index=True)
        stats = compute_stats(raw)
        unstable = stats[stats["unstable"]]
        if len(unstable):
            logger.warning(
                "%s: unstable measurement (CV > %.0f%%) at batch size(s) %s (CV %s); the median "
                "and percentiles are robust, mean and std are not: consider a larger "
                "--min-duration or a quieter machine", self.resolved_model_name,
                100 * CV_UNSTABLE, ", ".join(map(str, unstable["batch_size"])),
                ", ".join(f"{100 * cv:.0f}%" for cv in unstable["cv"]))
        outputs = self.output()
        with atomic_path(outputs["raw"].path) as tmp:
            raw.to_csv(tmp, index=False, float_format="%.6f")
        with atomic_path(outputs["stats"].path) as tmp:
            stats.to_csv(tmp, index=False, float_format="%.6g")
        write_json_atomic(outputs["provenance"].path, {
            "model_name": self.resolved_model_name, "model_label": self.resolved_model_label,
            "runtime": self.runtime, "device": self.device,
            "batch_sizes": list(self.batch_sizes), "measurements": provs,
        })

