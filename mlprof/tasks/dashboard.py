"""Dashboard: a static HTML site over the stores' results (opens from file://)."""

from __future__ import annotations

import json
import os

import law
import luigi

from mlprof.errors import MLProfError
from mlprof.results import layout
from mlprof.runtimes import DEFAULT_RUNTIME
from mlprof.tasks.parameters import RuntimeParameter, StoresMixin
from mlprof.util import atomic_dir

#: where every Dashboard run publishes its site, below $MLP_STORE: ``<version>/``, the entry
#: point ``index.html`` (all nights) and ``latest.html``
ARCHIVE_DIR = "dashboard"


class Dashboard(StoresMixin):
    """Write ``dashboard/index.html`` (+ model pages, plots, CSVs) for ``--stores``, and
    publish it as ``$MLP_STORE/dashboard/<version>/`` next to the earlier ones.

    The current results are the latest of each configuration, or those of ``--current``
    versions; the history and the alerts use every version in the stores. The fixed entry
    point ``$MLP_STORE/dashboard/index.html`` lists every published version (newest first),
    ``latest.html`` opens the newest, and each version's front page links to the previous and
    next one (:mod:`mlprof.report.dashboard_archive`).
    """

    current = law.CSVParameter(default=(), description="versions whose results are shown as "
                               "current (default: the latest result of each configuration)")
    experiments_file = luigi.Parameter(default=law.NO_STR, description="JSON list of experiment "
                                       "statuses (written by Nightly) to show on the index")
    reference_runtime = RuntimeParameter(default=DEFAULT_RUNTIME, description="speed-ups are "
                                         f"relative to this runtime; default: {DEFAULT_RUNTIME}")
    statistic = luigi.ChoiceParameter(default="median_ms", choices=(
        "median_ms", "mean_ms", "p84_ms", "p99_ms", "throughput"),
        description="statistic followed by the history and the alerts; default: median_ms")
    title = luigi.Parameter(default="mlprof dashboard", description="page title")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # a version that matches nothing would show "0 result(s)" with exit 0; Nightly passes
        # its own versions (with the experiments file), which may have failed to measure
        if self.current and self.experiments_file == law.NO_STR:
            found = set().union(*(layout.versions_in(s) for s in self.resolved_stores()))
            missing = [v for v in self.current if v not in found]
            if missing:
                known = ", ".join(sorted(found)[-8:]) or "none"
                raise MLProfError(f"no measurements of version(s) {', '.join(missing)} in "
                                  f"{', '.join(self.resolved_stores())} (versions there: "
                                  f"{known})", field="--current")

    def store_parts(self):
        extras = [*self.current, self.experiments_file if self.experiments_file != law.NO_STR
                  else "", self.title]
        return {"model": self.stores_segment(), "settings": layout.dashboard_settings_segment(
            self.statistic, self.reference_runtime, extras)}

    def output(self):
        return self.declared_outputs()["dashboard"]

    def run(self):
        from mlprof.report import collect, to_frame
        from mlprof.report.dashboard import build_dashboard
        from mlprof.report.dashboard_archive import publish, publishable

        experiments = None
        if self.experiments_file != law.NO_STR:
            with open(self.experiments_file) as f:
                experiments = json.load(f)
        report = to_frame(collect(self.resolved_stores()))
        target = self.output().path
        with atomic_dir(target) as tmp:  # the whole site appears at once, or not at all
            summary = build_dashboard(report, tmp, current_versions=list(self.current),
                                      experiments=experiments,
                                      reference_runtime=self.reference_runtime,
                                      statistic=self.statistic, title=self.title)
        record = {k: summary[k] for k in ("results", "failures", "failure_groups",
                                          "regressions", "improvements", "new_regressions",
                                          "new_improvements", "counts", "generated",
                                          "current", "title")}
        record["site"] = target
        entry = ""
        if publishable(self.version):  # (--version is checked: always, but for a dot name)
            root = os.path.join(layout.store_base(), ARCHIVE_DIR)
            publish(target, root, self.version, record)
            entry = f"; all nights: file://{os.path.join(root, 'index.html')}"
        self.publish_message(
            f"dashboard: {summary['results']} result(s), {summary['failures']} failure(s), "
            f"{summary['regressions']} regression(s), {summary['improvements']} improvement(s)"
            f" -> file://{os.path.join(target, 'index.html')}{entry}")
