"""Report: one tidy table over every measurement in one or more stores."""

from __future__ import annotations

import law

from mlprof.tasks.base import BaseTask, install_error_handling
from mlprof.tasks.parameters import expand_path
from mlprof.util import atomic_path, short_hash

install_error_handling()


class Report(BaseTask):
    """Collect every MeasureRuntime result of ``--stores`` (default: $MLP_STORE).

    Writes ``report.csv`` and ``report.parquet``: one row per model, runtime, settings, batch
    size and version, with all statistics, provenance and ``status`` (ok, failed, timeout,
    oom) plus the error message of failures. Run it under a new ``--version`` to see new results.
    """

    stores = law.CSVParameter(default=(), description="comma-separated store directories; "
                              "default: $MLP_STORE")

    def resolved_stores(self) -> list[str]:
        """--stores as absolute paths, or the current store."""
        from mlprof.tasks.base import store_base

        return [expand_path(s) for s in self.stores] or [store_base()]

    def store_parts(self):
        parts = super().store_parts()
        stores = self.resolved_stores()
        parts["model"] = "stores_" + short_hash(*stores)
        return parts

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
