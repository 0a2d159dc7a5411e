"""CompareInterleaved: several configurations (model x runtime) measured in alternating rounds
in one process per batch size, and the speed-up table with 95 % confidence intervals
(:mod:`mlprof.measure.interleave`). ``PlotMultiRuntimes --interleave`` requires it instead of
independent MergeRuntimes and draws the speed-up plot."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import law
import luigi

from mlprof.errors import MLProfError
from mlprof.model import read_model_file
from mlprof.results import layout, records
from mlprof.runtimes import (
    DEFAULT_RUNTIME,
    check_device,
    check_installed,
    check_model_kind,
    runtime_version,
)
from mlprof.tasks.base import BaseTask, failure_reason
from mlprof.tasks.parameters import (
    BatchSizesMixin,
    MeasurementMixin,
    PathsParameter,
    RuntimesParameter,
)
from mlprof.util import write_json_atomic, write_text_atomic

if TYPE_CHECKING:
    from matplotlib.figure import Figure

logger = logging.getLogger("mlprof")


class RoundsParameter(luigi.IntParameter):
    """An integer option that may be given without a value: ``--interleave`` means
    :data:`~mlprof.measure.interleave.DEFAULT_ROUNDS` rounds, ``--interleave 40`` 40."""

    def _parser_kwargs(self, *args, **kwargs):
        from mlprof.measure.interleave import DEFAULT_ROUNDS

        kw = super()._parser_kwargs(*args, **kwargs)
        kw["nargs"] = "?"
        kw["const"] = str(DEFAULT_ROUNDS)
        return kw


class InterleaveMixin(BaseTask):
    """``--interleave [ROUNDS]``: compare the configurations in alternating rounds."""

    exclude_index = True

    interleave = RoundsParameter(default=0, description="measure the compared configurations "
                                 "in this many alternating rounds in one process per batch "
                                 "size and plot speed-ups with 95-percent confidence "
                                 "intervals "
                                 "(--interleave alone: 20 rounds); default: 0 (independent "
                                 "curves)")


class CompareInterleaved(MeasurementMixin, BatchSizesMixin, InterleaveMixin):
    """Every model file on every runtime, interleaved: per batch size one isolated child loads
    all configurations and runs ``--interleave`` rounds of ``--n-calls`` calls per event each.

    Outputs: ``speedup_<bs>_il<R>.csv`` (per batch size and configuration: speed-up over the
    first configuration, 95 % CI, significant, verdict), ``rounds_<bs>_il<R>.csv`` (every
    round's medians) and ``provenance_<bs>_il<R>.json`` (``"interleaved": true``).
    """

    model_files = PathsParameter(description="comma-separated model files (YAML or ONNX); the "
                                 "first on the first runtime is the reference")
    model_names = law.CSVParameter(default=(), description="names in output paths, one per "
                                   "model file")
    runtimes = RuntimesParameter(default=(DEFAULT_RUNTIME,), description="comma-separated "
                                 "runtimes; default: onnxruntime")
    device = luigi.Parameter(default="cpu", description="device to run on: cpu")
    interleave = RoundsParameter(default=20, description="rounds per batch size; default: 20")

    # not parameters here: a round makes exactly --n-calls calls per event of each
    # configuration (no --min-duration), and AOT TensorFlow models cannot be interleaved
    min_duration = 0.0
    tfaot_batch_rules = ""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from mlprof.measure.interleave import check_interleavable, check_rounds

        check_rounds(self.interleave)
        if not self.model_files:
            raise MLProfError("give at least one model file", field="--model-files")
        if not self.runtimes:
            raise MLProfError("give at least one runtime", field="--runtimes")
        if self.model_names and len(self.model_names) != len(self.model_files):
            raise MLProfError(f"{len(self.model_names)} value(s) for {len(self.model_files)} "
                              "model file(s)", field="--model-names")
        self._specs = [read_model_file(f) for f in self.model_files]
        for s in self._specs:
            check_interleavable(s.model_kind, "", file=s.spec_file)
            for rt in self.runtimes:
                check_model_kind(rt, s.model_kind, s.spec_file)
        for rt in self.runtimes:
            check_device(rt, self.device)
            check_installed(rt)

    @property
    def resources(self) -> dict[str, int]:
        return {"mlprof_measure": 1}

    def _name(self, i: int) -> str:
        return self.model_names[i] if self.model_names else self._specs[i].name

    def configs(self) -> list:
        """The configurations in order: model files outer, runtimes inner; the first is the
        reference. Labels name what varies."""
        from mlprof.measure.interleave import Config

        many_models, many_rts = len(self._specs) > 1, len(self.runtimes) > 1
        out = []
        for i, s in enumerate(self._specs):
            for rt in self.runtimes:
                parts = ([self._name(i)] if many_models or not many_rts else []) + \
                        ([rt] if many_rts else [])
                out.append(Config(" ".join(parts), s.spec_file, rt, self._name(i)))
        return out

    #: YAML and ONNX models only (model scripts are refused): no ONNX export is measured
    measures_export = False

    @property
    def resolved_runtimes(self) -> tuple[str, ...]:
        """The runtimes, canonical names, in order (as the output path has them)."""
        return tuple(self.runtimes)

    def store_parts(self) -> dict[str, str]:
        return {
            "model": layout.models_segment([layout.model_segment(self._name(i), s.content_hash)
                                            for i, s in enumerate(self._specs)]),
            "runtime": layout.runtime_segment([(rt, runtime_version(rt))
                                               for rt in self.runtimes], self.device),
            "settings": layout.measure_settings_segment(self.measure_key()),
        }

    def output(self):
        return self.declared_outputs(bs_tag=self.bs_tag, rounds=self.interleave)

    def rows(self) -> list[dict]:
        """The finished table's rows."""
        from mlprof.measure.interleave import read_table

        return read_table(self.output()["table"].path)

    def run_summary(self) -> str:
        from mlprof.measure.interleave import format_table

        if not self.complete():
            return f"{self.task_family}: not complete: {failure_reason(self)}"
        return format_table(self.rows()) + "\noutputs:\n" + "\n".join(
            f"  {t.path}" for t in self.output().values())

    def run(self):
        from mlprof.measure.interleave import (
            comparison_rows,
            format_table,
            measure_interleaved_isolated,
            rounds_csv,
            table_csv,
        )

        configs = self.configs()
        results, rows = [], []
        for bs in self.batch_sizes:
            self.publish_message(f"interleaving {len(configs)} configurations at batch size "
                                 f"{bs}, {self.interleave} rounds")
            res = measure_interleaved_isolated(
                configs, self.measure_settings(bs, configs[0].runtime, self.device),
                self.interleave)
            results.append(res)
            rows.extend(comparison_rows(res))
        out = self.output()
        write_text_atomic(out["rounds"].path, rounds_csv(results))
        write_json_atomic(out["provenance"].path, records.stamp({
            "interleaved": True, "task": {"family": self.task_family, "version": self.version,
                                          "params": self.to_str_params(only_significant=True)},
            "batch_sizes": {str(r.batch_size): r.provenance for r in results}}, "interleaved"))
        write_text_atomic(out["table"].path, table_csv(rows))  # last: it marks completion
        logger.info("interleaved comparison:\n%s", format_table(rows))


def draw_comparison(task, compare: CompareInterleaved) -> Figure:
    """The speed-up plot of a finished CompareInterleaved for ``task`` (a PlotMultiRuntimes:
    its --model-labels, --x-log and --top-right-label apply), as a figure to save."""
    import json

    from mlprof.plotting.compare import comparison_texts, plot_comparison

    n_rt = len(compare.runtimes)
    # each model by its --model-labels entry, else by its label (the names are in the path)
    names = {c.model: task.model_labels[k // n_rt] if task.model_labels
             else compare._specs[k // n_rt].label for k, c in enumerate(compare.configs())}
    with open(compare.output()["provenance"].path) as f:
        labels, corner = comparison_texts(json.load(f), compare.device, compare.threads, names)
    corner = task.plot_options()["top_right_label"] or corner
    return plot_comparison(compare.rows(), labels=labels, x_log=task.x_log,
                           top_right_label=corner)
