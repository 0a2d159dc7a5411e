"""CalibrateNoise: this host's noise floor, once per host fingerprint (interleaved A/A pairs).

The floor (``noise.json``, :class:`mlprof.results.records.NoiseRecord`, measured by
:func:`mlprof.measure.calibration.calibrate`) is what two runs of the same configuration differ by
on this machine: a change smaller than twice it (the minimum detectable change) cannot be told from
noise. It belongs to the machine's fingerprint (:func:`mlprof.sysinfo.host_fingerprint`:
CPU, usable CPUs, memory, SMT, kernel, virtualisation, runtime versions), which is in its path
(``CalibrateNoise/<host>/fp-<id>/aa1/noise.json``): a new kernel or runtime version is a new
fingerprint, which has no floor until calibrated again; Nightly requires it for the current one.

Cost, measured on this 2-vCPU VM (``python benchmarks/calibration_cost.py --repeats 2``, load
1.1: a default ``law run Nightly`` of the repository's experiments/ with ``--calibrate-noise
False``, ``law run CalibrateNoise``, the same Nightly calibrating, in turn, each into an empty
store): the calibration (3 classes x 20 pairs) took 1.46-1.54 s, median 1.52 s (its record's
``duration_s``) against a median 20.7 s for the night without it: 7.3 % of a night;
``law run CalibrateNoise`` alone 1.97 s with law's start-up (9.5 %). Figures in docs/noise.md,
"The noise floor".
"""

from __future__ import annotations

import socket

import luigi

from mlprof.errors import MLProfError
from mlprof.results import layout, records
from mlprof.tasks.framework.base import BaseTask, failure_reason
from mlprof.util import write_json_atomic


class CalibrateNoise(BaseTask):
    """Interleaved A/A pairs of the bundled 10x128 DNN on ONNX Runtime per class of
    configuration (a short and a long call at one thread, the long one at the usable CPUs
    too): each class's floor (the 95th percentile of ``|A/A' - 1|``) with its bootstrap
    interval."""

    version = luigi.Parameter(default=layout.NOISE_REVISION, significant=False,
                              description="accepted and ignored: one noise floor per host "
                              "fingerprint, whatever --version")
    pairs = luigi.IntParameter(default=20, significant=False,
                               description="A/A pairs (interleaved rounds) per class: at least "
                               f"20, at most {records.NOISE_MAX_PAIRS}; default: 20")

    exclude_params_req = {"pairs"}
    param_reasons = {
        "version": "the floor belongs to the host's fingerprint (in the path), not to one "
                   "--version of results: every version shares it (the directory is the "
                   "calibration's revision)",
        "pairs": "more pairs measure the same floor more precisely (the record keeps its "
                 "pairs and interval): one floor per fingerprint, whatever --pairs"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from mlprof.measure.calibration import check_pairs

        check_pairs(self.pairs)  # up front: one line, exit 40, nothing measured or written

    @property
    def resources(self) -> dict[str, int]:
        return {"mlprof_measure": 1}  # never beside a measurement of the same run

    @property
    def priority(self) -> int:
        """Before any experiment of a Nightly that requires it (their priorities are the
        experiments', 10 and below here): the night's alerts are judged by the floor."""
        return 100

    def store_parts(self) -> dict[str, str]:
        from mlprof.sysinfo import fingerprint_id

        return {"host": layout.host_segment(socket.gethostname()),
                "fingerprint": layout.fingerprint_segment(fingerprint_id())}

    def version_dir(self) -> str:
        """The calibration's revision, never ``--version``: one floor per fingerprint."""
        return layout.NOISE_REVISION

    def output(self):
        return self.declared_outputs()["noise"]

    def run_summary(self) -> str | None:
        """At the end of ``law run CalibrateNoise``: nothing after a calibration (its message
        said it all); the stored floor when the fingerprint had one already, and that
        ``--pairs`` did not apply when it differs from the record's."""
        from mlprof.measure.noise import describe_class, read_noise

        if getattr(self, "_ran", False):
            return None
        if not self.complete():
            return f"{self.task_family}: not complete: {failure_reason(self)}"
        path = self.output().path
        try:
            record = read_noise(path)
        except MLProfError as e:
            return f"{self.task_family}: {e}"
        lines = [f"noise floor of fingerprint {record.fingerprint_id} (measured "
                 f"{record.header.timestamp}; {path}):"]
        lines += ["  " + describe_class(c) for c in record.classes]
        stored = {c.pairs for c in record.classes}
        if stored != {int(self.pairs)}:
            lines.append(f"--pairs {self.pairs} not applied: this fingerprint's floor is "
                         f"measured ({', '.join(map(str, sorted(stored)))} pairs); delete the "
                         "file to measure it again")
        return "\n".join(lines)

    def run(self):
        from mlprof.measure.calibration import calibrate, calibration_classes
        from mlprof.measure.noise import describe_class, read_noise
        from mlprof.measure.provenance import measurement_header
        from mlprof.sysinfo import fingerprint_id, host_fingerprint
        from mlprof.tasks.framework.workflow import progress_reporter

        fingerprint = host_fingerprint()
        fid = fingerprint_id(fingerprint)
        classes = calibration_classes(fingerprint.get("usable_cpus"))
        self.publish_message(f"calibrating the noise floor of fingerprint {fid}: "
                             f"{len(classes)} classes x {self.pairs} A/A pairs")
        # the child reports every round (about 0.05 s each): a line at most every 3.5 s
        # (progress_logger) and the percentage for luigi's status
        progress = progress_reporter(self, "noise floor")

        self._ran = True  # run_summary: the message below says it all
        body = calibrate(int(self.pairs), classes=classes, progress=progress)
        record = records.stamp({**measurement_header().to_json(), "fingerprint": fingerprint,
                                "fingerprint_id": fid, **body}, "noise")
        path = self.output().path
        records.NoiseRecord.from_json(record, path)  # checked before it is written
        write_json_atomic(path, record)
        typed = read_noise(path)  # and read back as every reader reads it
        self.publish_message("noise floor of fingerprint " + fid + ":\n" + "\n".join(
            "  " + describe_class(c) for c in typed.classes))
