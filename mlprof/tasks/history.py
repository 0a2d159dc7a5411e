"""PlotHistory: a statistic over versions per model and runtime, with regression alerts."""

from __future__ import annotations

import os

import luigi

from mlprof.results.layout import path_safe
from mlprof.tasks.framework.mixins import StoresMixin
from mlprof.util import atomic_dir, atomic_path, short_hash


def history_file_name(group: dict) -> str:
    """The file name (without extension) of a configuration's history plot: readable parts
    plus a hash of the whole configuration, so that two configurations that differ only in
    what the name leaves out (CPU model, model file, device) never share a file. The runtime
    version is not in it: a series continues across upgrades (an event on it), and so does
    its file."""
    from mlprof.report.history import GROUP_KEY

    readable = path_safe(f"{group['model']}_{group['runtime']}_"
                         f"{group['host']}_{group['settings_key']}", 100)
    return f"{readable}__{short_hash(*(group[k] for k in GROUP_KEY), length=6)}"


def machine_text(group: dict) -> str:
    """``onnxruntime 1.32.0 | AMD EPYC 7763, 1 thread | host vm``: the corner of a
    configuration's history plot, made as every plot's corner
    (:func:`mlprof.plotting.labels.corner_label`): runtime and version, CPU, threads, host."""
    from mlprof.plotting.labels import corner_label, curve_info

    try:
        threads = int(float(group["threads"]))
    except (TypeError, ValueError):
        return (f"{group['runtime']} {group['runtime_version']} | {group['device']}, threads "
                f"{group['threads']} | host {group['host']}")
    cpu = str(group.get("cpu_model") or "")
    record = {"cpu_model": "" if cpu == "nan" else cpu, "host": group.get("host")}
    info = curve_info(str(group["model"]), str(group["runtime"]),
                      str(group.get("runtime_version") or ""), record)
    return corner_label([info], str(group["device"]), threads)


def load_history_file_name(group: dict) -> str:
    """The file name (without extension) of a configuration's load history plot:
    ``load_<model>_<runtime>_<host>_<settings>__<hash6>``, the hash over the whole
    configuration (:data:`mlprof.report.load.LOAD_GROUP_KEY`)."""
    from mlprof.report.load import LOAD_GROUP_KEY

    readable = path_safe(f"load_{group['model']}_{group['runtime']}_"
                         f"{group['host']}_{group['settings_key']}", 100)
    return f"{readable}__{short_hash(*(str(group[k]) for k in LOAD_GROUP_KEY), length=6)}"


class PlotHistory(StoresMixin):
    """Plot ``--statistic`` over versions and list alerts, from the stores' measurements.

    One figure (PDF and PNG) per model, runtime (and version of it), device, host and
    settings, with a panel per batch size measured on at least two nights (``--view change``:
    one axis, each batch size as its change vs its baseline); configurations with a single
    night are not drawn. Confirming re-measurements (``<night>.confirm``) are hollow points of
    their night; regressions and improvements found by the robust rule are marked, explained
    in the legend and listed in ``alerts_<statistic>.csv`` (with the threshold each series was
    judged by: at least 2 x its host's noise floor where the host is calibrated). Only like
    is compared with like
    (see :mod:`mlprof.report.history`).

    MeasureLoad's answers have a history too: one ``load_*`` figure per model, runtime,
    device, host and settings, with a panel per load point measured in at least two versions,
    its chosen events/s over versions (:func:`mlprof.report.load.load_history_groups`),
    whatever ``--statistic``. They raise no alerts: a load answer is one search, without the
    repeated calls the alert rule weighs.
    """

    statistic = luigi.ChoiceParameter(default="median_ms", choices=(
        "median_ms", "mean_ms", "p84_ms", "p99_ms", "throughput"),
        description="the statistic to follow; default: median_ms")
    view = luigi.ChoiceParameter(default="panels", choices=("panels", "change"),
                                 description="panels: one panel per batch size, each with its "
                                 "own y range; change: one axis, the change vs each batch "
                                 "size's baseline in percent; default: panels")

    def store_parts(self):
        return {"model": self.stores_segment()}

    def output(self):
        return self.declared_outputs(statistic=self.statistic, view=self.view)

    def run(self):
        from mlprof.plotting.history import drawable, plot_history, save_history
        from mlprof.progress import speaking
        from mlprof.report import collect, to_frame
        from mlprof.report.collect import collect_loads
        from mlprof.report.history import NoiseFloors, alerts_table, history_groups
        from mlprof.report.load import load_history_groups

        with speaking(f"history {self.version}") as rep:  # a corpus's nights: said every 5 s
            report = to_frame(collect(self.resolved_stores(), rep))
            rep.phase("history and alerts")
            floors = NoiseFloors(self.resolved_stores())
            alerts = alerts_table(report, self.statistic, floors=floors)
            out = self.output()
            groups = history_groups(report, alerts.to_dict("records"), self.statistic)
            drawn = loads_drawn = 0
            rep.phase(f"drawing the history plots (0 of {len(groups)})")
            with atomic_dir(out["plots"].path) as tmp:
                for k, (g, lines, marks) in enumerate(groups, 1):
                    rep.update(f"drawing the history plots ({k} of {len(groups)})")
                    if not drawable(lines):  # no series with two nights: a point is no history
                        continue
                    fig = plot_history(lines, statistic=self.statistic, alerts=marks,
                                       view=self.view, events=g["events"],
                                       title=f"{g['model']} on {g['runtime']} "
                                       f"{g['runtime_version']}",
                                       top_right_label=machine_text(g),
                                       caption=f"settings: {g['settings_key']}")
                    name = history_file_name(g)
                    save_history(fig, [os.path.join(tmp, f"{name}.pdf"),
                                       os.path.join(tmp, f"{name}.png")])
                    drawn += 1
                load_groups = load_history_groups(collect_loads(self.resolved_stores()))
                for g, lines, events in load_groups:
                    if not drawable(lines):
                        continue
                    fig = plot_history(lines, statistic="throughput", events=events,
                                       title=f"{g['model']} under load on {g['runtime']} "
                                       f"{g['runtime_version']}",
                                       top_right_label=f"{g['runtime']} "
                                       f"{g['runtime_version']} | {g['device']} | "
                                       f"host {g['host']}",
                                       caption=f"settings: {g['settings_key']}")
                    name = load_history_file_name(g)
                    save_history(fig, [os.path.join(tmp, f"{name}.pdf"),
                                       os.path.join(tmp, f"{name}.png")])
                    loads_drawn += 1
        with atomic_path(out["alerts"].path) as t:
            alerts.to_csv(t, index=False)
        self.publish_message(
            f"{drawn} history plot(s) (PDF and PNG; {len(groups) - drawn} configuration(s) with "
            f"a single night not drawn), {loads_drawn} load history plot(s), {len(alerts)} "
            f"alert(s) -> {out['plots'].path}")
        # which series were judged above their host's noise floor, which by the rule alone
        self.publish_message(floors.summary())
