"""Report: one tidy table over every measurement in one or more stores."""

from __future__ import annotations

from mlprof.tasks.parameters import StoresMixin
from mlprof.util import atomic_path, write_text_atomic


class Report(StoresMixin):
    """Collect every MeasureRuntime result of ``--stores`` (default: $MLP_STORE).

    Writes ``report.csv`` and ``report.parquet``: one row per model, runtime, settings, batch
    size and version, with all statistics, provenance and ``status`` (ok, failed, timeout,
    oom, needs-network, needs-package, corrupt) plus the error message, cause and corpus of
    failures; and ``summary.txt``: per corpus (the scripts' directory) how many scripts were
    measured and the failures grouped by cause (:mod:`mlprof.report.causes`), which ``law run``
    also prints at its end. Run it under a new ``--version`` to see new results.
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
        return {"csv": self.local_target("report.csv"),
                "parquet": self.local_target("report.parquet"),
                "summary": self.local_target("summary.txt")}

    def run(self):
        from mlprof.report import collect, to_frame
        from mlprof.report.causes import format_summary
        from mlprof.report.collect import script_rows

        df = to_frame(collect(self.resolved_stores()))
        out = self.output()
        with atomic_path(out["parquet"].path) as tmp:
            df.to_parquet(tmp, index=False)
        with atomic_path(out["csv"].path) as tmp:
            df.to_csv(tmp, index=False)
        write_text_atomic(out["summary"].path, format_summary(script_rows(df)) + "\n")
        counts = df["status"].value_counts().to_dict()
        self.publish_message(f"report: {len(df)} rows ({counts}) -> {out['csv'].path}")
