"""PlotRuntimes (one model, one runtime) and PlotMultiRuntimes (several of each)."""

from __future__ import annotations

import law
import luigi

from mlprof.errors import MLProfError
from mlprof.tasks.base import BaseTask, install_error_handling, path_safe
from mlprof.tasks.parameters import (
    BatchSizesMixin,
    ExportMixin,
    MeasurementMixin,
    ModelMixin,
    PathsParameter,
    PlotMixin,
    RuntimeMixin,
    RuntimesParameter,
    ScriptMixin,
    model_segment,
)
from mlprof.tasks.runtime import MergeRuntimes
from mlprof.util import short_hash

install_error_handling()


def device_label(device: str, threads: int) -> str:
    """``CPU, 1 thread``."""
    t = "default threads" if threads == 0 else f"{threads} thread{'s' if threads != 1 else ''}"
    return f"{device.upper()}, {t}"


def runtime_label(runtime: str, device: str, threads: int) -> str:
    """``onnxruntime 1.20.1 | CPU, 1 thread``."""
    from mlprof.runtimes import runtime_version

    return f"{runtime} {runtime_version(runtime)} | {device_label(device, threads)}"


def joined_or_hashed(items: list[str], max_len: int = 60) -> str:
    """``a-b-c`` when short, else ``<n>x_<first>_<hash>`` so paths stay short and unique."""
    joined = "-".join(items)
    if len(joined) <= max_len:
        return joined
    return f"{len(items)}x_{items[0][:24]}_{short_hash(*items)}"


class PlotRuntimes(ModelMixin, RuntimeMixin, MeasurementMixin, BatchSizesMixin, PlotMixin):
    """Plot median latency vs batch size with the 16-84 percentile range, for one model."""

    def requires(self):
        return MergeRuntimes.req(self)

    def output(self):
        return self.plot_targets(f"runtimes_{self.bs_tag}")

    def run(self):
        from mlprof.measure.stats import read_stats_csv
        from mlprof.plotting import Curve, plot_runtimes, save_figure

        stats = read_stats_csv(self.input()["stats"].path)
        options = self.plot_options()
        if not options["top_right_label"]:
            options["top_right_label"] = runtime_label(self.runtime, self.device, self.threads)
        fig = plot_runtimes([Curve(self.resolved_model_label, stats)], **options)
        paths = [t.path for t in self.output().values()]
        save_figure(fig, paths)
        for p in paths:
            self.publish_message(f"plot: {p}")
        self.view(paths)


class PlotMultiRuntimes(ScriptMixin, ExportMixin, MeasurementMixin, BatchSizesMixin, PlotMixin,
                        BaseTask):
    """Several models and/or runtimes on one plot.

    Only what varies goes into the legend labels and the file name. ``--model-files`` accepts
    brace expansion and globs: ``'examples/dnn/model_onnx_l{10,20}u128.yaml'``. A model script
    without ``::HASH`` contributes every model it calls (found by DiscoverModels first).
    """

    model_files = PathsParameter(description="comma-separated model files (YAML, ONNX or "
                                 "script.py[::HASH]); brace expansion and globs work")
    model_names = law.CSVParameter(default=(), description="names in output paths, one per "
                                   "model file")
    model_labels = law.CSVParameter(default=(), description="legend labels, one per model file")
    runtimes = RuntimesParameter(default=("onnxruntime",), description="comma-separated "
                                 "runtimes; default: onnxruntime")
    runtime_versions = law.CSVParameter(default=(), description="runtime versions to compare, "
                                        "one curve each: 1.20.1,1.31.1 for the one runtime of "
                                        "--runtimes, or onnxruntime==1.20.1,...; measured in "
                                        "cached virtual environments")
    device = luigi.Parameter(default="cpu", description="device to run on: cpu")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.model_files:
            raise MLProfError("give at least one model file", field="--model-files")
        for fld, values in (("--model-names", self.model_names),
                            ("--model-labels", self.model_labels)):
            if values and len(values) != len(self.model_files):
                raise MLProfError(f"{len(values)} value(s) for {len(self.model_files)} model "
                                  "file(s); give one per model file or none", field=fld)
        from mlprof.model import read_model_file
        from mlprof.runtimes import check_device

        for rt in self.runtimes:
            check_device(rt, self.device)
        self._specs = [read_model_file(f) for f in self.model_files]
        self._pairs = self._runtime_pairs()

    def _runtime_pairs(self) -> list[tuple[str, str]]:
        """(runtime, version or "" for the installed one) per curve."""
        from mlprof.measure.venvs import parse_runtime_version
        from mlprof.runtimes import canonical_runtime

        fld = "--runtime-versions"
        wanted: dict[str, list[str]] = {}
        for entry in self.runtime_versions:
            name, sep, _ = str(entry).partition("==")
            if sep:
                rt = canonical_runtime(name.strip())
                if rt not in self.runtimes:
                    raise MLProfError(f"{entry!r}: {rt!r} is not one of --runtimes", field=fld)
            elif len(self.runtimes) == 1:
                rt = self.runtimes[0]
            else:
                raise MLProfError(f"{entry!r}: with several runtimes, write "
                                  "runtime==version", field=fld)
            version = parse_runtime_version(rt, entry, field=fld)
            if version not in wanted.setdefault(rt, []):
                wanted[rt].append(version)
        return [(rt, v) for rt in self.runtimes for v in (wanted.get(rt) or [""])]

    def _rt_name(self, rt: str, version: str) -> str:
        from mlprof.runtimes import runtime_version

        return f"{rt}-{version or runtime_version(rt)}"

    def _name(self, i: int) -> str:
        return self.model_names[i] if self.model_names else self._specs[i].name

    def _label(self, i: int) -> str:
        return self.model_labels[i] if self.model_labels else self._specs[i].label

    def store_parts(self):
        parts = super().store_parts()
        segs = [model_segment(self._name(i), short_hash(s.content_hash, *self.script_argv,
                                                        self.max_depth, length=64)
                              if s.is_script else s.content_hash)
                for i, s in enumerate(self._specs)]
        parts["model"] = segs[0] if len(segs) == 1 else joined_or_hashed(segs, 80)
        rts = [self._rt_name(rt, v) for rt, v in self._pairs]
        parts["runtime"] = f"{joined_or_hashed(rts)}__{self.device}"
        return parts

    def _expands(self, i: int) -> bool:
        """Whether model file ``i`` is a script whose models are found by discovery."""
        return self._specs[i].is_script and len(self._specs[i].model_hashes) != 1

    def _discovery(self, i: int):
        from mlprof.tasks.discover import DiscoverModels

        return DiscoverModels.req(self, model_file=self.model_files[i])

    def _merge(self, model_file: str, runtime: tuple[str, str], name: str, label: str):
        rt, version = runtime
        return MergeRuntimes.req(self, model_file=model_file, runtime=rt, runtime_version=version,
                                 model_name=name, model_label=label)

    def _given(self, i: int) -> tuple[str, str]:
        """--model-names and --model-labels of model file ``i`` (NO_STR when not given)."""
        return (self.model_names[i] if self.model_names else law.NO_STR,
                self.model_labels[i] if self.model_labels else law.NO_STR)

    def _entries(self) -> list[tuple[str, str, str]]:
        """(model file, name, label) per model; scripts expanded once discovered."""
        entries = []
        for i, f in enumerate(self.model_files):
            name, label = self._given(i)
            if not self._expands(i):
                entries.append((f, name, label))
                continue
            models = self._discovery(i).selected()
            many = len(models) > 1
            for m in models:
                cls = m["class"].rsplit(".", 1)[-1]
                entries.append((
                    f"{self._specs[i].file}::{m['hash']}",
                    # without --model-names the script model's own name: <stem>-<hash>
                    f"{name}-{m['hash']}" if name != law.NO_STR and many else name,
                    self._label(i) + (f" ({cls} {m['hash']})" if many else ""),
                ))
        return entries

    def requires(self):
        reqs = []
        for i, f in enumerate(self.model_files):
            if self._expands(i):
                reqs.append(self._discovery(i))  # the models follow in run()
            else:
                reqs.extend(self._merge(f, rt, *self._given(i)) for rt in self._pairs)
        return reqs

    def _varying(self) -> tuple[bool, bool]:
        return len(self.model_files) > 1, len(self._pairs) > 1

    def output(self):
        many_models, many_rts = self._varying()
        stem = ["runtimes"]
        if many_models:
            stem.append(joined_or_hashed([path_safe(self._name(i), 24)
                                          for i in range(len(self.model_files))]))
        if many_rts:
            stem.append(joined_or_hashed([self._rt_name(rt, v) if self.runtime_versions else rt
                                          for rt, v in self._pairs]))
        stem.append(self.bs_tag)
        return self.plot_targets("_".join(stem))

    def run(self):
        from mlprof.measure.stats import read_stats_csv
        from mlprof.plotting import Curve, plot_runtimes, save_figure

        # scripts' models are known once discovered: dynamic dependencies
        entries = self._entries()
        merges = [[self._merge(f, rt, name, label) for rt in self._pairs]
                  for f, name, label in entries]
        yield [m for row in merges for m in row]

        many_models, many_rts = len(entries) > 1, len(self._pairs) > 1
        curves = []
        for row in merges:
            for (rt, _), task in zip(self._pairs, row, strict=True):
                parts = []
                if many_models or not many_rts:
                    parts.append(task.resolved_model_label)
                if many_rts:
                    parts.append(f"{rt} {task.resolved_runtime_version}"
                                 if self.runtime_versions else rt)
                curves.append(Curve(", ".join(parts),
                                    read_stats_csv(task.output()["stats"].path)))
        options = self.plot_options()
        if not options["top_right_label"]:
            if many_rts:
                options["top_right_label"] = device_label(self.device, self.threads)
                if not many_models:
                    options["top_right_label"] = (f"{merges[0][0].resolved_model_label} | "
                                                  f"{options['top_right_label']}")
            else:
                options["top_right_label"] = runtime_label(self.runtimes[0], self.device,
                                                           self.threads)
        fig = plot_runtimes(curves, **options)
        paths = [t.path for t in self.output().values()]
        save_figure(fig, paths)
        for p in paths:
            self.publish_message(f"plot: {p}")
        self.view(paths)
