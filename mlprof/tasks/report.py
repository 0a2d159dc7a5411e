"""Report: one tidy table over every measurement in one or more stores."""

from __future__ import annotations

from mlprof.tasks.framework.mixins import StoresMixin
from mlprof.util import atomic_path, write_text_atomic


class Report(StoresMixin):
    """Collect every MeasureRuntime result of ``--stores`` (default: $MLP_STORE).

    Writes ``report.csv`` and ``report.parquet``: one row per model, runtime, settings, batch
    size and version, with all statistics, provenance and ``status`` (ok, failed, timeout,
    oom, needs-network, needs-package, corrupt) plus the error message, cause and corpus of
    failures; and ``summary.txt``: per corpus (the scripts' directory) how many scripts were
    measured (with how many have unstable ``~`` or contended ``!`` points) and the failures
    grouped by cause (:mod:`mlprof.report.causes`), then the marked points with their medians
    (:mod:`mlprof.measure.trust`), and the host's minimum detectable change (2 x its noise
    floor, :func:`mlprof.report.history.min_detectable_lines`; "not calibrated: law run
    CalibrateNoise" without one), which ``law run`` also prints at its end. Run it under a
    new ``--version`` to see new results.

    MeasureLoad's records are the ``load.csv`` table: one row per load point and version
    (:func:`mlprof.report.collect.collect_loads`), with its chosen events/s, p99, bound,
    ``contended`` and the answer in one line; ``summary.txt`` ends with the newest answer of
    each load point.

    MeasureGeneration's records are the ``generation.csv`` table: one row per generation
    point, runtime and version (:func:`mlprof.report.collect.collect_generations`), with the
    median TTFT, TPOT and decode tokens/s and their 95 % intervals, the TPOT speed-up, the
    teacher-forced agreement and ``contended``/``causes``; ``summary.txt`` ends with the newest
    of each. A damaged record costs its own rows (one line naming the file and the field).
    """

    def run_summary(self) -> str:
        if not self.complete():
            return self.summary_of([], [])
        with open(self.output()["summary"].path) as f:
            return f.read().rstrip() + "\noutputs:\n" + "\n".join(
                f"  {t.path}" for t in self.output().values())

    def store_parts(self):
        return {"model": self.stores_segment()}

    def output(self):
        return self.declared_outputs()

    def run(self):
        from mlprof.measure.trust import marked_points
        from mlprof.progress import speaking
        from mlprof.report import collect, to_frame
        from mlprof.report.causes import format_summary
        from mlprof.report.collect import collect_generations, collect_loads, script_rows
        from mlprof.report.generation import generation_frame, generation_summary
        from mlprof.report.history import NoiseFloors, min_detectable_lines
        from mlprof.report.load import load_frame, load_summary

        # a corpus's store takes long to read (13,000 records: 10 s here): said every 5 s
        with speaking(f"report {self.version}") as rep:
            df = to_frame(collect(self.resolved_stores(), rep))
            rep.phase("writing the tables and the summary")
            out = self.output()
            with atomic_path(out["parquet"].path) as tmp:
                df.to_parquet(tmp, index=False)
            with atomic_path(out["csv"].path) as tmp:
                df.to_csv(tmp, index=False)
            summary = format_summary(script_rows(df))
            # the points not to trust, their medians marked (mlprof.measure.trust)
            marked = marked_points(df[df["status"] == "ok"].to_dict("records"))
            if marked:
                summary += "\n\n" + marked
            loads = collect_loads(self.resolved_stores())
            with atomic_path(out["load"].path) as tmp:
                load_frame(loads).to_csv(tmp, index=False)
            if loads:
                summary += "\n\n" + load_summary(loads)
            gens = collect_generations(self.resolved_stores())
            with atomic_path(out["generation"].path) as tmp:
                generation_frame(gens).to_csv(tmp, index=False)
            if gens:
                summary += "\n\n" + generation_summary(gens)
            # what a change must exceed to be told from this host's noise (issue 36)
            summary += "\n\n" + "\n".join(min_detectable_lines(
                df, NoiseFloors(self.resolved_stores())))
            write_text_atomic(out["summary"].path, summary + "\n")
        counts = df["status"].value_counts().to_dict()
        self.publish_message(f"report: {len(df)} rows ({counts}), {len(loads)} load point(s), "
                             f"{len(gens)} generation row(s) -> {out['csv'].path}")
