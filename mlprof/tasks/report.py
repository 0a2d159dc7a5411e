"""Report: one tidy table over every measurement in one or more stores."""

from __future__ import annotations

from mlprof.tasks.parameters import StoresMixin
from mlprof.util import atomic_path


class Report(StoresMixin):
    """Collect every MeasureRuntime result of ``--stores`` (default: $MLP_STORE).

    Writes ``report.csv`` and ``report.parquet``: one row per model, runtime, settings, batch
    size and version, with all statistics, provenance and ``status`` (ok, failed, timeout,
    oom, needs-network, needs-package, corrupt) plus the error message of failures. Run it under
    a new ``--version`` to see new results.
    """

    def store_parts(self):
        return {"model": self.stores_segment()}

    def output(self):
        return {"csv": self.local_target("report.csv"),
                "parquet": self.local_target("report.parquet")}

    def run(self):
        from mlprof.report import collect, to_frame

        df = to_frame(collect(self.resolved_stores()))
        out = self.output()
        with atomic_path(out["parquet"].path) as tmp:
            df.to_parquet(tmp, index=False)
        with atomic_path(out["csv"].path) as tmp:
            df.to_csv(tmp, index=False)
        counts = df["status"].value_counts().to_dict()
        self.publish_message(f"report: {len(df)} rows ({counts}) -> {out['csv'].path}")
