"""MeasurePeak: the machine's GEMM peak on a runtime, once per host, runtime version and threads.

The efficiency plots (``--y-axis efficiency``) divide a model's achieved GFLOP/s by it; the
record (``peak.json``, see :mod:`mlprof.measure.peak`) is cached in the store and copied into
the provenance of every MergeRuntimes of the same host, runtime, threads and ``--version``
that runs after it.
"""

from __future__ import annotations

import socket

import luigi

from mlprof.errors import MLProfError
from mlprof.results import layout, records
from mlprof.runtimes import check_device, check_installed, peak_runtimes, runtime_version
from mlprof.tasks.parameters import ThreadsMixin
from mlprof.util import write_json_atomic


class MeasurePeak(ThreadsMixin):
    """The sustained GEMM GFLOP/s of the installed ONNX Runtime with ``--threads`` on this host
    (the one runtime with a microbenchmark so far, hence no ``--runtime``)."""

    runtime = peak_runtimes()[0]
    device = luigi.Parameter(default="cpu", description="device to run on: cpu")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)

        check_device(self.runtime, self.device)
        check_installed(self.runtime)

    def runtime_segment(self) -> str:
        """``onnxruntime-<installed version>__<device>``."""

        return layout.runtime_segment([(self.runtime, runtime_version(self.runtime))],
                                      self.device)

    @property
    def resources(self) -> dict[str, int]:
        return {"mlprof_measure": 1}  # never beside a measurement of the same run

    def store_parts(self) -> dict[str, str]:
        return {"host": layout.host_segment(socket.gethostname()),
                "runtime": self.runtime_segment(),
                "settings": layout.peak_settings_segment(self.threads)}

    def output(self):
        return self.declared_outputs()["peak"]

    def run(self):
        from mlprof.measure.peak import measure_peak_isolated

        record = measure_peak_isolated(self.runtime, self.threads)
        write_json_atomic(self.output().path, records.stamp(record, "peak"))
        self.publish_message(f"peak: {record['peak_gflops']:.1f} GFLOP/s "
                             f"(spread {100 * record['spread']:.1f} %, n={record['n']})")


def peak_task(task) -> MeasurePeak | None:
    """The MeasurePeak of a measurement task's runtime, threads and version; None when the
    runtime has no peak microbenchmark or is measured in another environment."""
    from mlprof.runtimes import peak_runtimes

    if task.runtime not in peak_runtimes() or task.uses_venv:
        return None
    return MeasurePeak.req(task)


def recorded_peak(task) -> dict:
    """For a merge's provenance: the peak record when it was measured, else why not."""
    from mlprof.measure.peak import read_peak

    peak = peak_task(task)
    if peak is None:
        return {"peak_gflops": None, "note": f"no peak microbenchmark for {task.runtime}"}
    if not peak.complete():
        return {"peak_gflops": None, "note": "not measured yet (law run MeasurePeak, or a plot "
                                             "with --y-axis efficiency)"}
    return {**read_peak(peak.output().path), "file": peak.output().path}


def peak_requirements(merges) -> list[MeasurePeak]:
    """The MeasurePeak of each curve's MergeRuntimes (an efficiency plot's dependencies)."""
    peaks = []
    for m in merges:
        peak = peak_task(m)
        if peak is None:
            raise MLProfError(f"no peak microbenchmark for {m.runtime}"
                              + (" in another version's environment" if m.uses_venv else ""),
                              field="--y-axis")
        peaks.append(peak)
    return peaks


def peak_values(targets) -> list[float]:
    """``peak_gflops`` of each MeasurePeak output (checked)."""
    from mlprof.measure.peak import read_peak

    return [float(read_peak(t.path)["peak_gflops"]) for t in targets]
