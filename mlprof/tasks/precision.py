"""ComparePrecisions: one model on one runtime at several precisions, interleaved: the speed-up
of each over fp32 with its confidence interval, the error it costs, and, where it gains less
than 1.2x, the operators that account for it."""

from __future__ import annotations

import logging

import law
import luigi

from mlprof import ingest
from mlprof.errors import MLProfError
from mlprof.report.precision import COLUMNS
from mlprof.results import layout
from mlprof.runtimes import DEFAULT_CALIBRATION_BATCHES
from mlprof.runtimes.precisions import BY_NAME as PRECISION_TABLE
from mlprof.tasks.compare import CompareInterleaved
from mlprof.tasks.framework.base import Requirements, failure_reason
from mlprof.tasks.framework.comparing import RoundsParameter
from mlprof.tasks.framework.mixins import (
    BatchSizesMixin,
    ExportMixin,
    MeasurementMixin,
    ModelMixin,
    PrecisionsMixin,
    RuntimeMixin,
    ScriptMixin,
    refuse_given,
)
from mlprof.tasks.profile import ProfileRuntime
from mlprof.util import write_text_atomic

logger = logging.getLogger("mlprof")



class ComparePrecisions(ModelMixin, ScriptMixin, ExportMixin, RuntimeMixin, PrecisionsMixin,
                        MeasurementMixin, BatchSizesMixin):
    """Is a lower precision faster for this model, at which batch sizes, and what does it cost?

    The precisions (``--precisions``, fp32 first) of one model on one runtime are measured in
    ``--interleave`` alternating rounds per batch size (CompareInterleaved): each one's
    speed-up over fp32 with a 95 % bootstrap interval, and its error against fp32 on the same
    inputs. Where a precision gains less than :data:`~mlprof.report.precision.SLOW_GAIN`
    (1.2x) and the runtime has a per-operator profiler, both are profiled at that batch size
    (ProfileRuntime) and the operator types that account for the difference are named
    (:func:`mlprof.report.precision.why_not_faster`).

    Writes ``precisions_<bs>.csv`` (batch size x precision: median, speed-up, interval,
    verdict, errors, why, and the rounds' ``disturbed_rounds``, ``causes`` and ``floor``) and
    the same as a text table, which ends the run.
    """

    interleave = RoundsParameter(default=20, description="alternating rounds per batch size "
                                 "(at least 5); default: 20")
    time_budget = ProfileRuntime.time_budget
    runtime_version = luigi.Parameter(default="", significant=False, description="the "
                                      "installed version only (the precisions share one "
                                      "process; another version is refused)")

    param_reasons = {"runtime_version": "only the installed version is compared (its version "
                                        "is in the path); another one is refused"}

    reqs = Requirements(CompareInterleaved=CompareInterleaved, ProfileRuntime=ProfileRuntime)

    # a round makes exactly --n-calls calls per event of each precision (no --min-duration),
    # and AOT TensorFlow models have one precision
    min_duration = 0.0  # type: ignore[assignment]
    tfaot_batch_rules = ""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from mlprof.measure.interleave import check_rounds
        from mlprof.model.precision import check_runtime_precision

        check_rounds(self.interleave)
        if self.precisions[0] != "fp32" or len(self.precisions) < 2:
            raise MLProfError("give fp32 first and at least one other precision (fp32 is the "
                              "reference), e.g. fp32,int8-dynamic", field="--precisions")
        for precision in self.precisions:
            check_runtime_precision(self.runtime, precision)
        refuse_given(self, ("runtime_version",), "the precisions share one process: the "
                     "installed version only")
        if not self.is_script:
            refuse_given(self, self.SCRIPT_PARAMS + self.EXPORT_PARAMS,
                         "applies to model scripts (.py) only", self.model_spec.spec_file)
        if self.time_budget < 0:
            raise MLProfError(f"must be >= 0 seconds, got {self.time_budget}",
                              field="--time-budget")

    def compared(self) -> CompareInterleaved:
        """The interleaved comparison of the precisions."""
        names = {"model_names": (self.model_name,)} if self.model_name != law.NO_STR else {}
        return self.reqs.CompareInterleaved.req(
            self, model_files=(self.model_file,), runtimes=(self.runtime,), compare="",
            **names)

    def requires(self):
        return self.compared()

    def profile(self, precision: str, batch_size: int) -> ProfileRuntime:
        """The profile of one precision at one batch size."""
        cal = self.calibration_batches if PRECISION_TABLE[precision].calibrated else \
            DEFAULT_CALIBRATION_BATCHES
        return self.reqs.ProfileRuntime.req(self, precision=precision, calibration_batches=cal,
                                            batch_sizes=(batch_size,), min_duration=0.5)

    @property
    def measures_export(self) -> bool:
        """Whether the fp32 model measured is a script's ONNX export."""
        from mlprof.model.plan import measurement_plan

        return measurement_plan(self.is_script, self.runtime).measures_export

    def store_parts(self) -> dict[str, str]:
        export = self.export_key() if self.measures_export else None
        return {"model": self.model_segment_of(self.resolved_model_name, self.model_spec),
                "runtime": self.runtime_segment(),
                "settings": "__".join((layout.measure_settings_segment(self.measure_key(),
                                                                       export),
                                       self.precisions_part()))}

    def output(self):
        return self.declared_outputs(bs_tag=self.bs_tag, rounds=self.interleave,
                                     budget=self.time_budget)

    def run_summary(self) -> str:
        if not self.complete():
            return f"{self.task_family}: not complete: {failure_reason(self)}"
        text = ingest.read_text(self.output()["text"].path, ingest.MAX_RECORD_BYTES,
                                what="a table")
        return text + "outputs:\n" + "\n".join(f"  {t.path}" for t in self.output().values())

    def run(self):
        from mlprof.measure.contention import is_contended
        from mlprof.measure.profile import read_profile
        from mlprof.report.precision import SLOW_GAIN, marked_why, why_not_faster

        rows = self.compared().rows()
        slow = [r for r in rows if r["precision"] != "fp32" and r["speedup"] < SLOW_GAIN]
        why: dict[tuple[int, str], str] = {}
        if slow and self.runtime_info.profiler:
            profiles = {(p, bs): self.profile(p, bs) for r in slow
                        for p, bs in (("fp32", r["batch_size"]),
                                      (r["precision"], r["batch_size"]))}
            yield list(profiles.values())
            for r in slow:
                ops, contended = {}, []
                for p in ("fp32", r["precision"]):
                    coll = profiles[(p, r["batch_size"])].output()["collection"]
                    (target,) = coll.targets.values()
                    ops[p], prov = read_profile(target["csv"].path, target["json"].path)
                    if is_contended(prov):
                        contended.append(p)
                why[(r["batch_size"], r["precision"])] = marked_why(why_not_faster(
                    ops["fp32"], ops[r["precision"]], r["precision"]), contended)
        elif slow:
            for r in slow:
                why[(r["batch_size"], r["precision"])] = (
                    f"{self.runtime} has no per-operator profiler to tell")
        table = [{**{k: r.get(k) for k in COLUMNS if k != "why"},
                  "why": why.get((r["batch_size"], r["precision"]), "")} for r in rows]
        out = self.output()
        write_text_atomic(out["csv"].path, _csv(table))
        # the text table says the same: how many rounds were disturbed, and by what
        write_text_atomic(out["text"].path, format_precisions(table, self.resolved_model_name,
                                                              self.runtime))


def _csv(rows: list[dict]) -> str:
    import csv
    import io

    text = io.StringIO()
    w = csv.DictWriter(text, COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: "" if v is None else f"{v:.6g}" if isinstance(v, float) else v
                    for k, v in r.items()})
    return text.getvalue()


def format_precisions(rows: list[dict], model: str, runtime: str) -> str:
    """The table as text: one line per batch size and precision, the reasons below it; with
    the rounds' causes (``disturbed_rounds``, :func:`mlprof.measure.interleave.disturbed`), how
    many rounds were disturbed, and :data:`~mlprof.measure.trust.NOT_MEASURABLE` instead of a
    speed-up whose interval spans more than 10x on disturbed rounds."""
    from mlprof.measure.interleave import disturbed_text, round_trust
    from mlprof.measure.trust import NOT_MEASURABLE, row_not_measurable

    judged = any(r.get("disturbed_rounds") is not None for r in rows)
    lines = [f"{model} on {runtime}: speed-up over fp32 (interleaved, 95 % CI) and error",
             (f"{'bs':>5}  {'precision':<13} {'median ms':>9}  {'speed-up':>8}  {'95% CI':<17}"
              f"{'max abs err':>11}  {'top-1':>5}" + ("  disturbed rounds" if judged else ""))]
    from mlprof.model.precision import NONFINITE  # an infinite error: "inf", "NaN outputs differ"
    from mlprof.report.site.svg import readable  # never e-notation (21,670, not 2.167e+04)

    notes = []
    for r in rows:
        err = "" if r.get("max_abs_error") is None else (
            NONFINITE.get(r.get("error_note") or "", "") or readable(r["max_abs_error"], 3))
        top1 = "" if r.get("top1_agreement") is None else f"{r['top1_agreement']:.3f}"
        speedup = f"{r['speedup']:>8.3f}  [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
        if r.get("precision") != "fp32" and row_not_measurable(round_trust(r)):
            speedup = f"{NOT_MEASURABLE:<{len(speedup)}}"
        lines.append((f"{r['batch_size']:>5}  {r['precision']:<13} "
                      f"{readable(r['median_ms'], 4):>9}  {speedup}{err:>12}  {top1:>5}"
                      + (f"  {disturbed_text(r)}" if judged else "")).rstrip())
        if r.get("why"):
            notes.append(f"  bs {r['batch_size']} {r['precision']} ({r['speedup']:.2f}x): "
                         f"{r['why']}")
    if notes:
        lines += ["why not faster (operator time per call, lower precision minus fp32):",
                  *notes]
    return "\n".join(lines) + "\n"
