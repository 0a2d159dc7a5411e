"""MeasurePeak: the machine's GEMM peak on a runtime, once per host, runtime version and threads.

The efficiency plots (``--y-axis efficiency``) divide a model's achieved GFLOP/s by it (raised
to the best rate a measurement achieved, :func:`mlprof.measure.peak.peak_in_use`); the record
(``peak.json``, see :mod:`mlprof.measure.peak`) is cached in the store and copied into the
provenance of every MergeRuntimes of the same host, runtime version and threads that runs after
it. ``--version`` does not reach its path: the peak belongs to the machine and the installed
runtime, not to one set of results, so every ``--version`` shares one peak (the version
directory is :data:`mlprof.results.layout.PEAK_REVISION`, the benchmark's revision).
"""

from __future__ import annotations

import socket

import luigi

from mlprof.errors import MLProfError
from mlprof.results import layout, records
from mlprof.runtimes import check_device, check_installed, peak_runtimes, runtime_version
from mlprof.tasks.framework.mixins import ThreadsMixin
from mlprof.util import write_json_atomic


class MeasurePeak(ThreadsMixin):
    """The sustained GEMM GFLOP/s of the installed ONNX Runtime with ``--threads`` on this host
    (the one runtime with a microbenchmark so far, hence no ``--runtime``)."""

    runtime = peak_runtimes()[0]
    device = luigi.Parameter(default="cpu", description="device to run on: cpu")
    version = luigi.Parameter(default=layout.PEAK_REVISION, significant=False,
                              description="accepted and ignored: one peak per host, runtime "
                              "version and thread count, whatever --version")

    param_reasons = {"version": "the peak belongs to the host, runtime version and threads "
                                "(all in the path), not to one --version of results: every "
                                "version shares it (the directory is the benchmark's revision)"}

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

    def version_dir(self) -> str:
        """The benchmark's revision, never ``--version``: one peak per host, runtime version and
        threads."""
        return layout.PEAK_REVISION

    def output(self):
        return self.declared_outputs()["peak"]

    def run(self):
        from mlprof.measure.peak import measure_peak_isolated

        record = measure_peak_isolated(self.runtime, self.threads)
        write_json_atomic(self.output().path, records.stamp(record, "peak"))
        from mlprof.measure.contention import causes_of

        tries = len(record.get("attempts", [])) or 1
        causes = ", ".join(causes_of(record)) or "unexplained"  # mlprof.measure.causes
        self.publish_message(
            f"peak: {record['peak_gflops']:.1f} GFLOP/s (spread {100 * record['spread']:.1f} %, "
            f"n={record['n']}, {tries} attempt(s))"
            + (f": every attempt contended ({causes}: docs/noise.md); used, and flagged in the "
               "plots" if record.get("contended") else ""))


def peak_task(task) -> MeasurePeak | None:
    """The MeasurePeak of a measurement task's runtime and threads (on this host); None when the
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


def peak_records(targets) -> list[dict]:
    """Each MeasurePeak output's record (checked)."""
    from mlprof.measure.peak import read_peak

    return [read_peak(t.path) for t in targets]


def efficiency_inputs(peaks: list[MeasurePeak], merges) -> dict:
    """What an efficiency plot needs besides its curves (keywords of
    :func:`mlprof.plotting.efficiency.plot_efficiency`): each curve's measured peak, whether
    it was contended, and the achieved rates of the store's other measurements of the same
    host, runtime version and threads (the floor of the peak beyond the plot's own curves)."""
    from mlprof.measure.peak import store_rates
    from mlprof.results.records import PeakRecord

    typed = [PeakRecord.from_json(r, p.output().path)  # checked by read_peak
             for r, p in zip(peak_records([p.output() for p in peaks]), peaks, strict=True)]
    on_plot = [m.output()["stats"].path for m in merges]
    others = []
    for rec, peak in zip(typed, peaks, strict=True):
        host = rec.header.host or socket.gethostname()
        version = str(rec.header.runtime_version or runtime_version(peak.runtime))
        others.append(store_rates(layout.store_base(), peak.runtime, version, int(peak.threads),
                                  host, peak.device, exclude=on_plot))
    return {"peaks": [r.peak_gflops for r in typed],
            "contended": [r.contended for r in typed], "other_rates": others}
