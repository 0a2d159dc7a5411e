"""Dashboard: a static HTML site over the stores' results (opens from file://)."""

from __future__ import annotations

import os

import law
import luigi

from mlprof import ingest
from mlprof.errors import MLProfError
from mlprof.report.nightly import CONFIRM_SUFFIX
from mlprof.results import layout
from mlprof.runtimes import DEFAULT_RUNTIME
from mlprof.tasks.framework.mixins import StoresMixin
from mlprof.tasks.framework.parameters import RuntimeParameter
from mlprof.util import atomic_dir

#: where every Dashboard run publishes its site, below $MLP_STORE: ``<version>/``, the entry
#: point ``index.html`` (all nights) and ``latest.html``
ARCHIVE_DIR = "dashboard"


class Dashboard(StoresMixin):
    """Write ``dashboard/index.html`` (+ model pages, plots, CSVs) for ``--stores``; with
    ``--publish`` (what Nightly passes) also publish it as ``$MLP_STORE/dashboard/<version>/``
    next to the earlier nights.

    The current results are the latest of each configuration, or those of ``--current``
    versions; the history and the alerts use every version in the stores. The fixed entry
    point ``$MLP_STORE/dashboard/index.html`` lists every published version (newest first),
    ``latest.html`` opens the newest, and each version's front page links to the previous and
    next one (:mod:`mlprof.report.site.archive`).

    Why publishing is asked for: the index is the nights' history. An ad-hoc look at the
    stores (``law run Dashboard --version d1``) is not a night; published by default it
    became "Latest" above the last night, and a second one with other options replaced the
    first. Unpublished, each option set has its own site (the options reach the path); a
    published version already taken by a site with other options is refused.
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
    publish = luigi.BoolParameter(default=False, description="also publish the site as "
                                  "$MLP_STORE/dashboard/<version>/ on the nights' index "
                                  "(Nightly does); default: only the site itself")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        #: the --current versions used; a night's confirmation that does not exist is left out
        self.current_versions: list[str] = list(self.current)
        #: the line that says so
        self.current_note = ""
        # a version that matches nothing would show "0 result(s)" with exit 0; Nightly passes
        # its own versions (with the experiments file), which may have failed to measure
        if self.current and self.experiments_file == law.NO_STR:
            found = set().union(*(layout.versions_in(s) for s in self.resolved_stores()))
            missing = [v for v in self.current if v not in found]
            # a quiet night has no "<night>.confirm" (nothing needed confirming): use the night
            quiet = [v for v in missing if v.endswith(CONFIRM_SUFFIX)
                     and v[:-len(CONFIRM_SUFFIX)] in self.current
                     and v[:-len(CONFIRM_SUFFIX)] in found]
            missing = [v for v in missing if v not in quiet]
            if missing:
                known = ", ".join(sorted(found)[-8:]) or "none"
                raise MLProfError(f"no measurements of version(s) {', '.join(missing)} in "
                                  f"{', '.join(self.resolved_stores())} (versions there: "
                                  f"{known})", field="--current")
            if quiet:
                self.current_versions = [v for v in self.current if v not in quiet]
                self.current_note = (
                    f"--current: no {', '.join(quiet)} in the stores (nothing needed "
                    f"confirming that night); showing {', '.join(self.current_versions)}")
        if self.publish:
            # refused before anything is built (a bad command line: exit 40), not after
            from mlprof.report.site.archive import check_free, publishable

            if publishable(self.version):
                check_free(os.path.join(layout.store_base(), ARCHIVE_DIR), self.version,
                           self.output().path)

    def store_parts(self):
        extras = [*self.current_versions, self.experiments_file
                  if self.experiments_file != law.NO_STR else "", self.title,
                  "publish" if self.publish else ""]
        return {"model": self.stores_segment(), "settings": layout.dashboard_settings_segment(
            self.statistic, self.reference_runtime, extras)}

    def output(self):
        return self.declared_outputs()["dashboard"]

    def run(self):
        from mlprof.progress import speaking
        from mlprof.report import collect, to_frame
        from mlprof.report.collect import collect_generations, collect_loads, collect_precisions
        from mlprof.report.history import NoiseFloors
        from mlprof.report.site import build_dashboard
        from mlprof.report.site.archive import publish, publishable

        experiments = None
        if self.experiments_file != law.NO_STR:
            experiments = ingest.load_json(self.experiments_file)
        target = self.output().path
        root = os.path.join(layout.store_base(), ARCHIVE_DIR)
        stores = self.resolved_stores()
        # a corpus's nights take a minute here (benchmarks/dashboard_scale.py): said every 5 s
        with speaking(f"dashboard {self.version}") as rep:
            report = to_frame(collect(stores, rep))
            rep.phase("reading the precision, load and generation records")
            precisions, loads = collect_precisions(stores), collect_loads(stores)
            generations = collect_generations(stores)
            with atomic_dir(target) as tmp:  # the whole site appears at once, or not at all
                summary = build_dashboard(report, tmp, current_versions=self.current_versions,
                                          experiments=experiments,
                                          reference_runtime=self.reference_runtime,
                                          statistic=self.statistic, title=self.title,
                                          precisions=precisions, loads=loads,
                                          generations=generations,
                                          floors=NoiseFloors(stores), progress=rep)
        record = {k: summary[k] for k in ("results", "failures", "failure_groups",
                                          "regressions", "improvements", "new_regressions",
                                          "new_improvements", "counts", "generated",
                                          "current", "title")}
        record["site"] = target
        if self.current_note:
            self.publish_message(self.current_note)
        if self.publish and publishable(self.version):  # (--version is checked: always
            publish(target, root, self.version, record)
            entry = f"; all nights: file://{os.path.join(root, 'index.html')}"
        else:
            entry = "; not on the nights' index (--publish puts it there)"
        self.publish_message(
            f"dashboard: {summary['results']} result(s), {summary['failures']} failure(s), "
            f"{summary['regressions']} regression(s), {summary['improvements']} improvement(s)"
            f" -> file://{os.path.join(target, 'index.html')}{entry}")
