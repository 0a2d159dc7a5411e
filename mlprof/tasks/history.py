"""PlotHistory: a statistic over versions per model and runtime, with regression alerts."""

from __future__ import annotations

import os

import luigi

from mlprof.layout import path_safe
from mlprof.tasks.parameters import StoresMixin
from mlprof.util import atomic_dir, atomic_path


class PlotHistory(StoresMixin):
    """Plot ``--statistic`` over versions and list alerts, from the stores' measurements.

    One plot per model, runtime (and version of it), device, host and settings, a line per
    batch size; regressions and improvements found by the robust rule are marked and listed in
    ``alerts.csv``. Only like is compared with like (see :mod:`mlprof.report.history`).
    """

    statistic = luigi.ChoiceParameter(default="median_ms", choices=(
        "median_ms", "mean_ms", "p84_ms", "p99_ms", "throughput"),
        description="the statistic to follow; default: median_ms")

    def store_parts(self):
        return {"model": self.stores_segment()}

    def output(self):
        return {"alerts": self.local_target(f"alerts_{self.statistic}.csv"),
                "plots": self.local_target(f"history_{self.statistic}")}

    def run(self):
        from mlprof.plotting import save_figure
        from mlprof.plotting.history import plot_history
        from mlprof.report import collect, to_frame
        from mlprof.report.history import alerts_table, history_groups

        report = to_frame(collect(self.resolved_stores()))
        alerts = alerts_table(report, self.statistic)
        out = self.output()
        groups = history_groups(report, alerts.to_dict("records"), self.statistic)
        with atomic_dir(out["plots"].path) as tmp:
            for g, lines, marks in groups:
                fig = plot_history(lines, statistic=self.statistic, alerts=marks,
                                   title=f"{g['model']} on {g['runtime']} {g['runtime_version']}",
                                   top_right_label=f"{g['device'].upper()}, {g['threads']} "
                                   f"thread(s), {g['host']}")
                name = path_safe(f"{g['model']}_{g['runtime']}-{g['runtime_version']}_"
                                 f"{g['host']}_{g['settings_key']}", 120)
                save_figure(fig, [os.path.join(tmp, f"{name}.pdf"),
                                  os.path.join(tmp, f"{name}.png")])
        with atomic_path(out["alerts"].path) as t:
            alerts.to_csv(t, index=False)
        self.publish_message(f"{len(groups)} history plot(s), {len(alerts)} alert(s) -> "
                             f"{out['plots'].path}")
