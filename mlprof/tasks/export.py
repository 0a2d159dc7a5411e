"""ExportOnnx: a script's model as ONNX, with a symbolic batch dimension, validated."""

from __future__ import annotations

import logging

from mlprof import layout
from mlprof.errors import MLProfError
from mlprof.tasks.base import Requirements
from mlprof.tasks.discover import DiscoverModels
from mlprof.tasks.parameters import ExportMixin, ModelMixin, ScriptMixin
from mlprof.util import write_json_atomic

logger = logging.getLogger("mlprof")


class ExportOnnx(ModelMixin, ScriptMixin, ExportMixin):
    """Export one model of a script to ONNX (``--opset``, ``--precision``, ``--ort-optimize``).

    The ONNX outputs are checked against the eager model's on the script's inputs and on
    another batch size; beyond ``--atol``/``--rtol`` the export fails. Writes ``model.onnx``
    and ``export.json`` (export time, errors, opset, versions).
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.is_script:
            raise MLProfError("ExportOnnx takes a Python model script (.py)",
                              self.model_spec.spec_file, "--model-file")

    reqs = Requirements(DiscoverModels=DiscoverModels)

    def requires(self):
        return self.reqs.DiscoverModels.req(self)

    def store_parts(self):
        content = layout.script_model_hash(self.model_spec.content_hash, self.script_argv,
                                           self.max_depth)
        return {"model": layout.model_segment(self.resolved_model_name, content),
                "settings": layout.export_settings_segment(self.export_key(),
                                                           self.script_key())}

    def output(self):
        return {"onnx": self.local_target("model.onnx"),
                "json": self.local_target("export.json")}

    def run(self):
        from mlprof.measure.isolate import run_isolated
        from mlprof.model.export import export_onnx

        (model,) = self.requires().selected(single=True)
        outputs = self.output()
        record = run_isolated(export_onnx, {
            "script": self.model_spec.file, "model_hash": model["hash"],
            "out_path": outputs["onnx"].path, "script_args": self.script_argv,
            "max_depth": self.max_depth, "opset": self.resolved_opset,
            "precision": self.precision, "optimize": self.ort_optimize,
            "atol": self.tolerances()[0], "rtol": self.tolerances()[1],
        }, label=f"export of {self.model_spec.file}::{model['hash']}", torch=True)
        record["model"] = model
        # the ONNX file is in place (renamed atomically by the export); the JSON completes it
        write_json_atomic(outputs["json"].path, record)
        logger.info("exported %s in %.2f s (max abs error %.2g)", self.resolved_model_name,
                    record["export_s"], record["max_abs_error"])
