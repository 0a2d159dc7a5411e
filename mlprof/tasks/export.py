"""ExportOnnx: a script's model as ONNX, with a symbolic batch dimension, validated."""

from __future__ import annotations

import dataclasses
import logging

import luigi

from mlprof import ingest
from mlprof.errors import MLProfError
from mlprof.results import layout
from mlprof.runtimes.precisions import DEFAULT_PRECISION, EXPORT_PRECISIONS
from mlprof.tasks.discover import DiscoverModels
from mlprof.tasks.framework.base import Requirements
from mlprof.tasks.framework.mixins import ExportMixin, ModelMixin, ScriptMixin
from mlprof.util import write_json_atomic

logger = logging.getLogger("mlprof")


class ExportOnnx(ModelMixin, ScriptMixin, ExportMixin):
    """Export one model of a script to ONNX (``--opset``, ``--precision``, ``--ort-optimize``).

    The TorchScript exporter is tried first, then the dynamo exporter; the record says which
    made the graph. The ONNX outputs are checked against the eager model's on the script's
    inputs and on another batch size: exact within ``--atol``/``--rtol``, close (within rtol
    of each output's RMS: kept, with a warning and the errors in the record) or refused (see
    :mod:`mlprof.model.export`). Writes ``model.onnx`` and ``export.json``.

    A model whose graph with a symbolic batch dimension is wrong at other batch sizes gets a
    static graph at the script's batch size here, recorded as ``"batch": "static"``;
    ``--export-batch-size N`` exports the static graph for batch size N, which MeasureRuntime
    requires for each batch size it measures of such a model (a separate task: each static
    graph is made once, where it is needed, and has its own directory, ``...-bs<N>``).

    The export runs in the process that discovered the script when this process keeps it
    (the discovery's ``run_isolated`` with the key :func:`~mlprof.tasks.discover
    .script_process_key`): no new process, and what the script imports (torch.onnx while that
    process waited for it, a library such as transformers) is there already. The script
    runs again there to capture the model; a script that cannot run twice in one process (an
    operator it defines with ``torch.library``) fails that run, and the export is made in a
    new process instead, as before. Measured with the end of that process put off
    (``run_isolated``'s ``end_later``), on a point of the 10x128 example script
    (``benchmarks/script_point.py``, 6 runs interleaved with the code before both, each with
    its bytecode compiled): the export's phase 0.08-0.12 s against 0.28-0.32 s.
    """

    precision = luigi.ChoiceParameter(default=DEFAULT_PRECISION, choices=EXPORT_PRECISIONS,
                                      description="precision of the exported graph (the other "
                                      "precisions are converted from the fp32 export by "
                                      "QuantizeModel)")
    export_batch_size = luigi.IntParameter(default=0, description="export a static graph for "
                                           "this batch size (0: one graph with a symbolic "
                                           "batch dimension); MeasureRuntime asks for these "
                                           "itself when a model's symbolic graph is wrong at "
                                           "other batch sizes")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.is_script:
            raise MLProfError("ExportOnnx takes a Python model script (.py)",
                              self.model_spec.spec_file, "--model-file")
        if self.export_batch_size < 0:
            raise MLProfError(f"must be >= 0 (0: a symbolic batch dimension), got "
                              f"{self.export_batch_size}", field="--export-batch-size")

    reqs = Requirements(DiscoverModels=DiscoverModels)

    def requires(self):
        return self.reqs.DiscoverModels.req(self)

    def store_parts(self):
        key = dataclasses.replace(self.export_key(self.precision),
                                  batch_size=self.export_batch_size)
        return {"model": self.model_segment_of(self.resolved_model_name, self.model_spec),
                "settings": layout.export_settings_segment(key, self.script_key())}

    def output(self):
        return self.declared_outputs()

    def record(self) -> dict | None:
        """The export record (``export.json``), None while there is none."""
        try:  # through mlprof.ingest: a FIFO or a device there is no record, never a hang
            record = ingest.load_json(self.output()["json"].path)
        except MLProfError:
            return None
        return record if isinstance(record, dict) else None

    def run(self):
        from mlprof.measure.isolate import kept_for, run_isolated
        from mlprof.model.export import CAPTURE_PHASE, export_onnx
        from mlprof.progress import progress_logger
        from mlprof.tasks.discover import script_process_key

        model = self.the_model(self.requires())
        outputs = self.output()
        label = f"export of {self.model_spec.file}::{model['hash']}"
        kwargs = {
            "script": self.model_spec.file, "model_hash": model["hash"],
            "out_path": outputs["onnx"].path, "script_args": self.script_argv,
            "max_depth": self.max_depth, "opset": self.resolved_opset,
            "precision": self.precision, "optimize": self.ort_optimize,
            "atol": self.tolerances()[0], "rtol": self.tolerances()[1],
            "batch_size": self.export_batch_size,
        }
        # in the process that discovered the script, if this process keeps it (see the class
        # docstring); a failure of the script's second run there is retried in a new one
        key = script_process_key(self)
        reused, log = kept_for(key), progress_logger(label)
        phases: list[str] = []

        def heard(fraction: float, message: str) -> None:
            phases.append(message)
            log(fraction, message)

        try:
            record = run_isolated(export_onnx, kwargs, label=label, torch=True, reuse=key,
                                  keep=False, end_later=True, progress=heard)
        except MLProfError as e:
            if not (reused and phases and phases[-1].startswith(CAPTURE_PHASE)):
                raise
            logger.info("%s: the script failed when it ran again in the process that "
                        "discovered it (%s); exporting in a new process", label, e.message)
            record = run_isolated(export_onnx, kwargs, label=label, torch=True, end_later=True)
        record["model"] = model
        if self.export_batch_size:
            # why this model has static graphs: the symbolic export found it out
            base = self.req(self, export_batch_size=0).record() or {}
            if base.get("static_reason"):
                record["static_reason"] = base["static_reason"]
        # the ONNX file is in place (renamed atomically by the export); the JSON completes it
        write_json_atomic(outputs["json"].path, record)
        name = self.resolved_model_name
        if record.get("torchscript_error"):
            logger.warning("%s: exported by the dynamo exporter; the TorchScript exporter "
                           "failed: %s", name, record["torchscript_error"])
        if record.get("batch") == "static" and not self.export_batch_size:
            logger.warning("%s: %s; measured on one static graph per batch size", name,
                           record["static_reason"])
        for warning in record.get("warnings", []):
            logger.warning("%s: the ONNX export is %s (measured anyway; the errors are in %s)",
                           name, warning, outputs["json"].path)
        logger.info("exported %s in %.2f s (%s exporter, %s, max abs error %.2g)", name,
                    record["export_s"], record["exporter"], record["verdict"],
                    record["max_abs_error"])
